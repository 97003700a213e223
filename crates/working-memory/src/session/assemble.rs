//! Assembling a context within a token budget: the instructions with the archived working
//! memory, the raw messages of archives whose update has not finished, and the live messages.
//!
//! Budget, in estimated tokens:
//!
//! 1. at least [`REPLY_RESERVE_TOKENS`] (or 15% of the budget, when larger) stay free for the
//!    reply;
//! 2. the working memory gets at most [`ARCHIVE_WORKING_MEMORY_TOKENS`]. When it is larger,
//!    Session Title, Current State, Open Issues and Errors & Corrections stay whole, and the
//!    oldest items of Key Facts & Decisions and Files & Context go first (from whichever of
//!    the two is larger at each step), each trimmed section getting a pointer to the archive
//!    that holds the full document. It comes inside the instructions template (lossy
//!    summary; newer messages win; ask rather than guess), only when there is a working
//!    memory;
//! 3. the messages (archived ones whose update is pending or failed, then the live ones) fill
//!    the rest from the newest back; a tool call and its result are kept or dropped together.

use memory_prompts::UntrustedText;
use memory_prompts::working_memory::{AssembleContext, assemble};
use memory_protocol::compaction::ConversationEntry;
use memory_protocol::working_memory::WorkingMemorySection;
use serde::Serialize;

use super::archive::{ArchiveStatus, OVERVIEW_FILE};
use super::window::cut_points;
use super::{HISTORY_DIR, Session, estimate_message};
use crate::document::{WorkingMemoryDocument, is_working_memory};
use crate::error::Result;
use crate::text::{self, strip_marker};

/// Tokens always left for the reply, at least.
pub const REPLY_RESERVE_TOKENS: u64 = 20_000;
/// Share of the budget left for the reply when that is more than the minimum, in percent.
const REPLY_RESERVE_PERCENT: u64 = 15;
/// Most tokens the archived working memory takes.
pub const ARCHIVE_WORKING_MEMORY_TOKENS: u64 = 8_000;

/// An assembled context.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assembly {
    /// What to add to the system prompt: the rules and the working memory; `None` when the
    /// session has no working memory yet.
    pub instructions: Option<String>,
    /// The working memory as included (trimmed to its budget), when any.
    pub working_memory: Option<String>,
    /// The messages, oldest first.
    pub messages: Vec<ConversationEntry>,
    /// How the budget was spent.
    pub stats: AssemblyStats,
}

/// How an assembly spent its budget.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AssemblyStats {
    /// The budget.
    pub budget: u64,
    /// Tokens left free for the reply.
    pub reserved_for_reply: u64,
    /// Tokens of the instructions, working memory included.
    pub instruction_tokens: u64,
    /// Tokens of the working memory as included.
    pub working_memory_tokens: u64,
    /// Items trimmed from the working memory to fit its budget.
    pub working_memory_trimmed_items: usize,
    /// True when a working memory exists but did not fit at all.
    pub working_memory_omitted: bool,
    /// Messages from archives whose update has not finished.
    pub archived_messages: usize,
    /// Live messages included.
    pub live_messages: usize,
    /// Oldest messages left out for the budget.
    pub dropped_messages: usize,
    /// Estimated tokens of everything included.
    pub estimated_tokens: u64,
    /// Archives whose update is done, failed, pending.
    pub archives_done: usize,
    /// See `archives_done`.
    pub archives_failed: usize,
    /// See `archives_done`.
    pub archives_pending: usize,
}

