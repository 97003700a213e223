//! Archives: one folder per commit, `history/archive_NNN/` (numbered from 1, three digits or
//! more).
//!
//! ```text
//! archive_007/
//!   messages.jsonl   the archived messages
//!   .meta.json       what was archived, and what the working-memory update did
//!   .overview.md     the working memory after this archive
//!   .abstract.md     one line: the title and the current state's first sentence
//!   moved.md         entries the working memory moved out (when any)
//!   .done            written last, when the update succeeded
//!   .failed.json     written instead, when it failed
//! ```
//!
//! An archive's state comes from its files alone: `.done` means done, else `.failed.json`
//! means failed, else it is pending (an update that never ran or was interrupted). "Done" is
//! only ever written after everything else of a successful update.

use std::path::{Path, PathBuf};

use memory_protocol::compaction::ConversationEntry;
use memory_protocol::working_memory::GuardRecord;
use serde::{Deserialize, Serialize};

use super::store::{read_json, read_messages, write_atomic, write_json};
use crate::error::{Error, Result};

/// Prefix of an archive folder's name.
pub const ARCHIVE_PREFIX: &str = "archive_";
/// The archived messages.
pub const ARCHIVE_MESSAGES_FILE: &str = "messages.jsonl";
/// The working memory after the archive.
pub const OVERVIEW_FILE: &str = ".overview.md";
/// One line about the archive.
pub const ABSTRACT_FILE: &str = ".abstract.md";
/// What was archived and what the update did.
pub const META_FILE: &str = ".meta.json";
/// Entries the working memory moved out.
pub const MOVED_FILE: &str = "moved.md";
/// Written last, when the update succeeded.
pub const DONE_FILE: &str = ".done";
/// Written when the update failed.
pub const FAILED_FILE: &str = ".failed.json";

/// Where an archive's working-memory update stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArchiveStatus {
    /// The update finished; the overview is the working memory after this archive.
    Done,
    /// The update failed; `.failed.json` says why.
    Failed,
    /// No update has finished or failed (interrupted, or never run).
    Pending,
}

/// One archive folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archive {
    /// Its number (1 for `archive_001`).
    pub index: u32,
    /// Its folder.
    pub dir: PathBuf,
    /// Where its update stands.
    pub status: ArchiveStatus,
}

impl Archive {
    /// The folder name, `archive_NNN`.
    pub fn name(&self) -> String {
        archive_name(self.index)
    }

    /// The archived messages.
    pub fn messages(&self) -> Result<Vec<ConversationEntry>> {
        read_messages(&self.dir.join(ARCHIVE_MESSAGES_FILE))
    }

    /// The working memory written by this archive's update, when done.
    pub fn overview(&self) -> Result<Option<String>> {
        let path = self.dir.join(OVERVIEW_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Some(text)),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(Error::Read { path, source }),
        }
    }

    /// The failure record, when the update failed.
    pub fn failure(&self) -> Result<Option<FailureRecord>> {
        read_json(&self.dir.join(FAILED_FILE))
    }

    /// The meta file.
    pub fn meta(&self) -> Result<Option<ArchiveMeta>> {
        read_json(&self.dir.join(META_FILE))
    }
}

/// `archive_NNN`.
pub fn archive_name(index: u32) -> String {
    format!("{ARCHIVE_PREFIX}{index:03}")
}

/// Every archive under `history`, oldest first.
pub(crate) fn list_archives(history: &Path) -> Result<Vec<Archive>> {
    let entries = match std::fs::read_dir(history) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(Error::Read {
                path: history.to_owned(),
                source,
            });
        }
    };
    let mut archives = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(index) = name
            .strip_prefix(ARCHIVE_PREFIX)
            .and_then(|digits| digits.parse::<u32>().ok())
        else {
            continue;
        };
        let dir = entry.path();
        if !dir.is_dir() {
            continue;
        }
        let status = if dir.join(DONE_FILE).is_file() {
            ArchiveStatus::Done
        } else if dir.join(FAILED_FILE).is_file() {
            ArchiveStatus::Failed
        } else {
            ArchiveStatus::Pending
        };
        archives.push(Archive { index, dir, status });
    }
    archives.sort_by_key(|archive| archive.index);
    Ok(archives)
}

