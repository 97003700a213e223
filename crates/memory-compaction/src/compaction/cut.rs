//! Where to cut: which live messages a compaction summarizes and which it keeps.
//!
//! The span is the live messages: those the previous compaction kept (its pinned message and
//! everything from its first kept entry) and those added since, so a message kept by one
//! compaction is summarized or kept again by the next, never dropped. Rules:
//!
//! - a cut falls on a user message, an assistant message or a shell execution, never on a tool
//!   result (a result stays with its call);
//! - walking back from the newest message, the cut is the last valid cut at or before the point
//!   where the kept messages reach `keep_recent_tokens`, so at least that much is kept (with no
//!   valid cut there, or fewer tokens than that in all, everything is kept);
//! - a cut on an assistant message inside a turn makes the turn's beginning (from its user
//!   message or shell execution) a turn prefix, summarized on its own;
//! - the latest user message is always kept verbatim: when the cut falls after it, it is
//!   pinned (kept before the first kept entry) and left out of what is summarized.

use memory_protocol::compaction::{CompactionEntry, ConversationEntry, ConversationMessage};
use memory_sanitize::TokenCounter;

use super::session::{LiveView, message_tokens};

/// The cut of one compaction, as indexes into the live messages.
#[derive(Debug, Clone, PartialEq)]
pub struct Preparation<'s> {
    /// The previous compaction, whose summary this one continues.
    pub previous: Option<&'s CompactionEntry>,
    /// Every live message, in order.
    pub live: Vec<&'s ConversationEntry>,
    /// Estimated tokens of each live message.
    pub live_tokens: Vec<u64>,
    /// Live messages summarized as history, in order.
    pub history: Vec<usize>,
    /// Live messages of the split turn's beginning, summarized on their own, in order (the
    /// pinned message, when it starts the turn, is included as context but stays kept).
    pub turn_prefix: Vec<usize>,
    /// The pinned latest user message, when the cut falls after it.
    pub pinned: Option<usize>,
    /// The first live message kept from the cut on.
    pub first_kept: usize,
    /// True when the cut falls inside a turn.
    pub split_turn: bool,
}

impl<'s> Preparation<'s> {
    /// Live messages summarized: the history and the turn prefix, without the pinned message.
    pub fn summarized(&self) -> usize {
        self.history.len()
            + self
                .turn_prefix
                .iter()
                .filter(|&&i| Some(i) != self.pinned)
                .count()
    }

    /// True when there is nothing to summarize.
    pub fn is_empty(&self) -> bool {
        self.summarized() == 0
    }

    /// Live messages kept verbatim: the pinned message, then everything from the cut on.
    pub fn kept(&self) -> impl Iterator<Item = usize> + '_ {
        self.pinned
            .into_iter()
            .chain(self.first_kept..self.live.len())
    }

    /// The messages at `indexes`.
    pub fn messages(&self, indexes: &[usize]) -> Vec<ConversationMessage> {
        indexes
            .iter()
            .filter_map(|&i| self.live.get(i))
            .map(|entry| entry.message.clone())
            .collect()
    }

    /// Estimated tokens of the kept messages.
    pub fn kept_tokens(&self) -> u64 {
        self.kept().filter_map(|i| self.live_tokens.get(i)).sum()
    }
}

fn is_cut_point(message: &ConversationMessage) -> bool {
    !matches!(message, ConversationMessage::ToolResult { .. })
}

fn starts_turn(message: &ConversationMessage) -> bool {
    matches!(
        message,
        ConversationMessage::User { .. } | ConversationMessage::ShellExecution { .. }
    )
}

/// Chooses the cut over the live messages. Returns `None` when there are none.
pub fn prepare<'s>(
    live: LiveView<'s>,
    keep_recent_tokens: u64,
    counter: &dyn TokenCounter,
) -> Option<Preparation<'s>> {
    let messages = live.messages;
    if messages.is_empty() {
        return None;
    }
    let tokens: Vec<u64> = messages
        .iter()
        .map(|entry| message_tokens(&entry.message, counter))
        .collect();
    // Keep everything (cut 0) unless the newest messages reach the keep budget and a valid cut
    // lies at or before that point.
    let mut cut = 0;
    let mut kept = 0u64;
    for index in (0..messages.len()).rev() {
        kept = kept.saturating_add(tokens.get(index).copied().unwrap_or(0));
        if kept >= keep_recent_tokens {
            cut = (0..=index)
                .rev()
                .find(|&i| messages.get(i).is_some_and(|e| is_cut_point(&e.message)))
                .unwrap_or(0);
            break;
        }
    }
    let latest_user = messages.iter().rposition(|entry| entry.message.is_user());
    let pinned = latest_user.filter(|&user| user < cut);
    let cut_message = messages.get(cut).map(|entry| &entry.message);
    let turn_start = match cut_message {
        Some(message) if !starts_turn(message) => (0..cut)
            .rev()
            .find(|&i| messages.get(i).is_some_and(|e| starts_turn(&e.message))),
        _ => None,
    };
    // A turn whose only summarizable message would be the pinned request is not split.
    let turn_start = turn_start.filter(|&start| (start..cut).any(|i| Some(i) != pinned));
    let history_end = turn_start.unwrap_or(cut);
    let history: Vec<usize> = (0..history_end).filter(|&i| Some(i) != pinned).collect();
    let turn_prefix: Vec<usize> = turn_start.map_or_else(Vec::new, |start| (start..cut).collect());
    let split_turn = turn_start.is_some();
    Some(Preparation {
        previous: live.previous,
        live: messages,
        live_tokens: tokens,
        history,
        turn_prefix,
        pinned,
        first_kept: cut,
        split_turn,
    })
}
