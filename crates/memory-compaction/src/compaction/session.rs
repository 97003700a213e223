//! Sessions: the entries of one conversation, read from and written to JSONL, and the live
//! messages the latest compaction left in context.

use std::collections::{HashMap, HashSet};

use memory_protocol::compaction::{
    AssistantBlock, CompactionEntry, ConversationEntry, ConversationMessage, SessionEntry,
};
use memory_sanitize::TokenCounter;

use super::error::{CompactionError, Result};

/// Tokens counted for a message's framing (role label, separators), on top of its text.
const MESSAGE_OVERHEAD_TOKENS: u64 = 4;

/// One conversation: messages and compaction entries, in order, with unique ids.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Session {
    entries: Vec<SessionEntry>,
}

/// What the latest compaction left in context.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveView<'s> {
    /// The latest compaction entry, if any.
    pub previous: Option<&'s CompactionEntry>,
    /// The messages in context after the previous summary, in order: its pinned message, then
    /// every message from its first kept entry on (all messages when there is no compaction).
    pub messages: Vec<&'s ConversationEntry>,
}

impl Session {
    /// A session of these entries, checked (see [`Session::validate`]).
    pub fn new(entries: Vec<SessionEntry>) -> Result<Session> {
        let session = Session { entries };
        session.validate()?;
        Ok(session)
    }

    /// Reads a session file: one [`SessionEntry`] per line, blank lines skipped.
    pub fn from_jsonl(text: &str) -> Result<Session> {
        let mut entries = Vec::new();
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let entry = serde_json::from_str(line).map_err(|e| CompactionError::SessionLine {
                line: index + 1,
                message: e.to_string(),
            })?;
            entries.push(entry);
        }
        Session::new(entries)
    }

    /// The session as JSONL, one entry per line, ending with a line break.
    pub fn to_jsonl(&self) -> Result<String> {
        let mut out = String::new();
        for entry in &self.entries {
            let line = serde_json::to_string(entry).map_err(CompactionError::Encode)?;
            out.push_str(&line);
            out.push('\n');
        }
        Ok(out)
    }

    /// The entries, in order.
    pub fn entries(&self) -> &[SessionEntry] {
        &self.entries
    }

    /// Appends a message entry.
    pub fn push_message(&mut self, entry: ConversationEntry) -> Result<()> {
        self.push(SessionEntry::Message(entry))
    }

    /// Appends a compaction entry (as a compaction produces it).
    pub fn push_compaction(&mut self, entry: CompactionEntry) -> Result<()> {
        self.push(SessionEntry::Compaction(entry))
    }

    fn push(&mut self, entry: SessionEntry) -> Result<()> {
        if self.entries.iter().any(|e| e.id() == entry.id()) {
            return Err(CompactionError::InvalidSession(format!(
                "duplicate entry id `{}`",
                entry.id()
            )));
        }
        if let SessionEntry::Compaction(compaction) = &entry {
            check_compaction(&self.entries, compaction)?;
        }
        self.entries.push(entry);
        Ok(())
    }

    /// Checks that ids are unique and that every compaction entry's first kept and pinned
    /// entries are message entries before it.
    pub fn validate(&self) -> Result<()> {
        let mut seen = HashSet::new();
        for (index, entry) in self.entries.iter().enumerate() {
            if !seen.insert(entry.id()) {
                return Err(CompactionError::InvalidSession(format!(
                    "duplicate entry id `{}`",
                    entry.id()
                )));
            }
            if let SessionEntry::Compaction(compaction) = entry {
                check_compaction(self.entries.get(..index).unwrap_or_default(), compaction)?;
            }
        }
        Ok(())
    }

    /// The latest compaction entry and its index.
    pub fn latest_compaction(&self) -> Option<(usize, &CompactionEntry)> {
        self.entries
            .iter()
            .enumerate()
            .rev()
            .find_map(|(index, entry)| match entry {
                SessionEntry::Compaction(compaction) => Some((index, compaction)),
                SessionEntry::Message(_) => None,
            })
    }

    /// The messages in context now (see [`LiveView`]).
    pub fn live(&self) -> LiveView<'_> {
        let Some((at, previous)) = self.latest_compaction() else {
            return LiveView {
                previous: None,
                messages: self.messages_from(0).collect(),
            };
        };
        let position = |id: &str| self.entries.iter().position(|e| e.id() == id);
        let start = previous
            .first_kept_entry_id
            .as_deref()
            .and_then(position)
            .unwrap_or(at + 1);
        let mut messages = Vec::new();
        if let Some(pinned) = previous.pinned_entry_id.as_deref().and_then(position)
            && pinned < start
            && let Some(SessionEntry::Message(entry)) = self.entries.get(pinned)
        {
            messages.push(entry);
        }
        messages.extend(self.messages_from(start));
        LiveView {
            previous: Some(previous),
            messages,
        }
    }

    fn messages_from(&self, start: usize) -> impl Iterator<Item = &ConversationEntry> {
        self.entries
            .iter()
            .skip(start)
            .filter_map(|entry| match entry {
                SessionEntry::Message(message) => Some(message),
                SessionEntry::Compaction(_) => None,
            })
    }

    /// The context's size for the trigger ([`super::check_due`]): the estimate of
    /// [`Session::context_tokens`] and what the latest compaction left.
    pub fn context_size(&self, counter: &dyn TokenCounter) -> super::ContextSize {
        super::ContextSize {
            provider_tokens: None,
            estimated_tokens: self.context_tokens(counter),
            tokens_after_last_compaction: self
                .latest_compaction()
                .map(|(_, entry)| entry.tokens_after),
        }
    }

    /// The estimated size of the context now: the latest summary plus every live message.
    pub fn context_tokens(&self, counter: &dyn TokenCounter) -> u64 {
        let live = self.live();
        let summary = live
            .previous
            .map_or(0, |previous| count(counter, &previous.summary));
        summary
            + live
                .messages
                .iter()
                .map(|entry| message_tokens(&entry.message, counter))
                .sum::<u64>()
    }

    /// A fresh entry id: `prefix` followed by the smallest number not yet taken.
    pub fn fresh_id(&self, prefix: &str) -> String {
        let taken: HashSet<&str> = self.entries.iter().map(SessionEntry::id).collect();
        (self.entries.len() + 1..)
            .map(|n| format!("{prefix}{n}"))
            .find(|id| !taken.contains(id.as_str()))
            .unwrap_or_else(|| format!("{prefix}{}", self.entries.len() + 1))
    }

    /// Continues `previous` (an earlier compacted copy of this conversation) with `self`'s
    /// newer messages.
    ///
    /// Every message of `previous` must appear in `self` under the same id and in the same
    /// order (a rollout converted again after it grew keeps its ids). The result is
    /// `previous`'s entries, each message replaced by `self`'s version of it, followed by the
    /// messages of `self` that `previous` does not have.
    pub fn continue_from(self, previous: Session) -> Result<Session> {
        let positions: HashMap<String, usize> = self
            .entries
            .iter()
            .enumerate()
            .map(|(index, entry)| (entry.id().to_owned(), index))
            .collect();
        let mut last = None;
        for entry in &previous.entries {
            let SessionEntry::Message(message) = entry else {
                continue;
            };
            let Some(&at) = positions.get(message.id.as_str()) else {
                return Err(CompactionError::PreviousMismatch(format!(
                    "message `{}` of the previous session is not in the conversation",
                    message.id
                )));
            };
            if last.is_some_and(|last| at <= last) {
                return Err(CompactionError::PreviousMismatch(format!(
                    "message `{}` is out of order",
                    message.id
                )));
            }
            last = Some(at);
        }
        let mut current: Vec<Option<SessionEntry>> = self.entries.into_iter().map(Some).collect();
        let mut entries = Vec::with_capacity(current.len() + 4);
        for entry in previous.entries {
            match entry {
                SessionEntry::Message(message) => {
                    let newer = positions
                        .get(message.id.as_str())
                        .and_then(|&at| current.get_mut(at))
                        .and_then(Option::take);
                    entries.push(newer.unwrap_or(SessionEntry::Message(message)));
                }
                compaction @ SessionEntry::Compaction(_) => entries.push(compaction),
            }
        }
        let after = last.map_or(0, |last| last + 1);
        for entry in current.into_iter().skip(after).flatten() {
            if let SessionEntry::Compaction(_) = entry {
                // The conversation's own compactions after the previous session's end are
                // replaced by the previous session's history; keep only its messages.
                continue;
            }
            entries.push(entry);
        }
        Session::new(entries)
    }
}