/// What an archive holds and what its update did (`.meta.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveMeta {
    /// `archive_NNN`.
    pub archive: String,
    /// When the messages were archived (RFC 3339).
    pub archived_at: String,
    /// How many messages were archived.
    pub message_count: usize,
    /// Id of the first archived message.
    pub first_message_id: Option<String>,
    /// Id of the last archived message.
    pub last_message_id: Option<String>,
    /// How many recent messages the commit kept live.
    pub keep_recent_count: u32,
    /// The working-memory update, once it finished.
    pub working_memory: Option<UpdateMeta>,
}

/// What a working-memory update did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpdateMeta {
    /// The model's name.
    pub model: String,
    /// Messages sent to the model (those after the cursor).
    pub sent_messages: usize,
    /// Windows the messages were sent in.
    pub windows: usize,
    /// Model calls, fallbacks included.
    pub model_calls: usize,
    /// Windows whose answer had to be recovered from malformed output.
    pub recovered: usize,
    /// Windows answered by re-creating the document (the fallback).
    pub fallbacks: usize,
    /// Estimated tokens of the overview.
    pub overview_tokens: u64,
    /// Estimated tokens of the abstract.
    pub abstract_tokens: u64,
    /// What the guards changed.
    pub guards: Vec<GuardRecord>,
}

/// `.done`: written last, when the update succeeded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoneMarker {
    /// First message the update covered (it may be in an earlier, failed archive).
    pub starting_message_id: Option<String>,
    /// Last message the update covered; the session's cursor after it.
    pub ending_message_id: Option<String>,
    /// When it finished (RFC 3339).
    pub completed_at: String,
}

/// `.failed.json`: why an update failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureRecord {
    /// Which step failed.
    pub stage: String,
    /// The error.
    pub error: String,
    /// When (RFC 3339).
    pub failed_at: String,
    /// The model's name.
    pub model: String,
    /// Messages the update tried to send.
    pub sent_messages: usize,
}

/// The current time, RFC 3339.
pub(crate) fn now() -> String {
    jiff::Timestamp::now().to_string()
}

/// Creates `archive_NNN` with its messages and meta.
pub(crate) fn create_archive(
    history: &Path,
    index: u32,
    messages: &[ConversationEntry],
    keep_recent_count: u32,
) -> Result<Archive> {
    let dir = history.join(archive_name(index));
    super::store::write_messages(&dir.join(ARCHIVE_MESSAGES_FILE), messages)?;
    let meta = ArchiveMeta {
        archive: archive_name(index),
        archived_at: now(),
        message_count: messages.len(),
        first_message_id: messages.first().map(|m| m.id.clone()),
        last_message_id: messages.last().map(|m| m.id.clone()),
        keep_recent_count,
        working_memory: None,
    };
    write_json(&dir.join(META_FILE), &meta, "the archive meta")?;
    Ok(Archive {
        index,
        dir,
        status: ArchiveStatus::Pending,
    })
}

/// What a successful update writes, in this order, `.done` last.
pub(crate) struct Completion {
    pub(crate) overview: String,
    pub(crate) abstract_line: String,
    pub(crate) moved: Option<String>,
    pub(crate) update: UpdateMeta,
    pub(crate) done: DoneMarker,
}

pub(crate) fn complete(archive: &Archive, completion: Completion) -> Result<()> {
    write_atomic(
        &archive.dir.join(OVERVIEW_FILE),
        completion.overview.as_bytes(),
    )?;
    write_atomic(
        &archive.dir.join(ABSTRACT_FILE),
        format!("{}\n", completion.abstract_line).as_bytes(),
    )?;
    if let Some(moved) = &completion.moved {
        write_atomic(&archive.dir.join(MOVED_FILE), moved.as_bytes())?;
    }
    let mut meta = archive.meta()?.unwrap_or_default();
    meta.working_memory = Some(completion.update);
    write_json(&archive.dir.join(META_FILE), &meta, "the archive meta")?;
    write_json(
        &archive.dir.join(DONE_FILE),
        &completion.done,
        "the done marker",
    )
}
