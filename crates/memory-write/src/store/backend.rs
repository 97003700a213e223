//! The write path's store interface, one trait for every backend.
//!
//! [`WriteStore`] is what the pipeline needs from a state store: thread registration, leased
//! stage-one jobs (claims, heartbeats, outcomes, releases) and the phase-2 lease, selection and
//! baseline. SQLite implements it through [`AsyncStateStore`] (each call on the blocking pool,
//! behaviour and SQL unchanged); PostgreSQL implements it natively async (feature `postgres`).
//! The conformance suite runs the same tests against both, so the two cannot drift apart.
//!
//! Methods take `&self` and are safe to call from many tasks at once: the SQLite handle
//! serializes them, the PostgreSQL store runs them on separate pooled connections.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use memory_protocol::StageOneOutput;
use memory_protocol::stage_one::{StageOneJob, StageOneOutputRecord};

use super::{
    AsyncStateStore, BaselineEntry, ClaimParams, ClaimedJob, ForgetReport, KnownFile, MemoryMode,
    PhaseTwoClaim, PhaseTwoClaimParams, PhaseTwoLease, PhaseTwoState, PhaseTwoSuccess,
    ReleasedLeases, ResetReport, StoredRollout, ThreadMatch, ThreadRecord, ThreadRegistration,
    UpsertCounts,
};
use crate::error::Result;
use crate::shared_root::{RootFile, RootRevision};

/// A state store for the write path. See the module docs; each method's contract is the one
/// documented on the SQLite [`super::StateStore`] method of the same name.
#[async_trait::async_trait]
pub trait WriteStore: Send + Sync + std::fmt::Debug {
    /// Which backend this is (`sqlite`, `postgres`), for reports and errors.
    fn backend(&self) -> &'static str;

    /// The version of the write path's schema in the store.
    async fn schema_version(&self) -> Result<i64>;

    // Threads.

    /// Registers rollouts (see [`super::StateStore::upsert_threads`]).
    async fn upsert_threads(&self, rows: &[ThreadRegistration], now: i64) -> Result<UpsertCounts>;
    /// Size, mtime and skip reason of every known rollout path.
    async fn thread_file_states(&self) -> Result<HashMap<String, KnownFile>>;
    /// One thread by id.
    async fn thread(&self, id: &str) -> Result<Option<ThreadRecord>>;
    /// Every thread, newest activity first.
    async fn threads(&self) -> Result<Vec<ThreadRecord>>;
    /// Sets a thread's memory mode; false when the thread is unknown.
    async fn set_thread_memory_mode(&self, id: &str, mode: MemoryMode, now: i64) -> Result<bool>;
    /// True when workers on other machines claim from this store, so a registration must
    /// upload the rollout's content ([`WriteStore::store_rollouts`]) and claims need no local
    /// file. A local store answers false and workers open the rollout file.
    fn is_shared(&self) -> bool;
    /// Stores rollout contents for workers elsewhere (see [`WriteStore::is_shared`]); a
    /// thread whose stored fingerprint differs from its registration is not claimed. Upload
    /// before registering, so a crash in between leaves a file the next scan registers again.
    /// A store that does not share rollouts keeps nothing.
    async fn store_rollouts(&self, rollouts: &[StoredRollout], now: i64) -> Result<()>;

    // Stage one.

    /// Claims the most recently active eligible thread.
    async fn claim_next_stage_one_job(
        &self,
        params: &ClaimParams,
        now: i64,
    ) -> Result<Option<ClaimedJob>>;
    /// How many threads a claim could pick now (ignoring the running cap).
    async fn count_stage_one_candidates(&self, params: &ClaimParams, now: i64) -> Result<usize>;
    /// Extends a held job's lease to `now + lease_seconds`; false when it is no longer held.
    async fn heartbeat_stage_one_job(
        &self,
        job: &ClaimedJob,
        now: i64,
        lease_seconds: i64,
    ) -> Result<bool>;
    /// Records a successful extraction; false, writing nothing, when the lease was lost.
    async fn mark_stage_one_succeeded(
        &self,
        job: &ClaimedJob,
        output: &StageOneOutput,
        now: i64,
    ) -> Result<bool>;
    /// Records an extraction with nothing worth keeping; false when the lease was lost.
    async fn mark_stage_one_no_output(&self, job: &ClaimedJob, now: i64) -> Result<bool>;
    /// Records a failed extraction (one attempt spent); false when the lease was lost.
    async fn mark_stage_one_failed(
        &self,
        job: &ClaimedJob,
        error: &str,
        retry_delay: Duration,
        now: i64,
    ) -> Result<bool>;
    /// Gives a job back without spending an attempt; false when the lease was lost.
    async fn release_stage_one_job(&self, job: &ClaimedJob, note: &str) -> Result<bool>;
    /// One job by thread id.
    async fn stage_one_job(&self, thread_id: &str) -> Result<Option<StageOneJob>>;
    /// Every job, by thread id.
    async fn stage_one_jobs(&self) -> Result<Vec<StageOneJob>>;
    /// One stored output by thread id.
    async fn stage_one_output(&self, thread_id: &str) -> Result<Option<StageOneOutputRecord>>;
    /// Every stored output, by thread id.
    async fn stage_one_outputs(&self) -> Result<Vec<StageOneOutputRecord>>;
    /// Makes jobs of gone processes on this host claimable at once; returns how many.
    async fn reclaim_jobs_of_gone_owners(&self, now: i64) -> Result<usize>;
    /// Gives back every lease this process holds and stops further stage-one claims.
    async fn release_leases_of_this_process(&self) -> Result<ReleasedLeases>;

