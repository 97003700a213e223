//! Revisions of the shared memory root on PostgreSQL (see [`crate::shared_root`]).

use memory_store::names::tables::{MEMORY_ROOT_REVISIONS, SHARED_NOTES};

use super::PgStore;
use crate::error::{Error, Result};
use crate::shared_root::{RootFile, RootRevision};

/// Revisions kept: a machine that materializes while a newer one is published still finds the
/// one it asked for gone only after this many more passes.
const KEPT_REVISIONS: i64 = 8;

/// Publishes `files` as the next revision, inside the transaction that completes the phase-2
/// lease (the lease row is locked, so revisions are numbered without a race).
pub(super) async fn publish(
    tx: &tokio_postgres::Transaction<'_>,
    files: &[RootFile],
    machine_id: &str,
    now: i64,
) -> Result<()> {
    if files.is_empty() {
        return Ok(());
    }
    let encoded = serde_json::to_string(files).map_err(Error::Serialize)?;
    let revision: i64 = tx
        .query_one(
            &format!("SELECT COALESCE(MAX(revision), 0) + 1 FROM {MEMORY_ROOT_REVISIONS}"),
            &[],
        )
        .await?
        .try_get(0)?;
    tx.execute(
        &format!(
            "INSERT INTO {MEMORY_ROOT_REVISIONS} (revision, files, machine_id, created_at)
             VALUES ($1, $2, $3, $4)"
        ),
        &[&revision, &encoded, &machine_id, &now],
    )
    .await?;
    tx.execute(
        &format!("DELETE FROM {MEMORY_ROOT_REVISIONS} WHERE revision <= $1"),
        &[&(revision - KEPT_REVISIONS)],
    )
    .await?;
    Ok(())
}

impl PgStore {
    pub(super) async fn pg_latest_memory_root(
        &self,
        known: Option<i64>,
    ) -> Result<Option<RootRevision>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!(
                    "SELECT revision, files FROM {MEMORY_ROOT_REVISIONS}
                     WHERE revision > $1 ORDER BY revision DESC LIMIT 1"
                ),
                &[&known.unwrap_or(0)],
            )
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let revision: i64 = row.try_get(0)?;
        let files: Vec<RootFile> = serde_json::from_str(row.try_get::<_, &str>(1)?)
            .map_err(|source| Error::InvalidSharedRoot { revision, source })?;
        Ok(Some(RootRevision { revision, files }))
    }

    pub(super) async fn pg_share_notes(&self, notes: &[RootFile], now: i64) -> Result<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let insert = tx
            .prepare_cached(&format!(
                "INSERT INTO {SHARED_NOTES} (path, text, machine_id, created_at)
                 VALUES ($1, $2, $3, $4) ON CONFLICT (path) DO NOTHING"
            ))
            .await?;
        for note in notes {
            tx.execute(&insert, &[&note.path, &note.text, &self.owner.host, &now])
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub(super) async fn pg_shared_notes(&self) -> Result<Vec<RootFile>> {
        let client = self.client().await?;
        let rows = client
            .query(
                &format!("SELECT path, text FROM {SHARED_NOTES} ORDER BY path"),
                &[],
            )
            .await?;
        let notes = rows
            .iter()
            .map(|row| {
                Ok(RootFile {
                    path: row.try_get(0)?,
                    text: row.try_get(1)?,
                })
            })
            .collect::<std::result::Result<_, tokio_postgres::Error>>()?;
        Ok(notes)
    }
}
