//! Assembling a context within a token budget: the instructions with the archived working
//! memory, the raw messages of archives whose update has not finished, and the live messages.
//!
//! Budget, in estimated tokens:
//!
//! 1. the reply's reserve stays free: 15% of the budget below [`LARGE_BUDGET_TOKENS`], and
//!    [`REPLY_RESERVE_TOKENS`] (or 15%, when larger) from there on;
//! 2. the newest message and the newest user message (each with the call or results it
//!    belongs to) are always included; when they alone exceed the rest of the budget (less
//!    the working memory's floor, below), their largest texts are cut, head and tail with a
//!    marker;
//! 3. the working memory gets at most [`ARCHIVE_WORKING_MEMORY_TOKENS`], and gives way to the
//!    messages down to 15% of the usable budget before any message is dropped: Session
//!    Title, Current State, Open Issues and Errors & Corrections stay whole, and the oldest
//!    items of Key Facts & Decisions and Files & Context go first (from whichever of the two
//!    is larger at each step), each trimmed section getting a pointer to the archive that
//!    holds the full document; a document still too large is cut head and tail. It comes
//!    inside the instructions template (lossy summary; newer messages win; ask rather than
//!    guess), only when there is a working memory;
//! 4. the other messages (archived ones whose update is pending or failed, then the live ones)
//!    fill the rest from the newest back; a tool call and its result are kept or dropped
//!    together.
//!
//! The result names what it left out: the ids of the messages dropped and of those cut, the
//! items trimmed from the working memory, and whether the working memory was left out.

use std::collections::BTreeSet;

use memory_prompts::UntrustedText;
use memory_prompts::working_memory::{AssembleContext, assemble};
use memory_protocol::compaction::{ConversationEntry, ConversationMessage};
use memory_protocol::working_memory::WorkingMemorySection;
use memory_sanitize::{CjkEstimate, TruncationPolicy, truncate_middle};
use serde::Serialize;

use super::archive::{ArchiveStatus, OVERVIEW_FILE};
use super::cut::cut_message;
use super::window::cut_points;
use super::{HISTORY_DIR, Session, estimate_message};
use crate::document::{WorkingMemoryDocument, is_working_memory};
use crate::error::Result;
use crate::text::{self, strip_marker};

/// Tokens left for the reply from [`LARGE_BUDGET_TOKENS`] on, at least.
pub const REPLY_RESERVE_TOKENS: u64 = 20_000;
/// Budgets from this size on reserve [`REPLY_RESERVE_TOKENS`]; smaller ones reserve 15%.
pub const LARGE_BUDGET_TOKENS: u64 = 40_000;
/// Share of the budget left for the reply, in percent (below [`LARGE_BUDGET_TOKENS`], and
/// above it when that is more than [`REPLY_RESERVE_TOKENS`]).
const REPLY_RESERVE_PERCENT: u64 = 15;
/// Most tokens the archived working memory takes.
pub const ARCHIVE_WORKING_MEMORY_TOKENS: u64 = 8_000;
/// Share of the usable budget the working memory keeps however many messages compete for it,
/// in percent.
const WORKING_MEMORY_FLOOR_PERCENT: u64 = 15;

/// An assembled context.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assembly {
    /// What to add to the system prompt: the rules and the working memory; `None` when the
    /// session has no working memory yet (or it did not fit).
    pub instructions: Option<String>,
    /// The working memory as included (trimmed to its budget), when any.
    pub working_memory: Option<String>,
    /// The messages, oldest first.
    pub messages: Vec<ConversationEntry>,
    /// How the budget was spent.
    pub stats: AssemblyStats,
    /// What was left out for the budget.
    pub left_out: LeftOut,
}

/// What an assembly left out or shortened.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LeftOut {
    /// Ids of the messages dropped, oldest first.
    pub messages: Vec<String>,
    /// Ids of the messages included with their largest texts cut (head and tail).
    pub cut_messages: Vec<String>,
    /// Items trimmed from the working memory.
    pub working_memory_items: usize,
    /// True when the working memory was cut head and tail after trimming its items.
    pub working_memory_cut: bool,
    /// True when a working memory exists but none of it fit.
    pub working_memory: bool,
}

