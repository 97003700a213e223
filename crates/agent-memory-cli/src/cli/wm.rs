//! `agent-memory wm`: the working memory by hand.
//!
//! - `merge --old OLD.md --ops OPS.json [--json]`: apply the `update_working_memory` tool's
//!   arguments to a document through the guards; prints the merged document (the guards'
//!   changes go to standard error), or with `--json` `{"document", "guards": [{"section",
//!   "guard", "op_in", "op_out", "reason"}]}`;
//! - `recover FILE [--json]`: read malformed tool arguments and print what each section's
//!   operation came to;
//! - `commit SESSION_DIR [--keep N] [--model M] [--json]`: archive the session's older
//!   messages and update its working memory (exit status 1 when the update failed);
//! - `append SESSION_DIR [--json]`: add the messages on standard input (one conversation
//!   entry per line) to the session, creating its folder when needed;
//! - `assemble SESSION_DIR --budget N [--json]`: the context a host would send, and what it
//!   left out;
//! - `show SESSION_DIR`: the window state, the archives and the working memory.
//!
//! A session folder holds `messages.jsonl`, one conversation entry per line
//! (`{"id": "m1", "message": {"role": "user", "text": "..."}}`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agent_memory::protocol::working_memory::{GuardRecord, SectionOp, WorkingMemorySection};
use agent_memory::working_memory::session::{
    Archive, ArchiveStatus, CommitReport, CommitStatus, LeftOut, MESSAGES_FILE, Session,
    SessionOptions, format_messages, parse_messages,
};
use agent_memory::working_memory::{MergeOptions, RecoveryPath, merge_text, read_arguments};
use anyhow::{Context, bail};
use serde_json::json;

use super::exit::{print_json, print_safe, say, warn_safe};
use super::home::{CommonArgs, runtime};

/// Arguments of `agent-memory wm`.
#[derive(Debug, clap::Args)]
pub(crate) struct WmArgs {
    #[command(subcommand)]
    command: WmCommand,
}

