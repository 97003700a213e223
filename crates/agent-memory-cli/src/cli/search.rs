//! `agent-memory search QUERY`: what `memory_search` answers.

use std::process::ExitCode;

use agent_memory::introspect::{DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS};
use agent_memory::protocol::introspect::{MemorySearchRequest, MemorySearchResult};

use super::exit::{say, warn_safe};
use super::memory::{MemoryArgs, run_tool_in};

/// Arguments of `agent-memory search`.
#[derive(Debug, clap::Args)]
pub(crate) struct SearchArgs {
    /// Words to find (`search cargo test`): blocks with all of them first, then blocks with
    /// some; "double quotes" inside single ones for an exact phrase (`search '"cargo test"'`).
    #[arg(required = true)]
    query: Vec<String>,
    /// Only under this folder or file of the memory root.
    #[arg(long)]
    path: Option<String>,
    #[arg(
        long,
        value_parser = parse_max_results,
        help = format!(
            "At most this many hits (1 to {MAX_SEARCH_RESULTS}; default {DEFAULT_SEARCH_RESULTS})"
        )
    )]
    max_results: Option<u32>,
    /// The working directory of the session: hits from the project this folder is in come
    /// first (see `agent-memory block --cwd`).
    #[arg(long, value_name = "DIR")]
    cwd: Option<std::path::PathBuf>,
    #[command(flatten)]
    memory: MemoryArgs,
}

pub(crate) fn run(args: SearchArgs) -> ExitCode {
    let request = MemorySearchRequest {
        query: args.query.join(" "),
        path: args.path,
        max_results: args.max_results,
    };
    run_tool_in(
        &args.memory,
        args.cwd.as_deref(),
        |memory| memory.search(&request),
        print,
    )
}

/// `--max-results`: a whole number within the library's range.
fn parse_max_results(text: &str) -> Result<u32, String> {
    match text.parse::<u32>() {
        Ok(count) if (1..=MAX_SEARCH_RESULTS).contains(&count) => Ok(count),
        _ => Err(format!(
            "give a whole number from 1 to {MAX_SEARCH_RESULTS}"
        )),
    }
}

fn print(result: &MemorySearchResult) {
    if let Some(warning) = &result.warning {
        warn_safe!("warning: {warning}");
    }
    if result.hits.is_empty() {
        say!(
            "no matches (memory: {}, index: {})",
            result.state.as_str(),
            result.index.as_str()
        );
        return;
    }
    for hit in &result.hits {
        let heading = hit
            .heading
            .as_deref()
            .map(|heading| format!(" [{heading}]"))
            .unwrap_or_default();
        let some = if hit.all_terms { "" } else { " (some words)" };
        say!(
            "{}:{} ({:.3}){some}{heading}",
            hit.path,
            hit.line,
            hit.score
        );
        say!("    {}", hit.snippet);
        if !hit.also_in.is_empty() {
            say!("    (also in {})", hit.also_in.join(", "));
        }
    }
    if result.truncated {
        say!("(more hits: raise --max-results)");
    }
}
