//! `cargo xtask bench compaction`: planning cost and retention of the compactor on a generated
//! conversation of 10,000 messages and about a million tokens.
//!
//! `cargo xtask` builds xtask in debug, so this command re-runs itself in release
//! (`cargo run --release -p xtask -- bench compaction --inner`) and only the inner run measures.
//!
//! Figures, each the best of a few runs, the ratio from the same run:
//! - one serialization pass: cleaning (redaction, useless results, the 2,000-character cut) and
//!   serializing the span a compaction summarizes, the floor any summarizer input costs;
//! - planning: `plan_compaction` on the whole session (live view, size estimates, the cut,
//!   cleaning, per-message serialization, window packing, window texts), as a ratio to the
//!   pass above (target at most 3);
//! - retention: one offline compaction (the built-in engine, a 200k window), and the share of
//!   the summarized span's file paths and shell commands found in the summary plus the tracked
//!   files (target at least 0.5 each).

use std::collections::BTreeSet;
use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use memory_compaction::compaction::{
    CleanStats, CompactionOptions, CompactionOutcome, Dialect, Session, clean_messages, compact,
    plan_compaction, scan_messages, serialize_messages,
};
use memory_offline::OfflineEngine;
use memory_protocol::compaction::{AssistantBlock, ConversationEntry, ConversationMessage};
use memory_sanitize::{ByteEstimate, TokenCounter};
use memory_transcript::file_ops::FileOps;
use serde_json::json;

use super::Rng;

const MESSAGES: usize = 10_000;
const WINDOW: u64 = 200_000;
const RUNS: usize = 5;

pub(crate) fn run(args: &[&str]) -> Result<()> {
    match args {
        ["--inner"] => measure(),
        [] => super::rerun_in_release("compaction"),
        _ => bail!("usage: cargo xtask bench compaction"),
    }
}

fn measure() -> Result<()> {
    let started = Instant::now();
    let session = conversation(MESSAGES)?;
    let tokens = session.context_tokens(&ByteEstimate);
    let options = CompactionOptions {
        window_tokens: WINDOW,
        ..CompactionOptions::default()
    };
    println!(
        "conversation: {MESSAGES} messages, {tokens} tokens (bytes/4), generated in {:.2} s",
        started.elapsed().as_secs_f64()
    );

    // The span a compaction summarizes, as the plan chooses it.
    let planned = plan_compaction(&session, &options, WINDOW, Dialect::Generic, &ByteEstimate)?;
    let plan = planned.plan.clone();
    let first_kept = plan
        .first_kept_entry_id
        .clone()
        .context("the plan keeps nothing")?;
    let live = session.live().messages;
    let kept_from = live
        .iter()
        .position(|entry| entry.id == first_kept)
        .context("the first kept entry is not live")?;
    let span: Vec<ConversationMessage> = live
        .iter()
        .take(kept_from)
        .map(|entry| entry.message.clone())
        .collect();
    let span_text_bytes = {
        let mut stats = CleanStats::default();
        serialize_messages(&clean_messages(&span, Dialect::Generic, &mut stats)).len()
    };
    println!(
        "plan: {} summarized, {} kept, {} windows of at most {} tokens, {} tool results cut, serialized span {:.1} MB",
        plan.messages_summarized,
        plan.messages_kept,
        plan.windows,
        planned.budgets.input,
        plan.truncated_tool_results,
        span_text_bytes as f64 / 1e6
    );
    drop(planned);

    // Interleaved so drift on the shared machine hits both alike.
    let mut serialize = Duration::MAX;
    let mut planning = Duration::MAX;
    for _ in 0..RUNS {
        serialize = serialize.min(time(|| {
            let mut stats = CleanStats::default();
            let cleaned = clean_messages(&span, Dialect::Generic, &mut stats);
            black_box(serialize_messages(&cleaned));
        }));
        planning = planning.min(time(|| {
            let planned =
                plan_compaction(&session, &options, WINDOW, Dialect::Generic, &ByteEstimate);
            black_box(planned.map(|p| p.history_windows().len()).ok());
        }));
    }
    let ratio = planning.as_secs_f64() / serialize.as_secs_f64();
    println!(
        "one serialization pass: {:.1} ms; planning: {:.1} ms; planning / serialization = {ratio:.2} (target <= 3)",
        ms(serialize),
        ms(planning)
    );

    // Retention, through one offline compaction.
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let compacted = Instant::now();
    let outcome = runtime.block_on(compact(
        &session,
        &OfflineEngine::new(),
        &options,
        &ByteEstimate,
    ))?;
    let CompactionOutcome::Compacted(compaction) = outcome else {
        bail!("the offline compaction found nothing to summarize");
    };
    let entry = compaction.entry;
    let mut ops = FileOps::default();
    scan_messages(&mut ops, &span);
    let paths: BTreeSet<String> = ops.read().into_iter().chain(ops.modified()).collect();
    let commands: BTreeSet<String> = span.iter().flat_map(shell_commands).collect();
    let listed = format!(
        "{}\n{}\n{}",
        entry.summary,
        entry.details.read_files.join("\n"),
        entry.details.modified_files.join("\n")
    );
    let share = |items: &BTreeSet<String>| {
        let found = items
            .iter()
            .filter(|item| listed.contains(item.as_str()))
            .count();
        found as f64 / items.len().max(1) as f64
    };
    let (retention_paths, retention_commands) = (share(&paths), share(&commands));
    println!(
        "offline compaction: {:.2} s, {} windows, summary {} tokens, {} -> {} tokens",
        compacted.elapsed().as_secs_f64(),
        compaction.plan.windows,
        ByteEstimate.count(&entry.summary),
        entry.tokens_before,
        entry.tokens_after
    );
    println!(
        "retention: {} of {} paths ({retention_paths:.2}), {} of {} commands ({retention_commands:.2}) (target >= 0.5 each)",
        (retention_paths * paths.len() as f64).round(),
        paths.len(),
        (retention_commands * commands.len() as f64).round(),
        commands.len()
    );
    println!(
        "BENCH compaction messages={MESSAGES} tokens={tokens} plan_vs_serialize={ratio:.2} retention_paths={retention_paths:.2} retention_commands={retention_commands:.2}"
    );
    Ok(())
}

