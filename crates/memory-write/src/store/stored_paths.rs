//! Paths are text too: a working directory or a rollout path can carry a secret (a token in a
//! folder name), so both are redacted before they are stored.
//!
//! A working directory is only ever shown, so its redacted form is all there is. A rollout path
//! is also what a job opens: when redaction changes it, the `threads` row keeps the redacted
//! form (what headers, reports and the model see) and the real path lives only in this process's
//! memory, learned by the scan that registered it. A temporary table of the connection (kept in
//! memory, never in the file) lists those threads, so a claim only picks a redacted-path thread
//! in a process that can open its file; a process that never scanned it leaves it alone.

use std::borrow::Cow;
use std::path::PathBuf;

use memory_protocol::names::REDACTED_SECRET;
use memory_sanitize::redact_secrets;
use memory_store::names::tables::THREADS;
use rusqlite::{Connection, Transaction, params};

use super::Db;

/// The connection-private table of threads whose real rollout path this process knows.
pub(super) const KNOWN_PATHS: &str = "temp.known_rollout_paths";

/// Prepares the connection-private table; the temporary store is kept in memory so the real
/// paths never reach a file.
pub(super) fn prepare_connection(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS known_rollout_paths (thread_id TEXT PRIMARY KEY)",
    )
}

/// SQL true when a claim in this process may pick thread `t`: its path is stored as is, or this
/// process knows the real one.
pub(super) fn claimable_path_filter() -> String {
    format!(
        "(instr(t.rollout_path, '{REDACTED_SECRET}') = 0
          OR t.id IN (SELECT thread_id FROM {KNOWN_PATHS}))"
    )
}

/// The form of a path or working directory that may be stored.
pub(super) fn storable(text: &str) -> Cow<'_, str> {
    redact_secrets(text)
}

/// Redacts the working directory and rollout path of every row written before paths were
/// redacted. Inside the migration's transaction.
pub(super) fn redact_stored_paths(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let rows: Vec<(String, String, Option<String>)> = {
        let mut statement = tx.prepare(&format!("SELECT id, rollout_path, cwd FROM {THREADS}"))?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let mut update = tx.prepare(&format!(
        "UPDATE {THREADS} SET rollout_path = ?2, cwd = ?3 WHERE id = ?1"
    ))?;
    for (id, path, cwd) in rows {
        let stored_path = storable(&path);
        let stored_cwd = cwd.as_deref().map(storable);
        if stored_path != path.as_str() || stored_cwd.as_deref() != cwd.as_deref() {
            update.execute(params![id, stored_path, stored_cwd])?;
        }
    }
    Ok(())
}

impl Db {
    /// Lists `thread_id`, whose rollout is stored under a redacted path, as one this process can
    /// open (the caller keeps the real path in memory), inside the caller's transaction.
    pub(super) fn remember_real_path(
        tx: &Transaction<'_>,
        thread_id: &str,
    ) -> rusqlite::Result<()> {
        tx.execute(
            &format!("INSERT OR IGNORE INTO {KNOWN_PATHS} (thread_id) VALUES (?1)"),
            [thread_id],
        )?;
        Ok(())
    }

    /// The file to open for `thread_id`, whose stored (possibly redacted) path is `stored`.
    pub(super) fn open_path(&self, thread_id: &str, stored: &str) -> PathBuf {
        self.real_paths
            .get(thread_id)
            .cloned()
            .unwrap_or_else(|| PathBuf::from(stored))
    }
}
