//! `agent-memory note TEXT`: what `memory_note` does; with `--replace NOTE` or `--delete NOTE`
//! (and the `--version` read) it replaces or deletes a note.

use std::process::ExitCode;

use agent_memory::introspect::NoteAuthor;
use agent_memory::protocol::introspect::{MemoryNoteRequest, MemoryNoteResult};

use super::exit::{say, warn_safe};
use super::memory::{MemoryArgs, run_tool_in};

/// Arguments of `agent-memory note`.
#[derive(Debug, clap::Args)]
pub(crate) struct NoteArgs {
    /// The note: one durable fact, preference or decision.
    #[arg(required_unless_present = "delete")]
    text: Option<String>,
    /// A few words naming what the note is about.
    #[arg(long)]
    topic: Option<String>,
    /// Replace this note (`notes/<name>.md`) with TEXT; needs `--version`.
    #[arg(
        long,
        value_name = "NOTE",
        conflicts_with = "delete",
        requires = "version"
    )]
    replace: Option<String>,
    /// Delete this note (`notes/<name>.md`); needs `--version`.
    #[arg(
        long,
        value_name = "NOTE",
        conflicts_with = "text",
        requires = "version"
    )]
    delete: Option<String>,
    /// The version `agent-memory read NOTE --json` showed: refused when the note changed since.
    #[arg(long)]
    version: Option<String>,
    /// The working directory the note is about: it is saved as that project's note, kept out
    /// of other projects' blocks and recall (see `agent-memory block --cwd`).
    #[arg(long, value_name = "DIR")]
    cwd: Option<std::path::PathBuf>,
    #[command(flatten)]
    memory: MemoryArgs,
}

pub(crate) fn run(args: NoteArgs) -> ExitCode {
    let request = MemoryNoteRequest {
        text: args.text.unwrap_or_default(),
        topic: args.topic,
        id: args.replace.or_else(|| args.delete.clone()),
        version: args.version,
        delete: args.delete.is_some(),
    };
    let replaced = request.id.is_some() && !request.delete;
    // Written from the command line, the note is the user's own word.
    let code = run_tool_in(
        &args.memory,
        args.cwd.as_deref(),
        |memory| memory.note_by(&request, NoteAuthor::User),
        |result| print(result, replaced),
    );
    // On a shared store the note goes to the other machines now, not at the next sync.
    super::memory::sync_shared(&args.memory);
    code
}

fn print(result: &MemoryNoteResult, replaced: bool) {
    if result.deleted {
        say!("deleted {}", result.path);
        return;
    }
    if replaced {
        say!(
            "replaced {} (now version {})",
            result.path,
            result.version.as_deref().unwrap_or("unknown")
        );
        return;
    }
    say!(
        "saved {} ({} bytes{}; note {} of {} today)",
        result.path,
        result.bytes,
        if result.redacted {
            ", secrets redacted"
        } else {
            ""
        },
        result.notes_today,
        result.daily_limit
    );
    if let Some(warning) = &result.warning {
        warn_safe!("warning: {warning}");
    }
}