    // Phase two.

    /// Tries to take the phase-2 lease.
    async fn claim_phase_two(&self, params: PhaseTwoClaimParams) -> Result<PhaseTwoClaim>;
    /// Extends a held phase-2 lease; false when it is no longer ours.
    async fn heartbeat_phase_two(
        &self,
        owner_token: &str,
        now: i64,
        lease_seconds: i64,
    ) -> Result<bool>;
    /// Gives a held phase-2 lease back without recording a pass.
    async fn release_phase_two(&self, owner_token: &str) -> Result<bool>;
    /// Finishes a held lease successfully and records the new baseline.
    async fn complete_phase_two(
        &self,
        lease: &PhaseTwoLease,
        success: &PhaseTwoSuccess<'_>,
    ) -> Result<bool>;
    /// Records a failed pass with a doubling back-off.
    async fn fail_phase_two(
        &self,
        owner_token: &str,
        now: i64,
        error: &str,
        backoff_seconds: i64,
    ) -> Result<bool>;
    /// Notes new phase-2 input.
    async fn enqueue_phase_two(&self, now: i64) -> Result<()>;
    /// The phase-2 lease row.
    async fn phase_two_state(&self) -> Result<PhaseTwoState>;
    /// The memory clock at `now`.
    async fn memory_clock(&self, now: i64) -> Result<i64>;
    /// The phase-2 input, sorted by thread id.
    async fn select_phase_two_inputs(
        &self,
        now: i64,
        limit: usize,
        max_unused_days: i64,
    ) -> Result<Vec<StageOneOutputRecord>>;
    /// Deletes stale unselected outputs; returns how many.
    async fn prune_phase_two_outputs(
        &self,
        now: i64,
        max_unused_days: i64,
        limit: usize,
    ) -> Result<usize>;
    /// What the last successful pass consolidated, by thread id.
    async fn phase_two_baseline(&self) -> Result<Vec<BaselineEntry>>;
    /// Records that the memories of `thread_ids` were used at `now`.
    async fn record_memory_usage(&self, thread_ids: &[String], now: i64) -> Result<usize>;
    /// The newest published memory root, when it is newer than `known` (see
    /// [`crate::shared_root`]). A local store publishes none.
    async fn latest_memory_root(&self, known: Option<i64>) -> Result<Option<RootRevision>>;
    /// Keeps agent notes (`notes/<name>.md`, redacted) for every machine; a note already kept
    /// under the same path stays as it is. A local store keeps nothing.
    async fn share_notes(&self, notes: &[RootFile], now: i64) -> Result<()>;
    /// Every note kept for the fleet, by path. A local store has none.
    async fn shared_notes(&self) -> Result<Vec<RootFile>>;
    /// Finds the thread a reference names: its full id, a prefix of at least four characters
    /// of exactly one id, or its rollout file's path.
    async fn resolve_thread(&self, reference: &str) -> Result<ThreadMatch>;
    /// Forgets one thread: deletes its stage-one output and job and disables its memory, so
    /// no later run extracts it again. When its memory was in the last consolidation, phase 2
    /// gets new input (the next pass removes it).
    async fn forget_thread(&self, thread_id: &str, now: i64) -> Result<ForgetReport>;
    /// Resets every memory: every stage-one output and job, the consolidation baseline and
    /// lease and, on a shared store, the published memory roots and the fleet's notes. Threads
    /// stay known with their memory modes, so the next run extracts the enabled ones again.
    async fn reset_memories(&self) -> Result<ResetReport>;
}

/// A store chosen at run time (SQLite or PostgreSQL) is used through this.
pub type SharedStore = Arc<dyn WriteStore>;

/// Runs `$body` with the SQLite store on the blocking pool; arguments are moved in as owned
/// copies because the call outlives the borrow.
macro_rules! on_sqlite {
    ($self:ident, |$store:ident| $body:expr) => {
        $self.call(move |$store| $body).await
    };
}

#[async_trait::async_trait]
impl WriteStore for AsyncStateStore {
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

