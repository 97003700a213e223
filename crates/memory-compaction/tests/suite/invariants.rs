//! The invariants every compaction keeps, one test per reported case: the context fits
//! `window - reserve` afterwards, no call is kept without its result or the reverse, and a cut
//! is never blocked or made a no-op by the shape of the tool traffic.

use memory_compaction::compaction::{
    Compaction, CompactionOptions, CompactionOutcome, CompactionSettings, Session, compact,
};
use memory_protocol::compaction::{AssistantBlock, ConversationMessage};
use memory_sanitize::ByteEstimate;
use proptest::prelude::*;
use serde_json::json;

use super::support::{Scripted, call, extend, numbered, result, say, session, user};

/// About `tokens` tokens of text (bytes/4).
fn text(tokens: usize) -> String {
    "word ".repeat(tokens * 4 / 5)
}

fn options(window: u64, keep: u64) -> CompactionOptions {
    CompactionOptions {
        settings: CompactionSettings {
            keep_recent_tokens: keep,
            ..CompactionSettings::default()
        },
        window_tokens: window,
        ..CompactionOptions::default()
    }
}

async fn compacted(session: &Session, options: &CompactionOptions) -> Compaction {
    match compact(session, &numbered(), options, &ByteEstimate)
        .await
        .unwrap()
    {
        CompactionOutcome::Compacted(compaction) => *compaction,
        other => panic!("expected a compaction, got {other:?}"),
    }
}

fn limit(options: &CompactionOptions) -> u64 {
    options.window_tokens - options.settings.reserve_for(options.window_tokens)
}

/// The ids of the messages a compaction keeps in context.
fn kept_ids(session: &Session, compaction: &Compaction) -> Vec<String> {
    let mut after = session.clone();
    after.push_compaction(compaction.entry.clone()).unwrap();
    after.live().messages.iter().map(|e| e.id.clone()).collect()
}

/// The case: a 300k-token `read` result followed by four short messages, on a 200k
/// window. It was kept whole (first kept m2, split turn) and `tokens_after` came out near
/// 297k, above the window.
#[tokio::test]
async fn a_huge_result_at_the_keep_boundary_is_summarized_and_the_context_fits() {
    let s = session(vec![
        user("read the whole dump and tell me what is in it"),
        call("r1", "read", json!({ "path": "dump.txt" })),
        result("r1", &text(300_000)),
        say("it is a log of the nightly job"),
        user("which step failed?"),
        say("the upload step"),
        user("fix it"),
    ]);
    let options = options(200_000, 20_000);
    let c = compacted(&s, &options).await;
    let after = c.plan.tokens_after.unwrap();
    assert!(after <= limit(&options), "{after} > {}", limit(&options));
    assert!(after < c.plan.tokens_before);
    assert!(!kept_ids(&s, &c).contains(&"m3".to_owned()));
}

/// pi #7201: tool results at the end, larger than keep-recent, put the only valid cut before
/// them and nothing was summarized: compaction did nothing.
#[tokio::test]
async fn trailing_results_larger_than_keep_recent_do_not_make_compaction_a_no_op_pi_7201() {
    let s = session(vec![
        user("run both suites"),
        ConversationMessage::Assistant {
            content: vec![
                AssistantBlock::ToolCall {
                    id: "a".to_owned(),
                    name: "exec_command".to_owned(),
                    arguments: json!({ "cmd": "cargo test -p one" }),
                },
                AssistantBlock::ToolCall {
                    id: "b".to_owned(),
                    name: "exec_command".to_owned(),
                    arguments: json!({ "cmd": "cargo test -p two" }),
                },
            ],
        },
        result("a", &text(30_000)),
        result("b", &text(30_000)),
    ]);
    let c = compacted(&s, &options(200_000, 20_000)).await;
    assert_eq!(c.plan.messages_summarized, 3);
    assert_eq!(kept_ids(&s, &c), ["m1"]);
}

/// pi #4570: a tool result whose call was not in the kept messages survived compaction, and
/// every later request was rejected.
#[tokio::test]
async fn a_result_without_its_call_is_never_kept_pi_4570() {
    let s = session(vec![
        result(
            "gone",
            "output of a call made before this session was recorded",
        ),
        say("that was the old build"),
        user("now run the new one"),
        say("running"),
    ]);
    let c = compacted(&s, &options(200_000, 20_000)).await;
    let kept = kept_ids(&s, &c);
    assert!(!kept.contains(&"m1".to_owned()), "{kept:?}");
    assert!(kept.contains(&"m3".to_owned()));
}

/// A cut between an assistant message with a call and the call's result (an assistant text
/// message in between) kept the result and summarized its call.
#[tokio::test]
async fn no_call_is_separated_from_its_result() {
    let s = session(vec![
        user(&text(3_000)),
        say(&text(3_000)),
        user("check the lock file"),
        call("c1", "read", json!({ "path": "Cargo.lock" })),
        say(&text(1_000)),
        result("c1", &text(200)),
        say("done"),
    ]);
    let c = compacted(&s, &options(200_000, 1_000)).await;
    let kept = kept_ids(&s, &c);
    assert_eq!(
        kept.contains(&"m4".to_owned()),
        kept.contains(&"m6".to_owned()),
        "{kept:?}"
    );
}

