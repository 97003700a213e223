//! The `threads` table: one row per known rollout.

use std::collections::HashMap;
use std::path::PathBuf;

use memory_store::columns::Columns;
use memory_store::ddl::Dialect;
use memory_store::names::tables::THREADS;
use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::{Db, stored_paths};
use crate::error::Result;

/// Whether a thread's rollout may be extracted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryMode {
    /// Extracted.
    Enabled,
    /// Never extracted (`generate_memories = false` when it was first seen, or forgotten).
    Disabled,
    /// Never extracted: the session stamped itself `"memory_mode": "disabled"` (codex does so
    /// for every session while its `generate_memories` is false).
    DisabledBySession,
    /// The session used external context; never extracted.
    Polluted,
}

impl MemoryMode {
    /// The mode as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryMode::Enabled => "enabled",
            MemoryMode::Disabled => "disabled",
            MemoryMode::DisabledBySession => "disabled_by_session",
            MemoryMode::Polluted => "polluted",
        }
    }

    /// Parses a stored mode; unknown text is treated as disabled, the safe reading.
    pub fn parse(text: &str) -> MemoryMode {
        match text {
            "enabled" => MemoryMode::Enabled,
            "polluted" => MemoryMode::Polluted,
            "disabled_by_session" => MemoryMode::DisabledBySession,
            _ => MemoryMode::Disabled,
        }
    }
}

/// Why a rollout is never extracted, decided when it is scanned; stored in the `skip_reason`
/// column as its [`Display`](std::fmt::Display) form (`ephemeral`, `subagent`,
/// `non_interactive:exec`, `no_user_message`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Exclusion {
    /// The session marked itself ephemeral.
    Ephemeral,
    /// A sub-agent's session: the session that started it holds the work.
    Subagent,
    /// A session not started by a person at an interactive client, named by its source
    /// (`exec`, `mcp`, ...; `unknown` when the source has no name).
    NonInteractive(String),
    /// The user never wrote anything beyond injected context.
    NoUserMessage,
    /// A reason this build does not know, written by another version into a shared store. The
    /// rollout stays excluded, as that version decided.
    Unrecognised(String),
}

impl Exclusion {
    /// Prefix of a stored [`Exclusion::NonInteractive`].
    const NON_INTERACTIVE: &str = "non_interactive:";

    /// Reads a stored reason; text this build does not know is kept as
    /// [`Exclusion::Unrecognised`].
    pub fn parse(text: &str) -> Exclusion {
        match text {
            "ephemeral" => Exclusion::Ephemeral,
            "subagent" => Exclusion::Subagent,
            "no_user_message" => Exclusion::NoUserMessage,
            _ => match text.strip_prefix(Self::NON_INTERACTIVE) {
                Some(source) => Exclusion::NonInteractive(source.to_owned()),
                None => Exclusion::Unrecognised(text.to_owned()),
            },
        }
    }
}

impl std::fmt::Display for Exclusion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exclusion::Ephemeral => f.write_str("ephemeral"),
            Exclusion::Subagent => f.write_str("subagent"),
            Exclusion::NonInteractive(source) => write!(f, "{}{source}", Self::NON_INTERACTIVE),
            Exclusion::NoUserMessage => f.write_str("no_user_message"),
            Exclusion::Unrecognised(text) => f.write_str(text),
        }
    }
}

/// What a rollout file says about its session, the same in a scan's registration and in the
/// stored row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFacts {
    /// Thread id (from `session_meta`, else from the file name).
    pub id: String,
    /// Absolute path of the rollout file.
    pub rollout_path: String,
    /// Working directory recorded in the rollout.
    pub cwd: Option<String>,
    /// Git branch recorded in the rollout.
    pub git_branch: Option<String>,
    /// The session source's name (`cli`, `exec`, `subagent`, ...).
    pub source: Option<String>,
    /// Why the rollout is never extracted, if so.
    pub exclusion: Option<Exclusion>,
    /// When the session started (Unix seconds).
    pub created_at: i64,
}

/// What a scan learned about one rollout file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadRegistration {
    /// What the file says about its session.
    pub session: SessionFacts,
    /// When the session was last active (Unix seconds): the last line's timestamp, else the
    /// file's modification time.
    pub last_activity_at: i64,
    /// Memory mode for a thread seen for the first time. `Polluted` also applies to a known
    /// thread whose memory is enabled (its session used external context since); other
    /// modes of known threads are kept.
    pub memory_mode: MemoryMode,
    /// A fingerprint of the file's content; a new fingerprint advances the watermark.
    pub fingerprint: String,
    /// File size in bytes.
    pub file_size: u64,
    /// File modification time in nanoseconds since the epoch.
    pub file_mtime_ns: i64,
}

