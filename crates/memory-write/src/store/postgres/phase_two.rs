//! Phase 2 on PostgreSQL: the one-row consolidation lease, selection, pruning, the baseline and
//! memory usage (rules as in the SQLite store's `phase_two` module).
//!
//! Every claim, failure and completion reads the lease row `FOR UPDATE`, so they are serialized
//! on it exactly as SQLite's `BEGIN IMMEDIATE` serializes them; a connection lost mid-claim
//! rolls back and leaves the row as it was.

use memory_protocol::stage_one::{JobStatus, StageOneOutputRecord};
use memory_store::ddl::Dialect;
use memory_store::names::tables::{PHASE_TWO_BASELINE, PHASE_TWO_LEASE, STAGE_ONE_OUTPUTS};
use tokio_postgres::types::ToSql;

use super::{PgStore, to_i64};
use crate::error::Result;
use crate::store::phase_two::{STATE_COLUMNS, baseline_from_row, baseline_query, state_from_row};
use crate::store::phase_two::{
    claim_refusal, complete_statement, fail_statement, heartbeat_statement, release_statement,
    signal_statement, take_statement,
};
use crate::store::stage_one::{output_from_row, output_query};
use crate::store::{
    ActivityWindow, BaselineEntry, Heartbeat, PhaseTwoClaim, PhaseTwoClaimParams, PhaseTwoFailure,
    PhaseTwoLease, PhaseTwoState, PhaseTwoSuccess,
};

/// A memory's activity time in `stage1_outputs` aliased `o`: its last use, else its rollout's
/// update time.
const ACTIVITY: &str = "COALESCE(o.last_used_at, o.source_updated_at)";
/// The whitespace SQLite's `TRIM(x, char(32, 9, 10, 13))` removes.
const BLANK: &str = "E' \\t\\n\\r'";

/// The lease row, locked for the rest of the transaction.
async fn lock_state(
    tx: &deadpool_postgres::Transaction<'_>,
) -> Result<(PhaseTwoState, Option<(String, u32, Option<String>)>)> {
    let row = tx
        .query_opt(
            &format!(
                "SELECT {STATE_COLUMNS}, owner_host, owner_pid, owner_started
                 FROM {PHASE_TWO_LEASE} WHERE id = 1 FOR UPDATE"
            ),
            &[],
        )
        .await?;
    Ok(match row {
        Some(row) => {
            let holder = match (
                row.try_get::<_, Option<String>>(11)?,
                row.try_get::<_, Option<i64>>(12)?,
            ) {
                (Some(host), Some(pid)) => Some((
                    host,
                    u32::try_from(pid).unwrap_or(u32::MAX),
                    row.try_get::<_, Option<String>>(13)?,
                )),
                _ => None,
            };
            (state_from_row(&row)?, holder)
        }
        None => (PhaseTwoState::never_claimed(), None),
    })
}