fn check_compaction(before: &[SessionEntry], compaction: &CompactionEntry) -> Result<()> {
    let is_earlier_message = |id: &str| {
        before
            .iter()
            .any(|e| matches!(e, SessionEntry::Message(m) if m.id == id))
    };
    for (field, id) in [
        ("first kept", &compaction.first_kept_entry_id),
        ("pinned", &compaction.pinned_entry_id),
    ] {
        if let Some(id) = id
            && !is_earlier_message(id)
        {
            return Err(CompactionError::InvalidSession(format!(
                "compaction `{}`: its {field} entry `{id}` is not a message before it",
                compaction.id
            )));
        }
    }
    Ok(())
}

fn count(counter: &dyn TokenCounter, text: &str) -> u64 {
    u64::try_from(counter.count(text)).unwrap_or(u64::MAX)
}

/// The estimated size of one message in a model's context.
pub fn message_tokens(message: &ConversationMessage, counter: &dyn TokenCounter) -> u64 {
    let text = match message {
        ConversationMessage::User { text } => count(counter, text),
        ConversationMessage::Assistant { content } => content
            .iter()
            .map(|block| match block {
                AssistantBlock::Text { text } => count(counter, text),
                AssistantBlock::Thinking { thinking } => count(counter, thinking),
                AssistantBlock::ToolCall {
                    name, arguments, ..
                } => count(counter, name) + count(counter, &arguments.to_string()),
            })
            .sum(),
        ConversationMessage::ToolResult { text, .. } => count(counter, text),
        ConversationMessage::ShellExecution {
            command, output, ..
        } => count(counter, command) + count(counter, output),
    };
    text + MESSAGE_OVERHEAD_TOKENS
}
