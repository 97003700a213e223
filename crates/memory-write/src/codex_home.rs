//! Codex's own state beside a memory root agent-memory writes into `$CODEX_HOME/memories`.
//!
//! Codex runs its own consolidation at every start-up: from its own database it rewrites
//! `raw_memories.md` and `rollout_summaries/` and starts an agent over the folder, undoing what
//! agent-memory wrote. Its consolidation takes one global lease first (a row of its
//! `memories_1.sqlite`) and skips while another owner holds it, so agent-memory holds that
//! lease for good: codex keeps reading the root and leaves writing it to agent-memory.
//! Codex also reads another folder (`memories_v2/`) when its config says
//! `[memories] version = "v2"`; agent-memory writes the v1 layout only, so that setting is
//! refused with a message naming it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{OptionalExtension, params};

use crate::error::{Error, Result};

/// Codex's database of memory jobs, under its home.
pub const CODEX_MEMORIES_DB: &str = "memories_1.sqlite";
/// Codex's config file, under its home.
const CODEX_CONFIG: &str = "config.toml";
/// Codex's job kind and key of its one global consolidation.
const CONSOLIDATION_KIND: &str = "memory_consolidate_global";
const CONSOLIDATION_KEY: &str = "global";
/// The worker and owner token agent-memory holds codex's lease under.
const LEASE_OWNER: &str = "agent-memory";
/// The lease's end: the last second of year 9999, so it never runs out.
const LEASE_FOREVER: i64 = 253_402_300_799;
/// How long to wait for codex while it holds its database's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// What became of codex's consolidation lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodexLease {
    /// agent-memory holds it (taken now or held already), in this database.
    Held(PathBuf),
    /// Codex has no memory database here yet (it has not started with memories on): its
    /// first start-up may consolidate the folder once, until the next run takes the lease.
    NoDatabase(PathBuf),
}

/// Refuses a codex home whose config sets `[memories] version = "v2"`. A missing config is
/// codex's default, which reads `memories/` once it holds a summary.
pub fn check_memories_version(codex_home: &Path) -> Result<()> {
    let path = codex_home.join(CODEX_CONFIG);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => return Err(Error::CodexConfigRead { path, source }),
    };
    let table: toml::Table = text.parse().map_err(|source| Error::CodexConfigToml {
        path: path.clone(),
        source,
    })?;
    let version = table
        .get("memories")
        .and_then(|memories| memories.get("version"))
        .and_then(toml::Value::as_str);
    if version == Some("v2") {
        return Err(Error::CodexMemoriesV2 { path });
    }
    Ok(())
}