    async fn heartbeat_stage_one_job(
        &self,
        job: &ClaimedJob,
        now: i64,
        lease_seconds: i64,
    ) -> Result<bool> {
        let job = job.clone();
        on_sqlite!(self, |s| s.heartbeat_stage_one_job(
            &job,
            now,
            lease_seconds
        ))
    }

    async fn mark_stage_one_succeeded(
        &self,
        job: &ClaimedJob,
        output: &StageOneOutput,
        now: i64,
    ) -> Result<bool> {
        let (job, output) = (job.clone(), output.clone());
        on_sqlite!(self, |s| s.mark_stage_one_succeeded(&job, &output, now))
    }

    async fn mark_stage_one_no_output(&self, job: &ClaimedJob, now: i64) -> Result<bool> {
        let job = job.clone();
        on_sqlite!(self, |s| s.mark_stage_one_no_output(&job, now))
    }

    async fn mark_stage_one_failed(
        &self,
        job: &ClaimedJob,
        error: &str,
        retry_delay: Duration,
        now: i64,
    ) -> Result<bool> {
        let (job, error) = (job.clone(), error.to_owned());
        on_sqlite!(self, |s| s.mark_stage_one_failed(
            &job,
            &error,
            retry_delay,
            now
        ))
    }

    async fn release_stage_one_job(&self, job: &ClaimedJob, note: &str) -> Result<bool> {
        let (job, note) = (job.clone(), note.to_owned());
        on_sqlite!(self, |s| s.release_stage_one_job(&job, &note))
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

    async fn heartbeat_phase_two(
        &self,
        owner_token: &str,
        now: i64,
        lease_seconds: i64,
    ) -> Result<bool> {
        let token = owner_token.to_owned();
        on_sqlite!(self, |s| s.heartbeat_phase_two(&token, now, lease_seconds))
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

    async fn fail_phase_two(
        &self,
        owner_token: &str,
        now: i64,
        error: &str,
        backoff_seconds: i64,
    ) -> Result<bool> {
        let (token, error) = (owner_token.to_owned(), error.to_owned());
        on_sqlite!(self, |s| s.fail_phase_two(
            &token,
            now,
            &error,
            backoff_seconds
        ))
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
        now: i64,
        limit: usize,
        max_unused_days: i64,
    ) -> Result<Vec<StageOneOutputRecord>> {
        on_sqlite!(self, |s| s.select_phase_two_inputs(
            now,
            limit,
            max_unused_days
        ))
    }

    async fn prune_phase_two_outputs(
        &self,
        now: i64,
        max_unused_days: i64,
        limit: usize,
    ) -> Result<usize> {
        on_sqlite!(self, |s| s.prune_phase_two_outputs(
            now,
            max_unused_days,
            limit
        ))
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

/// A shared store is a store, so code generic over [`WriteStore`] takes a [`SharedStore`].
#[async_trait::async_trait]
impl<T: WriteStore + ?Sized> WriteStore for Arc<T> {
    fn backend(&self) -> &'static str {
        (**self).backend()
    }
    async fn schema_version(&self) -> Result<i64> {
        (**self).schema_version().await
    }
    async fn upsert_threads(&self, rows: &[ThreadRegistration], now: i64) -> Result<UpsertCounts> {
        (**self).upsert_threads(rows, now).await
    }
    async fn thread_file_states(&self) -> Result<HashMap<String, KnownFile>> {
        (**self).thread_file_states().await
    }
    async fn thread(&self, id: &str) -> Result<Option<ThreadRecord>> {
        (**self).thread(id).await
    }
    async fn threads(&self) -> Result<Vec<ThreadRecord>> {
        (**self).threads().await
    }
    async fn set_thread_memory_mode(&self, id: &str, mode: MemoryMode, now: i64) -> Result<bool> {
        (**self).set_thread_memory_mode(id, mode, now).await
    }
    fn is_shared(&self) -> bool {
        (**self).is_shared()
    }
    async fn store_rollouts(&self, rollouts: &[StoredRollout], now: i64) -> Result<()> {
        (**self).store_rollouts(rollouts, now).await
    }
    async fn claim_next_stage_one_job(
        &self,
        params: &ClaimParams,
        now: i64,
    ) -> Result<Option<ClaimedJob>> {
        (**self).claim_next_stage_one_job(params, now).await
    }
    async fn count_stage_one_candidates(&self, params: &ClaimParams, now: i64) -> Result<usize> {
        (**self).count_stage_one_candidates(params, now).await
    }
    async fn heartbeat_stage_one_job(
        &self,
        job: &ClaimedJob,
        now: i64,
        lease_seconds: i64,
    ) -> Result<bool> {
        (**self)
            .heartbeat_stage_one_job(job, now, lease_seconds)
            .await
    }
    async fn mark_stage_one_succeeded(
        &self,
        job: &ClaimedJob,
        output: &StageOneOutput,
        now: i64,
    ) -> Result<bool> {
        (**self).mark_stage_one_succeeded(job, output, now).await
    }
    async fn mark_stage_one_no_output(&self, job: &ClaimedJob, now: i64) -> Result<bool> {
        (**self).mark_stage_one_no_output(job, now).await
    }
    async fn mark_stage_one_failed(
        &self,
        job: &ClaimedJob,
        error: &str,
        retry_delay: Duration,
        now: i64,
    ) -> Result<bool> {
        (**self)
            .mark_stage_one_failed(job, error, retry_delay, now)
            .await
    }
    async fn release_stage_one_job(&self, job: &ClaimedJob, note: &str) -> Result<bool> {
        (**self).release_stage_one_job(job, note).await
    }
    async fn stage_one_job(&self, thread_id: &str) -> Result<Option<StageOneJob>> {
        (**self).stage_one_job(thread_id).await
    }
    async fn stage_one_jobs(&self) -> Result<Vec<StageOneJob>> {
        (**self).stage_one_jobs().await
    }
    async fn stage_one_output(&self, thread_id: &str) -> Result<Option<StageOneOutputRecord>> {
        (**self).stage_one_output(thread_id).await
    }
    async fn stage_one_outputs(&self) -> Result<Vec<StageOneOutputRecord>> {
        (**self).stage_one_outputs().await
    }
    async fn reclaim_jobs_of_gone_owners(&self, now: i64) -> Result<usize> {
        (**self).reclaim_jobs_of_gone_owners(now).await
    }
    async fn release_leases_of_this_process(&self) -> Result<ReleasedLeases> {
        (**self).release_leases_of_this_process().await
    }
    async fn claim_phase_two(&self, params: PhaseTwoClaimParams) -> Result<PhaseTwoClaim> {
        (**self).claim_phase_two(params).await
    }
    async fn heartbeat_phase_two(
        &self,
        owner_token: &str,
        now: i64,
        lease_seconds: i64,
    ) -> Result<bool> {
        (**self)
            .heartbeat_phase_two(owner_token, now, lease_seconds)
            .await
    }
    async fn release_phase_two(&self, owner_token: &str) -> Result<bool> {
        (**self).release_phase_two(owner_token).await
    }
    async fn complete_phase_two(
        &self,
        lease: &PhaseTwoLease,
        success: &PhaseTwoSuccess<'_>,
    ) -> Result<bool> {
        (**self).complete_phase_two(lease, success).await
    }
    async fn fail_phase_two(
        &self,
        owner_token: &str,
        now: i64,
        error: &str,
        backoff_seconds: i64,
    ) -> Result<bool> {
        (**self)
            .fail_phase_two(owner_token, now, error, backoff_seconds)
            .await
    }
    async fn enqueue_phase_two(&self, now: i64) -> Result<()> {
        (**self).enqueue_phase_two(now).await
    }
    async fn phase_two_state(&self) -> Result<PhaseTwoState> {
        (**self).phase_two_state().await
    }
    async fn memory_clock(&self, now: i64) -> Result<i64> {
        (**self).memory_clock(now).await
    }
    async fn select_phase_two_inputs(
        &self,
        now: i64,
        limit: usize,
        max_unused_days: i64,
    ) -> Result<Vec<StageOneOutputRecord>> {
        (**self)
            .select_phase_two_inputs(now, limit, max_unused_days)
            .await
    }
    async fn prune_phase_two_outputs(
        &self,
        now: i64,
        max_unused_days: i64,
        limit: usize,
    ) -> Result<usize> {
        (**self)
            .prune_phase_two_outputs(now, max_unused_days, limit)
            .await
    }
    async fn phase_two_baseline(&self) -> Result<Vec<BaselineEntry>> {
        (**self).phase_two_baseline().await
    }
    async fn record_memory_usage(&self, thread_ids: &[String], now: i64) -> Result<usize> {
        (**self).record_memory_usage(thread_ids, now).await
    }
    async fn resolve_thread(&self, reference: &str) -> Result<ThreadMatch> {
        (**self).resolve_thread(reference).await
    }
    async fn forget_thread(&self, thread_id: &str, now: i64) -> Result<ForgetReport> {
        (**self).forget_thread(thread_id, now).await
    }
    async fn reset_memories(&self) -> Result<ResetReport> {
        (**self).reset_memories().await
    }
    async fn latest_memory_root(&self, known: Option<i64>) -> Result<Option<RootRevision>> {
        (**self).latest_memory_root(known).await
    }
    async fn share_notes(&self, notes: &[RootFile], now: i64) -> Result<()> {
        (**self).share_notes(notes, now).await
    }
    async fn shared_notes(&self) -> Result<Vec<RootFile>> {
        (**self).shared_notes().await
    }
}
