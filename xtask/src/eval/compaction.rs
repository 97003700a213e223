//! `cargo xtask eval compaction`: do facts users report losing survive repeated compaction,
//! and does the summary stay the same size at steady work?
//!
//! Each scenario is a session written for this evaluation (no fixture files: the sessions are
//! built here, deterministically). Its first round plants one fact of each kind users report
//! losing (a standing rule, a correction, a decision and its reason, a failed approach, a
//! modified file, a failing test's name, a preference, a pending question, a number), followed
//! by ordinary work; every later round is more ordinary work of the same size (a request, file
//! reads, an edit, a passing test run, a short reply). After each round the session is
//! compacted with the offline engine through the real path (`memory_compaction::compact`) and
//! the entry appended, so each compaction starts from the previous one's summary.
//!
//! A fact is retained after a round when every one of its terms appears (case-insensitive,
//! backticks ignored) in the context the compaction leaves: the summary and the kept messages.
//! The planted facts lie far enough back to be summarized from the first compaction on.
//!
//! Figures, over all scenarios: `retention_r1` and `retention_r5` (facts retained after the
//! first and the fifth compaction, over facts planted), and `growth` (total summary characters
//! after the fifth compaction over those after the first). `--verbose` prints every summary.

use anyhow::{Result, bail};
use memory_compaction::compaction::{
    CompactionOptions, CompactionOutcome, CompactionSettings, Session, compact,
};
use memory_offline::OfflineEngine;
use memory_protocol::compaction::{AssistantBlock, ConversationEntry, ConversationMessage};
use memory_sanitize::ByteEstimate;
use serde_json::json;

/// Compactions per scenario.
const ROUNDS: usize = 5;
/// The conversation's context window in the evaluation, in tokens.
const WINDOW_TOKENS: u64 = 32_000;
/// Tokens of recent conversation kept verbatim.
const KEEP_RECENT_TOKENS: u64 = 4_000;
/// Ordinary work steps per round.
const STEPS_PER_ROUND: usize = 6;

/// One planted fact: its kind, the message that states it, and the terms that identify it.
struct Fact {
    kind: &'static str,
    terms: Vec<String>,
}

/// A scenario's topic: the names its messages use.
struct Topic {
    name: &'static str,
    area: &'static str,
    file: &'static str,
    test: &'static str,
    endpoint: &'static str,
    number: &'static str,
}

const TOPICS: [Topic; 3] = [
    Topic {
        name: "billing",
        area: "the billing retry loop",
        file: "src/billing/retry.rs",
        test: "caps_backoff_at_five_attempts",
        endpoint: "/api/v2/invoices",
        number: "250",
    },
    Topic {
        name: "search",
        area: "the search indexer",
        file: "crates/search/src/indexer.rs",
        test: "reindex_keeps_deleted_tombstones",
        endpoint: "/internal/v3/segments",
        number: "4096",
    },
    Topic {
        name: "parser",
        area: "the config parser",
        file: "lib/config/parser.ts",
        test: "rejects_duplicate_table_headers",
        endpoint: "/schema/v1/config.json",
        number: "17",
    },
];

pub(crate) fn run(args: &[&str]) -> Result<()> {
    let mut verbose = false;
    for arg in args {
        match *arg {
            "--verbose" => verbose = true,
            other => bail!("unknown option `{other}` (known: --verbose)"),
        }
    }
    let figures = evaluate(verbose)?;
    println!(
        "EVAL compaction rounds={ROUNDS} retention_r1={:.3} retention_r5={:.3} growth={:.3}",
        figures.retention_r1, figures.retention_r5, figures.growth
    );
    Ok(())
}

/// What the eval measures over its sessions.
struct Figures {
    /// Planted facts still in context after the first compaction, as a share of all planted.
    retention_r1: f64,
    /// The same after the last round.
    retention_r5: f64,
    /// Summary characters after the last round over those after the first.
    growth: f64,
}

