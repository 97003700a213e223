//! The one migrator: each owner's tables are versioned by a row of `schema_versions`
//! (`owner`, `version`), on SQLite and PostgreSQL alike, so owners sharing one database migrate
//! on their own, in any order.
//!
//! An owner's migrations are an ordered list: index `i` brings its tables to version `i + 1`.
//! They run in one transaction that first takes the database's write lock (`BEGIN IMMEDIATE`
//! on SQLite, a transaction-scoped advisory lock on PostgreSQL), so processes opening a fresh
//! database at once apply each migration exactly once, and a failed one leaves nothing
//! half-applied. A version newer than the build knows is refused, never downgraded.

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use crate::error::{Error, Result};
use crate::names::tables::SCHEMA_VERSIONS;

/// An owner's tables and the migrations that build them.
#[derive(Debug, Clone, Copy)]
pub struct Schema<'a> {
    /// The owner's row in `schema_versions` (one of [`crate::names::schema_owners`]).
    pub owner: &'static str,
    /// Index `i` brings the tables to version `i + 1`.
    pub migrations: &'a [String],
    /// The owner kept its SQLite version in `PRAGMA user_version` before `schema_versions`
    /// existed: on a file with no row for it yet, that number is its version (read once).
    pub legacy_user_version: bool,
}

impl Schema<'_> {
    /// The newest version this build knows.
    pub fn supported(&self) -> i64 {
        i64::try_from(self.migrations.len()).unwrap_or(i64::MAX)
    }

    fn too_new(&self, found: i64) -> Result<()> {
        if found > self.supported() {
            return Err(Error::SchemaTooNew {
                owner: self.owner,
                found,
                supported: self.supported(),
            });
        }
        Ok(())
    }
}

/// Brings the owner's tables in a SQLite database up to date. `after` runs inside the
/// transaction after each applied migration, with its version, for steps SQL cannot say.
pub fn migrate_sqlite(
    conn: &mut Connection,
    schema: &Schema<'_>,
    mut after: impl FnMut(&Transaction<'_>, i64) -> rusqlite::Result<()>,
) -> Result<i64> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(&format!(
        "CREATE TABLE IF NOT EXISTS {SCHEMA_VERSIONS} (
            owner TEXT PRIMARY KEY,
            version INTEGER NOT NULL
        )"
    ))?;
    let recorded = recorded_sqlite(&tx, schema.owner)?;
    let found = match recorded {
        Some(version) => version,
        None if schema.legacy_user_version => retire_user_version(&tx)?,
        None => 0,
    };
    schema.too_new(found)?;
    for (version, sql) in (1..).zip(schema.migrations) {
        if version > found {
            tx.execute_batch(sql)?;
            after(&tx, version)?;
        }
    }
    let version = found.max(schema.supported());
    if recorded != Some(version) {
        tx.execute(
            &format!(
                "INSERT INTO {SCHEMA_VERSIONS} (owner, version) VALUES (?1, ?2)
                 ON CONFLICT (owner) DO UPDATE SET version = excluded.version"
            ),
            params![schema.owner, version],
        )?;
    }
    tx.commit()?;
    Ok(version)
}

/// The one step that reads `PRAGMA user_version`: the version an owner recorded there before
/// `schema_versions`, adopted once into its row (the pragma itself is left as it was, so a
/// build from before this change still opens the file it wrote).
fn retire_user_version(tx: &Transaction<'_>) -> rusqlite::Result<i64> {
    tx.query_row("PRAGMA user_version", [], |row| row.get(0))
}

fn recorded_sqlite(conn: &Connection, owner: &str) -> rusqlite::Result<Option<i64>> {
    conn.query_row(
        &format!("SELECT version FROM {SCHEMA_VERSIONS} WHERE owner = ?1"),
        [owner],
        |row| row.get(0),
    )
    .optional()
}

/// The version recorded for `owner` in a SQLite database (0 when it has none).
pub fn sqlite_version(conn: &Connection, owner: &str) -> Result<i64> {
    let exists: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
        [SCHEMA_VERSIONS],
        |row| row.get(0),
    )?;
    if !exists {
        return Ok(0);
    }
    Ok(recorded_sqlite(conn, owner)?.unwrap_or(0))
}

/// Brings the owner's tables in a PostgreSQL database (the connection's `search_path`) up to
/// date, under the migration lock every owner takes.
#[cfg(feature = "postgres")]
pub async fn migrate_postgres(
    client: &mut tokio_postgres::Client,
    schema: &Schema<'_>,
) -> Result<i64> {
    use crate::names::postgres_locks;

    let tx = client.transaction().await?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1)",
        &[&postgres_locks::MIGRATION],
    )
    .await?;
    tx.batch_execute(&format!(
        "CREATE TABLE IF NOT EXISTS {SCHEMA_VERSIONS} (
            owner TEXT PRIMARY KEY,
            version BIGINT NOT NULL
        )"
    ))
    .await?;
    let recorded: Option<i64> = tx
        .query_opt(
            &format!("SELECT version FROM {SCHEMA_VERSIONS} WHERE owner = $1"),
            &[&schema.owner],
        )
        .await?
        .map(|row| row.get(0));
    let found = recorded.unwrap_or(0);
    schema.too_new(found)?;
    for (version, sql) in (1..).zip(schema.migrations) {
        if version > found {
            tx.batch_execute(sql).await?;
        }
    }
    let version = found.max(schema.supported());
    if recorded != Some(version) {
        tx.execute(
            &format!(
                "INSERT INTO {SCHEMA_VERSIONS} (owner, version) VALUES ($1, $2)
                 ON CONFLICT (owner) DO UPDATE SET version = excluded.version"
            ),
            &[&schema.owner, &version],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(version)
}

/// The version recorded for `owner` in a PostgreSQL database (0 when it has none).
#[cfg(feature = "postgres")]
pub async fn postgres_version(client: &tokio_postgres::Client, owner: &str) -> Result<i64> {
    let exists: bool = client
        .query_one("SELECT to_regclass($1) IS NOT NULL", &[&SCHEMA_VERSIONS])
        .await?
        .get(0);
    if !exists {
        return Ok(0);
    }
    Ok(client
        .query_opt(
            &format!("SELECT version FROM {SCHEMA_VERSIONS} WHERE owner = $1"),
            &[&owner],
        )
        .await?
        .map_or(0, |row| row.get(0)))
}
