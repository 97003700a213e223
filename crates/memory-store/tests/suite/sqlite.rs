use std::time::Duration;

use memory_store::sqlite::{self, DEFAULT_BUSY_TIMEOUT};

#[test]
fn a_file_opens_in_wal_mode_with_normal_sync() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.sqlite");
    let conn = sqlite::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let synchronous: i64 = conn
        .query_row("PRAGMA synchronous", [], |row| row.get(0))
        .unwrap();
    assert_eq!(synchronous, 1, "NORMAL");
    assert!(path.is_file());
}

#[test]
fn many_processes_opening_a_fresh_file_at_once_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.sqlite");
    let openers: Vec<_> = (0..8)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || sqlite::open(&path, DEFAULT_BUSY_TIMEOUT).map(drop))
        })
        .collect();
    for opener in openers {
        opener.join().unwrap().unwrap();
    }
}

#[test]
fn a_writer_waits_for_another_writer_instead_of_failing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.sqlite");
    let first = sqlite::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    first.execute_batch("CREATE TABLE t (x INTEGER)").unwrap();
    first.execute_batch("BEGIN IMMEDIATE").unwrap();
    let waiter = std::thread::spawn(move || {
        let second = sqlite::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
        second.execute("INSERT INTO t VALUES (2)", []).unwrap();
    });
    std::thread::sleep(Duration::from_millis(200));
    first.execute("INSERT INTO t VALUES (1)", []).unwrap();
    first.execute_batch("COMMIT").unwrap();
    waiter.join().unwrap();
    let rows: i64 = first
        .query_row("SELECT count(*) FROM t", [], |row| row.get(0))
        .unwrap();
    assert_eq!(rows, 2);
}

#[test]
fn a_short_busy_timeout_gives_up_with_busy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.sqlite");
    let first = sqlite::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    first.execute_batch("CREATE TABLE t (x INTEGER)").unwrap();
    first.execute_batch("BEGIN IMMEDIATE").unwrap();
    let second = sqlite::open(&path, Duration::from_millis(50)).unwrap();
    let error = second.execute("INSERT INTO t VALUES (2)", []).unwrap_err();
    assert_eq!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy)
    );
}

#[test]
fn a_path_that_cannot_be_a_database_is_an_open_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let error = sqlite::open(dir.path(), DEFAULT_BUSY_TIMEOUT).unwrap_err();
    assert!(
        matches!(&error, memory_store::Error::Open { path, .. } if path == dir.path()),
        "{error:?}"
    );
}
