//! [`WriteStore`] on SQLite: each method runs the SQL of the same name (in `threads.rs`,
//! `stage_one.rs`, `phase_two.rs`, `lease_owner.rs`, `forget.rs`) on tokio's blocking pool.

use std::collections::HashMap;

use memory_protocol::stage_one::{StageOneJob, StageOneOutputRecord};

use super::{
    ActivityWindow, BaselineEntry, ClaimParams, ClaimedJob, ForgetReport, Heartbeat, KnownFile,
    MemoryMode, PhaseTwoClaim, PhaseTwoClaimParams, PhaseTwoFailure, PhaseTwoLease, PhaseTwoState,
    PhaseTwoSuccess, ReleasedLeases, ResetReport, StageOneFailure, StageOneSuccess, StateStore,
    StoredRollout, ThreadMatch, ThreadRecord, ThreadRegistration, UpsertCounts, WriteStore,
};
use crate::error::Result;
use crate::shared_root::{RootFile, RootRevision};

/// Runs `$body` with the connection on the blocking pool; arguments are moved in as owned
/// copies because the call outlives the borrow.
macro_rules! on_sqlite {
    ($self:ident, |$store:ident| $body:expr) => {
        $self.call(move |$store| $body).await
    };
}

#[async_trait::async_trait]
impl WriteStore for StateStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    async fn schema_version(&self) -> Result<i64> {
        on_sqlite!(self, |s| s.schema_version())
    }

    async fn upsert_threads(&self, rows: &[ThreadRegistration], now: i64) -> Result<UpsertCounts> {
        let rows = rows.to_vec();
        on_sqlite!(self, |s| s.upsert_threads(&rows, now))
    }

    async fn thread_file_states(&self) -> Result<HashMap<String, KnownFile>> {
        on_sqlite!(self, |s| s.thread_file_states())
    }

    async fn thread(&self, id: &str) -> Result<Option<ThreadRecord>> {
        let id = id.to_owned();
        on_sqlite!(self, |s| s.thread(&id))
    }

    async fn threads(&self) -> Result<Vec<ThreadRecord>> {
        on_sqlite!(self, |s| s.threads())
    }

    async fn set_thread_memory_mode(&self, id: &str, mode: MemoryMode, now: i64) -> Result<bool> {
        let id = id.to_owned();
        on_sqlite!(self, |s| s.set_thread_memory_mode(&id, mode, now))
    }

    fn is_shared(&self) -> bool {
        false
    }

    async fn store_rollouts(&self, rollouts: &[StoredRollout], now: i64) -> Result<()> {
        // One machine: workers open the rollout files themselves.
        let _ = (rollouts, now);
        Ok(())
    }

    async fn claim_next_stage_one_job(
        &self,
        params: &ClaimParams,
        now: i64,
    ) -> Result<Option<ClaimedJob>> {
        let params = params.clone();
        on_sqlite!(self, |s| s.claim_next_stage_one_job(&params, now))
    }

    async fn count_stage_one_candidates(&self, params: &ClaimParams, now: i64) -> Result<usize> {
        let params = params.clone();
        on_sqlite!(self, |s| s.count_stage_one_candidates(&params, now))
    }

    async fn heartbeat_stage_one_job(&self, job: &ClaimedJob, beat: Heartbeat) -> Result<bool> {
        let job = job.clone();
        on_sqlite!(self, |s| s.heartbeat_stage_one_job(&job, beat))
    }

    async fn mark_stage_one_succeeded(
        &self,
        job: &ClaimedJob,
        success: &StageOneSuccess,
    ) -> Result<bool> {
        let (job, success) = (job.clone(), success.clone());
        on_sqlite!(self, |s| s.mark_stage_one_succeeded(&job, &success))
    }

    async fn mark_stage_one_no_output(&self, job: &ClaimedJob, now: i64) -> Result<bool> {
        let job = job.clone();
        on_sqlite!(self, |s| s.mark_stage_one_no_output(&job, now))
    }

    async fn mark_stage_one_failed(
        &self,
        job: &ClaimedJob,
        failure: &StageOneFailure,
    ) -> Result<bool> {
        let (job, failure) = (job.clone(), failure.clone());
        on_sqlite!(self, |s| s.mark_stage_one_failed(&job, &failure))
    }

    async fn release_stage_one_job(&self, job: &ClaimedJob, note: &str) -> Result<bool> {
        let (job, note) = (job.clone(), note.to_owned());
        on_sqlite!(self, |s| s.release_stage_one_job(&job, &note))
    }

    async fn retry_failed_stage_one_jobs(&self) -> Result<usize> {
        on_sqlite!(self, |s| s.retry_failed_stage_one_jobs())
    }

    async fn stage_one_job(&self, thread_id: &str) -> Result<Option<StageOneJob>> {
        let thread_id = thread_id.to_owned();
        on_sqlite!(self, |s| s.stage_one_job(&thread_id))
    }

    async fn stage_one_jobs(&self) -> Result<Vec<StageOneJob>> {
        on_sqlite!(self, |s| s.stage_one_jobs())
    }

    async fn stage_one_output(&self, thread_id: &str) -> Result<Option<StageOneOutputRecord>> {
        let thread_id = thread_id.to_owned();
        on_sqlite!(self, |s| s.stage_one_output(&thread_id))
    }

    async fn stage_one_outputs(&self) -> Result<Vec<StageOneOutputRecord>> {
        on_sqlite!(self, |s| s.stage_one_outputs())
    }

    async fn reclaim_jobs_of_gone_owners(&self, now: i64) -> Result<usize> {
        on_sqlite!(self, |s| s.reclaim_jobs_of_gone_owners(now))
    }

    async fn release_leases_of_this_process(&self) -> Result<ReleasedLeases> {
        on_sqlite!(self, |s| s.release_leases_of_this_process())
    }

    async fn claim_phase_two(&self, params: PhaseTwoClaimParams) -> Result<PhaseTwoClaim> {
        on_sqlite!(self, |s| s.claim_phase_two(params))
    }

    async fn heartbeat_phase_two(&self, owner_token: &str, beat: Heartbeat) -> Result<bool> {
        let token = owner_token.to_owned();
        on_sqlite!(self, |s| s.heartbeat_phase_two(&token, beat))
    }

    async fn release_phase_two(&self, owner_token: &str) -> Result<bool> {
        let token = owner_token.to_owned();
        on_sqlite!(self, |s| s.release_phase_two(&token))
    }

    async fn complete_phase_two(
        &self,
        lease: &PhaseTwoLease,
        success: &PhaseTwoSuccess<'_>,
    ) -> Result<bool> {
        let lease = lease.clone();
        let (now, hash, selected) = (
            success.now,
            success.input_hash.to_owned(),
            success.selected.to_vec(),
        );
        on_sqlite!(self, |s| s.complete_phase_two(
            &lease,
            &PhaseTwoSuccess {
                now,
                input_hash: &hash,
                selected: &selected,
                // The files on disk are the root: nothing to publish.
                root: &[],
            }
        ))
    }

    async fn fail_phase_two(&self, owner_token: &str, failure: &PhaseTwoFailure) -> Result<bool> {
        let (token, failure) = (owner_token.to_owned(), failure.clone());
        on_sqlite!(self, |s| s.fail_phase_two(&token, &failure))
    }

    async fn enqueue_phase_two(&self, now: i64) -> Result<()> {
        on_sqlite!(self, |s| s.enqueue_phase_two(now))
    }

    async fn phase_two_state(&self) -> Result<PhaseTwoState> {
        on_sqlite!(self, |s| s.phase_two_state())
    }

    async fn memory_clock(&self, now: i64) -> Result<i64> {
        on_sqlite!(self, |s| s.memory_clock(now))
    }

    async fn select_phase_two_inputs(
        &self,
        window: ActivityWindow,
        limit: usize,
    ) -> Result<Vec<StageOneOutputRecord>> {
        on_sqlite!(self, |s| s.select_phase_two_inputs(window, limit))
    }

    async fn prune_phase_two_outputs(&self, window: ActivityWindow, limit: usize) -> Result<usize> {
        on_sqlite!(self, |s| s.prune_phase_two_outputs(window, limit))
    }

    async fn phase_two_baseline(&self) -> Result<Vec<BaselineEntry>> {
        on_sqlite!(self, |s| s.phase_two_baseline())
    }

    async fn record_memory_usage(&self, thread_ids: &[String], now: i64) -> Result<usize> {
        let ids = thread_ids.to_vec();
        on_sqlite!(self, |s| s.record_memory_usage(&ids, now))
    }

    async fn resolve_thread(&self, reference: &str) -> Result<ThreadMatch> {
        let reference = reference.to_owned();
        on_sqlite!(self, |s| s.resolve_thread(&reference))
    }

    async fn forget_thread(&self, thread_id: &str, now: i64) -> Result<ForgetReport> {
        let thread_id = thread_id.to_owned();
        on_sqlite!(self, |s| s.forget_thread(&thread_id, now))
    }

    async fn reset_memories(&self) -> Result<ResetReport> {
        on_sqlite!(self, |s| s.reset_memories())
    }

    async fn latest_memory_root(&self, known: Option<i64>) -> Result<Option<RootRevision>> {
        // One machine: the files on disk are the root.
        let _ = known;
        Ok(None)
    }

    async fn share_notes(&self, notes: &[RootFile], now: i64) -> Result<()> {
        let _ = (notes, now);
        Ok(())
    }

    async fn shared_notes(&self) -> Result<Vec<RootFile>> {
        Ok(Vec::new())
    }
}
