//! The write path's store interface, one trait for every backend.
//!
//! [`WriteStore`] is what the pipeline needs from a state store: thread registration, leased
//! stage-one jobs (claims, heartbeats, outcomes, releases) and the phase-2 lease, selection and
//! baseline. SQLite implements it in [`super::StateStore`] (each call on the blocking pool);
//! PostgreSQL implements it natively async (feature `postgres`).
//! The conformance suite runs the same tests against both, so the two cannot drift apart.
//!
//! Methods take `&self` and are safe to call from many tasks at once: the SQLite handle
//! serializes them, the PostgreSQL store runs them on separate pooled connections.

use std::collections::HashMap;
use std::sync::Arc;

use memory_protocol::stage_one::{StageOneJob, StageOneOutputRecord};

use super::{
    ActivityWindow, BaselineEntry, ClaimParams, ClaimedJob, ForgetReport, Heartbeat, KnownFile,
    MemoryMode, PhaseTwoClaim, PhaseTwoClaimParams, PhaseTwoFailure, PhaseTwoLease, PhaseTwoState,
    PhaseTwoSuccess, ReleasedLeases, ResetReport, StageOneFailure, StageOneSuccess, StoredRollout,
    ThreadMatch, ThreadRecord, ThreadRegistration, UpsertCounts,
};
use crate::error::Result;
use crate::shared_root::{RootFile, RootRevision};

/// A state store for the write path. See the module docs; the SQLite implementation's
/// functions of the same name (`store/threads.rs`, `store/stage_one.rs`, ...) spell out each
/// rule in detail.
#[async_trait::async_trait]
pub trait WriteStore: Send + Sync + std::fmt::Debug {
    /// Which backend this is (`sqlite`, `postgres`), for reports and errors.
    fn backend(&self) -> &'static str;

    /// The version of the write path's schema in the store.
    async fn schema_version(&self) -> Result<i64>;

    // Threads.

    /// Registers rollouts: a new thread is queued, a known one whose fingerprint changed is
    /// queued again, an unchanged one is counted.
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
    /// Extends a held job's lease to the heartbeat's expiry; false when it is no longer held.
    async fn heartbeat_stage_one_job(&self, job: &ClaimedJob, beat: Heartbeat) -> Result<bool>;
    /// Records a successful extraction; false, writing nothing, when the lease was lost.
    async fn mark_stage_one_succeeded(
        &self,
        job: &ClaimedJob,
        success: &StageOneSuccess,
    ) -> Result<bool>;
    /// Records an extraction with nothing worth keeping; false when the lease was lost.
    async fn mark_stage_one_no_output(&self, job: &ClaimedJob, now: i64) -> Result<bool>;
    /// Records a failed extraction (one attempt spent); false when the lease was lost.
    async fn mark_stage_one_failed(
        &self,
        job: &ClaimedJob,
        failure: &StageOneFailure,
    ) -> Result<bool>;
    /// Gives a job back without spending an attempt; false when the lease was lost.
    async fn release_stage_one_job(&self, job: &ClaimedJob, note: &str) -> Result<bool>;
    /// Makes every failed job claimable now: its back-off and spent attempts are cleared (the
    /// user fixed the cause); returns how many.
    async fn retry_failed_stage_one_jobs(&self) -> Result<usize>;
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
    async fn heartbeat_phase_two(&self, owner_token: &str, beat: Heartbeat) -> Result<bool>;
    /// Gives a held phase-2 lease back without recording a pass.
    async fn release_phase_two(&self, owner_token: &str) -> Result<bool>;
    /// Finishes a held lease successfully and records the new baseline.
    async fn complete_phase_two(
        &self,
        lease: &PhaseTwoLease,
        success: &PhaseTwoSuccess<'_>,
    ) -> Result<bool>;
    /// Records a failed pass with a doubling back-off.
    async fn fail_phase_two(&self, owner_token: &str, failure: &PhaseTwoFailure) -> Result<bool>;
    /// Notes new phase-2 input.
    async fn enqueue_phase_two(&self, now: i64) -> Result<()>;
    /// The phase-2 lease row.
    async fn phase_two_state(&self) -> Result<PhaseTwoState>;
    /// The memory clock at `now`.
    async fn memory_clock(&self, now: i64) -> Result<i64>;
    /// The phase-2 input, sorted by thread id.
    async fn select_phase_two_inputs(
        &self,
        window: ActivityWindow,
        limit: usize,
    ) -> Result<Vec<StageOneOutputRecord>>;
    /// Deletes stale unselected outputs; returns how many.
    async fn prune_phase_two_outputs(&self, window: ActivityWindow, limit: usize) -> Result<usize>;
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
