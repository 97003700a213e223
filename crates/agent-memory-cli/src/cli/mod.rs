//! Command-line parsing and dispatch. Each subcommand lives in its own module.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod block;
mod consolidate;
mod home;
mod json;
mod list;
mod mcp;
mod memory;
mod note;
mod read;
mod redact;
mod run;
mod search;
mod show;
mod status;

/// agent-memory: turn coding-agent session transcripts into durable memories.
#[derive(Debug, Parser)]
#[command(name = "agent-memory", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Scan a folder of rollouts and extract memories from them (the main job).
    Run(run::RunArgs),
    /// Consolidate the stored memories into the memory root (phase 2 alone).
    Consolidate(consolidate::ConsolidateArgs),
    /// Print the files of the memory root, one of them, or the block injected into sessions.
    Show(show::ShowArgs),
    /// Copy standard input to standard output with every secret replaced by `[REDACTED_SECRET]`.
    Redact(redact::RedactArgs),
    /// Where memory stands: state, mode, root, counts, index, budget, notes (exit 3 when
    /// disabled or unavailable).
    Status(status::StatusArgs),
    /// Search memory (every word must appear; "quotes" for a phrase).
    Search(search::SearchArgs),
    /// List the memory root as a tree with sizes.
    List(list::ListArgs),
    /// Read a memory file, a line range or a heading's section.
    Read(read::ReadArgs),
    /// Add a note to memory (redacted, indexed at once, consolidated by phase 2).
    Note(note::NoteArgs),
    /// Print exactly what would be injected this turn.
    Block(block::BlockArgs),
    /// Serve the memory tools over MCP on stdin/stdout.
    Mcp(mcp::McpArgs),
}

pub(crate) fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // Help and version succeed; a usage error is one of the "other errors" (exit 1),
            // so scripts need tell apart only 0, 1 and 3 (memory disabled or unavailable).
            let _ = error.print();
            return if error.use_stderr() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Consolidate(args) => consolidate::run(args),
        Command::Show(args) => show::run(args),
        Command::Redact(args) => redact::run(args),
        Command::Status(args) => status::run(args),
        Command::Search(args) => search::run(args),
        Command::List(args) => list::run(args),
        Command::Read(args) => read::run(args),
        Command::Note(args) => note::run(args),
        Command::Block(args) => block::run(args),
        Command::Mcp(args) => mcp::run(args),
    }
}
