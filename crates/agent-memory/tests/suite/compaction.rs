//! Compaction end to end through the facade, with the offline engine as the summarizer.

use std::collections::{BTreeSet, HashSet};
use std::sync::Mutex;

use agent_memory::compaction::compaction::{
    Budgets, CompactionError, CompactionOptions, CompactionOutcome, CompactionSettings, Session,
    compact, message_tokens, scan_messages, session_from_rollout,
};
use agent_memory::offline::OfflineEngine;
use agent_memory::protocol::compaction::summary_sections::{DONE, section_items};
use agent_memory::protocol::compaction::{AssistantBlock, ConversationEntry, ConversationMessage};
use agent_memory::protocol::{ModelClient, ModelError, ModelRequest, ModelResponse, TaskKind};
use agent_memory::sanitize::{ByteEstimate, TokenCounter};
use agent_memory::transcript::file_ops::FileOps;
use agent_memory::transcript::{ReaderOptions, read_rollout_path};
use async_trait::async_trait;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use serde_json::json;

/// The offline engine, with every request and answer checked against its budgets, and an
/// optional failure on one call.
struct Checked {
    engine: OfflineEngine,
    input_budget: u64,
    fail_on_call: Option<usize>,
    calls: Mutex<usize>,
    violations: Mutex<Vec<String>>,
}

impl Checked {
    fn new(input_budget: u64) -> Checked {
        Checked {
            engine: OfflineEngine::new(),
            input_budget,
            fail_on_call: None,
            calls: Mutex::new(0),
            violations: Mutex::new(Vec::new()),
        }
    }

    fn violations(&self) -> Vec<String> {
        self.violations.lock().unwrap().clone()
    }
}

#[async_trait]
impl ModelClient for Checked {
    fn name(&self) -> String {
        self.engine.name()
    }

    fn context_window(&self) -> Option<u64> {
        None
    }

    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let call = {
            let mut calls = self.calls.lock().unwrap();
            *calls += 1;
            *calls
        };
        if self.fail_on_call == Some(call) {
            return Err(ModelError::Transient {
                message: "HTTP 503".to_owned(),
            });
        }
        let start = request.input.find("<conversation>\n").unwrap_or(0) + 15;
        let end = request.input.find("\n</conversation>").unwrap_or(start);
        let conversation = request.input.get(start..end).unwrap_or_default();
        let sent = ByteEstimate.count(conversation) as u64;
        let cap = u64::from(request.max_output_tokens.unwrap_or(0));
        let response = self.engine.complete(request.clone()).await?;
        let answered = ByteEstimate.count(&response.text) as u64;
        let mut violations = self.violations.lock().unwrap();
        if request.task != TaskKind::ShortSummary && sent > self.input_budget {
            violations.push(format!("call {call}: sent {sent} > {}", self.input_budget));
        }
        if answered > cap {
            violations.push(format!("call {call}: answered {answered} > cap {cap}"));
        }
        Ok(response)
    }
}

fn user(text: String) -> ConversationMessage {
    ConversationMessage::user(text)
}

fn call(id: &str, name: &str, arguments: serde_json::Value) -> ConversationMessage {
    ConversationMessage::tool_call(id, name, arguments)
}

fn result(id: &str, text: String) -> ConversationMessage {
    ConversationMessage::tool_result(id, "tool", text, false)
}

fn say(text: String) -> ConversationMessage {
    ConversationMessage::assistant_text(text)
}

/// One round of work: a request, tool steps touching new files and running commands, a reply.
#[derive(Debug, Clone)]
struct Round {
    steps: Vec<Step>,
    request_words: usize,
    oversized: bool,
}

#[derive(Debug, Clone)]
enum Step {
    Edit,
    Read,
    Check { fails: bool, output_words: usize },
}

fn round() -> impl Strategy<Value = Round> {
    let step = prop_oneof![
        Just(Step::Edit),
        Just(Step::Read),
        (any::<bool>(), 10usize..1_500).prop_map(|(fails, output_words)| Step::Check {
            fails,
            output_words
        }),
    ];
    (
        proptest::collection::vec(step, 2..16),
        5usize..200,
        proptest::bool::weighted(0.15),
    )
        .prop_map(|(steps, request_words, oversized)| Round {
            steps,
            request_words,
            oversized,
        })
}

