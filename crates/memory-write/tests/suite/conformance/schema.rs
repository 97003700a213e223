//! Both dialects create the same write-path tables: every column a fresh SQLite database has, a
//! fresh PostgreSQL store has too, with the same type family and nullability. PostgreSQL's own
//! later versions add only the columns named here.

use std::collections::BTreeSet;

use memory_store::names::tables::{
    PHASE_TWO_BASELINE, PHASE_TWO_LEASE, STAGE_ONE_JOBS, STAGE_ONE_OUTPUTS, THREADS,
};
use memory_write::store::StateStore;
use memory_write::store::postgres::{PgStore, PgStoreOptions};

use super::{pg_url, unique_schema};

const SHARED_TABLES: [&str; 5] = [
    THREADS,
    STAGE_ONE_JOBS,
    STAGE_ONE_OUTPUTS,
    PHASE_TWO_LEASE,
    PHASE_TWO_BASELINE,
];

/// Columns PostgreSQL adds for stores shared by machines, and for its claim bookkeeping.
const POSTGRES_ONLY: [(&str, &str); 3] = [
    (THREADS, "machine_id"),
    (THREADS, "done_watermark"),
    (THREADS, "claimed"),
];

/// `(table, column, type family, not null)`.
type Column = (String, String, &'static str, bool);

/// The family a declared type belongs to: PostgreSQL's integer widths and booleans are SQLite's
/// integers.
fn family(declared: &str) -> &'static str {
    match declared.to_ascii_lowercase().as_str() {
        "integer" | "bigint" | "boolean" => "integer",
        "text" => "text",
        _ => "other",
    }
}

fn sqlite_columns() -> BTreeSet<Column> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.sqlite");
    drop(StateStore::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mut columns = BTreeSet::new();
    for table in SHARED_TABLES {
        let mut statement = conn
            .prepare("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1)")
            .unwrap();
        let rows = statement
            .query_map([table], |row| {
                let declared: String = row.get(1)?;
                let not_null: bool = row.get(2)?;
                let primary_key: i64 = row.get(3)?;
                // PostgreSQL makes every primary-key column NOT NULL; SQLite says so only when
                // it is declared.
                Ok((
                    table.to_owned(),
                    row.get::<_, String>(0)?,
                    family(&declared),
                    not_null || primary_key > 0,
                ))
            })
            .unwrap();
        for row in rows {
            columns.insert(row.unwrap());
        }
    }
    columns
}

#[test]
fn a_fresh_sqlite_database_has_every_write_path_column() {
    // The SQLite half alone, so a dialect edit shows even where no server runs.
    let columns = sqlite_columns();
    let count = |table: &str| columns.iter().filter(|c| c.0 == table).count();
    assert_eq!(
        SHARED_TABLES.map(count),
        [14, 14, 10, 15, 3],
        "{columns:#?}"
    );
    assert!(columns.contains(&(
        STAGE_ONE_OUTPUTS.to_owned(),
        "selected".to_owned(),
        "integer",
        true
    )));
}

#[tokio::test]
async fn postgresql_creates_the_columns_sqlite_creates() {
    let Some(url) = pg_url() else {
        return super::say_skipped();
    };
    let schema = unique_schema("same_columns");
    let options = PgStoreOptions {
        schema: Some(schema.clone()),
        ..PgStoreOptions::default()
    };
    drop(PgStore::connect_with(&url, &options).await.unwrap());
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let rows = client
        .query(
            "SELECT table_name::text, column_name::text, data_type::text, is_nullable::text
             FROM information_schema.columns WHERE table_schema = $1",
            &[&schema],
        )
        .await
        .unwrap();
    let mut postgres = BTreeSet::new();
    for row in rows {
        let table: String = row.get(0);
        let column: String = row.get(1);
        if !SHARED_TABLES.contains(&table.as_str())
            || POSTGRES_ONLY.contains(&(table.as_str(), column.as_str()))
        {
            continue;
        }
        let declared: String = row.get(2);
        let nullable: String = row.get(3);
        postgres.insert((table, column, family(&declared), nullable == "NO"));
    }
    assert_eq!(postgres, sqlite_columns());
    client
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await
        .unwrap();
}
