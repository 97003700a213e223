//! `agent-memory list [PATH]`: what `memory_list` answers, as a tree.

use std::process::ExitCode;

use agent_memory::introspect::{DEFAULT_LIST_DEPTH, MAX_LIST_DEPTH};
use agent_memory::protocol::introspect::{MemoryEntryType, MemoryListRequest, MemoryListResult};

use super::exit::{say, warn_safe};
use super::memory::{MemoryArgs, run_tool};

/// Arguments of `agent-memory list`.
#[derive(Debug, clap::Args)]
pub(crate) struct ListArgs {
    /// Folder relative to the memory root (default: the root).
    path: Option<String>,
    #[arg(
        long,
        value_parser = parse_depth,
        help = format!("Levels to descend (1 to {MAX_LIST_DEPTH}; default {DEFAULT_LIST_DEPTH})")
    )]
    depth: Option<u32>,
    #[command(flatten)]
    memory: MemoryArgs,
}

pub(crate) fn run(args: ListArgs) -> ExitCode {
    let request = MemoryListRequest {
        path: args.path,
        depth: args.depth,
    };
    run_tool(&args.memory, |memory| memory.list(&request), print)
}

/// `--depth`: a whole number within the library's range.
fn parse_depth(text: &str) -> Result<u32, String> {
    match text.parse::<u32>() {
        Ok(depth) if (1..=MAX_LIST_DEPTH).contains(&depth) => Ok(depth),
        _ => Err(format!("give a whole number from 1 to {MAX_LIST_DEPTH}")),
    }
}

fn print(result: &MemoryListResult) {
    if let Some(warning) = &result.warning {
        warn_safe!("warning: {warning}");
    }
    if result.entries.is_empty() {
        say!("(empty)");
    }
    for entry in &result.entries {
        let indent = "  ".repeat(entry.depth.saturating_sub(1) as usize);
        let name = entry.path.rsplit('/').next().unwrap_or(&entry.path);
        let (suffix, size) = match entry.entry_type {
            MemoryEntryType::Directory => ("/", format!("{} bytes", entry.bytes)),
            MemoryEntryType::File => ("", format!("{} bytes", entry.bytes)),
            MemoryEntryType::Symlink => ("@", "symlink, not followed".to_owned()),
        };
        say!("{indent}{name}{suffix}  ({size})");
    }
    if result.truncated {
        say!("(more entries not listed)");
    }
}