impl PgStore {
    pub(super) async fn pg_claim_phase_two(
        &self,
        params: PhaseTwoClaimParams,
    ) -> Result<PhaseTwoClaim> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // The row is created by the migration; re-create it if someone deleted it.
        tx.execute(
            &format!("INSERT INTO {PHASE_TWO_LEASE} (id) VALUES (1) ON CONFLICT DO NOTHING"),
            &[],
        )
        .await?;
        let (mut state, holder) = lock_state(&tx).await?;
        let now = params.now;
        // A lease whose holder on this host is gone counts as expired.
        if state.status == JobStatus::Running
            && state.lease_expires_at.is_some_and(|expires| expires > now)
            && let Some((host, pid, started)) = &holder
            && self.owner.is_gone(host, *pid, started.as_deref())
        {
            state.lease_expires_at = Some(now);
        }
        if let Some(refusal) = claim_refusal(&state, &params) {
            return Ok(refusal);
        }
        let lease = PhaseTwoLease::taken(state, &params);
        tx.execute(
            &take_statement(Dialect::Postgres),
            &[
                &lease.owner_token,
                &lease.lease_expires_at,
                &now,
                &self.owner.host,
                &i64::from(self.owner.pid),
                &self.owner.started,
            ],
        )
        .await?;
        tx.commit().await?;
        Ok(PhaseTwoClaim::Claimed(lease))
    }

    pub(super) async fn pg_heartbeat_phase_two(
        &self,
        owner_token: &str,
        beat: Heartbeat,
    ) -> Result<bool> {
        let values: [&(dyn ToSql + Sync); 3] = [&beat.expires_at(), &beat.now, &owner_token];
        Ok(self
            .execute(&heartbeat_statement(Dialect::Postgres), &values)
            .await?
            == 1)
    }

    pub(super) async fn pg_release_phase_two(&self, owner_token: &str) -> Result<bool> {
        let statement = release_statement(Dialect::Postgres);
        Ok(self.execute(&statement, &[&owner_token]).await? == 1)
    }

    pub(super) async fn pg_complete_phase_two(
        &self,
        lease: &PhaseTwoLease,
        success: &PhaseTwoSuccess<'_>,
    ) -> Result<bool> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let changed = tx
            .execute(
                &complete_statement(Dialect::Postgres),
                &[
                    &success.now,
                    &success.input_hash,
                    &lease.input_watermark,
                    &lease.owner_token,
                ],
            )
            .await?;
        if changed != 1 {
            return Ok(false);
        }
        tx.execute(
            &format!(
                "UPDATE {STAGE_ONE_OUTPUTS}
                 SET selected = FALSE, selected_source_updated_at = NULL
                 WHERE selected OR selected_source_updated_at IS NOT NULL"
            ),
            &[],
        )
        .await?;
        tx.execute(&format!("DELETE FROM {PHASE_TWO_BASELINE}"), &[])
            .await?;
        let mark = tx
            .prepare_cached(&format!(
                "UPDATE {STAGE_ONE_OUTPUTS} SET selected = TRUE, selected_source_updated_at = $2
                 WHERE thread_id = $1 AND source_updated_at = $2"
            ))
            .await?;
        let baseline = tx
            .prepare_cached(&format!(
                "INSERT INTO {PHASE_TWO_BASELINE} (thread_id, source_updated_at, material)
                 VALUES ($1, $2, $3)
                 ON CONFLICT (thread_id) DO UPDATE SET
                    source_updated_at = excluded.source_updated_at,
                    material = excluded.material"
            ))
            .await?;
        for entry in success.selected {
            tx.execute(&mark, &[&entry.thread_id, &entry.source_updated_at])
                .await?;
            tx.execute(
                &baseline,
                &[&entry.thread_id, &entry.source_updated_at, &entry.material],
            )
            .await?;
        }
        super::shared_root::publish(&tx, success.root, &self.owner.host, success.now).await?;
        tx.commit().await?;
        Ok(true)
    }

    pub(super) async fn pg_fail_phase_two(
        &self,
        owner_token: &str,
        failure: &PhaseTwoFailure,
    ) -> Result<bool> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let (state, _) = lock_state(&tx).await?;
        let Some((attempts, retry_after)) = failure.recorded_after(&state, owner_token) else {
            return Ok(false);
        };
        tx.execute(
            &fail_statement(Dialect::Postgres),
            &[&attempts, &failure.error, &retry_after],
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    pub(super) async fn pg_enqueue_phase_two(&self, now: i64) -> Result<()> {
        self.execute(&signal_statement(Dialect::Postgres), &[&now])
            .await?;
        Ok(())
    }

    pub(super) async fn pg_phase_two_state(&self) -> Result<PhaseTwoState> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!("SELECT {STATE_COLUMNS} FROM {PHASE_TWO_LEASE} WHERE id = 1"),
                &[],
            )
            .await?;
        Ok(row
            .as_ref()
            .map(state_from_row)
            .transpose()?
            .unwrap_or_else(PhaseTwoState::never_claimed))
    }

    pub(super) async fn pg_memory_clock(&self, now: i64) -> Result<i64> {
        let client = self.client().await?;
        let newest: Option<i64> = client
            .query_one(
                &format!(
                    "SELECT MAX(GREATEST(o.source_updated_at, COALESCE(o.last_used_at, 0)))
                     FROM {STAGE_ONE_OUTPUTS} o"
                ),
                &[],
            )
            .await?
            .try_get(0)?;
        Ok(newest.map_or(now, |newest| newest.min(now)))
    }

    pub(super) async fn pg_select_phase_two_inputs(
        &self,
        window: ActivityWindow,
        limit: usize,
    ) -> Result<Vec<StageOneOutputRecord>> {
        let cutoff = window.cutoff(self.pg_memory_clock(window.now).await?);
        let client = self.client().await?;
        let rows = client
            .query(
                &output_query(&format!(
                    "WHERE t.memory_mode = 'enabled'
                       AND (btrim(o.raw_memory, {BLANK}) <> ''
                            OR btrim(o.rollout_summary, {BLANK}) <> '')
                       AND {ACTIVITY} >= $1
                     ORDER BY o.usage_count DESC, {ACTIVITY} DESC, o.source_updated_at DESC,
                              o.thread_id DESC
                     LIMIT $2"
                )),
                &[&cutoff, &to_i64(limit)],
            )
            .await?;
        let mut records = rows
            .iter()
            .map(output_from_row)
            .collect::<std::result::Result<Vec<StageOneOutputRecord>, _>>()?;
        records.sort_by(|a, b| a.thread_id.cmp(&b.thread_id));
        Ok(records)
    }

    pub(super) async fn pg_prune_phase_two_outputs(
        &self,
        window: ActivityWindow,
        limit: usize,
    ) -> Result<usize> {
        let cutoff = window.cutoff(self.pg_memory_clock(window.now).await?);
        let client = self.client().await?;
        let deleted = client
            .execute(
                &format!(
                    "DELETE FROM {STAGE_ONE_OUTPUTS} WHERE thread_id IN (
                         SELECT o.thread_id FROM {STAGE_ONE_OUTPUTS} o
                         WHERE NOT o.selected AND {ACTIVITY} < $1
                         ORDER BY {ACTIVITY} ASC, o.thread_id ASC
                         LIMIT $2)"
                ),
                &[&cutoff, &to_i64(limit)],
            )
            .await?;
        Ok(usize::try_from(deleted).unwrap_or(usize::MAX))
    }

    pub(super) async fn pg_phase_two_baseline(&self) -> Result<Vec<BaselineEntry>> {
        let client = self.client().await?;
        let rows = client.query(&baseline_query(), &[]).await?;
        Ok(rows
            .iter()
            .map(baseline_from_row)
            .collect::<std::result::Result<_, _>>()?)
    }

    pub(super) async fn pg_record_memory_usage(
        &self,
        thread_ids: &[String],
        now: i64,
    ) -> Result<usize> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let statement = tx
            .prepare_cached(&format!(
                "UPDATE {STAGE_ONE_OUTPUTS}
                 SET usage_count = usage_count + 1, last_used_at = $2 WHERE thread_id = $1"
            ))
            .await?;
        let mut updated = 0;
        for thread_id in thread_ids {
            updated += tx.execute(&statement, &[thread_id, &now]).await?;
        }
        tx.commit().await?;
        Ok(usize::try_from(updated).unwrap_or(usize::MAX))
    }
}
