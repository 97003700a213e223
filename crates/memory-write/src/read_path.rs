//! The read path: what a session is given of memory.
//!
//! `memory_summary.md` (without its version line), cut to a token cap, rendered into the
//! read-path template: how to use memory, the layout of the memory root, and the citation
//! contract (the block an agent ends its answer with, which [`crate::citations`] parses into
//! usage). Nothing is given when memory is off (`use_memories = false`) or the summary is
//! missing or empty.

use memory_prompts::UntrustedText;
use memory_prompts::memories::{ReadPathContext, read_path};
use memory_protocol::names::memory_root as names;
use memory_sanitize::{TruncationPolicy, o200k};

use crate::config::MemoriesConfig;
use crate::error::Result;
use crate::memory_root::MemoryRoot;

/// The block to inject into a session, honouring `use_memories`: `None` when memory is off
/// for sessions, or there is no summary to give.
pub fn memory_injection(
    root: &MemoryRoot,
    config: &MemoriesConfig,
    token_cap: u64,
) -> Result<Option<String>> {
    if !config.use_memories {
        return Ok(None);
    }
    render_memory_injection(root, token_cap)
}

/// The read path regardless of settings: `memory_summary.md` (without its version line) cut
/// to `token_cap` tokens and rendered into the read-path template. `None` when there is no
/// summary or it is empty.
pub fn render_memory_injection(root: &MemoryRoot, token_cap: u64) -> Result<Option<String>> {
    let Some(summary) = root.read(names::MEMORY_SUMMARY_FILE)? else {
        return Ok(None);
    };
    let summary = summary.trim();
    let body = match summary.split_once('\n') {
        Some((first, rest)) if first.trim() == names::MEMORY_SUMMARY_VERSION => rest.trim(),
        None if summary == names::MEMORY_SUMMARY_VERSION => "",
        _ => summary,
    };
    if body.is_empty() {
        return Ok(None);
    }
    let cap = usize::try_from(token_cap).unwrap_or(usize::MAX);
    let body = memory_sanitize::truncate_middle(body, TruncationPolicy::Tokens(cap), o200k());
    let context = ReadPathContext {
        memory_root: UntrustedText::new(root.dir().to_string_lossy()),
        memory_summary: UntrustedText::new(body),
        summary_token_cap: token_cap,
    };
    Ok(Some(read_path(&context)?))
}
