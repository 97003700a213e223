//! Command-line parsing and dispatch. Each subcommand lives in its own module.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod block;
mod cite;
mod codex;
mod compact;
mod consolidate;
mod exit;
mod forget;
mod goal;
mod home;
mod interrupt;
mod json;
mod list;
mod mcp;
mod memory;
mod migrate;
mod note;
mod read;
mod redact;
mod run;
mod search;
mod show;
mod status;
mod store;
mod wm;

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
    /// Compact a conversation (a codex rollout or a session JSONL): summarize the older part,
    /// keep the recent part.
    Compact(compact::CompactArgs),
    /// Print the files of the memory root, one of them, or the block injected into sessions.
    Show(show::ShowArgs),
    /// Copy standard input to standard output with every secret replaced by `[REDACTED_SECRET]`.
    Redact(redact::RedactArgs),
    /// A thread's goal: set, show, edit, budget, pause, resume, clear, account, next, update.
    Goal(goal::GoalArgs),
    /// Record which memories an assistant message (on standard input) cited.
    Cite(cite::CiteArgs),
    /// Forget one session's memories, or everything with --all.
    Forget(forget::ForgetArgs),
    /// Working memory: merge operations, recover malformed ones, commit, assemble, show.
    Wm(wm::WmArgs),
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
    /// Bring the state store's schema up to this build and print each owner's version.
    Migrate(migrate::MigrateArgs),
}

pub(crate) fn main() -> ExitCode {
    // A bad command line exits 2 (clap's convention, listed in the README's exit codes).
    let cli = Cli::parse();
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Consolidate(args) => consolidate::run(args),
        Command::Compact(args) => compact::run(args),
        Command::Show(args) => show::run(args),
        Command::Redact(args) => redact::run(args),
        Command::Goal(args) => goal::run(args),
        Command::Cite(args) => cite::run(args),
        Command::Forget(args) => forget::run(args),
        Command::Wm(args) => wm::run(args),
        Command::Status(args) => status::run(args),
        Command::Search(args) => search::run(args),
        Command::List(args) => list::run(args),
        Command::Read(args) => read::run(args),
        Command::Note(args) => note::run(args),
        Command::Block(args) => block::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Migrate(args) => migrate::run(args),
    }
}
