//! The session window: live messages with estimated tokens, commits that archive all but the
//! most recent ones and update the working memory from what it has not seen, and assembling a
//! context from the working memory and the messages within a budget.
//!
//! State (`window.json`, rebuilt from the messages on load, clamped):
//!
//! - `pending_tokens`: estimated tokens of the live messages a commit would archive (all but
//!   the `keep_recent_count` most recent);
//! - `keep_recent_count`: how many recent messages a commit keeps live, 0 to 10,000;
//! - `cursor`: id of the last message the working memory has seen.
//!
//! A commit is due when `pending_tokens` reaches half the token budget
//! ([`Session::commit_if_due`]); [`Session::flush`] commits whatever the threshold, so a short
//! session still reaches the working memory; [`Session::compact`] archives everything (keep
//! 0) without changing the stored keep count. A commit never separates a tool call from its
//! result (the cut moves earlier), sends the model only the archived messages after the
//! cursor, in windows of at most [`SessionOptions::update_input_tokens`] (and of the model's
//! input budget), each message cut head and tail to fit, and reports [`CommitStatus::Done`]
//! only after `.done` is written. A failed update writes nothing: the messages stay live and
//! the next commit retries them. (Folders from before this rule may hold failed or pending
//! archives; a commit retries those too.)

mod archive;
mod assemble;
mod commit;
mod cut;
mod format;
mod store;
mod window;

use std::path::{Path, PathBuf};

use memory_protocol::compaction::ConversationEntry;
use serde::{Deserialize, Serialize};

pub use self::archive::{
    ABSTRACT_FILE, ARCHIVE_MESSAGES_FILE, ARCHIVE_PREFIX, Archive, ArchiveMeta, ArchiveStatus,
    DONE_FILE, DoneMarker, FAILED_FILE, FailureRecord, META_FILE, MOVED_FILE, OVERVIEW_FILE,
    UpdateMeta, archive_name,
};
pub use self::assemble::{
    ARCHIVE_WORKING_MEMORY_TOKENS, Assembly, AssemblyStats, LARGE_BUDGET_TOKENS, LeftOut,
    REPLY_RESERVE_TOKENS, fit_document, reply_reserve,
};
pub use self::commit::{CommitPreview, CommitReport, CommitStatus};
pub use self::cut::cut_message;
pub use self::format::{
    CallOutcomes, estimate_message, format_message, format_messages, sanitized,
};
pub use self::store::{HISTORY_DIR, MESSAGES_FILE, WINDOW_FILE, parse_messages};
pub use self::window::{abandoned_calls, cut_points, split_point, windows};

use self::store::{Layout, read_json, read_messages, write_json, write_messages};
use crate::error::{Error, Result};

/// Token budget when the host gives none.
pub const DEFAULT_TOKEN_BUDGET: u64 = 128_000;
/// A commit is due when the pending tokens reach the budget divided by this (half).
pub const COMMIT_BUDGET_DIVISOR: u64 = 2;
/// Recent messages a commit keeps live by default.
pub const DEFAULT_KEEP_RECENT: u32 = 10;
/// Most recent messages a commit may keep live.
pub const MAX_KEEP_RECENT: u32 = 10_000;
/// Default budget of the messages sent in one update call.
pub const DEFAULT_UPDATE_INPUT_TOKENS: u64 = 32_000;

/// How a session is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionOptions {
    /// The host's context budget in tokens; a commit is due at half of it.
    pub token_budget: u64,
    /// Most estimated tokens of messages sent in one update call; more are sent in windows.
    pub update_input_tokens: u64,
}

impl Default for SessionOptions {
    fn default() -> Self {
        Self {
            token_budget: DEFAULT_TOKEN_BUDGET,
            update_input_tokens: DEFAULT_UPDATE_INPUT_TOKENS,
        }
    }
}

/// The persisted window state (`window.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WindowState {
    /// Estimated tokens a commit would archive now.
    pub pending_tokens: u64,
    /// Recent messages a commit keeps live.
    pub keep_recent_count: u32,
    /// Id of the last message the working memory has seen.
    pub cursor: Option<String>,
}

impl Default for WindowState {
    fn default() -> Self {
        Self {
            pending_tokens: 0,
            keep_recent_count: DEFAULT_KEEP_RECENT,
            cursor: None,
        }
    }
}

/// The window state as read from disk, before clamping: counts may be negative or huge.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct StoredWindowState {
    pending_tokens: Option<i64>,
    keep_recent_count: Option<i64>,
    cursor: Option<String>,
}

impl StoredWindowState {
    fn clamped(self) -> WindowState {
        WindowState {
            pending_tokens: self.pending_tokens.unwrap_or(0).max(0) as u64,
            keep_recent_count: self.keep_recent_count.map_or(DEFAULT_KEEP_RECENT, |keep| {
                keep.clamp(0, i64::from(MAX_KEEP_RECENT)) as u32
            }),
            cursor: self.cursor,
        }
    }
}

/// A live message with its estimated tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionMessage {
    /// The message.
    pub entry: ConversationEntry,
    /// Its estimated tokens ([`estimate_message`]).
    pub tokens: u64,
}

/// What appending messages did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendOutcome {
    /// Pending tokens after the append.
    pub pending_tokens: u64,
    /// True when a commit is now due.
    pub commit_due: bool,
}