/// A call that never got a result (abandoned) does not block a cut after it.
#[tokio::test]
async fn a_call_with_no_result_never_blocks_a_cut() {
    let mut messages = vec![
        user("start"),
        call("lost", "exec_command", json!({ "cmd": "sleep 1000" })),
    ];
    for i in 0..20 {
        messages.push(user(&format!("step {i}: {}", text(500))));
        messages.push(say(&text(500)));
    }
    let s = session(messages);
    let c = compacted(&s, &options(200_000, 2_000)).await;
    assert!(c.plan.messages_summarized >= 30, "{:?}", c.plan);
    assert!(!kept_ids(&s, &c).contains(&"m2".to_owned()));
}

/// A latest user message larger than the room left for kept messages is summarized instead
/// of pinned: the context still fits.
#[tokio::test]
async fn a_giant_latest_request_is_summarized_not_kept_whole() {
    let s = session(vec![
        user("hello"),
        say("hi"),
        user(&format!("here is the whole log: {}", text(150_000))),
        say("reading it"),
    ]);
    let options = options(100_000, 20_000);
    let c = compacted(&s, &options).await;
    assert!(c.plan.tokens_after.unwrap() <= limit(&options));
    assert!(!kept_ids(&s, &c).contains(&"m3".to_owned()));
}

/// A message of a generated session: any role, any size from a word to hundreds of thousands
/// of tokens, any script, calls and results from a small id pool (so some calls get no result
/// and some results have no call).
fn any_message() -> impl Strategy<Value = ConversationMessage> {
    let size = prop_oneof![8 => 1usize..400, 1 => 20_000usize..60_000, 1 => 150_000usize..320_000];
    let piece = prop_oneof![
        Just("word ".to_owned()),
        Just("修复 ".to_owned()),
        Just("ошибка ".to_owned()),
        Just("خطأ ".to_owned()),
        Just("café ".to_owned()),
        "\\PC{1,6}",
    ];
    let text = (piece, size).prop_map(|(piece, tokens)| {
        let piece = if piece.is_empty() {
            "x".to_owned()
        } else {
            piece
        };
        piece.repeat((tokens * 4 / piece.len()).max(1))
    });
    prop_oneof![
        3 => text.clone().prop_map(|t| user(&t)),
        3 => text.clone().prop_map(|t| say(&t)),
        3 => (0usize..6).prop_map(|i| call(&format!("c{i}"), "exec_command", json!({ "cmd": "make" }))),
        3 => (0usize..6, text).prop_map(|(i, t)| result(&format!("c{i}"), &t)),
    ]
}

/// Every kept tool result has its call kept before it.
fn results_have_their_calls(session: &Session) -> bool {
    let live = session.live().messages;
    live.iter()
        .enumerate()
        .all(|(j, entry)| match &entry.message {
            ConversationMessage::ToolResult { tool_call_id, .. } => live[..j].iter().any(|e| {
                matches!(&e.message, ConversationMessage::Assistant { content }
                if content.iter().any(|b| matches!(b,
                    AssistantBlock::ToolCall { id, .. } if id == tool_call_id)))
            }),
            _ => true,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Over generated sessions (empty, one turn, orphan calls and results, giant messages at
    /// any position, any script) and summaries of any length, twice in a row: a compaction
    /// never fails or panics, leaves the context within `window - reserve`, keeps every kept
    /// result with its call, and is applied only when it makes the context smaller (codex
    /// #40619).
    #[test]
    fn every_compaction_fits_the_window_shrinks_it_and_keeps_calls_with_results(
        first in proptest::collection::vec(any_message(), 0..24),
        later in proptest::collection::vec(any_message(), 0..8),
        window in prop_oneof![Just(16_000u64), Just(64_000u64), Just(200_000u64)],
        keep in 500u64..30_000,
        summary_words in prop_oneof![Just(0usize), 0usize..4_000],
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let options = options(window, keep);
        let summarizer = Scripted::new(move |call, _| {
            Ok(format!("## Goal\n- summary {call} {}", "word ".repeat(summary_words)))
        });
        let mut s = session(first);
        for round in 0..2 {
            if round == 1 {
                extend(&mut s, later.clone());
            }
            let before = s.context_tokens(&ByteEstimate);
            let outcome = runtime
                .block_on(compact(&s, &summarizer, &options, &ByteEstimate))
                .unwrap();
            match outcome {
                CompactionOutcome::Compacted(c) => {
                    let after = c.plan.tokens_after.unwrap();
                    prop_assert!(after <= limit(&options), "round {round}: {after} > {}", limit(&options));
                    prop_assert!(after < before, "round {round}: {after} >= {before}");
                    s.push_compaction(c.entry).unwrap();
                    prop_assert_eq!(s.context_tokens(&ByteEstimate), after);
                }
                CompactionOutcome::WouldNotShrink(plan) => {
                    // Refused: the session is as it was given (orphans and all).
                    let after = plan.tokens_after.unwrap();
                    prop_assert!(after >= before, "round {round}: {after} < {before}");
                    continue;
                }
                CompactionOutcome::NothingToSummarize(_) => {
                    if s.latest_compaction().is_none() {
                        prop_assert!(s.context_tokens(&ByteEstimate) <= limit(&options));
                    }
                }
            }
            prop_assert!(results_have_their_calls(&s), "round {round}");
        }
    }
}
