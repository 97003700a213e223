//! `agent-memory search QUERY`: what `memory_search` answers.

use std::process::ExitCode;

use agent_memory::protocol::introspect::{MemorySearchRequest, MemorySearchResult};

use super::exit::{say, warn_safe};
use super::memory::{MemoryArgs, run_tool};

/// Arguments of `agent-memory search`.
#[derive(Debug, clap::Args)]
pub(crate) struct SearchArgs {
    /// Words that must all appear; "double quotes" for an exact phrase.
    query: String,
    /// Only under this folder or file of the memory root.
    #[arg(long)]
    path: Option<String>,
    /// At most this many hits (1 to 50).
    #[arg(long)]
    max_results: Option<u32>,
    #[command(flatten)]
    memory: MemoryArgs,
}

pub(crate) fn run(args: SearchArgs) -> ExitCode {
    let request = MemorySearchRequest {
        query: args.query,
        path: args.path,
        max_results: args.max_results,
    };
    run_tool(&args.memory, |memory| memory.search(&request), print)
}

fn print(result: &MemorySearchResult) {
    if let Some(warning) = &result.warning {
        warn_safe!("warning: {warning}");
    }
    if result.hits.is_empty() {
        say!("no matches (memory: {})", result.state.as_str());
        return;
    }
    for hit in &result.hits {
        let heading = hit
            .heading
            .as_deref()
            .map(|heading| format!(" [{heading}]"))
            .unwrap_or_default();
        say!("{}:{} ({:.3}){heading}", hit.path, hit.line, hit.score);
        say!("    {}", hit.snippet);
    }
    if result.truncated {
        say!("(more hits: raise --max-results)");
    }
}