#[derive(Debug, clap::Subcommand)]
enum WmCommand {
    /// Apply the update_working_memory tool's arguments to a document, through the guards.
    Merge {
        /// The current document (markdown).
        #[arg(long)]
        old: PathBuf,
        /// The tool's arguments: {"sections": {"Session Title": {"op": "KEEP"}, ...}}.
        #[arg(long)]
        ops: PathBuf,
        /// Print {"document", "guards"} as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Recover section operations from malformed tool arguments.
    Recover {
        /// The raw arguments as the model wrote them.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Archive a session's older messages and update its working memory.
    Commit {
        /// The session folder (with messages.jsonl).
        session_dir: PathBuf,
        /// Recent messages to keep live (stored for later commits); default: the stored count.
        #[arg(long)]
        keep: Option<u32>,
        #[command(flatten)]
        common: Box<CommonArgs>,
        /// Print the commit report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add messages from standard input (one conversation entry per line) to a session.
    Append {
        /// The session folder (created when missing).
        session_dir: PathBuf,
        /// Print what the append did as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the context a host would send: instructions with the working memory, messages.
    Assemble {
        /// The session folder.
        session_dir: PathBuf,
        /// Token budget of the whole context, the reply's reserve included.
        #[arg(long)]
        budget: u64,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the window state, the archives and the working memory.
    Show {
        /// The session folder.
        session_dir: PathBuf,
        /// Print one JSON object: the window state, the archives and the working memory.
        #[arg(long)]
        json: bool,
    },
}

pub(crate) fn run(args: WmArgs) -> ExitCode {
    let json = match &args.command {
        WmCommand::Merge { json, .. }
        | WmCommand::Recover { json, .. }
        | WmCommand::Commit { json, .. }
        | WmCommand::Append { json, .. }
        | WmCommand::Assemble { json, .. }
        | WmCommand::Show { json, .. } => *json,
    };
    let result = match args.command {
        WmCommand::Merge { old, ops, json } => merge(&old, &ops, json),
        WmCommand::Recover { file, json } => recover(&file, json),
        WmCommand::Commit {
            session_dir,
            keep,
            common,
            json,
        } => commit(&session_dir, keep, &common, json),
        WmCommand::Append { session_dir, json } => append(&session_dir, json),
        WmCommand::Assemble {
            session_dir,
            budget,
            json,
        } => assemble(&session_dir, budget, json),
        WmCommand::Show { session_dir, json } => show(&session_dir, json),
    };
    match result {
        Ok(code) => code,
        Err(error) => super::exit::report_error_as(&error, json),
    }
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

fn guard_line(record: &GuardRecord) -> String {
    let op_in = if record.op_in.is_empty() {
        "(none)"
    } else {
        record.op_in.as_str()
    };
    format!(
        "guard {}: {} -> {} ({}): {}",
        record.section,
        op_in,
        record.op_out.as_str(),
        serde_json::to_value(record.guard)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned))
            .unwrap_or_default(),
        record.reason
    )
}

fn merge(old: &Path, ops: &Path, as_json: bool) -> anyhow::Result<ExitCode> {
    let document = read(old)?;
    let arguments = read(ops)?;
    let Some(recovery) = read_arguments(&arguments) else {
        bail!(
            "{} holds no readable section operation: expected {{\"sections\": {{\"Session Title\": {{\"op\": \"KEEP\"}}, ...}}}}",
            ops.display()
        );
    };
    if recovery.path == RecoveryPath::Empty {
        warn_safe!(
            "warning: {} holds no operation: every section is kept",
            ops.display()
        );
    } else if recovery.path != RecoveryPath::Exact {
        warn_safe!(
            "note: {} was not well-formed tool arguments; read as {}",
            ops.display(),
            path_name(recovery.path)
        );
    }
    let outcome = merge_text(&document, &recovery.ops, &MergeOptions::default());
    let result = outcome.to_result();
    if as_json {
        print_json(serde_json::to_value(&result)?);
    } else {
        print_safe(&result.document);
        for record in &result.guards {
            warn_safe!("{}", guard_line(record));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn path_name(path: RecoveryPath) -> &'static str {
    match path {
        RecoveryPath::Exact => "exact",
        RecoveryPath::Unwrapped => "unwrapped",
        RecoveryPath::Repaired => "repaired",
        RecoveryPath::Empty => "empty (no operation: every section is kept)",
    }
}

fn recover(file: &Path, as_json: bool) -> anyhow::Result<ExitCode> {
    let raw = read(file)?;
    let Some(recovery) = read_arguments(&raw) else {
        bail!(
            "no section operation could be recovered from {}",
            file.display()
        );
    };
    let arguments = recovery.ops.to_update();
    if as_json {
        let problems: Vec<serde_json::Value> = WorkingMemorySection::ALL
            .iter()
            .filter_map(|section| {
                let read = recovery.ops.get(*section)?;
                let problem = read.problem.as_ref()?;
                Some(json!({"section": section.header(), "problem": problem}))
            })
            .collect();
        let recovered: Vec<&str> = recovery
            .recovered()
            .iter()
            .map(|section| section.header())
            .collect();
        let out = json!({
            "read_as": path_name(recovery.path),
            "recovered": recovered,
            "problems": problems,
            "arguments": arguments,
        });
        print_json(serde_json::to_value(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    say!("read as: {}", path_name(recovery.path));
    for (section, op) in arguments.sections.iter() {
        let described = match (recovery.ops.get(section), op) {
            (None, _) => "not recovered (kept)".to_owned(),
            (Some(_), SectionOp::Keep) => "KEEP".to_owned(),
            (Some(_), SectionOp::Update { content }) => {
                format!("UPDATE ({} characters)", content.chars().count())
            }
            (Some(_), SectionOp::Append { items }) => format!("APPEND ({} items)", items.len()),
        };
        let problem = recovery
            .ops
            .get(section)
            .and_then(|read| read.problem.as_deref())
            .map(|problem| format!("; {problem}"))
            .unwrap_or_default();
        say!("{section}: {described}{problem}");
    }
    Ok(ExitCode::SUCCESS)
}

fn open_session(dir: &Path) -> anyhow::Result<Session> {
    if !dir.is_dir() {
        bail!(
            "no session at {}: expected a folder with {MESSAGES_FILE} (one conversation entry per line)",
            dir.display()
        );
    }
    Session::open(dir, SessionOptions::default())
        .with_context(|| format!("cannot open the session at {}", dir.display()))
}

fn commit(
    dir: &Path,
    keep: Option<u32>,
    common: &CommonArgs,
    as_json: bool,
) -> anyhow::Result<ExitCode> {
    let mut session = open_session(dir)?;
    let runtime = runtime()?;
    let model = common.build_model(&runtime, None)?.client;
    let report = runtime.block_on(async {
        match keep {
            Some(keep) => session.commit(model.as_ref(), keep).await,
            None => session.flush(model.as_ref()).await,
        }
    })?;
    if as_json {
        let mut value = serde_json::to_value(&report)?;
        if let Some(map) = value.as_object_mut() {
            map.insert("model".into(), model.name().into());
        }
        print_json(serde_json::to_value(&value)?);
    } else {
        print_safe(&commit_text(&report, &model.name()));
    }
    Ok(match report.status {
        CommitStatus::Failed => ExitCode::FAILURE,
        CommitStatus::Done | CommitStatus::Skipped => ExitCode::SUCCESS,
    })
}

fn commit_text(report: &CommitReport, model: &str) -> String {
    let archive = report.archive.as_deref().unwrap_or("-");
    let mut out = match report.status {
        CommitStatus::Skipped => format!(
            "nothing to commit: {}\n",
            report.reason.as_deref().unwrap_or("no reason given")
        ),
        CommitStatus::Done => format!(
            "{archive}: done ({model}): {} message(s) archived, {} sent in {} window(s), {} model call(s)\n",
            report.archived_messages, report.sent_messages, report.windows, report.model_calls
        ),
        CommitStatus::Failed => format!(
            "{archive}: FAILED ({model}): the working memory was not updated: {}\n  nothing was archived or written; the messages stay live and the next commit retries them\n",
            report.error.as_deref().unwrap_or("unknown error")
        ),
    };
    if !report.cut_messages.is_empty() {
        out.push_str(&format!(
            "  {} message(s) sent cut to head and tail to fit the model: {}\n",
            report.cut_messages.len(),
            id_list(&report.cut_messages)
        ));
    }
    if report.recovered > 0 {
        out.push_str(&format!(
            "  {} answer(s) recovered from malformed output\n",
            report.recovered
        ));
    }
    if report.fallbacks > 0 {
        out.push_str(&format!(
            "  {} update(s) fell back to re-creating the document\n",
            report.fallbacks
        ));
    }
    for record in &report.guards {
        out.push_str(&format!("  {}\n", guard_line(record)));
    }
    out.push_str(&format!(
        "live messages keep {}, pending tokens {}, cursor {}\n",
        report.keep_recent_count,
        report.pending_tokens,
        report.cursor.as_deref().unwrap_or("(none)")
    ));
    out
}

fn append(dir: &Path, as_json: bool) -> anyhow::Result<ExitCode> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
        .context("cannot read the messages from standard input")?;
    let entries = parse_messages(&text, Path::new("standard input"))?;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the session folder {}", dir.display()))?;
    let mut session = open_session(dir)?;
    let count = entries.len();
    let outcome = session.append(entries)?;
    if as_json {
        let value = json!({
            "appended": count,
            "live_messages": session.messages().len(),
            "pending_tokens": outcome.pending_tokens,
            "commit_due": outcome.commit_due,
        });
        print_json(serde_json::to_value(&value)?);
    } else {
        say!(
            "appended {count} message(s): {} live, pending tokens {}{}",
            session.messages().len(),
            outcome.pending_tokens,
            if outcome.commit_due {
                ", a commit is due"
            } else {
                ""
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn assemble(dir: &Path, budget: u64, as_json: bool) -> anyhow::Result<ExitCode> {
    let session = open_session(dir)?;
    let assembly = session.assemble(budget)?;
    if as_json {
        print_json(serde_json::to_value(&assembly)?);
        return Ok(ExitCode::SUCCESS);
    }
    match &assembly.instructions {
        Some(instructions) => {
            say!("=== instructions ===");
            print_safe(instructions);
        }
        None => say!("=== no instructions: the session has no working memory yet ==="),
    }
    say!("\n=== messages ({}) ===", assembly.messages.len());
    say!("{}", format_messages(&assembly.messages));
    let stats = &assembly.stats;
    say!(
        "\n=== budget ===\nbudget {}, reserved for the reply {}, instructions {} (working memory {}, {} item(s) trimmed{}), messages {} archived + {} live ({} dropped), total {}",
        stats.budget,
        stats.reserved_for_reply,
        stats.instruction_tokens,
        stats.working_memory_tokens,
        stats.working_memory_trimmed_items,
        if stats.working_memory_omitted {
            ", omitted: it does not fit"
        } else {
            ""
        },
        stats.archived_messages,
        stats.live_messages,
        stats.dropped_messages,
        stats.estimated_tokens
    );
    print_safe(&left_out_text(&assembly.left_out));
    Ok(ExitCode::SUCCESS)
}

/// Most message ids named in a left-out line.
const NAMED_IDS: usize = 12;

fn id_list(ids: &[String]) -> String {
    let mut out = ids
        .iter()
        .take(NAMED_IDS)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > NAMED_IDS {
        out.push_str(&format!(" and {} more", ids.len() - NAMED_IDS));
    }
    out
}

fn left_out_text(left_out: &LeftOut) -> String {
    if left_out.is_empty() {
        return "left out: nothing\n".to_owned();
    }
    let mut out = String::from("left out:\n");
    if !left_out.messages.is_empty() {
        out.push_str(&format!(
            "  {} message(s) dropped for the budget: {}\n",
            left_out.messages.len(),
            id_list(&left_out.messages)
        ));
    }
    if !left_out.cut_messages.is_empty() {
        out.push_str(&format!(
            "  {} message(s) cut to head and tail: {}\n",
            left_out.cut_messages.len(),
            id_list(&left_out.cut_messages)
        ));
    }
    if left_out.working_memory {
        out.push_str("  the working memory: not even its fixed sections fit\n");
    } else {
        if left_out.working_memory_items > 0 {
            out.push_str(&format!(
                "  {} older item(s) of the working memory (its archive holds them)\n",
                left_out.working_memory_items
            ));
        }
        if left_out.working_memory_cut {
            out.push_str("  the middle of the working memory, cut to head and tail\n");
        }
    }
    out
}

fn status_name(archive: &Archive) -> &'static str {
    match archive.status {
        ArchiveStatus::Done => "done",
        ArchiveStatus::Failed => "failed",
        ArchiveStatus::Pending => "pending",
    }
}

fn show(dir: &Path, as_json: bool) -> anyhow::Result<ExitCode> {
    let session = open_session(dir)?;
    let state = session.state();
    if as_json {
        let mut archives = Vec::new();
        for archive in session.archives()? {
            let failure = match archive.status {
                ArchiveStatus::Failed => archive.failure()?.map(|failure| failure.error),
                ArchiveStatus::Done | ArchiveStatus::Pending => None,
            };
            archives.push(json!({
                "name": archive.name(),
                "status": status_name(&archive),
                "messages": archive.meta()?.map(|meta| meta.message_count),
                "error": failure,
            }));
        }
        let working_memory = session
            .working_memory()?
            .map(|(archive, overview)| json!({"archive": archive.name(), "text": overview}));
        let value = json!({
            "session_dir": dir.display().to_string(),
            "live_messages": session.messages().len(),
            "live_tokens": session.messages().iter().map(|m| m.tokens).sum::<u64>(),
            "pending_tokens": state.pending_tokens,
            "commit_due": session.commit_due(),
            "keep_recent": state.keep_recent_count,
            "cursor": state.cursor,
            "archives": archives,
            "working_memory": working_memory,
        });
        print_json(value);
        return Ok(ExitCode::SUCCESS);
    }
    say!("session: {}", dir.display());
    say!(
        "live messages: {} ({} estimated tokens)",
        session.messages().len(),
        session.messages().iter().map(|m| m.tokens).sum::<u64>()
    );
    say!(
        "pending tokens: {} (a commit is due at {}{})",
        state.pending_tokens,
        session.options().token_budget / 2,
        if session.commit_due() {
            ", due now"
        } else {
            ""
        }
    );
    say!("keep recent: {}", state.keep_recent_count);
    say!(
        "cursor: {}",
        state
            .cursor
            .as_deref()
            .unwrap_or("(none: nothing summarized yet)")
    );
    let archives = session.archives()?;
    say!("archives: {}", archives.len());
    for archive in &archives {
        let count = archive
            .meta()?
            .map(|meta| meta.message_count.to_string())
            .unwrap_or_else(|| "?".to_owned());
        let mut line = format!(
            "  {}: {} ({count} message(s))",
            archive.name(),
            status_name(archive)
        );
        if let Some(failure) = archive.failure()?
            && archive.status == ArchiveStatus::Failed
        {
            line.push_str(&format!(": {}", failure.error));
        }
        say!("{line}");
    }
    match session.working_memory()? {
        Some((archive, overview)) => {
            say!("\nworking memory (from {}):\n", archive.name());
            print_safe(&overview);
        }
        None => say!("\nno working memory yet: run `agent-memory wm commit`"),
    }
    Ok(ExitCode::SUCCESS)
}
