//! Phase 2 in the state store: the global consolidation lease, input selection, pruning and
//! memory usage.
//!
//! The single `phase2_lease` row makes sure one consolidator runs at a time. A claim happens in
//! a `BEGIN IMMEDIATE` transaction and hands out a fresh owner token; every later write on the
//! row is guarded by that token, so a worker whose lease expired and was taken over can no
//! longer finish, fail or extend it.
//!
//! A memory's *activity time* is its last use, or, never used, its rollout's update time
//! (codex's rule; when it was extracted does not count). Idle days are counted on the *memory
//! clock*: the newest activity time of any stored memory, capped at the wall clock, so a break
//! from work or an import of old transcripts does not age every memory out at once. Selection
//! keeps memories active within `max_unused_days` of the clock, ranked by usage count, then
//! activity time; pruning deletes unselected memories idle for longer.
//!
//! The baseline table records what the last successful pass consolidated (thread, source
//! time, the material it was given), so the next pass can tell the model what was added,
//! changed and removed, and the guard can accept removals of what only removed threads said.

use crate::shared_root::RootFile;
use memory_protocol::stage_one::{JobStatus, StageOneOutputRecord};
use memory_store::ddl::Dialect;
use memory_store::names::tables::{PHASE_TWO_BASELINE, PHASE_TWO_LEASE, STAGE_ONE_OUTPUTS};
use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::stage_one::{output_from_row, output_query};
use super::{Db, Heartbeat, lease_owner};
use crate::error::Result;
use memory_store::columns::Columns;

const DAY_SECONDS: i64 = 24 * 3600;
/// Upper bound of the failure backoff, however many attempts failed.
const MAX_BACKOFF_SECONDS: i64 = 24 * 3600;

/// SQL for the whitespace `TRIM` removes when deciding whether a text is blank.
const BLANK: &str = "char(32, 9, 10, 13)";
/// SQL for a memory's activity time in `stage1_outputs` aliased `o`: its last use, else its
/// rollout's update time.
const ACTIVITY: &str = "COALESCE(o.last_used_at, o.source_updated_at)";

/// How to claim the phase-2 lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseTwoClaimParams {
    /// The current time, Unix seconds.
    pub now: i64,
    /// Lease length; the holder extends it by heartbeats.
    pub lease_seconds: i64,
    /// Quiet time after a success before the next pass.
    pub cooldown_seconds: i64,
    /// Ignore the cooldown and the failure backoff when there is new input since the last
    /// success. A live lease held by another worker is always respected.
    pub force: bool,
}

/// Which memories count as active for selection and pruning: those whose activity time is
/// within `max_unused_days` of the memory clock read at `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActivityWindow {
    /// The current time, Unix seconds; the memory clock is read at it.
    pub now: i64,
    /// Idle days after which a memory is no longer active.
    pub max_unused_days: i64,
}

impl ActivityWindow {
    /// The oldest activity time inside the window, on the memory clock `clock`.
    pub(crate) fn cutoff(&self, clock: i64) -> i64 {
        clock.saturating_sub(self.max_unused_days.saturating_mul(DAY_SECONDS))
    }
}

/// A failed phase-2 pass, as the lease row records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseTwoFailure {
    /// The current time, Unix seconds.
    pub now: i64,
    /// What went wrong; `status` shows it.
    pub error: String,
    /// Wait before the next pass after one failure, doubled for each further failure in a row
    /// (capped at a day).
    pub backoff_seconds: i64,
}

impl PhaseTwoFailure {
    /// The attempts count and retry time to record when this failure follows `state`: one
    /// more attempt, retried after the back-off for that many failures in a row. `None` when
    /// `owner_token` no longer holds the lease, so nothing is recorded.
    pub(crate) fn recorded_after(
        &self,
        state: &PhaseTwoState,
        owner_token: &str,
    ) -> Option<(i64, i64)> {
        if state.status != JobStatus::Running || state.owner_token.as_deref() != Some(owner_token) {
            return None;
        }
        let attempts = state.attempts.saturating_add(1);
        let backoff = failure_backoff(attempts, self.backoff_seconds);
        Some((attempts, self.now.saturating_add(backoff)))
    }
}