fn evaluate(verbose: bool) -> Result<Figures> {
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let engine = OfflineEngine::new();
    let options = CompactionOptions {
        settings: CompactionSettings {
            keep_recent_tokens: KEEP_RECENT_TOKENS,
            ..CompactionSettings::default()
        },
        window_tokens: WINDOW_TOKENS,
        ..CompactionOptions::default()
    };
    let (mut planted, mut kept_r1, mut kept_r5) = (0usize, 0usize, 0usize);
    let (mut chars_r1, mut chars_r5) = (0usize, 0usize);
    for topic in &TOPICS {
        let (mut messages, facts) = planting(topic);
        messages.extend(work(topic, 0));
        let mut session = Session::default();
        append(&mut session, messages)?;
        let mut sizes = Vec::new();
        let mut retained = Vec::new();
        for round in 1..=ROUNDS {
            // Every round adds a round of work before compacting, so even the first summarizes
            // more than it writes (compaction refuses an entry that would not shrink the
            // context).
            append(&mut session, work(topic, round))?;
            let outcome = runtime.block_on(compact(&session, &engine, &options, &ByteEstimate))?;
            let compaction = match outcome {
                CompactionOutcome::Compacted(compaction) => compaction,
                CompactionOutcome::NothingToSummarize(_) => {
                    bail!("{}: round {round} had nothing to summarize", topic.name)
                }
                CompactionOutcome::WouldNotShrink(plan) => bail!(
                    "{}: round {round}'s entry would not shrink the context ({:?} tokens after)",
                    topic.name,
                    plan.tokens_after
                ),
            };
            let summary_chars = compaction.entry.summary.chars().count();
            session.push_compaction(compaction.entry)?;
            let context = context_text(&session);
            let found: Vec<&Fact> = facts
                .iter()
                .filter(|f| contains_all(&context, &f.terms))
                .collect();
            if verbose {
                println!(
                    "--- {} round {round}\n{}\n",
                    topic.name,
                    summary_of(&session)
                );
            }
            sizes.push(summary_chars);
            retained.push(found.len());
            if round == 1 || round == ROUNDS {
                let missing: Vec<&str> = facts
                    .iter()
                    .filter(|f| !found.iter().any(|g| std::ptr::eq(*g, *f)))
                    .map(|f| f.kind)
                    .collect();
                if !missing.is_empty() {
                    println!("{} round {round}: lost {}", topic.name, missing.join(", "));
                }
            }
        }
        println!(
            "{}: facts {} retained per round {:?}, summary chars {:?}",
            topic.name,
            facts.len(),
            retained,
            sizes
        );
        planted += facts.len();
        kept_r1 += retained.first().copied().unwrap_or(0);
        kept_r5 += retained.last().copied().unwrap_or(0);
        chars_r1 += sizes.first().copied().unwrap_or(0);
        chars_r5 += sizes.last().copied().unwrap_or(0);
    }
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    Ok(Figures {
        retention_r1: ratio(kept_r1, planted),
        retention_r5: ratio(kept_r5, planted),
        growth: ratio(chars_r5, chars_r1),
    })
}

/// The first round's messages stating one fact of each kind, and the facts.
fn planting(topic: &Topic) -> (Vec<ConversationMessage>, Vec<Fact>) {
    let Topic {
        name,
        area,
        file,
        test,
        endpoint,
        number,
    } = topic;
    let terms = |list: &[&str]| list.iter().map(|t| (*t).to_owned()).collect::<Vec<_>>();
    let mut messages = vec![user(&format!(
        "We need to rework {area}. Always run `cargo fmt --all` before you commit anything."
    ))];
    let mut facts = vec![Fact {
        kind: "standing rule",
        terms: terms(&["cargo fmt --all"]),
    }];
    messages.push(say(&format!(
        "I'll start by calling the old {name} endpoint."
    )));
    messages.push(user(&format!(
        "No, that is wrong: do not call the old endpoint, use {endpoint} instead."
    )));
    facts.push(Fact {
        kind: "correction",
        terms: terms(&[endpoint]),
    });
    messages.push(say(&format!(
        "I'll use a BTreeMap instead of a HashMap because the {name} report must come out sorted."
    )));
    facts.push(Fact {
        kind: "decision and reason",
        terms: terms(&["BTreeMap", "sorted"]),
    });
    let attempt = format!(
        "{}_TIMEOUT_SECS=30 cargo test -p {name} {test}",
        name.to_uppercase()
    );
    messages.push(call("f1", "exec_command", json!({ "cmd": attempt })));
    messages.push(result(
        "f1",
        &format!(
            "running 1 test\ntest {name}::{test} ... FAILED\n\nfailures:\n    {name}::{test}\n\ntest result: FAILED. 0 passed; 1 failed\nProcess exited with code 101"
        ),
    ));
    facts.push(Fact {
        kind: "failed approach",
        terms: terms(&[&format!("{}_TIMEOUT_SECS=30", name.to_uppercase())]),
    });
    facts.push(Fact {
        kind: "failing test name",
        terms: terms(&[test]),
    });
    messages.push(call(
        "p1",
        "apply_patch",
        json!({ "input": format!("*** Begin Patch\n*** Update File: {file}\n@@\n-old\n+new\n*** End Patch") }),
    ));
    messages.push(result(
        "p1",
        &format!("Success. Updated the following files:\nM {file}"),
    ));
    facts.push(Fact {
        kind: "modified file",
        terms: terms(&[file]),
    });
    messages.push(user("I prefer small commits with one change each, please."));
    facts.push(Fact {
        kind: "preference",
        terms: terms(&["small commits"]),
    });
    messages.push(user(&format!(
        "The limit must stay at {number} requests per minute whatever you change."
    )));
    facts.push(Fact {
        kind: "number",
        terms: terms(&[number, "requests per minute"]),
    });
    messages.push(user(&format!(
        "Should we also move the {name} CLI onto the new client?"
    )));
    facts.push(Fact {
        kind: "pending question",
        terms: terms(&[&format!("{name} CLI onto the new client")]),
    });
    (messages, facts)
}

