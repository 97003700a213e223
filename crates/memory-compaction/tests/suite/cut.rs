//! The cut point and the span it leaves.

use memory_compaction::compaction::{Preparation, Session, prepare};
use memory_protocol::compaction::ConversationMessage;
use memory_sanitize::ByteEstimate;
use proptest::prelude::*;
use serde_json::json;

use super::support::{call, result, say, session, shell_call, user};

fn cut(session: &Session, keep: u64) -> Preparation<'_> {
    prepare(session.live(), keep, u64::MAX, &ByteEstimate).unwrap()
}

fn ids(prep: &Preparation<'_>, indexes: impl IntoIterator<Item = usize>) -> Vec<String> {
    indexes
        .into_iter()
        .map(|i| prep.live[i].id.clone())
        .collect()
}

/// About `tokens` tokens of text (bytes/4).
fn text(tokens: usize) -> String {
    "word ".repeat(tokens * 4 / 5)
}

#[test]
fn an_empty_session_has_no_cut() {
    let empty = Session::default();
    assert!(prepare(empty.live(), 10, u64::MAX, &ByteEstimate).is_none());
}

#[test]
fn everything_fits_so_everything_is_kept() {
    let s = session(vec![user("hi"), say("hello")]);
    let prep = cut(&s, 20_000);
    assert!(prep.is_empty());
    assert_eq!(prep.first_kept, 0);
    assert_eq!(prep.kept().count(), 2);
}

#[test]
fn results_without_their_calls_are_summarized_not_kept() {
    let s = session(vec![result("a", &text(500)), result("b", &text(500))]);
    let prep = cut(&s, 100);
    assert_eq!(prep.summarized(), 2);
    assert_eq!(prep.kept().count(), 0);
}

#[test]
fn the_kept_budget_moves_the_cut_later() {
    let s = session(vec![
        user(&text(300)),
        say(&text(300)),
        user(&text(300)),
        say(&text(300)),
    ]);
    let prep = prepare(s.live(), 1_000, 700, &ByteEstimate).unwrap();
    assert!(prep.kept_tokens() <= 700);
    assert_eq!(ids(&prep, prep.kept()), ["m3", "m4"]);
}

#[test]
fn the_cut_keeps_at_least_keep_recent_tokens_and_never_lands_on_a_result() {
    let s = session(vec![
        user(&text(300)),
        say(&text(300)),
        user(&text(300)),
        shell_call("c1", "cargo test"),
        result("c1", &text(300)),
        say(&text(300)),
    ]);
    let prep = cut(&s, 500);
    // From the end: 300 (say) + 300 (result) + ... crosses 500 at the result; the result is
    // not a cut point, so the cut moves back to the call that produced it.
    assert_eq!(ids(&prep, [prep.first_kept]), ["m4"]);
    assert!(prep.kept_tokens() >= 500);
    // The turn of m4 starts at m3, the latest user message, which stays kept (pinned); with
    // nothing else before the cut, the turn is not split.
    assert_eq!(prep.pinned, Some(2));
    assert!(!prep.split_turn);
    assert!(prep.turn_prefix.is_empty());
    assert_eq!(ids(&prep, prep.history.clone()), ["m1", "m2"]);
    assert_eq!(ids(&prep, prep.kept()), ["m3", "m4", "m5", "m6"]);
    assert_eq!(prep.summarized(), 2);
}

#[test]
fn a_cut_on_a_user_message_is_not_a_split_turn() {
    let s = session(vec![
        user(&text(300)),
        say(&text(300)),
        user(&text(300)),
        say(&text(300)),
    ]);
    let prep = cut(&s, 600);
    assert_eq!(ids(&prep, [prep.first_kept]), ["m3"]);
    assert!(!prep.split_turn);
    assert_eq!(prep.pinned, None);
    assert_eq!(ids(&prep, prep.history.clone()), ["m1", "m2"]);
}

#[test]
fn a_cut_inside_an_earlier_turn_summarizes_its_beginning_on_its_own() {
    let s = session(vec![
        user("first request"),
        say(&text(200)),
        user("second request, a long agentic turn"),
        call("a", "read", json!({"path": "src/a.rs"})),
        result("a", &text(400)),
        call("b", "read", json!({"path": "src/b.rs"})),
        result("b", &text(400)),
        say(&text(100)),
        user("third request"),
        say(&text(100)),
    ]);
    let prep = cut(&s, 900);
    // From the end the kept tokens reach 900 at m5, a result: the cut moves back to its call.
    assert_eq!(ids(&prep, [prep.first_kept]), ["m4"]);
    assert!(prep.split_turn);
    assert_eq!(ids(&prep, prep.turn_prefix.clone()), ["m3"]);
    assert_eq!(ids(&prep, prep.history.clone()), ["m1", "m2"]);
    assert_eq!(
        prep.pinned, None,
        "the latest user message (m9) is after the cut"
    );
}