/// A held phase-2 lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseTwoLease {
    /// Token proving ownership; needed for heartbeat, success and failure.
    pub owner_token: String,
    /// When the lease expires unless extended.
    pub lease_expires_at: i64,
    /// Input watermark seen at the claim; recorded as the success watermark.
    pub input_watermark: i64,
    /// Content hash of the inputs of the last successful pass.
    pub last_input_hash: Option<String>,
}

impl PhaseTwoLease {
    /// The lease a claim takes on `state`: a new owner token, held for the claim's lease
    /// seconds from its time.
    pub(crate) fn taken(state: PhaseTwoState, params: &PhaseTwoClaimParams) -> PhaseTwoLease {
        PhaseTwoLease {
            owner_token: uuid::Uuid::new_v4().to_string(),
            lease_expires_at: params.now.saturating_add(params.lease_seconds),
            input_watermark: state.input_watermark,
            last_input_hash: state.last_input_hash,
        }
    }
}

/// The outcome of a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PhaseTwoClaim {
    /// The lease is ours.
    Claimed(PhaseTwoLease),
    /// Another worker holds a live lease.
    SkippedRunning {
        /// When that lease expires.
        lease_expires_at: i64,
    },
    /// The last pass succeeded less than the cooldown ago.
    SkippedCooldown {
        /// When the cooldown ends.
        until: i64,
    },
    /// The last pass failed and its backoff has not run out.
    SkippedBackoff {
        /// When a retry is allowed.
        until: i64,
    },
}

impl PhaseTwoClaim {
    /// Why the claim was skipped, for reports, with the time the skip ends (UTC); `None`
    /// when claimed.
    pub fn skip_reason(&self) -> Option<String> {
        match self {
            PhaseTwoClaim::Claimed(_) => None,
            PhaseTwoClaim::SkippedRunning { lease_expires_at } => Some(format!(
                "another consolidator is running (its lease ends at {})",
                utc(*lease_expires_at)
            )),
            PhaseTwoClaim::SkippedCooldown { until } => Some(format!(
                "cooling down after a recent success until {} (consolidate --now runs it anyway)",
                utc(*until)
            )),
            PhaseTwoClaim::SkippedBackoff { until } => {
                Some(format!("backing off after a failure until {}", utc(*until)))
            }
        }
    }
}

/// A Unix time as an RFC 3339 UTC time to the second.
fn utc(unix: i64) -> String {
    jiff::Timestamp::from_second(unix)
        .map_or_else(|_| format!("unix time {unix}"), |t| t.to_string())
}

/// The phase-2 lease row as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseTwoState {
    /// Row status.
    pub status: JobStatus,
    /// Token of the holder, while running.
    pub owner_token: Option<String>,
    /// Lease expiry, while running.
    pub lease_expires_at: Option<i64>,
    /// Last heartbeat.
    pub heartbeat_at: Option<i64>,
    /// Failed passes since the last success.
    pub attempts: i64,
    /// Newest input seen.
    pub input_watermark: i64,
    /// Input watermark of the last success.
    pub last_success_watermark: Option<i64>,
    /// Time of the last success.
    pub last_success_at: Option<i64>,
    /// Content hash of the last success's inputs.
    pub last_input_hash: Option<String>,
    /// Error of the last failure.
    pub last_error: Option<String>,
    /// Earliest retry after a failure.
    pub retry_after_at: Option<i64>,
}

/// What a successful pass consumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseTwoSuccess<'a> {
    /// The current time, Unix seconds.
    pub now: i64,
    /// Content hash of the pass's inputs and outputs.
    pub input_hash: &'a str,
    /// Each selected output: marked selected, and recorded as the new baseline.
    pub selected: &'a [BaselineEntry],
    /// The memory root the pass wrote: a shared store publishes it as a new revision with the
    /// completion (see [`crate::shared_root`]); a local store ignores it. Empty when nothing
    /// is to be published.
    pub root: &'a [RootFile],
}

/// One thread a successful pass consolidated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineEntry {
    /// The thread.
    pub thread_id: String,
    /// The source time of the output consolidated.
    pub source_updated_at: i64,
    /// What the pass was given for it (its `raw_memories.md` block and rollout summary file),
    /// so a later pass knows what only this thread supported.
    pub material: String,
}

