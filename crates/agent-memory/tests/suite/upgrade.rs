//! Stores written by the build before `memory-store` (the fixtures in
//! `tests/fixtures/store-before-memory-store/`, made by that build's CLI) open with this
//! build, every owner migrating its own tables, and keep every row.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agent_memory::goals::{GoalConfig, GoalStore};
use agent_memory::introspect::{IntrospectConfig, Introspector};
use agent_memory::store::names::schema_owners;
use agent_memory::write::store::{StateStore, WriteStore};

/// Every row of every table, each row as its values' text, by table.
type Rows = BTreeMap<String, Vec<String>>;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/store-before-memory-store")
        .join(name)
}

fn sqlite_rows(path: &Path) -> Rows {
    let conn = rusqlite::Connection::open(path).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut rows = Rows::new();
    for table in tables {
        let mut statement = conn.prepare(&format!("SELECT * FROM \"{table}\"")).unwrap();
        let columns = statement.column_count();
        let mut texts: Vec<String> = statement
            .query_map([], |row| {
                let mut text = Vec::new();
                for column in 0..columns {
                    let value: rusqlite::types::Value = row.get(column)?;
                    text.push(format!("{value:?}"));
                }
                Ok(text.join("|"))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        texts.sort();
        rows.insert(table, texts);
    }
    rows
}

fn user_version(path: &Path) -> i64 {
    rusqlite::Connection::open(path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap()
}

/// Every table of `before` holds the same rows in `after`; `schema_versions` may only gain
/// rows (the owners that kept their version in `PRAGMA user_version` get one) or raise the goal
/// tables' version, and a goal row may only gain the columns its version 2 appends.
fn assert_every_row_kept(before: &Rows, after: &Rows) {
    assert!(
        before.values().map(Vec::len).sum::<usize>() > 20,
        "{before:?}"
    );
    for (table, rows) in before {
        let kept = &after[table];
        match table.as_str() {
            "schema_versions" => {
                for row in rows.iter().filter(|row| !row.contains("goal-steering")) {
                    assert!(kept.contains(row), "{table}: {row} lost");
                }
            }
            "thread_goals" => assert_rows_extended(rows, kept),
            _ => assert_eq!(kept, rows, "{table}"),
        }
    }
}

/// Each row of `after` is the row of `before` with columns appended (rows compared as text:
/// `a|b|c` for SQLite, `(a,b,c)` for PostgreSQL).
fn assert_rows_extended(before: &[String], after: &[String]) {
    assert_eq!(before.len(), after.len(), "{after:?}");
    for (old, new) in before.iter().zip(after) {
        let old = old.trim_end_matches(')');
        assert!(
            new.trim_end_matches(')').starts_with(old),
            "{old} became {new}"
        );
    }
}

#[tokio::test]
async fn a_sqlite_home_from_before_memory_store_keeps_every_row() {
    let home = tempfile::tempdir().unwrap();
    let state = home.path().join("state.sqlite");
    let index = home.path().join("memory_index.sqlite");
    std::fs::copy(fixture("state.sqlite"), &state).unwrap();
    std::fs::copy(fixture("memory_index.sqlite"), &index).unwrap();
    let (state_before, index_before) = (sqlite_rows(&state), sqlite_rows(&index));
    assert_eq!((user_version(&state), user_version(&index)), (3, 1));

    let store = StateStore::open_home(home.path()).unwrap();
    assert_eq!(store.schema_version().await.unwrap(), 3);
    drop(store);
    let goals = GoalStore::open_home(home.path(), GoalConfig::default()).unwrap();
    assert_eq!(goals.schema_version().unwrap(), 2);
    let listed = goals.list().unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].tokens_used, 1200);
    drop(goals);
    let introspector = Introspector::open(home.path(), IntrospectConfig::default()).unwrap();
    assert!(introspector.reads_since(0).unwrap().is_empty());
    drop(introspector);

    let (state_after, index_after) = (sqlite_rows(&state), sqlite_rows(&index));
    assert_every_row_kept(&state_before, &state_after);
    // The search index's version 2 rebuilds the search tables (a cache of the files, read
    // again by the next search); every other row of the index file is kept.
    let is_search_cache =
        |table: &str| table == "indexed_files" || table.starts_with("memory_search_index");
    let kept = |rows: &Rows| -> Rows {
        rows.iter()
            .filter(|(table, _)| !is_search_cache(table))
            .map(|(table, rows)| (table.clone(), rows.clone()))
            .collect()
    };
    for (table, rows) in kept(&index_before) {
        if table != "schema_versions" {
            assert_eq!(index_after[&table], rows, "{table}");
        }
    }
    assert!(index_after["indexed_files"].is_empty());
    // The retired pragma's numbers moved into `schema_versions`, one row per owner.
    assert_eq!(
        state_after["schema_versions"],
        [
            format!("Text({:?})|Integer(2)", schema_owners::GOAL_STEERING),
            format!("Text({:?})|Integer(3)", schema_owners::MEMORY_WRITE),
        ]
    );
    assert_eq!(
        index_after["schema_versions"],
        [format!(
            "Text({:?})|Integer(2)",
            schema_owners::MEMORY_INTROSPECT
        )]
    );
    // Opening again changes nothing.
    StateStore::open_home(home.path()).unwrap();
    GoalStore::open_home(home.path(), GoalConfig::default()).unwrap();
    assert_eq!(sqlite_rows(&state), state_after);
}

#[cfg(feature = "postgres")]
mod postgres {
    use agent_memory::goals::PgGoalOptions;
    use agent_memory::write::store::postgres::{PgStore, PgStoreOptions};
    use tokio_postgres::NoTls;

    use super::*;

    async fn postgres_rows(client: &tokio_postgres::Client, schema: &str) -> Rows {
        let tables = client
            .query(
                "SELECT table_name::text FROM information_schema.tables
                 WHERE table_schema = $1 ORDER BY 1",
                &[&schema],
            )
            .await
            .unwrap();
        let mut rows = Rows::new();
        for table in tables {
            let table: String = table.get(0);
            let texts = client
                .query(
                    &format!("SELECT t::text FROM {schema}.{table} t ORDER BY 1"),
                    &[],
                )
                .await
                .unwrap()
                .iter()
                .map(|row| row.get(0))
                .collect();
            rows.insert(table, texts);
        }
        rows
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_postgres_store_from_before_memory_store_keeps_every_row() {
        let Some(url) = std::env::var("AGENT_MEMORY_TEST_PG_URL")
            .ok()
            .filter(|url| !url.is_empty())
        else {
            eprintln!("SKIPPED: PostgreSQL upgrade test (AGENT_MEMORY_TEST_PG_URL is not set)");
            return;
        };
        let schema = format!("upgrade_{}", std::process::id());
        let (client, connection) = tokio_postgres::connect(&url, NoTls).await.unwrap();
        tokio::spawn(connection);
        let dump = std::fs::read_to_string(fixture("postgres.sql"))
            .unwrap()
            .replace("__SCHEMA__", &schema);
        client
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};"
            ))
            .await
            .unwrap();
        client.batch_execute(&dump).await.unwrap();
        let before = postgres_rows(&client, &schema).await;

        let options = PgStoreOptions {
            schema: Some(schema.clone()),
            ..PgStoreOptions::default()
        };
        let store = PgStore::connect_with(&url, &options).await.unwrap();
        assert_eq!(store.schema_version().await.unwrap(), 3);
        let goal_options = PgGoalOptions {
            schema: Some(schema.clone()),
            ..PgGoalOptions::default()
        };
        let goals = GoalStore::connect(&url, &goal_options, GoalConfig::default()).unwrap();
        assert_eq!(goals.schema_version().unwrap(), 2);
        assert_eq!(goals.list().unwrap().len(), 2);
        drop(goals);
        drop(store);

        let after = postgres_rows(&client, &schema).await;
        assert_every_row_kept(&before, &after);
        client
            .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
            .await
            .unwrap();
    }
}
