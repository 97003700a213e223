//! Where to cut: which live messages a compaction summarizes and which it keeps.
//!
//! The span is the live messages: those the previous compaction kept (its pinned message and
//! everything from its first kept entry) and those added since, so a message kept by one
//! compaction is summarized or kept again by the next, never dropped. Rules:
//!
//! - a cut falls on a user message, an assistant message or a shell execution, never on a tool
//!   result, and never between a call and its result: every kept result has its call kept
//!   (a result with no call is summarized, a call with no result blocks nothing);
//! - walking back from the newest message, the cut is the last valid cut at or before the point
//!   where the kept messages reach `keep_recent_tokens`, so at least that much is kept;
//! - a cut that would summarize nothing while keeping more than `keep_recent_tokens` moves
//!   later, and so does a cut that keeps more than the kept budget (the window less the reserve
//!   and the summary), down to cutting after the newest message;
//! - a cut on an assistant message inside a turn makes the turn's beginning (from its user
//!   message or shell execution) a turn prefix, summarized on its own;
//! - the latest user message is kept verbatim unless it alone exceeds the kept budget: when the
//!   cut falls after it, it is pinned (kept before the first kept entry) and left out of what
//!   is summarized.

use std::collections::HashMap;

use memory_protocol::compaction::{
    AssistantBlock, CompactionEntry, ConversationEntry, ConversationMessage,
};
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

fn starts_turn(message: &ConversationMessage) -> bool {
    matches!(
        message,
        ConversationMessage::User { .. } | ConversationMessage::ShellExecution { .. }
    )
}

/// Which cut positions `0..=len` keep every kept tool result together with its call.
///
/// A cut at `c` keeps `c..len`. It is valid when message `c` is not a tool result and every
/// tool result at or after `c` has its call in `c..result`: a result is never kept without the
/// call it answers (a provider rejects such a context), and a call is never summarized while
/// its result is kept. A result with no call anywhere before it can only be summarized. A call
/// with no result constrains nothing. Cutting after the last message (`len`) is always valid.
fn valid_cuts(messages: &[&ConversationEntry]) -> Vec<bool> {
    let len = messages.len();
    // `blocked[c]` > 0 when some result forbids a cut at `c`; built from +1/-1 marks.
    let mut marks = vec![0i64; len + 2];
    let mut calls: HashMap<&str, usize> = HashMap::new();
    for (index, entry) in messages.iter().enumerate() {
        match &entry.message {
            ConversationMessage::Assistant { content } => {
                for block in content {
                    if let AssistantBlock::ToolCall { id, .. } = block {
                        calls.insert(id.as_str(), index);
                    }
                }
            }
            ConversationMessage::ToolResult { tool_call_id, .. } => {
                // Cuts in `from..=index` would keep this result without its call.
                let from = calls.get(tool_call_id.as_str()).map_or(0, |&call| call + 1);
                if let Some(mark) = marks.get_mut(from) {
                    *mark += 1;
                }
                if let Some(mark) = marks.get_mut(index + 1) {
                    *mark -= 1;
                }
            }
            ConversationMessage::User { .. } | ConversationMessage::ShellExecution { .. } => {}
        }
    }
    let mut blocked = 0i64;
    (0..=len)
        .map(|cut| {
            blocked += marks.get(cut).copied().unwrap_or(0);
            blocked == 0
        })
        .collect()
}

/// Chooses the cut over the live messages, keeping at most `max_kept_tokens` verbatim.
/// Returns `None` when there are none.
///
/// The cut is the last valid cut at or before the point where the newest messages reach
/// `keep_recent_tokens` (the first valid one after it when there is none before). It then moves
/// later, one valid cut at a time, while it summarizes nothing yet keeps more than
/// `keep_recent_tokens` (trailing tool results larger than the keep budget must not make a
/// compaction a no-op), and while what it keeps exceeds `max_kept_tokens`. When even cutting
/// after the newest message keeps too much, the latest user message is summarized rather than
/// pinned: no message is ever kept whole past the budget.
pub fn prepare<'s>(
    live: LiveView<'s>,
    keep_recent_tokens: u64,
    max_kept_tokens: u64,
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
    let valid = valid_cuts(&messages);
    let is_valid = |cut: usize| valid.get(cut).copied().unwrap_or(false);
    let len = messages.len();
    // Where the newest messages reach the keep budget (0 when they never do).
    let mut reach = 0;
    let mut kept = 0u64;
    for index in (0..len).rev() {
        kept = kept.saturating_add(tokens.get(index).copied().unwrap_or(0));
        if kept >= keep_recent_tokens {
            reach = index;
            break;
        }
    }
    let mut cut = (0..=reach)
        .rev()
        .find(|&c| is_valid(c))
        .or_else(|| (reach + 1..=len).find(|&c| is_valid(c)))
        .unwrap_or(len);
    let latest_user = messages.iter().rposition(|entry| entry.message.is_user());
    let tokens_from = |cut: usize| -> u64 { tokens.get(cut..).unwrap_or_default().iter().sum() };
    let shape = |cut: usize, pin: bool| Shape::new(&messages, cut, latest_user.filter(|_| pin));
    let kept_tokens = |shape: &Shape| -> u64 {
        tokens_from(shape.cut)
            + shape
                .pinned
                .and_then(|i| tokens.get(i))
                .copied()
                .unwrap_or(0)
    };

    let mut chosen = shape(cut, true);
    if chosen.summarized() == 0
        && kept_tokens(&chosen) > keep_recent_tokens
        && let Some(later) = (cut + 1..=len)
            .filter(|&c| is_valid(c))
            .map(|c| shape(c, true))
            .find(|s| s.summarized() > 0)
    {
        cut = later.cut;
        chosen = later;
    }
    while kept_tokens(&chosen) > max_kept_tokens {
        match (cut + 1..=len).find(|&c| is_valid(c)) {
            Some(next) => {
                cut = next;
                chosen = shape(cut, true);
            }
            None => {
                chosen = shape(cut, false);
                break;
            }
        }
    }
    let Shape {
        cut,
        pinned,
        history,
        turn_prefix,
    } = chosen;
    Some(Preparation {
        previous: live.previous,
        live: messages,
        live_tokens: tokens,
        split_turn: !turn_prefix.is_empty(),
        history,
        turn_prefix,
        pinned,
        first_kept: cut,
    })
}

/// What a cut at one position summarizes and keeps.
struct Shape {
    cut: usize,
    pinned: Option<usize>,
    history: Vec<usize>,
    turn_prefix: Vec<usize>,
}

impl Shape {
    /// The shape of a cut at `cut`, pinning `latest_user` when the cut falls after it.
    fn new(messages: &[&ConversationEntry], cut: usize, latest_user: Option<usize>) -> Shape {
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
        Shape {
            cut,
            pinned,
            history: (0..history_end).filter(|&i| Some(i) != pinned).collect(),
            turn_prefix: turn_start.map_or_else(Vec::new, |start| (start..cut).collect()),
        }
    }

    fn summarized(&self) -> usize {
        self.history.len()
            + self
                .turn_prefix
                .iter()
                .filter(|&&i| Some(i) != self.pinned)
                .count()
    }
}
