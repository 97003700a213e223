//! The `threads` table on PostgreSQL (rules as in the SQLite store's `threads` module).

use std::collections::HashMap;

use memory_store::ddl::Dialect;
use memory_store::names::tables::{ROLLOUT_CONTENTS, THREADS};
use tokio_postgres::Row;

use super::super::stored_paths;
use super::super::threads::{self, THREAD_COLUMNS};
use super::{PgStore, to_i64};
use crate::error::Result;
use crate::store::{
    Exclusion, KnownFile, MemoryMode, StoredRollout, ThreadRecord, ThreadRegistration, UpsertCounts,
};

/// A thread with the machine that registered it, from a row of [`THREAD_COLUMNS`] and
/// `machine_id`.
fn thread_from_row(row: &Row) -> Result<ThreadRecord> {
    Ok(ThreadRecord {
        machine_id: row.try_get(14)?,
        ..threads::thread_from_row(row)?
    })
}

impl PgStore {
    pub(super) async fn pg_thread(&self, id: &str) -> Result<Option<ThreadRecord>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!("SELECT {THREAD_COLUMNS}, machine_id FROM {THREADS} WHERE id = $1"),
                &[&id],
            )
            .await?;
        row.as_ref().map(thread_from_row).transpose()
    }

    pub(super) async fn pg_threads(&self) -> Result<Vec<ThreadRecord>> {
        let client = self.client().await?;
        let rows = client
            .query(
                &format!(
                    "SELECT {THREAD_COLUMNS}, machine_id FROM {THREADS}
                     ORDER BY last_activity_at DESC, id DESC"
                ),
                &[],
            )
            .await?;
        rows.iter().map(thread_from_row).collect()
    }

    pub(super) async fn pg_thread_file_states(&self) -> Result<HashMap<String, KnownFile>> {
        let client = self.client().await?;
        let rows = client
            .query(
                &format!(
                    "SELECT rollout_path, file_size, file_mtime_ns, skip_reason FROM {THREADS}
                     WHERE machine_id = $1 OR machine_id IS NULL"
                ),
                &[&self.owner.host],
            )
            .await?;
        let states = rows
            .iter()
            .map(|row| {
                Ok((
                    row.try_get::<_, String>(0)?,
                    KnownFile {
                        size: u64::try_from(row.try_get::<_, i64>(1)?).unwrap_or(0),
                        mtime_ns: row.try_get(2)?,
                        exclusion: row
                            .try_get::<_, Option<String>>(3)?
                            .as_deref()
                            .map(Exclusion::parse),
                    },
                ))
            })
            .collect::<std::result::Result<_, tokio_postgres::Error>>()?;
        Ok(states)
    }

    pub(super) async fn pg_upsert_threads(
        &self,
        rows: &[ThreadRegistration],
        now: i64,
    ) -> Result<UpsertCounts> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let existing = tx
            .prepare_cached(&format!(
                "SELECT source_fingerprint FROM {THREADS} WHERE id = $1"
            ))
            .await?;
        let upsert = tx
            .prepare_cached(&threads::upsert_statement(Dialect::Postgres))
            .await?;
        // Stored items of versions other than the registered one can never be claimed.
        let stale_items = tx
            .prepare_cached(&format!(
                "DELETE FROM {ROLLOUT_CONTENTS} c USING {THREADS} t
                 WHERE c.thread_id = $1 AND t.id = $1
                    AND c.source_fingerprint <> t.source_fingerprint"
            ))
            .await?;
        let mut counts = UpsertCounts::default();
        for row in rows {
            let previous: Option<String> = match tx.query_opt(&existing, &[&row.session.id]).await?
            {
                Some(stored) => Some(stored.try_get(0)?),
                None => None,
            };
            // Paths are stored redacted: a worker extracts from the stored items, never the
            // path.
            let stored_path = stored_paths::storable(&row.session.rollout_path);
            let cwd = row.session.cwd.as_deref().map(stored_paths::storable);
            let changed = tx
                .execute(
                    &upsert,
                    &[
                        &row.session.id,
                        &stored_path.as_ref(),
                        &cwd.as_deref(),
                        &row.session.source,
                        &row.session.exclusion.as_ref().map(ToString::to_string),
                        &row.session.created_at,
                        &now,
                        &row.last_activity_at,
                        &row.memory_mode.as_str(),
                        &row.fingerprint,
                        &to_i64(row.file_size),
                        &row.file_mtime_ns,
                        &row.session.git_branch,
                        &self.owner.host,
                    ],
                )
                .await?;
            if changed > 0 {
                tx.execute(&stale_items, &[&row.session.id]).await?;
            }
            counts.count(previous.as_deref(), changed > 0, &row.fingerprint);
        }
        tx.commit().await?;
        Ok(counts)
    }

    pub(super) async fn pg_store_rollouts(
        &self,
        rollouts: &[StoredRollout],
        now: i64,
    ) -> Result<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let insert = tx
            .prepare_cached(&format!(
                "INSERT INTO {ROLLOUT_CONTENTS} (thread_id, source_fingerprint, items, uploaded_at)
                 VALUES ($1, $2, $3, $4)
                 ON CONFLICT (thread_id, source_fingerprint) DO UPDATE SET
                    items = excluded.items,
                    uploaded_at = excluded.uploaded_at"
            ))
            .await?;
        for rollout in rollouts {
            tx.execute(
                &insert,
                &[
                    &rollout.thread_id,
                    &rollout.source_fingerprint,
                    &rollout.items,
                    &now,
                ],
            )
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub(super) async fn pg_set_thread_memory_mode(
        &self,
        id: &str,
        mode: MemoryMode,
        now: i64,
    ) -> Result<bool> {
        let statement = threads::set_mode_statement(Dialect::Postgres);
        Ok(self
            .execute(&statement, &[&id, &mode.as_str(), &now])
            .await?
            > 0)
    }
}