/// A row of the `threads` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadRecord {
    /// What the file said about its session when it was last registered.
    pub session: SessionFacts,
    /// When the row last changed (Unix seconds).
    pub updated_at: i64,
    /// Last activity (Unix seconds).
    pub last_activity_at: i64,
    /// Memory mode.
    pub memory_mode: MemoryMode,
    /// The source watermark: starts at the last activity time and strictly increases every
    /// time the file's content changes, so "the rollout changed since its extraction" is
    /// `source_watermark > last_success_watermark`.
    pub source_watermark: i64,
    /// Content fingerprint.
    pub source_fingerprint: String,
    /// File size in bytes when last scanned.
    pub file_size: u64,
    /// File modification time (ns) when last scanned.
    pub file_mtime_ns: i64,
    /// The machine that registered it, on a store shared by several machines (its lease
    /// owner's host name, or the configured machine id); `None` on a local store.
    pub machine_id: Option<String>,
}

/// A rollout's content as a store shared by several machines keeps it: uploaded by the machine
/// that has the file, read by whichever worker claims the thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRollout {
    /// Thread id.
    pub thread_id: String,
    /// The registration's content fingerprint: a claim takes the thread only while the stored
    /// items match the registered file.
    pub source_fingerprint: String,
    /// The rollout's items after filtering and redaction, as a JSON array (see
    /// [`crate::stage_one_request::stored_items`]). Nothing unredacted leaves the machine.
    pub items: String,
}

/// A known rollout file, as last scanned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownFile {
    /// Size in bytes.
    pub size: u64,
    /// Modification time in nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// Why the rollout is never extracted, if so.
    pub exclusion: Option<Exclusion>,
}

/// What an upsert did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpsertCounts {
    /// Threads seen for the first time.
    pub inserted: usize,
    /// Known threads whose content changed (their watermark advanced).
    pub changed: usize,
    /// Known threads whose content is unchanged.
    pub unchanged: usize,
}

/// The columns [`thread_from_row`] reads, in its order; a PostgreSQL store appends
/// `machine_id`.
pub(super) const THREAD_COLUMNS: &str = "id, rollout_path, cwd, source, skip_reason, created_at, \
     updated_at, last_activity_at, memory_mode, source_watermark, source_fingerprint, file_size, \
     file_mtime_ns, git_branch";

/// A thread from a row of [`THREAD_COLUMNS`], on either backend; the machine is left unknown.
pub(super) fn thread_from_row<R: Columns>(row: &R) -> std::result::Result<ThreadRecord, R::Error> {
    Ok(ThreadRecord {
        session: SessionFacts {
            id: row.text(0)?,
            rollout_path: row.text(1)?,
            cwd: row.text_or_null(2)?,
            git_branch: row.text_or_null(13)?,
            source: row.text_or_null(3)?,
            exclusion: row.text_or_null(4)?.as_deref().map(Exclusion::parse),
            created_at: row.integer(5)?,
        },
        updated_at: row.integer(6)?,
        last_activity_at: row.integer(7)?,
        memory_mode: MemoryMode::parse(&row.text(8)?),
        source_watermark: row.integer(9)?,
        source_fingerprint: row.text(10)?,
        file_size: u64::try_from(row.integer(11)?).unwrap_or(0),
        file_mtime_ns: row.integer(12)?,
        machine_id: None,
    })
}

impl UpsertCounts {
    /// Counts one registration: `previous` is the fingerprint stored before it (none for a
    /// thread seen for the first time), `written` whether the upsert changed the row.
    pub(super) fn count(&mut self, previous: Option<&str>, written: bool, fingerprint: &str) {
        match previous {
            None => self.inserted += 1,
            Some(previous) if written && previous != fingerprint => self.changed += 1,
            Some(_) => self.unchanged += 1,
        }
    }
}

/// The registration rule, on either backend. A new thread starts with its last activity as
/// watermark; a known thread whose fingerprint changed gets a strictly larger watermark (and
/// so is extracted again), an unchanged one keeps its own; a thread marked polluted stays so
/// while its memory is enabled, and other modes of known threads are kept; when two files
/// claim one thread id, the row follows the more recently active file. Parameters 1 to 13:
/// id, rollout path, cwd, source, skip reason, created at, now, last activity, memory mode,
/// fingerprint, file size, file mtime, git branch. A PostgreSQL store is shared by machines
/// and also records the one that registered the thread (parameter 14).
/// The statement that sets a thread's memory mode. Parameters: thread id, mode, time.
pub(super) fn set_mode_statement(dialect: Dialect) -> String {
    let p = |n| dialect.parameter(n);
    format!(
        "UPDATE {THREADS} SET memory_mode = {}, updated_at = {} WHERE id = {}",
        p(2),
        p(3),
        p(1)
    )
}