/// Takes codex's consolidation lease in `<codex_home>/memories_1.sqlite` for good (or keeps
/// holding it), so codex's start-up consolidation skips the folder. A database codex has not
/// created yet is left alone: its tables are codex's to create.
pub fn hold_consolidation_lease(codex_home: &Path, now: i64) -> Result<CodexLease> {
    let path = codex_home.join(CODEX_MEMORIES_DB);
    if !path.is_file() {
        return Ok(CodexLease::NoDatabase(path));
    }
    let conn = memory_store::sqlite::open(&path, BUSY_TIMEOUT)?;
    let has_jobs: Option<String> = conn
        .query_row(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'jobs'",
            [],
            |row| row.get(0),
        )
        .optional()?;
    if has_jobs.is_none() {
        return Ok(CodexLease::NoDatabase(path));
    }
    conn.execute(
        "INSERT INTO jobs (kind, job_key, status, worker_id, ownership_token, started_at,
             finished_at, lease_until, retry_at, retry_remaining, last_error, input_watermark,
             last_success_watermark)
         VALUES (?1, ?2, 'running', ?3, ?3, ?4, NULL, ?5, NULL, 3, NULL, 0, 0)
         ON CONFLICT (kind, job_key) DO UPDATE SET
             status = 'running', worker_id = excluded.worker_id,
             ownership_token = excluded.ownership_token, started_at = excluded.started_at,
             lease_until = excluded.lease_until, retry_at = NULL, last_error = NULL",
        params![
            CONSOLIDATION_KIND,
            CONSOLIDATION_KEY,
            LEASE_OWNER,
            now,
            LEASE_FOREVER
        ],
    )?;
    Ok(CodexLease::Held(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codex's `jobs` table as codex 0.169.0 creates it.
    const CODEX_JOBS: &str = "CREATE TABLE jobs (
        kind TEXT NOT NULL, job_key TEXT NOT NULL, status TEXT NOT NULL, worker_id TEXT,
        ownership_token TEXT, started_at INTEGER, finished_at INTEGER, lease_until INTEGER,
        retry_at INTEGER, retry_remaining INTEGER NOT NULL, last_error TEXT,
        input_watermark INTEGER, last_success_watermark INTEGER, PRIMARY KEY (kind, job_key))";

    fn lease_row(path: &Path) -> (String, String, i64, Option<i64>, Option<String>) {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.query_row(
            "SELECT status, ownership_token, lease_until, retry_at, last_error FROM jobs
             WHERE kind = 'memory_consolidate_global' AND job_key = 'global'",
            [],
            |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                ))
            },
        )
        .unwrap()
    }

    #[test]
    fn the_lease_is_taken_over_from_codex_and_never_runs_out() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join(CODEX_MEMORIES_DB);
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute(CODEX_JOBS, []).unwrap();
        // Codex's own failed pass: in back-off, with an error.
        conn.execute(
            "INSERT INTO jobs VALUES ('memory_consolidate_global', 'global', 'error', 'w',
             'token', 1, 2, NULL, 5000, 2, 'failed_agent', 0, 0)",
            [],
        )
        .unwrap();
        drop(conn);
        let lease = hold_consolidation_lease(home.path(), 1_000).unwrap();
        assert_eq!(lease, CodexLease::Held(path.clone()));
        assert_eq!(
            lease_row(&path),
            (
                "running".to_owned(),
                "agent-memory".to_owned(),
                LEASE_FOREVER,
                None,
                None
            )
        );
        // Holding it again changes nothing but the start time.
        assert_eq!(
            hold_consolidation_lease(home.path(), 2_000).unwrap(),
            CodexLease::Held(path.clone())
        );
        assert_eq!(lease_row(&path).2, LEASE_FOREVER);
    }

    #[test]
    fn a_home_codex_has_not_prepared_is_left_alone() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join(CODEX_MEMORIES_DB);
        assert_eq!(
            hold_consolidation_lease(home.path(), 1).unwrap(),
            CodexLease::NoDatabase(path.clone())
        );
        assert!(!path.exists(), "codex's database is codex's to create");
        rusqlite::Connection::open(&path).unwrap();
        assert_eq!(
            hold_consolidation_lease(home.path(), 1).unwrap(),
            CodexLease::NoDatabase(path)
        );
    }

    #[test]
    fn memories_version_v2_is_refused_naming_the_setting() {
        let home = tempfile::tempdir().unwrap();
        check_memories_version(home.path()).unwrap();
        let config = home.path().join(CODEX_CONFIG);
        std::fs::write(&config, "model = \"x\"\n[memories]\nversion = \"v1\"\n").unwrap();
        check_memories_version(home.path()).unwrap();
        std::fs::write(&config, "[memories]\nversion = \"v2\"\n").unwrap();
        let message = check_memories_version(home.path()).unwrap_err().to_string();
        assert!(
            message.contains("memories.version = \"v2\"") && message.contains("config.toml"),
            "{message}"
        );
        std::fs::write(&config, "[memories\n").unwrap();
        let error = check_memories_version(home.path()).unwrap_err();
        let message = error.to_string();
        assert!(
            message.starts_with("cannot read codex's config")
                && message.contains("line 1, column 10")
                && message.matches("unclosed table").count() == 1,
            "{message}"
        );
        let cause = std::error::Error::source(&error).expect("a cause");
        assert!(cause.is::<toml::de::Error>(), "{cause:?}");
    }
}
