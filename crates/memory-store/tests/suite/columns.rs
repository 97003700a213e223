//! One record read the same way from a SQLite row and a PostgreSQL row; a value of another
//! type is an error on both, never a panic.

use memory_store::columns::Columns;

/// `(text, maybe text, integer, maybe integer, flag)` from columns 0 to 4.
fn record<R: Columns>(row: &R) -> Result<Record, R::Error> {
    Ok((
        row.text(0)?,
        row.text_or_null(1)?,
        row.integer(2)?,
        row.integer_or_null(3)?,
        row.flag(4)?,
    ))
}

type Record = (String, Option<String>, i64, Option<i64>, bool);

fn expected() -> Record {
    ("a".to_owned(), None, 7, None, true)
}

#[test]
fn a_sqlite_row_reads_by_type_and_a_mismatch_is_an_error() {
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    let read = conn
        .query_row("SELECT 'a', NULL, 7, NULL, 1", [], |row| record(row))
        .unwrap();
    assert_eq!(read, expected());
    let mismatch = conn.query_row("SELECT 'a', NULL, 'seven', NULL, 1", [], |row| record(row));
    assert!(mismatch.is_err(), "{mismatch:?}");
    let missing = conn.query_row("SELECT 'a'", [], |row| record(row));
    assert!(missing.is_err(), "{missing:?}");
}

#[tokio::test]
async fn a_postgres_row_reads_by_type_and_a_mismatch_is_an_error() {
    let Some(url) = super::postgres::server() else {
        return;
    };
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT 'a'::TEXT, NULL::TEXT, 7::BIGINT, NULL::BIGINT, TRUE",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(record(&row).unwrap(), expected());
    // A 32-bit column is not read as a 64-bit one: the error says so instead of panicking.
    let row = client
        .query_one(
            "SELECT 'a'::TEXT, NULL::TEXT, 7::INTEGER, NULL::BIGINT, TRUE",
            &[],
        )
        .await
        .unwrap();
    assert!(record(&row).is_err());
    let row = client.query_one("SELECT 'a'::TEXT", &[]).await.unwrap();
    assert!(record(&row).is_err());
}
