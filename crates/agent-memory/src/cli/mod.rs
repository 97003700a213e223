//! Command-line parsing and dispatch. Each subcommand lives in its own module.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// agent-memory: turn coding-agent session transcripts into durable memories.
#[derive(Debug, Parser)]
#[command(name = "agent-memory", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {}

pub(crate) fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {}
}
