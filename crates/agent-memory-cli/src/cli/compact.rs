//! `agent-memory compact`: compacts one conversation (a codex rollout or a session JSONL) and
//! prints the plan, the new compaction entry and its short summary; `--out` writes the
//! compacted session so compactions can be repeated. On failure it exits non-zero and writes
//! nothing. `--check` only says whether the conversation is due or not, and why. Settings come from the flags, else the `[compaction]` table of the config file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agent_memory::compaction::compaction::{
    CompactionConfig, CompactionOptions, CompactionOutcome, CompactionSettings,
    DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS, DEFAULT_WINDOW_TOKENS, Dialect, Session,
    check_due, compact, plan_compaction, session_from_rollout,
};
use agent_memory::protocol::compaction::{CompactionEntry, CompactionPlan};
use agent_memory::sanitize::{ByteEstimate, display_safe};
use agent_memory::transcript::{ReaderOptions, read_rollout_path};
use anyhow::{Context, bail};
use serde::Serialize;

use super::exit::{self, print_safe, report_error_as};
use super::home::{CommonArgs, load_config, resolve_home, runtime};

/// The smallest window `--window` takes: below it the summarizer's own instructions and the
/// summary reserve leave no room for the conversation.
pub(crate) const MIN_WINDOW_TOKENS: u64 = 4_096;

/// Arguments of `agent-memory compact`.
#[derive(Debug, clap::Args)]
pub(crate) struct CompactArgs {
    /// The conversation: a codex rollout (`rollout-*.jsonl`) or a session JSONL written by
    /// `--out`.
    file: PathBuf,
    /// An earlier compacted session of the same conversation to continue from (its
    /// compactions, with the newer messages of FILE after them).
    #[arg(long, value_name = "SESSION.jsonl")]
    previous: Option<PathBuf>,
    /// Write the compacted session here (JSONL): the conversation's messages as they are, and
    /// the new compaction entry after them, so the next compaction can start from it.
    #[arg(long, value_name = "SESSION.jsonl", conflicts_with = "plan_only")]
    out: Option<PathBuf>,
    #[arg(
        long,
        value_name = "N",
        value_parser = super::home::at_least(MIN_WINDOW_TOKENS),
        help = format!(
            "The context window to plan for, in tokens, at least {MIN_WINDOW_TOKENS} (default: \
             the model's, from --context-window, model_context_window, the server or a known \
             model; else {DEFAULT_WINDOW_TOKENS})"
        )
    )]
    window: Option<u64>,
    #[arg(
        long,
        value_name = "N",
        help = format!(
            "Tokens reserved for the summary and the next turn (default: the config's \
             reserve_tokens, else {DEFAULT_RESERVE_TOKENS}; at least 15% of the window)"
        )
    )]
    reserve: Option<u64>,
    #[arg(
        long,
        value_name = "N",
        help = format!(
            "Tokens of recent conversation kept verbatim (default: the config's \
             keep_recent_tokens, else {DEFAULT_KEEP_RECENT_TOKENS})"
        )
    )]
    keep_recent: Option<u64>,
    /// What the summary should focus on.
    #[arg(long, value_name = "TEXT")]
    focus: Option<String>,
    /// Additional context for the summarizer: TEXT, or @FILE to read it from a file. May be
    /// given more than once.
    #[arg(long, value_name = "TEXT|@FILE")]
    context: Vec<String>,
    /// Only say whether FILE is due for compaction and why (`due: ...` or `not due: ...`;
    /// `"due"` in --json). Calls no model and writes nothing.
    #[arg(long, conflicts_with_all = ["plan_only", "out"])]
    check: bool,
    /// Plan only: print what would be summarized and kept, call no model, write nothing.
    #[arg(long)]
    plan_only: bool,
    #[command(flatten)]
    common: CommonArgs,
    /// Print one JSON object: `{"plan", "entry", "short_summary"}`.
    #[arg(long)]
    json: bool,
}

/// What `--json` prints.
#[derive(Debug, Serialize)]
struct Report<'a> {
    plan: &'a CompactionPlan,
    entry: Option<&'a CompactionEntry>,
    short_summary: Option<&'a str>,
}

/// What `--check --json` prints.
#[derive(Debug, Serialize)]
struct CheckReport {
    due: bool,
    reason: String,
    tokens: u64,
    threshold: u64,
    trigger: Option<u64>,
    window: u64,
}

pub(crate) fn run(args: CompactArgs) -> ExitCode {
    if args.check {
        // Due or not, the answer is printed and the command succeeded: exit codes mean the same
        // on every command, so "not due" is no error.
        return match check(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => report_error_as(&error, args.json),
        };
    }
    match execute(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => report_error_as(&error, args.json),
    }
}