impl PhaseTwoState {
    /// The lease row of a store no pass ever claimed (or whose row someone deleted).
    pub(crate) fn never_claimed() -> PhaseTwoState {
        PhaseTwoState {
            status: JobStatus::Pending,
            owner_token: None,
            lease_expires_at: None,
            heartbeat_at: None,
            attempts: 0,
            input_watermark: 0,
            last_success_watermark: None,
            last_success_at: None,
            last_input_hash: None,
            last_error: None,
            retry_after_at: None,
        }
    }
}

/// Why a phase-2 claim may not take the lease, judged from the lease row as read under the
/// claim's lock (every backend decides with this): a live lease is never taken; a failure's
/// back-off and a success's cooldown hold unless the claim is forced and there is new input.
/// `None`: take it.
pub(crate) fn claim_refusal(
    state: &PhaseTwoState,
    params: &PhaseTwoClaimParams,
) -> Option<PhaseTwoClaim> {
    let now = params.now;
    if state.status == JobStatus::Running
        && let Some(expires) = state.lease_expires_at.filter(|expires| *expires > now)
    {
        return Some(PhaseTwoClaim::SkippedRunning {
            lease_expires_at: expires,
        });
    }
    let new_input = state.input_watermark > state.last_success_watermark.unwrap_or(-1);
    if params.force && new_input {
        return None;
    }
    if let Some(until) = state.retry_after_at.filter(|until| *until > now) {
        return Some(PhaseTwoClaim::SkippedBackoff { until });
    }
    if state.last_error.is_none()
        && let Some(success) = state.last_success_at
    {
        let until = success.saturating_add(params.cooldown_seconds);
        if until > now {
            return Some(PhaseTwoClaim::SkippedCooldown { until });
        }
    }
    None
}

/// The back-off after the `attempts`-th failed pass in a row: `backoff_seconds` doubled per
/// further failure, capped at a day (or at `backoff_seconds` when that is longer).
pub(crate) fn failure_backoff(attempts: i64, backoff_seconds: i64) -> i64 {
    let shift = u32::try_from(attempts.saturating_sub(1).clamp(0, 20)).unwrap_or(20);
    backoff_seconds
        .max(0)
        .saturating_mul(1i64 << shift)
        .min(MAX_BACKOFF_SECONDS.max(backoff_seconds))
}

/// The statement that tells phase 2 there is new input: the input watermark strictly
/// increases, and is at least parameter 1 (the changed thread's watermark, or the time), so
/// `input_watermark > last_success_watermark` means "consolidate again".
pub(crate) fn signal_statement(dialect: Dialect) -> String {
    format!(
        "UPDATE {PHASE_TWO_LEASE} SET input_watermark = {}(input_watermark + 1, {})
         WHERE id = 1",
        dialect.greatest(),
        dialect.parameter(1)
    )
}

/// The condition that the lease is still held by the owner token of parameter `n`.
fn held_lease(dialect: Dialect, n: usize) -> String {
    format!(
        "id = 1 AND status = 'running' AND owner_token = {}",
        dialect.parameter(n)
    )
}

/// The statement that extends a held lease. Parameters: new expiry, time, owner token.
pub(crate) fn heartbeat_statement(dialect: Dialect) -> String {
    let p = |n| dialect.parameter(n);
    format!(
        "UPDATE {PHASE_TWO_LEASE} SET lease_expires_at = {}, heartbeat_at = {} WHERE {}",
        p(1),
        p(2),
        held_lease(dialect, 3)
    )
}

/// The statement that gives a held lease back without recording a pass. Parameter: owner
/// token.
pub(crate) fn release_statement(dialect: Dialect) -> String {
    format!(
        "UPDATE {PHASE_TWO_LEASE}
         SET status = 'pending', owner_token = NULL, lease_expires_at = NULL
         WHERE {}",
        held_lease(dialect, 1)
    )
}

/// The statement that finishes a held lease successfully: errors and attempts cleared, the
/// success recorded. Parameters: time, input hash, the watermark seen at the claim, owner
/// token.
pub(crate) fn complete_statement(dialect: Dialect) -> String {
    let p = |n| dialect.parameter(n);
    format!(
        "UPDATE {PHASE_TWO_LEASE}
         SET status = 'done', owner_token = NULL, lease_expires_at = NULL,
             attempts = 0, last_error = NULL, retry_after_at = NULL,
             last_success_at = {}, last_input_hash = {},
             last_success_watermark = {}(COALESCE(last_success_watermark, {}), {})
         WHERE {}",
        p(1),
        p(2),
        dialect.greatest(),
        p(3),
        p(3),
        held_lease(dialect, 4)
    )
}

