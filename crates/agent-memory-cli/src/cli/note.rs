//! `agent-memory note TEXT`: what `memory_note` does.

use std::process::ExitCode;

use agent_memory::introspect::NoteAuthor;
use agent_memory::protocol::introspect::{MemoryNoteRequest, MemoryNoteResult};

use super::exit::{say, warn_safe};
use super::memory::{MemoryArgs, run_tool};

/// Arguments of `agent-memory note`.
#[derive(Debug, clap::Args)]
pub(crate) struct NoteArgs {
    /// The note: one durable fact, preference or decision.
    text: String,
    /// A few words naming what the note is about.
    #[arg(long)]
    topic: Option<String>,
    #[command(flatten)]
    memory: MemoryArgs,
}

pub(crate) fn run(args: NoteArgs) -> ExitCode {
    let request = MemoryNoteRequest {
        text: args.text,
        topic: args.topic,
    };
    // Written from the command line, the note is the user's own word.
    let code = run_tool(
        &args.memory,
        |memory| memory.note_by(&request, NoteAuthor::User),
        print,
    );
    // On a shared store the note goes to the other machines now, not at the next sync.
    super::memory::sync_shared(&args.memory);
    code
}

fn print(result: &MemoryNoteResult) {
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