/// The settings: the `[compaction]` table of the config file, under the flags.
fn settings(args: &CompactArgs) -> anyhow::Result<CompactionSettings> {
    let home = resolve_home(args.common.home.as_deref())?;
    let loaded = load_config(args.common.config.as_deref(), &home)?
        .config
        .section::<CompactionConfig>()?;
    for warning in &loaded.warnings {
        eprintln!("warning: {warning}");
    }
    let mut settings = loaded.value.settings();
    if let Some(reserve) = args.reserve {
        settings.reserve_tokens = Some(reserve);
    }
    if let Some(keep) = args.keep_recent {
        settings.keep_recent_tokens = keep;
    }
    Ok(settings)
}

/// `--context` values, each TEXT or the text of @FILE.
fn additional_context(values: &[String]) -> anyhow::Result<Vec<String>> {
    values
        .iter()
        .map(|value| match value.strip_prefix('@') {
            Some(path) => std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the --context file {path}")),
            None => Ok(value.clone()),
        })
        .collect()
}

/// `--check`: prints whether the conversation is due and why.
fn check(args: &CompactArgs) -> anyhow::Result<()> {
    let mut session = load_conversation(&args.file)?;
    if let Some(previous) = &args.previous {
        let earlier = read_session(previous)?;
        session = session
            .continue_from(earlier)
            .with_context(|| format!("cannot continue from {}", previous.display()))?;
    }
    let settings = settings(args)?;
    let window = args
        .window
        .or(args.common.context_window)
        .unwrap_or(DEFAULT_WINDOW_TOKENS);
    let report = check_due(window, &session.context_size(&ByteEstimate), &settings);
    let reason = report.reason();
    if args.json {
        exit::print_json(serde_json::to_value(CheckReport {
            due: report.due,
            reason,
            tokens: report.tokens,
            threshold: report.threshold,
            trigger: report.trigger,
            window: report.window,
        })?);
    } else {
        let verdict = if report.due { "due" } else { "not due" };
        print_safe(&format!("{verdict}: {reason}\n"));
    }
    Ok(())
}

fn execute(args: &CompactArgs) -> anyhow::Result<()> {
    let mut session = load_conversation(&args.file)?;
    if let Some(previous) = &args.previous {
        let earlier = read_session(previous)?;
        session = session
            .continue_from(earlier)
            .with_context(|| format!("cannot continue from {}", previous.display()))?;
    }
    let settings = settings(args)?;
    let keep_recent = settings.keep_recent_tokens;
    let options = CompactionOptions {
        settings,
        window_tokens: DEFAULT_WINDOW_TOKENS,
        focus: args.focus.clone(),
        additional_context: additional_context(&args.context)?,
        ..CompactionOptions::default()
    };
    let counter = ByteEstimate;

    if args.plan_only {
        let dialect = args
            .common
            .model
            .as_deref()
            .map_or(Dialect::Generic, Dialect::for_model);
        let window = args
            .window
            .or(args.common.context_window)
            .unwrap_or(DEFAULT_WINDOW_TOKENS);
        let options = CompactionOptions {
            window_tokens: window,
            ..options
        };
        let planned = plan_compaction(&session, &options, window, dialect, &counter)?;
        if args.json {
            print_json(&Report {
                plan: &planned.plan,
                entry: None,
                short_summary: None,
            })?;
        } else {
            let input = planned.budgets.input;
            print_safe(&plan_text(
                &args.file,
                &planned.plan,
                "plan (no model call)",
            ));
            print_safe(&format!(
                "budgets: windows of at most {input} tokens, summary at most {} tokens\n",
                planned.budgets.output
            ));
        }
        return Ok(());
    }

    let runtime = runtime()?;
    let built = args.common.build_model(&runtime, None)?;
    let model = built.client;
    let options = CompactionOptions {
        window_tokens: args
            .window
            .or(built.context_window.tokens)
            .unwrap_or(DEFAULT_WINDOW_TOKENS),
        ..options
    };
    let outcome = runtime
        .block_on(compact(&session, model.as_ref(), &options, &counter))
        .with_context(|| {
            format!(
                "compacting {} failed; nothing was written",
                args.file.display()
            )
        })?;
    let (plan, entry, would_not_shrink) = match outcome {
        CompactionOutcome::Compacted(compaction) => {
            let compaction = *compaction;
            session
                .push_compaction(compaction.entry.clone())
                .context("the new entry does not fit the session")?;
            (compaction.plan, Some(compaction.entry), false)
        }
        CompactionOutcome::NothingToSummarize(plan) => (plan, None, false),
        CompactionOutcome::WouldNotShrink(plan) => (plan, None, true),
    };
    if let Some(out) = &args.out {
        write_atomically(out, &session.to_jsonl()?)?;
    }
    if args.json {
        print_json(&Report {
            plan: &plan,
            entry: entry.as_ref(),
            short_summary: entry.as_ref().and_then(|e| e.short_summary.as_deref()),
        })?;
        return Ok(());
    }
    match &entry {
        Some(entry) => {
            print_safe(&plan_text(
                &args.file,
                &plan,
                &format!("compacted with {}", model.name()),
            ));
            if let Some(out) = &args.out {
                print_safe(&format!("wrote {}\n", out.display()));
            }
            if let Some(short) = &entry.short_summary {
                print_safe(&format!("\n{short}\n"));
            }
            print_safe(&format!("\n{}\n", entry.summary));
        }
        None if would_not_shrink => {
            print_safe(&format!(
                "not compacted: the summary and the kept messages of {} would hold {} tokens, no fewer than the {} before\n",
                args.file.display(),
                plan.tokens_after.unwrap_or_default(),
                plan.tokens_before,
            ));
            if let Some(out) = &args.out {
                print_safe(&format!("wrote {} (unchanged)\n", out.display()));
            }
        }
        None => {
            print_safe(&format!(
                "nothing to summarize in {}: its {} live messages fit the {}-token keep-recent budget{}\n",
                args.file.display(),
                plan.messages_total,
                keep_recent,
                if session.latest_compaction().is_some() {
                    "; the previous summary stays as it is"
                } else {
                    ""
                }
            ));
            if let Some(out) = &args.out {
                print_safe(&format!("wrote {} (unchanged)\n", out.display()));
            }
        }
    }
    Ok(())
}

