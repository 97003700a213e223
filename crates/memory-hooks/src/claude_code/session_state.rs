//! What one session already received, kept in the home between hook runs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use memory_transcript::claude_code::ended::{EndedSession, append_ended};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// Folder of the per-session files, under the state folder.
const SESSIONS_DIR: &str = "sessions";
/// The list of ended sessions, under the state folder (`<home>/hooks/claude-code`, so the
/// list is at [`memory_transcript::claude_code::ended::ENDED_SESSIONS_FILE`] in the home).
const ENDED_FILE: &str = "ended.jsonl";

/// What a session holds from us since its last compaction.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SessionState {
    /// The `content_hash` of the memory block last injected.
    pub block_hash: Option<String>,
    /// The recalled passages (`path:line`) injected.
    pub recalled: BTreeSet<String>,
}

impl SessionState {
    /// The state of `session`; a session never seen, or whose file is unreadable JSON, starts
    /// empty (the worst case is a passage injected twice).
    pub fn load(state_dir: &Path, session: &str) -> Result<SessionState> {
        let path = path(state_dir, session);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(serde_json::from_slice(&bytes).unwrap_or_default()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                Ok(SessionState::default())
            }
            Err(error) => Err(Error::Io { path, error }),
        }
    }

    /// Writes the state of `session` atomically (a temporary file, then a rename).
    pub fn save(&self, state_dir: &Path, session: &str) -> Result<()> {
        let path = path(state_dir, session);
        let text = serde_json::to_vec(self).map_err(Error::Encode)?;
        write_atomically(&path, &text)
    }
}

/// The file of `session`: its id when that is a plain name (Claude Code's are UUIDs), else a
/// hash of it, so no id can name a path outside the folder.
pub(crate) fn path(state_dir: &Path, session: &str) -> PathBuf {
    let plain = !session.is_empty()
        && session.len() <= 128
        && session
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    let name = if plain {
        session.to_owned()
    } else {
        let digest = Sha256::digest(session.as_bytes());
        let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
        format!("id-{hex}")
    };
    state_dir.join(SESSIONS_DIR).join(format!("{name}.json"))
}

/// Appends an ended session, ended now, to the list of ended sessions
/// ([`memory_transcript::claude_code::ended`], which the write path reads).
pub(crate) fn record_ended(
    state_dir: &Path,
    session: &str,
    transcript: &Path,
    reason: Option<&str>,
) -> Result<()> {
    let path = state_dir.join(ENDED_FILE);
    let ended_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
        });
    let end = EndedSession {
        session_id: session,
        transcript_path: transcript,
        reason,
        ended_at,
    };
    append_ended(&path, &end).map_err(|error| Error::Io { path, error })
}

pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |error| Error::Io {
        path: path.to_owned(),
        error,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".tmp{}", std::process::id()));
    let temporary = PathBuf::from(temporary);
    std::fs::write(&temporary, bytes).map_err(io)?;
    std::fs::rename(&temporary, path).map_err(io)
}
