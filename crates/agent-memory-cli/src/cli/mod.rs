//! Command-line parsing and dispatch. Each subcommand lives in its own module.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cite;
mod codex;
mod consolidate;
mod exit;
mod forget;
mod goal;
mod home;
mod interrupt;
mod json;
mod redact;
mod run;
mod show;
mod store;

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
    /// A thread's goal: set, show, edit, budget, pause, resume, clear, account, next, update.
    Goal(goal::GoalArgs),
    /// Record which memories an assistant message (on standard input) cited.
    Cite(cite::CiteArgs),
    /// Forget one session's memories, or everything with --all.
    Forget(forget::ForgetArgs),
}

pub(crate) fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Consolidate(args) => consolidate::run(args),
        Command::Show(args) => show::run(args),
        Command::Redact(args) => redact::run(args),
        Command::Goal(args) => goal::run(args),
        Command::Cite(args) => cite::run(args),
        Command::Forget(args) => forget::run(args),
    }
}