/// The statement that records a failed pass (see [`PhaseTwoFailure`]). Parameters: attempts,
/// error, retry time.
pub(crate) fn fail_statement(dialect: Dialect) -> String {
    let p = |n| dialect.parameter(n);
    format!(
        "UPDATE {PHASE_TWO_LEASE}
         SET status = 'error', owner_token = NULL, lease_expires_at = NULL,
             attempts = {}, last_error = {}, retry_after_at = {}
         WHERE id = 1",
        p(1),
        p(2),
        p(3)
    )
}

/// The statement that records a lease a claim took, with its owner. Parameters: owner token,
/// expiry, claim time, owner host, owner pid, owner start time.
pub(crate) fn take_statement(dialect: Dialect) -> String {
    let p = |n| dialect.parameter(n);
    format!(
        "UPDATE {PHASE_TWO_LEASE}
         SET status = 'running', owner_token = {}, lease_expires_at = {}, heartbeat_at = {},
             owner_host = {}, owner_pid = {}, owner_started = {}
         WHERE id = 1",
        p(1),
        p(2),
        p(3),
        p(4),
        p(5),
        p(6)
    )
}

impl Db {
    /// Tries to take the phase-2 lease (see [`PhaseTwoClaimParams`]).
    pub(super) fn claim_phase_two(&mut self, params: PhaseTwoClaimParams) -> Result<PhaseTwoClaim> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        // The row is created by the migration; re-create it if someone deleted it.
        tx.execute(
            &format!("INSERT OR IGNORE INTO {PHASE_TWO_LEASE} (id) VALUES (1)"),
            [],
        )?;
        // A lease whose holder on this host is gone counts as expired.
        lease_owner::expire_gone_phase_two_owner(&tx, &self.owner, params.now)?;
        let state = read_state(&tx)?;
        if let Some(refusal) = claim_refusal(&state, &params) {
            return Ok(refusal);
        }
        let lease = PhaseTwoLease::taken(state, &params);
        let owner = &self.owner;
        tx.execute(
            &take_statement(Dialect::Sqlite),
            params![
                lease.owner_token,
                lease.lease_expires_at,
                params.now,
                owner.host,
                owner.pid,
                owner.started
            ],
        )?;
        tx.commit()?;
        Ok(PhaseTwoClaim::Claimed(lease))
    }

    /// Extends a held lease to the heartbeat's expiry. Returns `false` when the lease is no
    /// longer ours (it expired and another worker took it, or it was finished).
    pub(super) fn heartbeat_phase_two(
        &mut self,
        owner_token: &str,
        beat: Heartbeat,
    ) -> Result<bool> {
        let changed = self.conn.execute(
            &heartbeat_statement(Dialect::Sqlite),
            params![beat.expires_at(), beat.now, owner_token],
        )?;
        Ok(changed == 1)
    }

    /// Gives a held lease back without recording a pass: no success time (so no cooldown
    /// starts), no error and no backoff. Returns `false` when the lease is no longer ours.
    pub(super) fn release_phase_two(&mut self, owner_token: &str) -> Result<bool> {
        let changed = self
            .conn
            .execute(&release_statement(Dialect::Sqlite), params![owner_token])?;
        Ok(changed == 1)
    }

    /// Finishes a held lease successfully: records the watermark seen at the claim, the input
    /// hash and the time, clears errors and attempts, marks exactly the consumed outputs as
    /// selected (all others unselected) and makes them the new baseline. Returns `false`, changing nothing, when the lease
    /// is no longer ours.
    pub(super) fn complete_phase_two(
        &mut self,
        lease: &PhaseTwoLease,
        success: &PhaseTwoSuccess<'_>,
    ) -> Result<bool> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let changed = tx.execute(
            &complete_statement(Dialect::Sqlite),
            params![
                success.now,
                success.input_hash,
                lease.input_watermark,
                lease.owner_token
            ],
        )?;
        if changed != 1 {
            return Ok(false);
        }
        tx.execute(
            &format!(
                "UPDATE {STAGE_ONE_OUTPUTS} SET selected = 0, selected_source_updated_at = NULL
                 WHERE selected != 0 OR selected_source_updated_at IS NOT NULL"
            ),
            [],
        )?;
        tx.execute(&format!("DELETE FROM {PHASE_TWO_BASELINE}"), [])?;
        {
            let mut mark = tx.prepare(&format!(
                "UPDATE {STAGE_ONE_OUTPUTS} SET selected = 1, selected_source_updated_at = ?2
                 WHERE thread_id = ?1 AND source_updated_at = ?2"
            ))?;
            let mut baseline = tx.prepare(&format!(
                "INSERT OR REPLACE INTO {PHASE_TWO_BASELINE} (thread_id, source_updated_at, material)
                 VALUES (?1, ?2, ?3)"
            ))?;
            for entry in success.selected {
                mark.execute(params![entry.thread_id, entry.source_updated_at])?;
                baseline.execute(params![
                    entry.thread_id,
                    entry.source_updated_at,
                    entry.material
                ])?;
            }
        }
        tx.commit()?;
        Ok(true)
    }

    /// Records a failed pass on a held lease: the row goes to error with the failure's error,
    /// and retries wait its back-off (see [`PhaseTwoFailure`]). Returns `false` when the lease
    /// is no longer ours.
    pub(super) fn fail_phase_two(
        &mut self,
        owner_token: &str,
        failure: &PhaseTwoFailure,
    ) -> Result<bool> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let state = read_state(&tx)?;
        let Some((attempts, retry_after)) = failure.recorded_after(&state, owner_token) else {
            return Ok(false);
        };
        tx.execute(
            &fail_statement(Dialect::Sqlite),
            params![attempts, failure.error, retry_after],
        )?;
        tx.commit()?;
        Ok(true)
    }

    /// Notes new phase-2 input (a stage-one output stored or deleted, a thread forgotten):
    /// moves the input watermark forward, which lets a forced pass skip the cooldown. Phase 1
    /// does the same inside its own transactions.
    pub(super) fn enqueue_phase_two(&mut self, now: i64) -> Result<()> {
        self.conn
            .execute(&signal_statement(Dialect::Sqlite), params![now])?;
        Ok(())
    }

    /// The phase-2 lease row.
    pub(super) fn phase_two_state(&self) -> Result<PhaseTwoState> {
        read_state(&self.conn)
    }

    /// The memory clock at `now`: the newest activity time of any stored memory (last use,
    /// else source time), never later than `now`; `now` when nothing is stored.
    pub(super) fn memory_clock(&self, now: i64) -> Result<i64> {
        let newest: Option<i64> = self.conn.query_row(
            &format!(
                "SELECT MAX(MAX(o.source_updated_at, COALESCE(o.last_used_at, 0)))
                 FROM {STAGE_ONE_OUTPUTS} o"
            ),
            [],
            |row| row.get(0),
        )?;
        Ok(newest.map_or(now, |newest| newest.min(now)))
    }

    /// The phase-2 input: at most `limit` stage-one outputs of threads with memory enabled,
    /// with a non-blank raw memory or summary, active within `window`; ranked by usage count,
    /// then activity time (last use, else source time), then source time, then thread id;
    /// returned sorted by thread id so the files do not churn.
    pub(super) fn select_phase_two_inputs(
        &self,
        window: ActivityWindow,
        limit: usize,
    ) -> Result<Vec<StageOneOutputRecord>> {
        let cutoff = window.cutoff(self.memory_clock(window.now)?);
        let mut statement = self.conn.prepare(&output_query(&format!(
            "WHERE t.memory_mode = 'enabled'
               AND (TRIM(o.raw_memory, {BLANK}) != '' OR TRIM(o.rollout_summary, {BLANK}) != '')
               AND {ACTIVITY} >= ?1
             ORDER BY o.usage_count DESC, {ACTIVITY} DESC, o.source_updated_at DESC,
                      o.thread_id DESC
             LIMIT ?2"
        )))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut records = statement
            .query_map(params![cutoff, limit], |row| output_from_row(row))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        records.sort_by(|a, b| a.thread_id.cmp(&b.thread_id));
        Ok(records)
    }

    /// Deletes at most `limit` stage-one outputs that the last pass did not select and that
    /// are older than `window`, stalest first. Returns how many.
    pub(super) fn prune_phase_two_outputs(
        &mut self,
        window: ActivityWindow,
        limit: usize,
    ) -> Result<usize> {
        let cutoff = window.cutoff(self.memory_clock(window.now)?);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let deleted = self.conn.execute(
            &format!(
                "DELETE FROM {STAGE_ONE_OUTPUTS} WHERE thread_id IN (
                     SELECT o.thread_id FROM {STAGE_ONE_OUTPUTS} o
                     WHERE o.selected = 0 AND {ACTIVITY} < ?1
                     ORDER BY {ACTIVITY} ASC, o.thread_id ASC
                     LIMIT ?2)"
            ),
            params![cutoff, limit],
        )?;
        Ok(deleted)
    }

    /// What the last successful pass consolidated, by thread id.
    pub(super) fn phase_two_baseline(&self) -> Result<Vec<BaselineEntry>> {
        let mut statement = self.conn.prepare(&baseline_query())?;
        let rows = statement.query_map([], |row| baseline_from_row(row))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Records that the memories of `thread_ids` were used at `now`: usage count plus one and
    /// last use. Unknown ids are ignored. Returns how many outputs were updated.
    pub(super) fn record_memory_usage(&mut self, thread_ids: &[String], now: i64) -> Result<usize> {
        let tx = self.conn.transaction()?;
        let mut updated = 0;
        {
            let mut statement = tx.prepare(&format!(
                "UPDATE {STAGE_ONE_OUTPUTS}
                 SET usage_count = usage_count + 1, last_used_at = ?2 WHERE thread_id = ?1"
            ))?;
            for thread_id in thread_ids {
                updated += statement.execute(params![thread_id, now])?;
            }
        }
        tx.commit()?;
        Ok(updated)
    }
}

