//! [`WriteStore`] on PostgreSQL: each method is the `pg_` method of the same name.

use std::collections::HashMap;

use memory_protocol::stage_one::{StageOneJob, StageOneOutputRecord};

use super::{PgStore, schema};
use crate::error::Result;
use crate::shared_root::{RootFile, RootRevision};
use crate::store::{
    ActivityWindow, BaselineEntry, ClaimParams, ClaimedJob, ForgetReport, Heartbeat, KnownFile,
    MemoryMode, PhaseTwoClaim, PhaseTwoClaimParams, PhaseTwoFailure, PhaseTwoLease, PhaseTwoState,
    PhaseTwoSuccess, ReleasedLeases, ResetReport, StageOneFailure, StageOneSuccess, StoredRollout,
    ThreadMatch, ThreadRecord, ThreadRegistration, UpsertCounts, WriteStore,
};

#[async_trait::async_trait]
impl WriteStore for PgStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    async fn schema_version(&self) -> Result<i64> {
        let client = self.client().await?;
        schema::version(&client).await
    }

    async fn upsert_threads(&self, rows: &[ThreadRegistration], now: i64) -> Result<UpsertCounts> {
        self.pg_upsert_threads(rows, now).await
    }

    fn is_shared(&self) -> bool {
        true
    }

    async fn store_rollouts(&self, rollouts: &[StoredRollout], now: i64) -> Result<()> {
        self.pg_store_rollouts(rollouts, now).await
    }

    async fn thread_file_states(&self) -> Result<HashMap<String, KnownFile>> {
        self.pg_thread_file_states().await
    }

    async fn thread(&self, id: &str) -> Result<Option<ThreadRecord>> {
        self.pg_thread(id).await
    }

    async fn threads(&self) -> Result<Vec<ThreadRecord>> {
        self.pg_threads().await
    }

    async fn set_thread_memory_mode(&self, id: &str, mode: MemoryMode, now: i64) -> Result<bool> {
        self.pg_set_thread_memory_mode(id, mode, now).await
    }

    async fn claim_next_stage_one_job(
        &self,
        params: &ClaimParams,
        now: i64,
    ) -> Result<Option<ClaimedJob>> {
        self.pg_claim_next_stage_one_job(params, now).await
    }

    async fn count_stage_one_candidates(&self, params: &ClaimParams, now: i64) -> Result<usize> {
        self.pg_count_stage_one_candidates(params, now).await
    }

    async fn heartbeat_stage_one_job(&self, job: &ClaimedJob, beat: Heartbeat) -> Result<bool> {
        self.pg_heartbeat_stage_one_job(job, beat).await
    }

    async fn mark_stage_one_succeeded(
        &self,
        job: &ClaimedJob,
        success: &StageOneSuccess,
    ) -> Result<bool> {
        self.pg_mark_stage_one_succeeded(job, success).await
    }

    async fn mark_stage_one_no_output(&self, job: &ClaimedJob, now: i64) -> Result<bool> {
        self.pg_mark_stage_one_no_output(job, now).await
    }

    async fn mark_stage_one_failed(
        &self,
        job: &ClaimedJob,
        failure: &StageOneFailure,
    ) -> Result<bool> {
        self.pg_mark_stage_one_failed(job, failure).await
    }

    async fn release_stage_one_job(&self, job: &ClaimedJob, note: &str) -> Result<bool> {
        self.pg_release_stage_one_job(job, note).await
    }

    async fn retry_failed_stage_one_jobs(&self) -> Result<usize> {
        self.pg_retry_failed_stage_one_jobs().await
    }

    async fn stage_one_job(&self, thread_id: &str) -> Result<Option<StageOneJob>> {
        self.pg_stage_one_job(thread_id).await
    }

    async fn stage_one_jobs(&self) -> Result<Vec<StageOneJob>> {
        self.pg_stage_one_jobs().await
    }

    async fn stage_one_output(&self, thread_id: &str) -> Result<Option<StageOneOutputRecord>> {
        self.pg_stage_one_output(thread_id).await
    }

    async fn stage_one_outputs(&self) -> Result<Vec<StageOneOutputRecord>> {
        self.pg_stage_one_outputs().await
    }

    async fn reclaim_jobs_of_gone_owners(&self, now: i64) -> Result<usize> {
        self.pg_reclaim_jobs_of_gone_owners(now).await
    }

    async fn release_leases_of_this_process(&self) -> Result<ReleasedLeases> {
        self.pg_release_leases_of_this_process().await
    }

    async fn claim_phase_two(&self, params: PhaseTwoClaimParams) -> Result<PhaseTwoClaim> {
        self.pg_claim_phase_two(params).await
    }

    async fn heartbeat_phase_two(&self, owner_token: &str, beat: Heartbeat) -> Result<bool> {
        self.pg_heartbeat_phase_two(owner_token, beat).await
    }

    async fn release_phase_two(&self, owner_token: &str) -> Result<bool> {
        self.pg_release_phase_two(owner_token).await
    }

    async fn complete_phase_two(
        &self,
        lease: &PhaseTwoLease,
        success: &PhaseTwoSuccess<'_>,
    ) -> Result<bool> {
        self.pg_complete_phase_two(lease, success).await
    }

    async fn fail_phase_two(&self, owner_token: &str, failure: &PhaseTwoFailure) -> Result<bool> {
        self.pg_fail_phase_two(owner_token, failure).await
    }

    async fn enqueue_phase_two(&self, now: i64) -> Result<()> {
        self.pg_enqueue_phase_two(now).await
    }

    async fn phase_two_state(&self) -> Result<PhaseTwoState> {
        self.pg_phase_two_state().await
    }

    async fn memory_clock(&self, now: i64) -> Result<i64> {
        self.pg_memory_clock(now).await
    }

    async fn select_phase_two_inputs(
        &self,
        window: ActivityWindow,
        limit: usize,
    ) -> Result<Vec<StageOneOutputRecord>> {
        self.pg_select_phase_two_inputs(window, limit).await
    }

    async fn prune_phase_two_outputs(&self, window: ActivityWindow, limit: usize) -> Result<usize> {
        self.pg_prune_phase_two_outputs(window, limit).await
    }

    async fn phase_two_baseline(&self) -> Result<Vec<BaselineEntry>> {
        self.pg_phase_two_baseline().await
    }

    async fn record_memory_usage(&self, thread_ids: &[String], now: i64) -> Result<usize> {
        self.pg_record_memory_usage(thread_ids, now).await
    }

    async fn latest_memory_root(&self, known: Option<i64>) -> Result<Option<RootRevision>> {
        self.pg_latest_memory_root(known).await
    }

    async fn share_notes(&self, notes: &[RootFile], now: i64) -> Result<()> {
        self.pg_share_notes(notes, now).await
    }

    async fn shared_notes(&self) -> Result<Vec<RootFile>> {
        self.pg_shared_notes().await
    }

    async fn resolve_thread(&self, reference: &str) -> Result<ThreadMatch> {
        self.pg_resolve_thread(reference).await
    }

    async fn forget_thread(&self, thread_id: &str, now: i64) -> Result<ForgetReport> {
        self.pg_forget_thread(thread_id, now).await
    }

    async fn reset_memories(&self) -> Result<ResetReport> {
        self.pg_reset_memories().await
    }
}
