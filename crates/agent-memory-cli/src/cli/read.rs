//! `agent-memory read PATH [--lines A:B | --heading H]`: what `memory_read` answers.

use std::process::ExitCode;

use agent_memory::protocol::introspect::{MemoryReadRequest, MemoryReadResult};

use super::exit::{say, warn_safe};
use super::memory::{MemoryArgs, run_tool};

/// Arguments of `agent-memory read`.
#[derive(Debug, clap::Args)]
pub(crate) struct ReadArgs {
    /// File relative to the memory root.
    path: String,
    /// Lines `A:B` (1-based, inclusive); `A:` to the end, `:B` from the start, `A` one line.
    #[arg(long, value_parser = parse_lines, conflicts_with = "heading")]
    lines: Option<(Option<u32>, Option<u32>)>,
    /// Only the section under this Markdown heading (case and `#` marks ignored); when several
    /// match, the first, and a notice on stderr gives the others' lines.
    #[arg(long)]
    heading: Option<String>,
    #[command(flatten)]
    memory: MemoryArgs,
}

pub(crate) fn run(args: ReadArgs) -> ExitCode {
    let (start_line, end_line) = args.lines.unwrap_or((None, None));
    let request = MemoryReadRequest {
        path: args.path,
        start_line,
        end_line,
        heading: args.heading,
    };
    run_tool(&args.memory, |memory| memory.read(&request), print)
}

fn print(result: &MemoryReadResult) {
    if result.content.is_empty() {
        warn_safe!("({} is empty)", result.path);
    } else {
        say!("{}", result.content);
    }
    if !result.other_sections.is_empty() {
        let others: Vec<String> = result
            .other_sections
            .iter()
            .map(|range| format!("--lines {}:{}", range.start_line, range.end_line))
            .collect();
        warn_safe!(
            "(heading `{}` matches {} sections; this is the first, at line {}; the others: {})",
            result.heading.as_deref().unwrap_or_default(),
            result.other_sections.len() + 1,
            result.start_line,
            others.join(", ")
        );
    }
    if result.truncated {
        warn_safe!(
            "(cut at line {} of {}; continue with --lines {}:)",
            result.end_line,
            result.total_lines,
            result.end_line + 1
        );
    }
}

/// `A:B`, `A:`, `:B` or `A`.
fn parse_lines(text: &str) -> Result<(Option<u32>, Option<u32>), String> {
    let number = |part: &str| -> Result<Option<u32>, String> {
        let part = part.trim();
        if part.is_empty() {
            return Ok(None);
        }
        part.parse::<u32>()
            .map(Some)
            .map_err(|_| format!("`{part}` is not a line number"))
    };
    match text.split_once(':') {
        Some((start, end)) => Ok((number(start)?, number(end)?)),
        None => {
            let line = number(text)?.ok_or("give lines as A:B")?;
            Ok((Some(line), Some(line)))
        }
    }
}
