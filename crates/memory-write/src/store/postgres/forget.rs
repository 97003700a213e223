//! Forgetting on PostgreSQL: one thread, or everything the fleet remembers.

use memory_store::names::tables::{
    MEMORY_ROOT_REVISIONS, PHASE_TWO_BASELINE, PHASE_TWO_LEASE, SHARED_NOTES, STAGE_ONE_JOBS,
    STAGE_ONE_OUTPUTS, THREADS,
};

use memory_store::ddl::Dialect;

use super::PgStore;
use crate::error::Result;
use crate::store::MemoryMode;
use crate::store::forget::{ForgetReport, MIN_PREFIX_CHARS, ResetReport, ThreadMatch};
use crate::store::phase_two::signal_statement;

impl PgStore {
    pub(super) async fn pg_resolve_thread(&self, reference: &str) -> Result<ThreadMatch> {
        let reference = reference.trim();
        let client = self.client().await?;
        let exact = client
            .query_opt(
                &format!("SELECT id FROM {THREADS} WHERE id = $1 OR rollout_path = $1 LIMIT 1"),
                &[&reference],
            )
            .await?;
        if let Some(row) = exact {
            return Ok(ThreadMatch::One(row.try_get(0)?));
        }
        if reference.chars().count() < MIN_PREFIX_CHARS {
            return Ok(ThreadMatch::None);
        }
        // `starts_with` compares text as text: `%` and `_` in a reference are not patterns.
        let rows = client
            .query(
                &format!("SELECT id FROM {THREADS} WHERE starts_with(id, $1) ORDER BY id LIMIT 10"),
                &[&reference],
            )
            .await?;
        let ids = rows
            .iter()
            .map(|row| row.try_get(0))
            .collect::<std::result::Result<_, _>>()?;
        Ok(ThreadMatch::from_prefix_matches(ids))
    }

    pub(super) async fn pg_forget_thread(&self, thread_id: &str, now: i64) -> Result<ForgetReport> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // The thread row first, the order a claim and a finishing job take their locks in.
        tx.execute(
            &format!("UPDATE {THREADS} SET memory_mode = $2, updated_at = $3 WHERE id = $1"),
            &[&thread_id, &MemoryMode::Disabled.as_str(), &now],
        )
        .await?;
        let was_consolidated: bool = tx
            .query_one(
                &format!("SELECT EXISTS (SELECT 1 FROM {PHASE_TWO_BASELINE} WHERE thread_id = $1)"),
                &[&thread_id],
            )
            .await?
            .try_get(0)?;
        let deleted = tx
            .execute(
                &format!("DELETE FROM {STAGE_ONE_OUTPUTS} WHERE thread_id = $1"),
                &[&thread_id],
            )
            .await?;
        tx.execute(
            &format!("DELETE FROM {STAGE_ONE_JOBS} WHERE thread_id = $1"),
            &[&thread_id],
        )
        .await?;
        if was_consolidated || deleted > 0 {
            tx.execute(&signal_statement(Dialect::Postgres), &[&now])
                .await?;
        }
        tx.commit().await?;
        Ok(ForgetReport {
            output_deleted: deleted > 0,
            was_consolidated,
        })
    }

    pub(super) async fn pg_reset_memories(&self) -> Result<ResetReport> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // Every thread is to extract again. Thread rows are locked first, the order claims and
        // finishing jobs take their locks in.
        tx.execute(&format!("UPDATE {THREADS} SET done_watermark = -1"), &[])
            .await?;
        // A fresh lease row: a consolidation running now fails to complete (its owner token is
        // gone) instead of publishing a root of memories that no longer exist.
        tx.execute(&format!("DELETE FROM {PHASE_TWO_LEASE}"), &[])
            .await?;
        tx.execute(
            &format!("INSERT INTO {PHASE_TWO_LEASE} (id) VALUES (1)"),
            &[],
        )
        .await?;
        let outputs = tx
            .execute(&format!("DELETE FROM {STAGE_ONE_OUTPUTS}"), &[])
            .await?;
        let jobs = tx
            .execute(&format!("DELETE FROM {STAGE_ONE_JOBS}"), &[])
            .await?;
        tx.execute(&format!("DELETE FROM {PHASE_TWO_BASELINE}"), &[])
            .await?;
        // No machine materializes the old files or notes again.
        tx.execute(&format!("DELETE FROM {MEMORY_ROOT_REVISIONS}"), &[])
            .await?;
        tx.execute(&format!("DELETE FROM {SHARED_NOTES}"), &[])
            .await?;
        tx.commit().await?;
        Ok(ResetReport {
            outputs: usize::try_from(outputs).unwrap_or(usize::MAX),
            jobs: usize::try_from(jobs).unwrap_or(usize::MAX),
        })
    }
}