impl LeftOut {
    /// True when nothing was left out or shortened.
    pub fn is_empty(&self) -> bool {
        *self == LeftOut::default()
    }
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
    /// Messages left out for the budget.
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

/// Tokens kept free for the reply out of `budget` (see the module docs).
pub fn reply_reserve(budget: u64) -> u64 {
    let share = budget / 100 * REPLY_RESERVE_PERCENT + budget % 100 * REPLY_RESERVE_PERCENT / 100;
    let reserve = if budget < LARGE_BUDGET_TOKENS {
        share
    } else {
        share.max(REPLY_RESERVE_TOKENS)
    };
    reserve.min(budget)
}

/// The smallest run of messages around `index` that a cut may bound: a call with its results.
fn group(allowed: &[bool], index: usize) -> std::ops::Range<usize> {
    let start = (0..=index).rev().find(|at| allowed[*at]).unwrap_or(0);
    let end = (index + 1..allowed.len())
        .find(|at| allowed[*at])
        .unwrap_or(allowed.len() - 1);
    start..end
}

/// The working memory, rendered in the instructions template, within `limit` tokens of
/// instructions: `(instructions, working memory, trimmed items, cut)`, or `None` when not even
/// the template fits.
fn fit_instructions(
    overview: &str,
    limit: u64,
    pointer: &str,
) -> Result<Option<(String, String, usize, bool)>> {
    let render = |memory: &str| -> Result<(String, u64)> {
        let rendered = assemble(&AssembleContext {
            working_memory: UntrustedText::new(memory.to_owned()),
        })?;
        let tokens = text::tokens(&rendered) as u64;
        Ok((rendered, tokens))
    };
    let (_, overhead) = render("")?;
    if overhead >= limit {
        return Ok(None);
    }
    let room = limit - overhead;
    let (fitted, trimmed) = if is_working_memory(overview) {
        fit_document(&WorkingMemoryDocument::parse(overview), room, pointer)
    } else {
        (overview.trim().to_owned(), 0)
    };
    let mut memory = fitted;
    let mut cut = false;
    // Escaping may make the rendered text a little larger than the parts: shrink until it fits.
    for _ in 0..8 {
        let (rendered, tokens) = render(&memory)?;
        if tokens <= limit {
            return Ok(Some((rendered, memory, trimmed, cut)));
        }
        let memory_tokens = text::tokens(&memory) as u64;
        let target = memory_tokens.saturating_sub(tokens - limit).min(room);
        memory = truncate_middle(
            &memory,
            TruncationPolicy::Tokens(target as usize),
            &CjkEstimate,
        )
        .into_owned();
        cut = true;
    }
    Ok(None)
}

impl Session {
    /// Assembles a context of at most `budget` estimated tokens (see the module docs).
    pub fn assemble(&self, budget: u64) -> Result<Assembly> {
        let mut stats = AssemblyStats {
            budget,
            ..AssemblyStats::default()
        };
        let mut left_out = LeftOut::default();
        let archives = self.archives()?;
        for archive in &archives {
            match archive.status {
                ArchiveStatus::Done => stats.archives_done += 1,
                ArchiveStatus::Failed => stats.archives_failed += 1,
                ArchiveStatus::Pending => stats.archives_pending += 1,
            }
        }
        stats.reserved_for_reply = reply_reserve(budget);
        let usable = budget - stats.reserved_for_reply;
        let working_memory = self.working_memory()?;
        let previous_index = working_memory
            .as_ref()
            .map_or(0, |(archive, _)| archive.index);

        let mut candidates: Vec<ConversationEntry> = Vec::new();
        for archive in archives.iter().filter(|a| a.index > previous_index) {
            candidates.extend(archive.messages()?);
        }
        let archived = candidates.len();
        candidates.extend(self.messages.iter().map(|m| m.entry.clone()));
        let mut costs: Vec<u64> = candidates.iter().map(estimate_message).collect();
        let allowed = cut_points(&candidates);

        // The newest message and the newest user message, each with its call or results.
        let mut required: BTreeSet<usize> = BTreeSet::new();
        if let Some(last) = candidates.len().checked_sub(1) {
            required.extend(group(&allowed, last));
            if let Some(user) = candidates
                .iter()
                .rposition(|entry| matches!(entry.message, ConversationMessage::User { .. }))
            {
                required.extend(group(&allowed, user));
            }
        }
        // When they alone exceed the usable budget (less the working memory's floor, when
        // there is one), cut the largest until they fit.
        let floor = ARCHIVE_WORKING_MEMORY_TOKENS.min(usable / 100 * WORKING_MEMORY_FLOOR_PERCENT);
        let required_room = if working_memory.is_some() {
            usable - floor
        } else {
            usable
        };
        let mut required_cost: u64 = required.iter().map(|at| costs[*at]).sum();
        for _ in 0..required.len() * 2 {
            if required_cost <= required_room {
                break;
            }
            let Some(&largest) = required.iter().max_by_key(|at| costs[**at]) else {
                break;
            };
            let excess = required_cost - required_room;
            let cut = cut_message(&candidates[largest], costs[largest].saturating_sub(excess));
            let cost = estimate_message(&cut);
            if cost >= costs[largest] {
                break;
            }
            required_cost = required_cost - costs[largest] + cost;
            costs[largest] = cost;
            candidates[largest] = cut;
            left_out.cut_messages.push(candidates[largest].id.clone());
        }
        left_out.cut_messages.sort();
        left_out.cut_messages.dedup();

        // The working memory gives way to the other messages, down to its floor.
        let mut instructions = None;
        let mut included_memory = None;
        if let Some((archive, overview)) = &working_memory {
            let available = usable.saturating_sub(required_cost);
            let others: u64 = (0..candidates.len())
                .filter(|at| !required.contains(at))
                .map(|at| costs[at])
                .sum();
            let limit = ARCHIVE_WORKING_MEMORY_TOKENS
                .min(available)
                .min(floor.max(available.saturating_sub(others)));
            let pointer = format!("{HISTORY_DIR}/{}/{OVERVIEW_FILE}", archive.name());
            match fit_instructions(overview, limit, &pointer)? {
                Some((rendered, memory, trimmed, cut)) => {
                    stats.instruction_tokens = text::tokens(&rendered) as u64;
                    stats.working_memory_tokens = text::tokens(&memory) as u64;
                    stats.working_memory_trimmed_items = trimmed;
                    left_out.working_memory_items = trimmed;
                    left_out.working_memory_cut = cut;
                    instructions = Some(rendered);
                    included_memory = Some(memory);
                }
                None => {
                    stats.working_memory_omitted = true;
                    left_out.working_memory = true;
                }
            }
        }

        // The other messages, from the newest back, a whole group at a time.
        let mut room = usable
            .saturating_sub(stats.instruction_tokens)
            .saturating_sub(required_cost);
        let mut selected = required.clone();
        let mut end = required
            .iter()
            .next_back()
            .map_or(0, |last| group(&allowed, *last).start);
        while end > 0 {
            let run = group(&allowed, end - 1);
            let cost: u64 = run
                .clone()
                .filter(|at| !selected.contains(at))
                .map(|at| costs[at])
                .sum();
            if cost > room {
                break;
            }
            room -= cost;
            selected.extend(run.clone());
            end = run.start;
        }

        let mut messages = Vec::with_capacity(selected.len());
        for (at, entry) in candidates.into_iter().enumerate() {
            if selected.contains(&at) {
                messages.push(entry);
                if at < archived {
                    stats.archived_messages += 1;
                } else {
                    stats.live_messages += 1;
                }
            } else {
                left_out.messages.push(entry.id);
            }
        }
        stats.dropped_messages = left_out.messages.len();
        stats.estimated_tokens =
            stats.instruction_tokens + selected.iter().map(|at| costs[*at]).sum::<u64>();
        Ok(Assembly {
            instructions,
            working_memory: included_memory,
            messages,
            stats,
            left_out,
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