/// One round of ordinary work: a request, then steps that read a module, edit it and run its
/// tests (which pass), then a short reply.
fn work(topic: &Topic, round: usize) -> Vec<ConversationMessage> {
    let name = topic.name;
    let mut messages = vec![user(&format!(
        "Next, port part {round} of {} to the new client, module by module.",
        topic.area
    ))];
    for step in 0..STEPS_PER_ROUND {
        let module = format!("src/{name}/part{round}/module{step}.rs");
        let id = format!("w{round}_{step}");
        messages.push(call(&format!("{id}r"), "read", json!({ "path": module })));
        let body: String = (0..60)
            .map(|line| format!("    let value_{line} = old_client.fetch({line});\n"))
            .collect();
        messages.push(result(
            &format!("{id}r"),
            &format!("fn port() {{\n{body}}}\n"),
        ));
        messages.push(call(
            &format!("{id}p"),
            "apply_patch",
            json!({ "input": format!("*** Begin Patch\n*** Update File: {module}\n@@\n-old_client\n+new_client\n*** End Patch") }),
        ));
        messages.push(result(
            &format!("{id}p"),
            &format!("Success. Updated the following files:\nM {module}"),
        ));
        let test = format!("cargo test -p {name} part{round}_module{step}");
        messages.push(call(
            &format!("{id}t"),
            "exec_command",
            json!({ "cmd": test }),
        ));
        messages.push(result(
            &format!("{id}t"),
            "running 3 tests\n...\ntest result: ok. 3 passed; 0 failed\nProcess exited with code 0",
        ));
    }
    messages.push(say(&format!(
        "Part {round} is ported: every module compiles against the new client and its tests pass."
    )));
    messages
}

fn user(text: &str) -> ConversationMessage {
    ConversationMessage::user(text)
}

fn say(text: &str) -> ConversationMessage {
    ConversationMessage::assistant_text(text)
}

fn call(id: &str, name: &str, arguments: serde_json::Value) -> ConversationMessage {
    ConversationMessage::tool_call(id, name, arguments)
}

fn result(id: &str, text: &str) -> ConversationMessage {
    ConversationMessage::tool_result(id, "exec_command", text, false)
}

/// Appends messages with fresh ids.
fn append(session: &mut Session, messages: Vec<ConversationMessage>) -> Result<()> {
    for message in messages {
        let id = session.fresh_id("m");
        session.push_message(ConversationEntry { id, message })?;
    }
    Ok(())
}

/// The latest summary.
fn summary_of(session: &Session) -> String {
    session
        .latest_compaction()
        .map(|(_, entry)| entry.summary.clone())
        .unwrap_or_default()
}

/// What the context holds after the latest compaction: its summary and the kept messages.
fn context_text(session: &Session) -> String {
    let mut out = summary_of(session);
    for entry in session.live().messages {
        out.push('\n');
        match &entry.message {
            ConversationMessage::User { text } | ConversationMessage::ToolResult { text, .. } => {
                out.push_str(text);
            }
            ConversationMessage::Assistant { content } => {
                for block in content {
                    match block {
                        AssistantBlock::Text { text } => out.push_str(text),
                        AssistantBlock::Thinking { thinking } => out.push_str(thinking),
                        AssistantBlock::ToolCall { arguments, .. } => {
                            out.push_str(&arguments.to_string());
                        }
                    }
                }
            }
            ConversationMessage::ShellExecution {
                command, output, ..
            } => {
                out.push_str(command);
                out.push_str(output);
            }
        }
    }
    out
}

/// True when every term appears in `text`, ignoring case and backticks.
fn contains_all(text: &str, terms: &[String]) -> bool {
    let text = text.replace('`', "").to_lowercase();
    terms
        .iter()
        .all(|term| text.contains(&term.replace('`', "").to_lowercase()))
}

#[cfg(test)]
mod tests {
    /// The eval runs in a few seconds, so its targets are held by `cargo test`: a change to the
    /// offline summarizer or to compaction that loses planted facts or lets the summary grow
    /// fails here, not only when someone runs the eval.
    #[test]
    fn the_offline_engine_meets_the_compaction_targets() {
        let figures = super::evaluate(false).unwrap();
        assert!(
            figures.retention_r1 >= 0.95,
            "retention_r1 {}",
            figures.retention_r1
        );
        assert!(
            figures.retention_r5 >= 0.95,
            "retention_r5 {}",
            figures.retention_r5
        );
        assert!(figures.growth <= 1.3, "growth {}", figures.growth);
    }
}