/// Reads FILE as a session when its first line is a session entry, else as a rollout.
fn load_conversation(path: &Path) -> anyhow::Result<Session> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    if looks_like_session(&text) {
        return Session::from_jsonl(&text).with_context(|| format!("in {}", path.display()));
    }
    let read = read_rollout_path(path, &ReaderOptions::default())?;
    for diagnostic in &read.diagnostics {
        eprint!(
            "{}",
            display_safe(&format!(
                "warning: {}: skipped {diagnostic}\n",
                path.display()
            ))
        );
    }
    let session = session_from_rollout(&read.lines, &ByteEstimate)?;
    // Lines that are all unrecognised (or all metadata) are no conversation: saying "nothing to
    // summarize" would hide that the file is not what the user meant.
    if session.entries().is_empty() {
        bail!(
            "{} holds no conversation: none of its {} line(s) is a message of a codex rollout \
             or a session JSONL (written by `compact --out`)",
            path.display(),
            text.lines().filter(|line| !line.trim().is_empty()).count()
        );
    }
    Ok(session)
}

fn read_session(path: &Path) -> anyhow::Result<Session> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    if !text.trim().is_empty() && !looks_like_session(&text) {
        bail!(
            "{} is not a session file (written by `compact --out`)",
            path.display()
        );
    }
    Session::from_jsonl(&text).with_context(|| format!("in {}", path.display()))
}

/// True when the first non-blank line is `{"type": "message" | "compaction", "id": ...}`
/// without a rollout envelope's `payload`.
fn looks_like_session(text: &str) -> bool {
    let Some(first) = text.lines().find(|line| !line.trim().is_empty()) else {
        return false;
    };
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(first)
    else {
        return false;
    };
    matches!(
        map.get("type").and_then(serde_json::Value::as_str),
        Some("message" | "compaction")
    ) && map.contains_key("id")
        && !map.contains_key("payload")
}

fn plan_text(file: &Path, plan: &CompactionPlan, what: &str) -> String {
    let mut out = format!(
        "{what}: {}\n  {} messages: {} summarized, {} kept (first kept: {}){}\n  {} summarizer window(s)\n",
        file.display(),
        plan.messages_total,
        plan.messages_summarized,
        plan.messages_kept,
        plan.first_kept_entry_id.as_deref().unwrap_or("none"),
        if plan.split_turn { ", split turn" } else { "" },
        plan.windows,
    );
    match plan.tokens_after {
        Some(after) => out.push_str(&format!(
            "  tokens: {} before, {after} after\n",
            plan.tokens_before
        )),
        None => out.push_str(&format!("  tokens: {} before\n", plan.tokens_before)),
    }
    out.push_str(&format!(
        "  {} useless result(s) dropped, {} tool result(s) cut to 2000 characters, {} secret(s) redacted\n",
        plan.dropped_useless, plan.truncated_tool_results, plan.redactions
    ));
    out
}

fn print_json(report: &Report<'_>) -> anyhow::Result<()> {
    exit::print_json(serde_json::to_value(report)?);
    Ok(())
}

/// Writes `text` to `path` through a temporary file in the same folder and a rename, so a
/// failure leaves any earlier file whole.
fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{} is not a file path", path.display()))?;
    let temporary = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&temporary, text)
        .with_context(|| format!("cannot write {}", temporary.display()))?;
    std::fs::rename(&temporary, path).with_context(|| {
        let _ = std::fs::remove_file(&temporary);
        format!("cannot write {}", path.display())
    })?;
    Ok(())
}
