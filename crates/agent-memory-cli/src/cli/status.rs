//! `agent-memory status`: where memory stands, with live numbers (what `memory_status` returns).

use std::process::ExitCode;

use agent_memory::prompts::introspect::format_utc;
use agent_memory::protocol::introspect::MemoryStatusResult;
use agent_memory::write::skip_reason::{FailedJob, failed_jobs_of_home};

use super::exit::print_safe;
use super::exit::{report_error_as, warn_safe};
use super::home::{load_config, resolve_home, runtime};
use super::memory::{MemoryArgs, open_memory, print_json, state_exit};

/// Arguments of `agent-memory status`.
#[derive(Debug, clap::Args)]
pub(crate) struct StatusArgs {
    #[command(flatten)]
    memory: MemoryArgs,
}

pub(crate) fn run(args: StatusArgs) -> ExitCode {
    let memory = match open_memory(&args.memory) {
        Ok(memory) => memory,
        Err(error) => return report_error_as(&error, args.memory.json),
    };
    let status = memory.status();
    // The memory state above is the answer; a store that cannot be read only loses this part.
    let failed = failed_jobs(&args.memory).unwrap_or_else(|error| {
        warn_safe!(
            "warning: cannot read the failed jobs: {}",
            super::exit::error_text(&error)
        );
        Vec::new()
    });
    if args.memory.json {
        let mut value = serde_json::to_value(&status).unwrap_or_default();
        if let Some(object) = value.as_object_mut() {
            object.insert(
                "failed_jobs".to_owned(),
                serde_json::to_value(&failed).unwrap_or_default(),
            );
        }
        print_json(&value);
    } else {
        print_safe(&render(&status));
        print_safe(&render_failed(&failed, status.as_of));
    }
    state_exit(status.state)
}

/// The home's failed extractions, from its state store (none when it has no store yet).
fn failed_jobs(args: &MemoryArgs) -> anyhow::Result<Vec<FailedJob>> {
    let home = resolve_home(args.home.as_deref())?;
    let loaded = load_config(args.config.as_deref(), &home)?;
    let selection = args.store.selection(&loaded.store);
    Ok(runtime()?.block_on(failed_jobs_of_home(&home, &selection))?)
}

/// `failed jobs: N` and one line per job: its rollout, attempts, when it is retried, why.
fn render_failed(failed: &[FailedJob], now: i64) -> String {
    if failed.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "failed jobs: {} (`agent-memory run --retry-failed` retries them now)\n",
        failed.len()
    );
    for job in failed {
        let retry = match job.retry_after_at {
            Some(at) if at > now => format!("next retry {}", format_utc(at)),
            Some(_) => "retried by the next run".to_owned(),
            None => "waits for the rollout to change".to_owned(),
        };
        out.push_str(&format!(
            "  {}: {} attempt(s), {retry}: {}\n",
            job.rollout_path,
            job.attempts,
            job.last_error.as_deref().unwrap_or("unknown error")
        ));
    }
    out
}

/// The status as text, one fact per line.
fn render(status: &MemoryStatusResult) -> String {
    let mut out = format!(
        "state: {}\nmode: {}\nscope: {}\nroot: {}\nfiles: {} ({} bytes), revision {}",
        status.state.as_str(),
        wire_name(&status.mode),
        wire_name(&status.scope),
        status.root,
        status.files,
        status.bytes,
        status.revision
    );
    if let Some(at) = status.last_write_at {
        out.push_str(&format!(", last write {}", format_utc(at)));
    }
    out.push('\n');
    match status.summary {
        Some(summary) => out.push_str(&format!(
            "summary: {}% - {}/{} tokens\n",
            summary.percent, summary.tokens, summary.budget_tokens
        )),
        None => out.push_str("summary: none\n"),
    }
    out.push_str(&format!(
        "index: {}, {} files, {} blocks ({} re-indexed now)",
        wire_name(&status.index.state),
        status.index.files,
        status.index.blocks,
        status.index.reindexed_files
    ));
    if let Some(problem) = &status.index.problem {
        out.push_str(&format!(": {problem}"));
    }
    out.push('\n');
    out.push_str(&format!(
        "notes: {} files, {} not yet consolidated, {} of {} today (at most {} bytes each)\n",
        status.notes.files,
        status.notes.pending,
        status.notes.today,
        status.notes.daily_limit,
        status.notes.max_note_bytes
    ));
    if let Some(snapshot) = &status.last_injected {
        out.push_str(&format!(
            "last injected: {} as of {}\n",
            snapshot.state.as_str(),
            format_utc(snapshot.as_of)
        ));
    }
    if let Some(problem) = &status.problem {
        out.push_str(&format!("problem: {problem}\n"));
    }
    out.push_str(&format!("as of: {}\n", format_utc(status.as_of)));
    out
}

/// The wire name of a unit enum (`"read_only"`, `"fresh"`, ...), from its serialization.
fn wire_name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_default()
}