fn messages_of(number: usize, round: &Round) -> Vec<ConversationMessage> {
    let mut request = format!(
        "round {number}: continue the migration. {}",
        "detail ".repeat(round.request_words)
    );
    if round.oversized {
        // A pasted log far larger than any summarizer window.
        request.push_str(&"2026-01-01 WARN queue lagging behind\n".repeat(6_000));
    }
    let mut out = vec![user(request)];
    for (s, step) in round.steps.iter().enumerate() {
        let id = format!("r{number}s{s}");
        match step {
            Step::Edit => {
                out.push(call(
                    &id,
                    "edit",
                    json!({"path": format!("src/round{number}/file{s}.rs")}),
                ));
                out.push(result(&id, "edited".to_owned()));
            }
            Step::Read => {
                out.push(call(
                    &id,
                    "read",
                    json!({"path": format!("docs/round{number}/note{s}.md")}),
                ));
                out.push(result(&id, "contents ".repeat(200)));
            }
            Step::Check {
                fails,
                output_words,
            } => {
                let code = if *fails { 1 } else { 0 };
                out.push(call(
                    &id,
                    "exec_command",
                    json!({"cmd": format!("cargo test -p crate{number} case{s}")}),
                ));
                out.push(result(
                    &id,
                    format!(
                        "Process exited with code {code}\n{}error: case{s} broke",
                        "out ".repeat(*output_words)
                    ),
                ));
            }
        }
    }
    out.push(say(format!(
        "round {number} done; next I'll pick the following batch."
    )));
    out
}

fn ids(session: &Session) -> Vec<String> {
    session
        .live()
        .messages
        .iter()
        .map(|e| e.id.clone())
        .collect()
}

const WINDOW: u64 = 24_000;

fn settings() -> CompactionSettings {
    CompactionSettings {
        keep_recent_tokens: 2_500,
        ..CompactionSettings::default()
    }
}

fn options() -> CompactionOptions {
    CompactionOptions {
        settings: settings(),
        window_tokens: WINDOW,
        ..CompactionOptions::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 6,
        rng_seed: RngSeed::Fixed(0x5eed_c0de),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Ten successive compactions of a growing conversation: every message is summarized once
    /// or still kept, in order; the latest user message is kept; no budget is exceeded; earlier
    /// Done items survive; and the summary stays bounded although every round touches new files.
    #[test]
    fn ten_compactions_lose_nothing_and_stay_bounded(rounds in proptest::collection::vec(round(), 10)) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let mut session = Session::default();
        let mut all_ids: Vec<String> = Vec::new();
        let mut summarized: Vec<String> = Vec::new();
        let mut previous_done: Vec<String> = Vec::new();
        let budgets = Budgets::new(WINDOW, &settings(), 0);
        for (number, round) in rounds.iter().enumerate() {
            for message in messages_of(number, round) {
                let id = session.fresh_id("m");
                all_ids.push(id.clone());
                session.push_message(ConversationEntry { id, message }).unwrap();
            }
            let before = ids(&session);
            let model = Checked::new(budgets.input);
            let outcome = runtime
                .block_on(compact(&session, &model, &options(), &ByteEstimate))
                .unwrap();
            prop_assert!(model.violations().is_empty(), "{:?}", model.violations());
            let CompactionOutcome::Compacted(compaction) = outcome else {
                continue;
            };
            let entry = compaction.entry;
            session.push_compaction(entry.clone()).unwrap();
            let after = ids(&session);

            // Summarized now: what was live and no longer is.
            let now: Vec<String> = before.iter().filter(|id| !after.contains(id)).cloned().collect();
            prop_assert_eq!(now.len() as u64, entry.messages_summarized);
            for id in &now {
                prop_assert!(!summarized.contains(id), "{} summarized twice", id);
            }
            summarized.extend(now);
            // The live messages keep the session's order.
            let positions: Vec<usize> = after
                .iter()
                .map(|id| all_ids.iter().position(|a| a == id).unwrap())
                .collect();
            prop_assert!(positions.windows(2).all(|w| w[0] < w[1]), "{:?}", positions);
            // The latest user message is kept.
            // The latest user message is kept, unless it alone is larger than half of what
            // the context may hold after compacting (then it is summarized, so the context
            // still fits).
            let (latest_user, latest_tokens) = session
                .entries()
                .iter()
                .rev()
                .find_map(|e| match e {
                    agent_memory::protocol::compaction::SessionEntry::Message(m)
                        if m.message.is_user() => Some((m.id.clone(), message_tokens(&m.message, &ByteEstimate))),
                    _ => None,
                })
                .unwrap();
            let limit = WINDOW - settings().reserve_for(WINDOW);
            prop_assert!(after.contains(&latest_user) || latest_tokens > limit / 2);
            prop_assert!(entry.tokens_after <= limit, "{} > {}", entry.tokens_after, limit);

            // Bounded: the history summary, a turn-prefix summary and one files block.
            let tokens = ByteEstimate.count(&entry.summary) as u64;
            prop_assert!(tokens <= budgets.output + budgets.turn_prefix + 600, "{} tokens", tokens);
            prop_assert!(entry.summary.matches("<files>").count() <= 1);
            prop_assert!(entry.details.read_files.len() + entry.details.modified_files.len() <= 20);
            prop_assert!(ByteEstimate.count(entry.short_summary.as_deref().unwrap()) as u64 <= budgets.short_summary);
            prop_assert!(entry.tokens_after > 0);

            // Earlier Done items survive (or are counted in the folded line).
            let history = entry.summary.split("\n\n---\n\n").next().unwrap();
            let done: Vec<String> = section_items(history, DONE);
            let folded: usize = done
                .iter()
                .filter_map(|i| agent_memory::protocol::compaction::summary_sections::folded_done_count(i))
                .sum();
            let missing = previous_done.iter().filter(|item| !done.contains(item)).count();
            prop_assert!(missing <= folded, "{} Done items lost, {} folded", missing, folded);
            previous_done = done
                .into_iter()
                .filter(|i| agent_memory::protocol::compaction::summary_sections::folded_done_count(i).is_none())
                .collect();
        }
        // In the end every message is summarized once or still kept.
        let live: HashSet<String> = ids(&session).into_iter().collect();
        let summarized_set: HashSet<String> = summarized.iter().cloned().collect();
        prop_assert!(live.is_disjoint(&summarized_set));
        let accounted: HashSet<String> = live.union(&summarized_set).cloned().collect();
        let every: HashSet<String> = all_ids.iter().cloned().collect();
        prop_assert_eq!(accounted, every);
    }
}

