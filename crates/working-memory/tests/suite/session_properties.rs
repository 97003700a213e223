//! Issue 27 (Deliver 1): the session window's invariants over generated sessions: orphan
//! calls, giant messages at every position, one-turn sessions, every script, empty ones.
//!
//! - a commit never separates a tool call from its result (archive and live list);
//! - an assembled context holds the newest user message and the newest message, never a call
//!   without its result (or the reverse) when both exist, and stays within the budget less
//!   the reply's reserve;
//! - a failed commit leaves the folder byte-identical.

use memory_protocol::ModelError;
use memory_protocol::compaction::{AssistantBlock, ConversationEntry, ConversationMessage};
use proptest::prelude::*;
use serde_json::json;
use working_memory::session::{CommitStatus, Session, SessionOptions, reply_reserve};

use super::session::{Recording, block_on, snapshot};

/// One step of a generated session.
#[derive(Debug, Clone)]
enum Step {
    User(String),
    Reply(String),
    /// A call answered right away, with its output.
    Answered(String),
    /// A call that never gets a result.
    Orphan,
    /// A call whose result comes after the next step.
    Late(String),
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z ]{0,40}",
        1 => "[\u{4e00}-\u{4e80}]{1,30}",
        1 => "[а-я ]{1,30}",
        1 => "[ء-ي ]{1,30}",
        1 => "[àéîõü ]{1,30}",
        // A giant message: far above every budget tried.
        1 => (20_000usize..60_000).prop_map(|words| "tide ".repeat(words)),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => text().prop_map(Step::User),
        2 => text().prop_map(Step::Reply),
        3 => text().prop_map(Step::Answered),
        1 => Just(Step::Orphan),
        1 => text().prop_map(Step::Late),
    ]
}

fn call(id: &str, call_id: &str) -> ConversationEntry {
    ConversationEntry {
        id: id.to_owned(),
        message: ConversationMessage::Assistant {
            content: vec![AssistantBlock::ToolCall {
                id: call_id.to_owned(),
                name: "exec_command".to_owned(),
                arguments: json!({"cmd": "cargo test"}),
            }],
        },
    }
}

fn result(id: &str, call_id: &str, text: &str) -> ConversationEntry {
    ConversationEntry {
        id: id.to_owned(),
        message: ConversationMessage::ToolResult {
            tool_call_id: call_id.to_owned(),
            tool_name: "exec_command".to_owned(),
            text: text.to_owned(),
            is_error: false,
            useless: false,
        },
    }
}

fn build(steps: &[Step]) -> Vec<ConversationEntry> {
    let mut out = Vec::new();
    let mut late: Option<(String, String)> = None;
    for (n, step) in steps.iter().enumerate() {
        let id = format!("m{n}");
        let pending = late.take();
        match step {
            Step::User(text) => out.push(ConversationEntry {
                id,
                message: ConversationMessage::User { text: text.clone() },
            }),
            Step::Reply(text) => out.push(ConversationEntry {
                id,
                message: ConversationMessage::Assistant {
                    content: vec![AssistantBlock::Text { text: text.clone() }],
                },
            }),
            Step::Answered(text) => {
                out.push(call(&id, &format!("t{n}")));
                out.push(result(&format!("{id}r"), &format!("t{n}"), text));
            }
            Step::Orphan => out.push(call(&id, &format!("t{n}"))),
            Step::Late(text) => {
                out.push(call(&id, &format!("t{n}")));
                late = Some((format!("t{n}"), text.clone()));
            }
        }
        if let Some((call_id, text)) = pending {
            out.push(result(&format!("m{n}late"), &call_id, &text));
        }
    }
    if let Some((call_id, text)) = late {
        out.push(result("mlast", &call_id, &text));
    }
    out
}

/// The (call index, result index) pairs of answered calls.
fn pairs(messages: &[ConversationEntry]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (at, entry) in messages.iter().enumerate() {
        if let ConversationMessage::ToolResult { tool_call_id, .. } = &entry.message
            && let Some(call) = messages[..at].iter().position(|candidate| {
                matches!(&candidate.message, ConversationMessage::Assistant { content }
                    if content.iter().any(|block| matches!(block,
                        AssistantBlock::ToolCall { id, .. } if id == tool_call_id)))
            })
        {
            out.push((call, at));
        }
    }
    out
}

/// True when no answered call of `all` is in `part` without its result, or the reverse.
fn keeps_pairs(all: &[ConversationEntry], part: &[ConversationEntry]) -> bool {
    let has = |id: &str| part.iter().any(|entry| entry.id == id);
    pairs(all)
        .into_iter()
        .all(|(call, result)| has(&all[call].id) == has(&all[result].id))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        rng_seed: proptest::test_runner::RngSeed::Fixed(27),
        ..ProptestConfig::default()
    })]

    #[test]
    fn commits_keep_calls_with_results_and_assembly_fits(
        steps in prop::collection::vec(step(), 0..14),
        keep in 0u32..6,
        budget in prop_oneof![Just(16_000u64), Just(40_000u64), Just(128_000u64), 2_000u64..200_000],
    ) {
        let all = build(&steps);
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
        session.append(all.clone()).unwrap();

        // A failed commit writes nothing.
        let failing = Recording::new(|_| Err(ModelError::InvalidOutput { message: "no".into() }));
        let before = snapshot(dir.path());
        let failed = block_on(session.commit(&failing, keep)).unwrap();
        prop_assert!(failed.status != CommitStatus::Done);
        if failed.status == CommitStatus::Failed {
            prop_assert_eq!(snapshot(dir.path()), before);
        }

        let report = block_on(session.commit(&Recording::echo(), keep)).unwrap();
        prop_assert!(report.status != CommitStatus::Failed, "{:?}", report.error);
        let live: Vec<ConversationEntry> =
            session.messages().iter().map(|m| m.entry.clone()).collect();
        prop_assert!(keeps_pairs(&all, &live), "a commit separated a call from its result");

        let assembled = session.assemble(budget).unwrap();
        prop_assert!(keeps_pairs(&live, &assembled.messages));
        let ids: Vec<&str> = assembled.messages.iter().map(|m| m.id.as_str()).collect();
        if let Some(newest) = live.last() {
            prop_assert!(ids.contains(&newest.id.as_str()), "newest {} missing", newest.id);
        }
        if let Some(user) = live
            .iter()
            .rev()
            .find(|m| matches!(m.message, ConversationMessage::User { .. }))
        {
            prop_assert!(ids.contains(&user.id.as_str()), "newest user {} missing", user.id);
        }
        prop_assert!(
            assembled.stats.estimated_tokens <= budget - reply_reserve(budget),
            "{:?}", assembled.stats
        );
        prop_assert_eq!(
            assembled.messages.len() + assembled.left_out.messages.len(),
            live.len()
        );
    }
}