impl Session {
    /// Assembles a context of at most `budget` estimated tokens (see the module docs).
    pub fn assemble(&self, budget: u64) -> Result<Assembly> {
        let mut stats = AssemblyStats {
            budget,
            ..AssemblyStats::default()
        };
        let archives = self.archives()?;
        for archive in &archives {
            match archive.status {
                ArchiveStatus::Done => stats.archives_done += 1,
                ArchiveStatus::Failed => stats.archives_failed += 1,
                ArchiveStatus::Pending => stats.archives_pending += 1,
            }
        }
        stats.reserved_for_reply = REPLY_RESERVE_TOKENS
            .max(budget * REPLY_RESERVE_PERCENT / 100)
            .min(budget);
        let usable = budget - stats.reserved_for_reply;

        let mut instructions = None;
        let mut working_memory = None;
        let mut previous_index = 0;
        if let Some((archive, overview)) = self.working_memory()? {
            previous_index = archive.index;
            let pointer = format!("{HISTORY_DIR}/{}/{OVERVIEW_FILE}", archive.name());
            let limit = ARCHIVE_WORKING_MEMORY_TOKENS.min(usable);
            let (fitted, trimmed) = if is_working_memory(&overview) {
                fit_document(&WorkingMemoryDocument::parse(&overview), limit, &pointer)
            } else {
                (overview.trim().to_owned(), 0)
            };
            let rendered = assemble(&AssembleContext {
                working_memory: UntrustedText::new(fitted.clone()),
            })?;
            let tokens = text::tokens(&rendered) as u64;
            if tokens <= usable {
                stats.instruction_tokens = tokens;
                stats.working_memory_tokens = text::tokens(&fitted) as u64;
                stats.working_memory_trimmed_items = trimmed;
                instructions = Some(rendered);
                working_memory = Some(fitted);
            } else {
                stats.working_memory_omitted = true;
            }
        }

        let mut candidates: Vec<ConversationEntry> = Vec::new();
        for archive in archives.iter().filter(|a| a.index > previous_index) {
            candidates.extend(archive.messages()?);
        }
        let archived = candidates.len();
        candidates.extend(self.messages.iter().map(|m| m.entry.clone()));
        let costs: Vec<u64> = candidates.iter().map(estimate_message).collect();
        let allowed = cut_points(&candidates);
        let room = usable - stats.instruction_tokens;
        // The earliest allowed start whose suffix fits.
        let mut start = candidates.len();
        let mut used = 0u64;
        let mut fitting = candidates.len();
        while start > 0 {
            start -= 1;
            used += costs[start];
            if used > room {
                break;
            }
            if allowed[start] {
                fitting = start;
            }
        }
        stats.dropped_messages = fitting;
        stats.archived_messages = archived.saturating_sub(fitting);
        stats.live_messages = candidates.len() - fitting - stats.archived_messages;
        let messages: Vec<ConversationEntry> = candidates.split_off(fitting);
        stats.estimated_tokens = stats.instruction_tokens + costs[fitting..].iter().sum::<u64>();
        Ok(Assembly {
            instructions,
            working_memory,
            messages,
            stats,
        })
    }
}

/// The document rendered within `limit` tokens: the oldest items of Key Facts & Decisions and
/// Files & Context removed (from the larger of the two each time) until it fits, each trimmed
/// section led by a pointer to `pointer` (where the whole document is). Returns the text and
/// how many items were removed.
/// The other sections are never cut, so the result may still exceed `limit`.
pub fn fit_document(
    document: &WorkingMemoryDocument,
    limit: u64,
    pointer: &str,
) -> (String, usize) {
    let whole = document.render();
    if text::tokens(&whole) as u64 <= limit {
        return (whole, 0);
    }
    let trimmable = [
        WorkingMemorySection::KeyFactsAndDecisions,
        WorkingMemorySection::FilesAndContext,
    ];
    let mut lines: Vec<Vec<String>> = trimmable
        .iter()
        .map(|section| document.body(*section).lines().map(str::to_owned).collect())
        .collect();
    let mut removed = [0usize; 2];
    loop {
        let mut trimmed = document.clone();
        for (i, section) in trimmable.iter().enumerate() {
            if removed[i] > 0 {
                let body = format!(
                    "- [{} older item(s) left out; the whole section is in {pointer}]\n{}",
                    removed[i],
                    lines[i].join("\n")
                );
                trimmed.set_body(*section, &body);
            }
        }
        let rendered = trimmed.render();
        if text::tokens(&rendered) as u64 <= limit {
            return (rendered, removed.iter().sum());
        }
        // Remove the oldest item of the larger of the two sections.
        let size = |i: usize| text::tokens(&lines[i].join("\n"));
        let order = if size(0) >= size(1) { [0, 1] } else { [1, 0] };
        let Some(i) = order
            .into_iter()
            .find(|i| lines[*i].iter().any(|line| is_item(line)))
        else {
            return (rendered, removed.iter().sum());
        };
        if let Some(at) = lines[i].iter().position(|line| is_item(line)) {
            lines[i].remove(at);
            removed[i] += 1;
        }
    }
}

fn is_item(line: &str) -> bool {
    let trimmed = line.trim();
    !trimmed.is_empty() && !trimmed.starts_with('#') && !strip_marker(trimmed).is_empty()
}