/// A model failing on window 2 of 3 leaves the session unchanged.
#[tokio::test]
async fn a_failure_on_the_second_window_leaves_the_session_unchanged() {
    let mut session = Session::default();
    for number in 0..3 {
        let round = Round {
            steps: vec![
                Step::Check {
                    fails: false,
                    output_words: 1_400
                };
                6
            ],
            request_words: 20,
            oversized: false,
        };
        for message in messages_of(number, &round) {
            let id = session.fresh_id("m");
            session
                .push_message(ConversationEntry { id, message })
                .unwrap();
        }
    }
    let before = session.to_jsonl().unwrap();
    let budgets = Budgets::new(WINDOW, &settings(), 0);
    let counting = Checked::new(budgets.input);
    compact(&session, &counting, &options(), &ByteEstimate)
        .await
        .unwrap();
    let windows = *counting.calls.lock().unwrap() - 1;
    assert!(windows >= 3, "{windows} windows");

    let mut failing = Checked::new(budgets.input);
    failing.fail_on_call = Some(2);
    let err = compact(&session, &failing, &options(), &ByteEstimate)
        .await
        .unwrap_err();
    assert!(
        matches!(err, CompactionError::Model { window: 2, .. }),
        "{err}"
    );
    assert_eq!(session.to_jsonl().unwrap(), before);
    assert!(session.latest_compaction().is_none());
}