/// The lease row's columns [`state_from_row`] reads, in its order.
pub(super) const STATE_COLUMNS: &str = "status, owner_token, lease_expires_at, heartbeat_at, \
     attempts, input_watermark, last_success_watermark, last_success_at, last_input_hash, \
     last_error, retry_after_at";

/// The lease state from a row of [`STATE_COLUMNS`], on either backend.
pub(super) fn state_from_row<R: Columns>(row: &R) -> std::result::Result<PhaseTwoState, R::Error> {
    Ok(PhaseTwoState {
        // An unknown stored status is read as an error row: never as running.
        status: JobStatus::parse(&row.text(0)?).unwrap_or(JobStatus::Error),
        owner_token: row.text_or_null(1)?,
        lease_expires_at: row.integer_or_null(2)?,
        heartbeat_at: row.integer_or_null(3)?,
        attempts: row.integer(4)?,
        input_watermark: row.integer(5)?,
        last_success_watermark: row.integer_or_null(6)?,
        last_success_at: row.integer_or_null(7)?,
        last_input_hash: row.text_or_null(8)?,
        last_error: row.text_or_null(9)?,
        retry_after_at: row.integer_or_null(10)?,
    })
}

/// Every baseline entry, by thread id.
pub(super) fn baseline_query() -> String {
    format!(
        "SELECT thread_id, source_updated_at, material FROM {PHASE_TWO_BASELINE} ORDER BY thread_id"
    )
}

/// A baseline entry from a row of [`baseline_query`], on either backend.
pub(super) fn baseline_from_row<R: Columns>(
    row: &R,
) -> std::result::Result<BaselineEntry, R::Error> {
    Ok(BaselineEntry {
        thread_id: row.text(0)?,
        source_updated_at: row.integer(1)?,
        material: row.text(2)?,
    })
}

fn read_state(conn: &rusqlite::Connection) -> Result<PhaseTwoState> {
    let state = conn
        .query_row(
            &format!("SELECT {STATE_COLUMNS} FROM {PHASE_TWO_LEASE} WHERE id = 1"),
            [],
            |row| state_from_row(row),
        )
        .optional()?;
    Ok(state.unwrap_or_else(PhaseTwoState::never_claimed))
}