fn time(mut f: impl FnMut()) -> Duration {
    let started = Instant::now();
    f();
    started.elapsed()
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// The shell commands a message's tool calls ran.
fn shell_commands(message: &ConversationMessage) -> Vec<String> {
    let ConversationMessage::Assistant { content } = message else {
        return Vec::new();
    };
    content
        .iter()
        .filter_map(|block| match block {
            AssistantBlock::ToolCall { arguments, .. } => {
                arguments["cmd"].as_str().map(str::to_owned)
            }
            _ => None,
        })
        .collect()
}

// ----- Conversation ---------------------------------------------------------------------------

const CRATES: [&str; 6] = ["parser", "ledger", "storage", "cli", "server", "metrics"];
const MODULES: [&str; 25] = [
    "lib", "error", "config", "table", "row", "schema", "query", "index", "cache", "pool",
    "client", "retry", "auth", "token", "format", "csv", "json", "io", "path", "span", "lexer",
    "ast", "eval", "plan", "report",
];
const WORDS: [&str; 24] = [
    "the", "parser", "fails", "when", "input", "is", "empty", "so", "check", "tests", "and",
    "then", "update", "config", "because", "review", "build", "error", "crate", "returns",
    "result", "context", "works", "now",
];

/// The files of the project: one per crate and module (150).
fn path(rng: &mut Rng) -> String {
    // Recent work clusters on a few files; older files come back now and then.
    let crate_name = CRATES[rng.below(CRATES.len())];
    let module = MODULES[rng.below(MODULES.len()).min(rng.below(MODULES.len()) + 5)];
    format!("crates/{crate_name}/src/{module}.rs")
}

/// One of about a hundred command lines, the common ones far more often.
fn command(rng: &mut Rng) -> String {
    let crate_name = CRATES[rng.below(CRATES.len())];
    match rng.below(10) {
        0..=3 => format!("cargo test -p {crate_name}"),
        4 => format!(
            "cargo test -p {crate_name} {}",
            MODULES[rng.below(MODULES.len())]
        ),
        5 => format!("cargo clippy -p {crate_name} --all-targets -- -D warnings"),
        6 => "cargo build --workspace".to_owned(),
        7 => format!(
            "rg -n {} crates/{crate_name}",
            WORDS[rng.below(WORDS.len())]
        ),
        8 => "git status --short".to_owned(),
        _ => format!("cargo fmt -p {crate_name}"),
    }
}

fn prose(rng: &mut Rng, words: usize) -> String {
    (0..words)
        .map(|_| WORDS[rng.below(WORDS.len())])
        .collect::<Vec<_>>()
        .join(" ")
}

fn log(rng: &mut Rng, lines: usize) -> String {
    let mut out = String::new();
    for i in 0..lines {
        out.push_str(&format!(
            "   Compiling {} v0.{}.{} ({})\n",
            CRATES[rng.below(CRATES.len())],
            rng.below(9),
            i % 40,
            prose(rng, 6)
        ));
    }
    out
}

/// A coding session: requests every ~100 messages, then rounds of reasoning, a tool call
/// (a shell command, a read, an edit or a patch) and its result, sometimes a note; results
/// run from a line to a long build log.
fn conversation(messages: usize) -> Result<Session> {
    let mut rng = Rng(0xC0DE_5EED);
    let mut session = Session::default();
    let push = |session: &mut Session, message: ConversationMessage| -> Result<()> {
        let id = session.fresh_id("m");
        session.push_message(ConversationEntry { id, message })?;
        Ok(())
    };
    let mut call = 0usize;
    while session.entries().len() < messages {
        let left = messages - session.entries().len();
        if call.is_multiple_of(50) || left == 1 {
            push(
                &mut session,
                ConversationMessage::User {
                    text: format!("Next: {} in {}.", prose(&mut rng, 40), path(&mut rng)),
                },
            )?;
            call += 1;
            continue;
        }
        if left < 2 {
            break;
        }
        call += 1;
        let id = format!("call_{call}");
        let (name, arguments, output) = match rng.below(10) {
            0..=4 => {
                let cmd = command(&mut rng);
                let failed = rng.below(5) == 0;
                // Mostly short outputs; one in 25 is a long build log.
                let lines = if rng.below(25) == 0 {
                    100 + rng.below(150)
                } else {
                    2 + rng.below(12)
                };
                let mut body = log(&mut rng, lines);
                if failed {
                    body.push_str(&format!(
                        "error[E0308]: mismatched types in {}",
                        path(&mut rng)
                    ));
                }
                let code = i32::from(failed);
                (
                    "exec_command",
                    json!({ "cmd": cmd }),
                    format!("Process exited with code {code}\n{body}"),
                )
            }
            5..=6 => {
                let file = path(&mut rng);
                (
                    "read",
                    json!({ "path": file }),
                    format!("// {file}\n{}", prose(&mut rng, 40 + (call * 7919) % 90)),
                )
            }
            7..=8 => {
                let file = path(&mut rng);
                (
                    "edit",
                    json!({ "path": file, "old": prose(&mut rng, 12), "new": prose(&mut rng, 14) }),
                    "ok".to_owned(),
                )
            }
            _ => {
                let file = path(&mut rng);
                let patch = format!(
                    "*** Begin Patch\n*** Update File: {file}\n@@\n-{}\n+{}\n*** End Patch",
                    prose(&mut rng, 20),
                    prose(&mut rng, 22)
                );
                (
                    "apply_patch",
                    json!({ "input": patch }),
                    format!("Success. Updated the following files:\nM {file}"),
                )
            }
        };
        let mut content = Vec::new();
        if rng.below(3) == 0 {
            content.push(AssistantBlock::Thinking {
                thinking: prose(&mut rng, 20 + (call * 31) % 60),
            });
        }
        if rng.below(4) == 0 {
            content.push(AssistantBlock::Text {
                text: format!(
                    "I'll {} because {}.",
                    prose(&mut rng, 10),
                    prose(&mut rng, 12)
                ),
            });
        }
        content.push(AssistantBlock::ToolCall {
            id: id.clone(),
            name: name.to_owned(),
            arguments,
        });
        push(&mut session, ConversationMessage::Assistant { content })?;
        push(
            &mut session,
            ConversationMessage::ToolResult {
                tool_call_id: id,
                tool_name: name.to_owned(),
                text: output,
                is_error: false,
                useless: rng.below(40) == 0,
            },
        )?;
    }
    Ok(session)
}