/// deja-vu #543: summaries kept about 10% of file paths and 0% of commands. The offline
/// summary plus the tracked files keep most of both.
#[tokio::test]
async fn summaries_keep_the_paths_and_commands_of_the_span_deja_vu_543() {
    let mut session = Session::default();
    let mut push = |message| {
        let id = session.fresh_id("m");
        session
            .push_message(ConversationEntry { id, message })
            .unwrap();
    };
    push(user(
        "Migrate the storage layer to the new pool API.".to_owned(),
    ));
    for i in 0..40 {
        let id = format!("c{i}");
        match i % 4 {
            0 => push(call(
                &id,
                "read",
                json!({"path": format!("src/storage/part{i}.rs")}),
            )),
            1 => push(call(
                &id,
                "edit",
                json!({"path": format!("src/storage/part{i}.rs")}),
            )),
            2 => push(call(
                &id,
                "exec_command",
                json!({"cmd": format!("cargo test -p storage part{i}")}),
            )),
            _ => push(call(
                &id,
                "exec_command",
                json!({"cmd": format!("rg -n pool_{i} src")}),
            )),
        }
        let code = i32::from(i % 8 == 2);
        push(result(
            &id,
            format!("Process exited with code {code}\n{}", "log ".repeat(300)),
        ));
    }
    for m in 0..8 {
        push(user(format!(
            "next batch {m}: {}",
            "more context ".repeat(120)
        )));
        push(say("ok".to_owned()));
    }
    let opts = CompactionOptions {
        settings: CompactionSettings {
            keep_recent_tokens: 2_000,
            ..CompactionSettings::default()
        },
        ..CompactionOptions::default()
    };
    let live = session.live();
    let outcome = compact(&session, &OfflineEngine::new(), &opts, &ByteEstimate)
        .await
        .unwrap();
    let CompactionOutcome::Compacted(compaction) = outcome else {
        panic!("expected a compaction");
    };
    let entry = compaction.entry;
    let kept_from = live
        .messages
        .iter()
        .position(|e| Some(&e.id) == entry.first_kept_entry_id.as_ref())
        .unwrap();
    let span: Vec<ConversationMessage> = live.messages[..kept_from]
        .iter()
        .map(|e| e.message.clone())
        .collect();
    let mut ops = FileOps::default();
    scan_messages(&mut ops, &span);
    let paths: BTreeSet<String> = ops.read().into_iter().chain(ops.modified()).collect();
    let commands: BTreeSet<String> = span
        .iter()
        .filter_map(|m| match m {
            ConversationMessage::Assistant { content } => content.iter().find_map(|b| match b {
                AssistantBlock::ToolCall { arguments, .. } => {
                    arguments["cmd"].as_str().map(str::to_owned)
                }
                _ => None,
            }),
            _ => None,
        })
        .collect();
    assert_eq!(paths.len(), 20);
    assert_eq!(commands.len(), 20);
    let listed = format!(
        "{}\n{}\n{}",
        entry.summary,
        entry.details.read_files.join("\n"),
        entry.details.modified_files.join("\n")
    );
    let share = |items: &BTreeSet<String>| {
        items
            .iter()
            .filter(|item| listed.contains(item.as_str()))
            .count() as f64
            / items.len() as f64
    };
    assert!(share(&paths) >= 0.9, "paths {}", share(&paths));
    assert!(
        share(&commands) >= 0.9,
        "commands {}:\n{listed}",
        share(&commands)
    );
}

/// Every example rollout compacts offline, and no planted credential reaches the entry.
#[tokio::test]
async fn example_rollouts_compact_offline_without_leaking_their_secrets() {
    const PLANTED: [&str; 6] = [
        "sk-proj-EXAMPLEonlyNotARealKey0123456789",
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "ghp_EXAMPLEfakeTokenForDocs0123456789abc",
        "EXAMPLE-not-a-real-pass-42",
        "xoxb-000000000000-0000000000000-EXAMPLEfakeSlackBotToken0",
    ];
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rollouts");
    let mut compacted = 0;
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            let read = read_rollout_path(&path, &ReaderOptions::default()).unwrap();
            let session = session_from_rollout(&read.lines, &ByteEstimate).unwrap();
            let opts = CompactionOptions {
                settings: CompactionSettings {
                    keep_recent_tokens: 200,
                    ..CompactionSettings::default()
                },
                ..CompactionOptions::default()
            };
            match compact(&session, &OfflineEngine::new(), &opts, &ByteEstimate)
                .await
                .unwrap()
            {
                CompactionOutcome::Compacted(compaction) => {
                    let stored = serde_json::to_string(&compaction.entry).unwrap();
                    for secret in PLANTED {
                        assert!(!stored.contains(secret), "{}: {secret}", path.display());
                    }
                    let summary = &compaction.entry.summary;
                    assert!(
                        summary.starts_with("## Goal") || summary.starts_with("## Turn Context"),
                        "{summary}"
                    );
                    compacted += 1;
                }
                CompactionOutcome::NothingToSummarize(_) | CompactionOutcome::WouldNotShrink(_) => {
                }
            }
        }
    }
    assert!(compacted >= 4, "{compacted}");
}