/// One session folder (see [`store`](self) for the layout).
#[derive(Debug)]
pub struct Session {
    layout: Layout,
    options: SessionOptions,
    state: WindowState,
    messages: Vec<SessionMessage>,
}

/// Estimated tokens of the messages a commit keeping `keep` would archive.
pub fn pending_tokens(tokens: &[u64], keep: u32) -> u64 {
    let archived = tokens.len().saturating_sub(keep as usize);
    tokens[..archived].iter().sum()
}

impl Session {
    /// Opens (or starts) the session in `dir`: reads the live messages and the window state,
    /// leaves out the oldest live messages the newest done archive already holds (a commit
    /// interrupted between marking the archive done and rewriting the live file), and
    /// rebuilds the pending tokens. Opening never writes: read-only commands leave the folder
    /// as they found it.
    pub fn open(dir: impl Into<PathBuf>, options: SessionOptions) -> Result<Session> {
        let layout = Layout { dir: dir.into() };
        let stored: Option<StoredWindowState> = read_json(&layout.window())?;
        let state = stored.unwrap_or_default().clamped();
        let mut entries = read_messages(&layout.messages())?;
        let archives = archive::list_archives(&layout.history())?;
        // Only a done archive can hold messages a commit meant to drop from the live list
        // (it archives, marks done, then rewrites the live file). Leaving them out here writes
        // nothing: the next write of the live list drops them for good.
        if let Some(newest) = archives.last().filter(|a| a.status == ArchiveStatus::Done) {
            let archived: std::collections::HashSet<String> =
                newest.messages()?.into_iter().map(|m| m.id).collect();
            // The archive must hold the oldest live messages, as a commit leaves them;
            // anything else is a new message that happens to reuse an id, and stays.
            let prefix = entries
                .iter()
                .take_while(|entry| archived.contains(&entry.id))
                .count();
            entries.drain(..prefix);
        }
        let messages = entries
            .into_iter()
            .map(|entry| SessionMessage {
                tokens: estimate_message(&entry),
                entry,
            })
            .collect();
        let mut session = Session {
            layout,
            options,
            state,
            messages,
        };
        session.rebuild_pending();
        Ok(session)
    }

    /// The session folder.
    pub fn dir(&self) -> &Path {
        &self.layout.dir
    }

    /// The options.
    pub fn options(&self) -> SessionOptions {
        self.options
    }

    /// The window state.
    pub fn state(&self) -> &WindowState {
        &self.state
    }

    /// The live messages, oldest first.
    pub fn messages(&self) -> &[SessionMessage] {
        &self.messages
    }

    /// The archives, oldest first.
    pub fn archives(&self) -> Result<Vec<Archive>> {
        archive::list_archives(&self.layout.history())
    }

    /// The newest archive whose update is done, with its working memory.
    pub fn working_memory(&self) -> Result<Option<(Archive, String)>> {
        for archive in self.archives()?.into_iter().rev() {
            if archive.status == ArchiveStatus::Done
                && let Some(overview) = archive.overview()?
            {
                return Ok(Some((archive, overview)));
            }
        }
        Ok(None)
    }

    /// True when the pending tokens reached half the token budget.
    pub fn commit_due(&self) -> bool {
        self.state
            .pending_tokens
            .saturating_mul(COMMIT_BUDGET_DIVISOR)
            >= self.options.token_budget
    }

    /// Appends messages to the live list (and its file) and updates the pending tokens. An id
    /// already in the session is an error, and nothing is written.
    pub fn append(&mut self, entries: Vec<ConversationEntry>) -> Result<AppendOutcome> {
        let mut ids: std::collections::HashSet<&str> =
            self.messages.iter().map(|m| m.entry.id.as_str()).collect();
        for entry in &entries {
            if !ids.insert(entry.id.as_str()) {
                return Err(Error::DuplicateMessageId {
                    path: self.layout.messages(),
                    id: entry.id.clone(),
                });
            }
        }
        let mut all: Vec<ConversationEntry> =
            self.messages.iter().map(|m| m.entry.clone()).collect();
        all.extend(entries.iter().cloned());
        write_messages(&self.layout.messages(), &all)?;
        self.messages
            .extend(entries.into_iter().map(|entry| SessionMessage {
                tokens: estimate_message(&entry),
                entry,
            }));
        self.rebuild_pending();
        self.save_state()?;
        Ok(AppendOutcome {
            pending_tokens: self.state.pending_tokens,
            commit_due: self.commit_due(),
        })
    }

    /// Sets how many recent messages a commit keeps live (clamped to 10,000), and stores it.
    pub fn set_keep_recent_count(&mut self, keep: u32) -> Result<()> {
        self.state.keep_recent_count = keep.min(MAX_KEEP_RECENT);
        self.rebuild_pending();
        self.save_state()
    }

    fn rebuild_pending(&mut self) {
        let tokens: Vec<u64> = self.messages.iter().map(|m| m.tokens).collect();
        self.state.pending_tokens = pending_tokens(&tokens, self.state.keep_recent_count);
    }

    fn save_state(&self) -> Result<()> {
        write_json(&self.layout.window(), &self.state, "the window state")
    }
}