/// claude-code #63162: text pasted just before compaction was summarized away. The latest user
/// message is never summarized: when the cut falls after it, it is pinned and kept verbatim.
#[test]
fn the_latest_user_message_is_pinned_when_the_cut_falls_after_it_claude_code_63162() {
    let pasted = format!("Here is the log you asked for:\n{}", text(5_000));
    let mut messages = vec![user("earlier"), say("ok"), user(&pasted)];
    for i in 0..10 {
        messages.push(shell_call(&format!("c{i}"), "cargo test"));
        messages.push(result(&format!("c{i}"), &text(400)));
    }
    let s = session(messages);
    let prep = cut(&s, 2_000);
    assert_eq!(prep.pinned, Some(2));
    assert!(prep.split_turn);
    let kept: Vec<String> = ids(&prep, prep.kept());
    assert_eq!(kept[0], "m3");
    assert!(!prep.history.contains(&2));
    assert_eq!(
        prep.summarized(),
        prep.history.len() + prep.turn_prefix.len() - 1
    );
}

fn any_message() -> impl Strategy<Value = ConversationMessage> {
    prop_oneof![
        (1usize..400).prop_map(|n| user(&text(n))),
        (1usize..400).prop_map(|n| say(&text(n))),
        (0usize..4).prop_map(|i| shell_call(&format!("c{i}"), "make")),
        (0usize..4, 1usize..900).prop_map(|(i, n)| result(&format!("c{i}"), &text(n))),
        (1usize..200).prop_map(|n| ConversationMessage::ShellExecution {
            command: "ls".to_owned(),
            output: text(n),
            exit_code: Some(0),
        }),
    ]
}

/// A cut at `cut` keeps every kept result with its call (checked independently of the
/// library, by brute force).
fn keeps_pairs(prep: &Preparation<'_>, cut: usize) -> bool {
    let live = &prep.live;
    if live
        .get(cut)
        .is_some_and(|e| matches!(e.message, ConversationMessage::ToolResult { .. }))
    {
        return false;
    }
    (cut..live.len()).all(|j| match &live[j].message {
        ConversationMessage::ToolResult { tool_call_id, .. } => (cut..j).any(|i| {
            matches!(&live[i].message, ConversationMessage::Assistant { content }
                if content.iter().any(|b| matches!(b,
                    memory_protocol::compaction::AssistantBlock::ToolCall { id, .. } if id == tool_call_id)))
        }),
        _ => true,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Every live message is summarized once or kept; what is kept never exceeds the kept
    /// budget and keeps every result with its call; the latest user message is kept unless it
    /// alone exceeds the budget; and keep-recent tokens are kept unless no earlier cut could
    /// keep them and still summarize something.
    #[test]
    fn every_message_is_summarized_once_or_kept(
        messages in proptest::collection::vec(any_message(), 1..40),
        keep in 1u64..3_000,
        max_kept in prop_oneof![Just(u64::MAX), 0u64..6_000],
    ) {
        let s = session(messages);
        let prep = prepare(s.live(), keep, max_kept, &ByteEstimate).unwrap();
        let n = prep.live.len();
        let mut seen = vec![0u32; n];
        for &i in &prep.history {
            seen[i] += 1;
        }
        for &i in &prep.turn_prefix {
            if Some(i) != prep.pinned {
                seen[i] += 1;
            }
        }
        for i in prep.kept() {
            seen[i] += 1;
        }
        prop_assert!(seen.iter().all(|&c| c == 1), "{:?}", seen);
        prop_assert!(prep.kept_tokens() <= max_kept);
        prop_assert!(keeps_pairs(&prep, prep.first_kept), "a kept result lost its call");
        if let Some(latest) = prep.live.iter().rposition(|e| e.message.is_user()) {
            prop_assert!(
                prep.kept().any(|i| i == latest) || prep.live_tokens[latest] > max_kept,
                "latest user message summarized"
            );
        }
        let total: u64 = prep.live_tokens.iter().sum();
        let latest_user = prep.live.iter().rposition(|e| e.message.is_user());
        if prep.kept_tokens() < keep.min(total) && prep.first_kept > 0 {
            // No earlier cut keeping the pairs could have kept keep-recent tokens within the
            // budget while summarizing something.
            for earlier in 0..prep.first_kept {
                if !keeps_pairs(&prep, earlier) {
                    continue;
                }
                let pinned = latest_user.filter(|&u| u < earlier);
                let kept: u64 = prep.live_tokens[earlier..].iter().sum::<u64>()
                    + pinned.map_or(0, |u| prep.live_tokens[u]);
                let summarizes = (0..earlier).any(|i| Some(i) != pinned);
                prop_assert!(!(summarizes && kept >= keep && kept <= max_kept),
                    "cut {} kept {} < {}, but {} was possible", prep.first_kept, prep.kept_tokens(), keep, earlier);
            }
        }
        // The history comes before the turn prefix, which comes before the kept messages.
        let last_history = prep.history.last().copied();
        let first_prefix = prep.turn_prefix.first().copied();
        if let (Some(h), Some(p)) = (last_history, first_prefix) {
            prop_assert!(h < p || Some(h) == prep.pinned);
        }
    }
}