pub(super) fn upsert_statement(dialect: Dialect) -> String {
    let p = |n| dialect.parameter(n);
    let greatest = dialect.greatest();
    // The last activity (parameter 8) is also a new thread's first watermark.
    let values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 8, 10, 11, 12, 13]
        .map(p)
        .join(", ");
    let (machine_column, machine_value, machine_update) = match dialect {
        Dialect::Sqlite => (String::new(), String::new(), String::new()),
        Dialect::Postgres => (
            ", machine_id".to_owned(),
            format!(", {}", p(14)),
            ",\n                machine_id = excluded.machine_id".to_owned(),
        ),
    };
    format!(
        "INSERT INTO {THREADS} AS t (id, rollout_path, cwd, source, skip_reason, created_at,
            updated_at, last_activity_at, memory_mode, source_watermark, source_fingerprint,
            file_size, file_mtime_ns, git_branch{machine_column})
         VALUES ({values}{machine_value})
         ON CONFLICT (id) DO UPDATE SET
            rollout_path = excluded.rollout_path,
            cwd = excluded.cwd,
            git_branch = excluded.git_branch,
            memory_mode = CASE
                WHEN excluded.memory_mode = 'polluted' AND t.memory_mode = 'enabled'
                    THEN 'polluted'
                ELSE t.memory_mode
            END,
            source = excluded.source,
            skip_reason = excluded.skip_reason,
            updated_at = excluded.updated_at,
            last_activity_at = excluded.last_activity_at,
            source_watermark = CASE
                WHEN t.source_fingerprint = excluded.source_fingerprint THEN t.source_watermark
                ELSE {greatest}(t.source_watermark + 1, excluded.source_watermark)
            END,
            source_fingerprint = excluded.source_fingerprint,
            file_size = excluded.file_size,
            file_mtime_ns = excluded.file_mtime_ns{machine_update}
         WHERE excluded.rollout_path = t.rollout_path
            OR excluded.last_activity_at > t.last_activity_at"
    )
}

impl Db {
    /// One thread by id.
    pub(super) fn thread(&self, id: &str) -> Result<Option<ThreadRecord>> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {THREAD_COLUMNS} FROM {THREADS} WHERE id = ?1"),
                [id],
                |row| thread_from_row(row),
            )
            .optional()?)
    }

    /// Every thread, newest activity first.
    pub(super) fn threads(&self) -> Result<Vec<ThreadRecord>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {THREAD_COLUMNS} FROM {THREADS} ORDER BY last_activity_at DESC, id DESC"
        ))?;
        let rows = stmt.query_map([], |row| thread_from_row(row))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// What a scan needs to know about every known rollout path without reading the file:
    /// its size and mtime (ns) when last scanned, and its skip reason.
    pub(super) fn thread_file_states(&self) -> Result<HashMap<String, KnownFile>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT rollout_path, file_size, file_mtime_ns, skip_reason FROM {THREADS}"
        ))?;
        let rows = stmt.query_map([], |row| {
            let size: i64 = row.get(1)?;
            Ok((
                row.get::<_, String>(0)?,
                KnownFile {
                    size: u64::try_from(size).unwrap_or(0),
                    mtime_ns: row.get(2)?,
                    exclusion: row
                        .get::<_, Option<String>>(3)?
                        .as_deref()
                        .map(Exclusion::parse),
                },
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Registers rollouts in one write transaction. A new thread starts with its last
    /// activity as watermark; a known thread whose fingerprint changed gets a strictly larger
    /// watermark (and so is extracted again); an unchanged one keeps its watermark. When two
    /// files claim one thread id, the row follows the more recently active file. Working
    /// directories and rollout paths are stored redacted (see `stored_paths`).
    pub(super) fn upsert_threads(
        &mut self,
        rows: &[ThreadRegistration],
        now: i64,
    ) -> Result<UpsertCounts> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut counts = UpsertCounts::default();
        let mut secret_paths = Vec::new();
        {
            let mut existing = tx.prepare_cached(&format!(
                "SELECT source_fingerprint FROM {THREADS} WHERE id = ?1"
            ))?;
            let mut upsert = tx.prepare_cached(&upsert_statement(Dialect::Sqlite))?;
            for row in rows {
                let previous: Option<String> = existing
                    .query_row([&row.session.id], |r| r.get(0))
                    .optional()?;
                // Paths are stored redacted; a real path that differs is kept in memory only.
                let stored_path = stored_paths::storable(&row.session.rollout_path);
                if stored_path != row.session.rollout_path.as_str() {
                    Db::remember_real_path(&tx, &row.session.id)?;
                    secret_paths.push((
                        row.session.id.clone(),
                        PathBuf::from(&row.session.rollout_path),
                    ));
                }
                let changed = upsert.execute(params![
                    row.session.id,
                    stored_path,
                    row.session.cwd.as_deref().map(stored_paths::storable),
                    row.session.source,
                    row.session.exclusion.as_ref().map(ToString::to_string),
                    row.session.created_at,
                    now,
                    row.last_activity_at,
                    row.memory_mode.as_str(),
                    row.fingerprint,
                    i64::try_from(row.file_size).unwrap_or(i64::MAX),
                    row.file_mtime_ns,
                    row.session.git_branch,
                ])?;
                counts.count(previous.as_deref(), changed > 0, &row.fingerprint);
            }
        }
        tx.commit()?;
        self.real_paths.extend(secret_paths);
        Ok(counts)
    }

    /// Sets a thread's memory mode. Returns false when the thread is unknown.
    pub(super) fn set_thread_memory_mode(
        &mut self,
        id: &str,
        mode: MemoryMode,
        now: i64,
    ) -> Result<bool> {
        let changed = self.conn.execute(
            &set_mode_statement(Dialect::Sqlite),
            params![id, mode.as_str(), now],
        )?;
        Ok(changed > 0)
    }
}
