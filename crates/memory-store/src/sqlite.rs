//! The one way a SQLite file is opened: write-ahead logging so readers never block the writer,
//! a busy timeout so concurrent writers wait instead of failing, and `synchronous = NORMAL`
//! (durable at every checkpoint, safe against corruption).

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use crate::error::{Error, Result};

/// How long a writer waits for another process's write transaction by default.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// Opens (creating when missing) the database at `path` in WAL mode, waiting up to
/// `busy_timeout` for other processes' writes.
pub fn open(path: &Path, busy_timeout: Duration) -> Result<Connection> {
    let open_error = |source| Error::Open {
        path: path.to_owned(),
        source,
    };
    let conn = Connection::open(path).map_err(open_error)?;
    set_lock_timeout(&conn, busy_timeout).map_err(open_error)?;
    // Switching a new file to WAL needs a moment of exclusive access, and SQLite reports a
    // concurrent opener as busy without calling the busy handler, so retry here.
    let mode: String = retry_busy(busy_timeout, || {
        conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
    })
    .map_err(open_error)?;
    if !mode.eq_ignore_ascii_case("wal") && !mode.eq_ignore_ascii_case("memory") {
        warn_not_wal(path, &mode);
    }
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(open_error)?;
    Ok(conn)
}

/// A private database in memory, with the same busy timeout as a file.
pub fn open_in_memory(busy_timeout: Duration) -> Result<Connection> {
    let open_error = |source| Error::Open {
        path: ":memory:".into(),
        source,
    };
    let conn = Connection::open_in_memory().map_err(open_error)?;
    set_lock_timeout(&conn, busy_timeout).map_err(open_error)?;
    Ok(conn)
}

/// Sets how long `conn` waits for another process's write transaction.
pub fn set_lock_timeout(conn: &Connection, timeout: Duration) -> rusqlite::Result<()> {
    conn.busy_timeout(timeout)
}

/// Runs `op` again while SQLite reports the database busy or locked, for up to `timeout`.
pub fn retry_busy<T>(
    timeout: Duration,
    mut op: impl FnMut() -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    let deadline = Instant::now() + timeout;
    loop {
        match op() {
            Err(rusqlite::Error::SqliteFailure(error, _))
                if matches!(
                    error.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            other => return other,
        }
    }
}

/// WAL cannot be enabled on some file systems; the store still works (with less
/// concurrency), so this is logged as a warning instead of failing.
fn warn_not_wal(path: &Path, mode: &str) {
    tracing::warn!(
        path = %path.display(),
        mode,
        "the database cannot use write-ahead logging; concurrent runs will wait more"
    );
}
