//! The session folder on disk.
//!
//! ```text
//! SESSION_DIR/
//!   messages.jsonl        live messages, one conversation entry per line
//!   window.json           the window state (pending tokens, keep count, cursor)
//!   history/archive_001/  one folder per commit, see `archive`
//! ```
//!
//! Every file is written atomically (a temporary file in the same folder, synced, then
//! renamed), so a crash leaves the previous version whole.

use std::io::Write;
use std::path::{Path, PathBuf};

use memory_protocol::compaction::ConversationEntry;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Live messages of a session.
pub const MESSAGES_FILE: &str = "messages.jsonl";
/// The window state.
pub const WINDOW_FILE: &str = "window.json";
/// Folder of the archives.
pub const HISTORY_DIR: &str = "history";

/// Writes `bytes` to `path` atomically.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let write_error = |source| Error::Write {
        path: path.to_owned(),
        source,
    };
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).map_err(write_error)?;
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result.map_err(write_error)
}

/// Writes a JSON value atomically, pretty-printed with a final newline.
pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T, what: &'static str) -> Result<()> {
    let mut text =
        serde_json::to_string_pretty(value).map_err(|source| Error::Serialize { what, source })?;
    text.push('\n');
    write_atomic(path, text.as_bytes())
}

/// Reads a JSON file; `None` when it does not exist.
pub(crate) fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|source| Error::BadState {
                path: path.to_owned(),
                source,
            }),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

/// Reads a messages file; a missing file is an empty list, a bad line an error naming it.
pub(crate) fn read_messages(path: &Path) -> Result<Vec<ConversationEntry>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(Error::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    parse_messages(&text, path)
}

/// Reads messages in the messages file's form (one conversation entry per line, blank lines
/// skipped) from `text`; `path` names where it came from in errors. A bad line or a repeated
/// id is an error.
pub fn parse_messages(text: &str, path: &Path) -> Result<Vec<ConversationEntry>> {
    let mut messages = Vec::new();
    let mut ids = std::collections::HashSet::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let entry: ConversationEntry =
            serde_json::from_str(line).map_err(|source| Error::BadMessage {
                path: path.to_owned(),
                line: number + 1,
                source,
            })?;
        if !ids.insert(entry.id.clone()) {
            return Err(Error::DuplicateMessageId {
                path: path.to_owned(),
                id: entry.id,
            });
        }
        messages.push(entry);
    }
    Ok(messages)
}

/// Writes a messages file atomically.
pub(crate) fn write_messages(path: &Path, messages: &[ConversationEntry]) -> Result<()> {
    let mut text = String::new();
    for entry in messages {
        let line = serde_json::to_string(entry).map_err(|source| Error::Serialize {
            what: "a message",
            source,
        })?;
        text.push_str(&line);
        text.push('\n');
    }
    write_atomic(path, text.as_bytes())
}

/// The paths of one session folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) dir: PathBuf,
}

impl Layout {
    pub(crate) fn messages(&self) -> PathBuf {
        self.dir.join(MESSAGES_FILE)
    }

    pub(crate) fn window(&self) -> PathBuf {
        self.dir.join(WINDOW_FILE)
    }

    pub(crate) fn history(&self) -> PathBuf {
        self.dir.join(HISTORY_DIR)
    }
}
