//! Leased stage-one jobs and their outputs.
//!
//! A claim picks the most recently active eligible thread and leases its job to a fresh owner
//! token, in one `BEGIN IMMEDIATE` transaction. Every later write is fenced on
//! `status = 'running' AND owner_token = ?`, so a worker whose lease expired and was taken
//! over cannot record anything. Failures count attempts and back off; after
//! [`DEFAULT_MAX_ATTEMPTS`] failures a job waits until its rollout's watermark advances.

use std::path::PathBuf;
use std::time::Duration;

use memory_protocol::StageOneOutput;
use memory_protocol::stage_one::{JobStatus, StageOneJob, StageOneOutputRecord};
use memory_store::columns::Columns;
use memory_store::ddl::Dialect;
use memory_store::names::tables::{STAGE_ONE_JOBS, STAGE_ONE_OUTPUTS, THREADS};
use rusqlite::{OptionalExtension, ToSql, TransactionBehavior, params};

use super::phase_two::signal_statement;
use super::{Db, Heartbeat, lease_owner, stored_paths};
use crate::error::Result;

/// Failed attempts after which a job waits for its rollout to change.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// A successful extraction, as its job and the outputs table record it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageOneSuccess {
    /// The current time, Unix seconds.
    pub now: i64,
    /// What the extraction produced.
    pub output: StageOneOutput,
}

/// A failed extraction, as its job records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageOneFailure {
    /// The current time, Unix seconds.
    pub now: i64,
    /// What went wrong; `status` shows it.
    pub error: String,
    /// How long the job waits before it may be claimed again.
    pub retry_delay: Duration,
}

impl StageOneFailure {
    /// When the job may be claimed again.
    pub(crate) fn retry_after(&self) -> i64 {
        let delay = i64::try_from(self.retry_delay.as_secs()).unwrap_or(i64::MAX);
        self.now.saturating_add(delay)
    }
}

/// Which threads a claim may pick, and how it leases them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimParams {
    /// Only threads idle at least this long (by last activity).
    pub min_idle_hours: i64,
    /// Only threads active within this many days; `None` for no age limit.
    pub max_age_days: Option<i64>,
    /// Only rollouts whose path starts with this prefix (a folder path ending in a separator).
    pub rollout_prefix: Option<String>,
    /// Never this thread (the host's live session).
    pub exclude_thread_id: Option<String>,
    /// Threads their agent reported ended with no activity since (Claude Code's `SessionEnd`
    /// hook): eligible without the idle wait.
    pub ended_thread_ids: Vec<String>,
    /// Lease length in seconds; an unfinished job can be reclaimed after it.
    pub lease_seconds: i64,
    /// Cap on jobs running at once across every process; `None` for no cap.
    pub max_running: Option<u32>,
    /// Failed attempts after which a job waits for a newer watermark.
    pub max_attempts: u32,
}

impl Default for ClaimParams {
    fn default() -> Self {
        ClaimParams {
            min_idle_hours: crate::config::DEFAULT_MIN_ROLLOUT_IDLE_HOURS,
            max_age_days: Some(crate::config::DEFAULT_MAX_ROLLOUT_AGE_DAYS),
            rollout_prefix: None,
            exclude_thread_id: None,
            ended_thread_ids: Vec::new(),
            lease_seconds: 3600,
            max_running: None,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
        }
    }
}

/// A job leased to this worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedJob {
    /// The thread to extract.
    pub thread_id: String,
    /// Its rollout file, as stored (redacted when the real path carries a secret).
    pub rollout_path: String,
    /// Its working directory.
    pub cwd: Option<String>,
    /// The file to open: the rollout path itself, unless it is stored redacted and this process
    /// knows the real one. Never shown or stored.
    pub open_path: PathBuf,
    /// The lease's owner token; only it can finish the job.
    pub owner_token: String,
    /// The source watermark being extracted.
    pub input_watermark: i64,
    /// The rollout as a shared store keeps it (its filtered, redacted items as JSON, see
    /// [`super::StoredRollout`]): when present the worker extracts from it instead of opening
    /// `open_path`, so a worker on any machine can take any thread. `None` on a local store.
    pub stored_items: Option<String>,
}

/// The eligibility rule shared by claiming and counting (named parameters `:now`,
/// `:idle_cutoff`, `:ended` (a JSON array of thread ids), `:age_cutoff`, `:prefix`,
/// `:exclude`, `:max_attempts`).
fn candidate_filter() -> String {
    format!(
        "t.skip_reason IS NULL AND t.memory_mode = 'enabled'
         AND (t.last_activity_at <= :idle_cutoff
             OR t.id IN (SELECT value FROM json_each(:ended)))
         AND (:age_cutoff IS NULL OR t.last_activity_at >= :age_cutoff)
         AND (:prefix IS NULL OR substr(t.rollout_path, 1, length(:prefix)) = :prefix)
         AND (:exclude IS NULL OR t.id <> :exclude)
         AND {}
         AND NOT EXISTS (SELECT 1 FROM {STAGE_ONE_OUTPUTS} o
             WHERE o.thread_id = t.id AND o.source_updated_at >= t.source_watermark)
         AND NOT EXISTS (SELECT 1 FROM {STAGE_ONE_JOBS} j WHERE j.thread_id = t.id AND (
             j.last_success_watermark >= t.source_watermark
             OR (j.status = 'running' AND j.lease_expires_at > :now)
             OR (j.input_watermark >= t.source_watermark
                 AND (j.retry_after_at > :now OR j.attempts >= :max_attempts))))",
        stored_paths::claimable_path_filter()
    )
}

/// What a newer output replaces of a thread's stored one, on either backend (`excluded` is the
/// row the insert proposed).
pub(super) const OUTPUT_REPLACED: &str = "raw_memory = excluded.raw_memory, \
     rollout_summary = excluded.rollout_summary, rollout_slug = excluded.rollout_slug, \
     source_updated_at = excluded.source_updated_at, generated_at = excluded.generated_at";

/// A job from a row of [`JOB_COLUMNS`], on either backend.
pub(super) fn job_from_row<R: Columns>(row: &R) -> std::result::Result<StageOneJob, R::Error> {
    let status = row.text(1)?;
    Ok(StageOneJob {
        thread_id: row.text(0)?,
        // Only this module writes statuses; an unknown one reads as an error to retry.
        status: JobStatus::parse(&status).unwrap_or(JobStatus::Error),
        owner_token: row.text_or_null(2)?,
        lease_expires_at: row.integer_or_null(3)?,
        attempts: u32::try_from(row.integer(4)?).unwrap_or(u32::MAX),
        retry_after_at: row.integer_or_null(5)?,
        last_error: row.text_or_null(6)?,
        input_watermark: row.integer(7)?,
        last_success_watermark: row.integer_or_null(8)?,
    })
}

pub(super) const JOB_COLUMNS: &str = "thread_id, status, owner_token, lease_expires_at, attempts, \
     retry_after_at, last_error, input_watermark, last_success_watermark";

/// An output record from a row of [`output_query`], on either backend.
pub(super) fn output_from_row<R: Columns>(
    row: &R,
) -> std::result::Result<StageOneOutputRecord, R::Error> {
    Ok(StageOneOutputRecord {
        thread_id: row.text(0)?,
        cwd: row.text_or_null(1)?,
        rollout_path: row.text_or_null(2)?.unwrap_or_default(),
        git_branch: row.text_or_null(11)?,
        raw_memory: row.text(3)?,
        rollout_summary: row.text(4)?,
        rollout_slug: row.text_or_null(5)?,
        source_updated_at: row.integer(6)?,
        generated_at: row.integer(7)?,
        usage_count: u64::try_from(row.integer(8)?).unwrap_or(0),
        last_used_at: row.integer_or_null(9)?,
        selected: row.flag(10)?,
    })
}

/// The outputs with their threads' paths and branches, `filter` appended.
pub(super) fn output_query(filter: &str) -> String {
    format!(
        "SELECT o.thread_id, t.cwd, t.rollout_path, o.raw_memory, o.rollout_summary,
                o.rollout_slug, o.source_updated_at, o.generated_at, o.usage_count,
                o.last_used_at, o.selected, t.git_branch
         FROM {STAGE_ONE_OUTPUTS} o LEFT JOIN {THREADS} t ON t.id = o.thread_id {filter}"
    )
}

impl Db {
    /// Claims the most recently active eligible thread, or `None` when nothing is eligible
    /// (or the running cap is reached).
    pub(super) fn claim_next_stage_one_job(
        &mut self,
        params: &ClaimParams,
        now: i64,
    ) -> Result<Option<ClaimedJob>> {
        if self.claims_closed {
            return Ok(None);
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Jobs of a crashed process on this host are free at once, not when their lease ends.
        lease_owner::reclaim_gone_jobs(&tx, &self.owner, now)?;
        if let Some(cap) = params.max_running {
            let running: i64 = tx.query_row(
                &format!(
                    "SELECT COUNT(*) FROM {STAGE_ONE_JOBS}
                     WHERE status = 'running' AND lease_expires_at > ?1"
                ),
                [now],
                |row| row.get(0),
            )?;
            if running >= i64::from(cap) {
                return Ok(None);
            }
        }
        let candidate = CandidateArgs::new(params, now).with_named(|named| {
            tx.query_row(
                &format!(
                    "SELECT t.id, t.rollout_path, t.cwd, t.source_watermark FROM {THREADS} t
                     WHERE {} ORDER BY t.last_activity_at DESC, t.id DESC LIMIT 1",
                    candidate_filter()
                ),
                named,
                |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, Option<String>>(2)?,
                        row.get::<_, i64>(3)?,
                    ))
                },
            )
            .optional()
        })?;
        let Some((thread_id, rollout_path, cwd, watermark)) = candidate else {
            return Ok(None);
        };
        let owner_token = uuid::Uuid::new_v4().to_string();
        tx.execute(
            &format!(
                "INSERT INTO {STAGE_ONE_JOBS} (thread_id, status, owner_token, lease_expires_at,
                    attempts, input_watermark, started_at)
                 VALUES (?1, 'running', ?2, ?3, 0, ?4, ?5)
                 ON CONFLICT (thread_id) DO UPDATE SET
                    status = 'running',
                    owner_token = excluded.owner_token,
                    lease_expires_at = excluded.lease_expires_at,
                    attempts = CASE WHEN excluded.input_watermark > {STAGE_ONE_JOBS}.input_watermark
                        THEN 0 ELSE {STAGE_ONE_JOBS}.attempts END,
                    retry_after_at = NULL,
                    input_watermark = excluded.input_watermark,
                    started_at = excluded.started_at,
                    finished_at = NULL"
            ),
            params![
                thread_id,
                owner_token,
                now.saturating_add(params.lease_seconds),
                watermark,
                now
            ],
        )?;
        lease_owner::record_job_owner(&tx, &thread_id, &self.owner)?;
        tx.commit()?;
        Ok(Some(ClaimedJob {
            open_path: self.open_path(&thread_id, &rollout_path),
            stored_items: None,
            thread_id,
            rollout_path,
            cwd,
            owner_token,
            input_watermark: watermark,
        }))
    }

    /// How many threads a claim with these parameters could pick now (ignoring the running
    /// cap).
    pub(super) fn count_stage_one_candidates(
        &self,
        params: &ClaimParams,
        now: i64,
    ) -> Result<usize> {
        let count: i64 = CandidateArgs::new(params, now).with_named(|named| {
            self.conn.query_row(
                &format!(
                    "SELECT COUNT(*) FROM {THREADS} t WHERE {}",
                    candidate_filter()
                ),
                named,
                |row| row.get(0),
            )
        })?;
        Ok(usize::try_from(count).unwrap_or(0))
    }

    /// Extends a held job's lease to the heartbeat's expiry, for extractions that may outlast
    /// it. Returns false, writing nothing, when `job` no longer owns the lease.
    pub(super) fn heartbeat_stage_one_job(
        &mut self,
        job: &ClaimedJob,
        beat: Heartbeat,
    ) -> Result<bool> {
        let changed = self.conn.execute(
            &heartbeat_statement(Dialect::Sqlite),
            params![job.thread_id, job.owner_token, beat.expires_at()],
        )?;
        Ok(changed > 0)
    }

    /// Records a successful extraction: the job is done for its watermark and the output is
    /// stored (replacing an older one), in one transaction. Returns false, writing nothing,
    /// when `job` no longer owns the lease.
    pub(super) fn mark_stage_one_succeeded(
        &mut self,
        job: &ClaimedJob,
        success: &StageOneSuccess,
    ) -> Result<bool> {
        let (output, now) = (&success.output, success.now);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        if !finish_owned(&tx, job, now)? {
            return Ok(false);
        }
        tx.execute(
            &format!(
                "INSERT INTO {STAGE_ONE_OUTPUTS} (thread_id, raw_memory, rollout_summary,
                    rollout_slug, source_updated_at, generated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (thread_id) DO UPDATE SET {OUTPUT_REPLACED}
                 WHERE excluded.source_updated_at >= {STAGE_ONE_OUTPUTS}.source_updated_at"
            ),
            params![
                job.thread_id,
                output.raw_memory,
                output.rollout_summary,
                output.rollout_slug,
                job.input_watermark,
                now
            ],
        )?;
        signal_phase_two(&tx, job.input_watermark)?;
        tx.commit()?;
        Ok(true)
    }

    /// Records an extraction that found nothing worth keeping: the job is done and any
    /// earlier output of the thread is deleted. Returns false, writing nothing, when `job` no
    /// longer owns the lease.
    pub(super) fn mark_stage_one_no_output(&mut self, job: &ClaimedJob, now: i64) -> Result<bool> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        if !finish_owned(&tx, job, now)? {
            return Ok(false);
        }
        let deleted = tx.execute(
            &format!("DELETE FROM {STAGE_ONE_OUTPUTS} WHERE thread_id = ?1"),
            [&job.thread_id],
        )?;
        if deleted > 0 {
            signal_phase_two(&tx, job.input_watermark)?;
        }
        tx.commit()?;
        Ok(true)
    }

    /// Records a failed extraction: one more attempt used, retry after the failure's delay.
    /// Returns false, writing nothing, when `job` no longer owns the lease.
    pub(super) fn mark_stage_one_failed(
        &mut self,
        job: &ClaimedJob,
        failure: &StageOneFailure,
    ) -> Result<bool> {
        let changed = self.conn.execute(
            &failed_statement(Dialect::Sqlite),
            params![
                job.thread_id,
                job.owner_token,
                failure.retry_after(),
                failure.error,
                failure.now
            ],
        )?;
        Ok(changed > 0)
    }

    /// Gives a claimed job back without spending an attempt: it is pending again and claimable
    /// at once, with `note` as its last error. For failures of the model rather than the job
    /// (rejected credentials, an unknown model). Returns false, writing nothing, when `job` no
    /// longer owns the lease.
    pub(super) fn release_stage_one_job(&mut self, job: &ClaimedJob, note: &str) -> Result<bool> {
        let changed = self.conn.execute(
            &release_statement(Dialect::Sqlite),
            params![job.thread_id, job.owner_token, note],
        )?;
        Ok(changed > 0)
    }

    /// Makes every failed job claimable now (see `WriteStore::retry_failed_stage_one_jobs`);
    /// returns how many.
    pub(super) fn retry_failed_stage_one_jobs(&mut self) -> Result<usize> {
        Ok(self.conn.execute(&retry_failed_statement(), [])?)
    }

    /// One job by thread id.
    pub(super) fn stage_one_job(&self, thread_id: &str) -> Result<Option<StageOneJob>> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {JOB_COLUMNS} FROM {STAGE_ONE_JOBS} WHERE thread_id = ?1"),
                [thread_id],
                |row| job_from_row(row),
            )
            .optional()?)
    }

    /// Every job, by thread id.
    pub(super) fn stage_one_jobs(&self) -> Result<Vec<StageOneJob>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {JOB_COLUMNS} FROM {STAGE_ONE_JOBS} ORDER BY thread_id"
        ))?;
        let rows = stmt.query_map([], |row| job_from_row(row))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One stored output by thread id.
    pub(super) fn stage_one_output(&self, thread_id: &str) -> Result<Option<StageOneOutputRecord>> {
        Ok(self
            .conn
            .query_row(
                &output_query("WHERE o.thread_id = ?1"),
                [thread_id],
                |row| output_from_row(row),
            )
            .optional()?)
    }

    /// Every stored output, by thread id.
    pub(super) fn stage_one_outputs(&self) -> Result<Vec<StageOneOutputRecord>> {
        let mut stmt = self.conn.prepare(&output_query("ORDER BY o.thread_id"))?;
        let rows = stmt.query_map([], |row| output_from_row(row))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// The values of a claim's candidate filter, on either backend.
pub(super) struct CandidateArgs {
    pub(super) now: i64,
    pub(super) idle_cutoff: i64,
    pub(super) age_cutoff: Option<i64>,
    /// The rollout prefix as stored paths start with it (paths are stored redacted).
    pub(super) prefix: Option<String>,
    pub(super) exclude: Option<String>,
    pub(super) max_attempts: i64,
    pub(super) ended: Vec<String>,
}

impl CandidateArgs {
    pub(super) fn new(params: &ClaimParams, now: i64) -> CandidateArgs {
        CandidateArgs {
            now,
            idle_cutoff: now.saturating_sub(params.min_idle_hours.saturating_mul(3600)),
            age_cutoff: params
                .max_age_days
                .map(|days| now.saturating_sub(days.saturating_mul(86_400))),
            prefix: params
                .rollout_prefix
                .as_deref()
                .map(|prefix| stored_paths::storable(prefix).into_owned()),
            exclude: params.exclude_thread_id.clone(),
            max_attempts: i64::from(params.max_attempts),
            ended: params.ended_thread_ids.clone(),
        }
    }

    /// Runs `run` with the values as [`candidate_filter`] names them; the ended threads go as
    /// the JSON array `json_each` reads.
    fn with_named<T>(&self, run: impl FnOnce(&[(&str, &dyn ToSql)]) -> T) -> T {
        let ended = serde_json::Value::from(self.ended.clone()).to_string();
        run(&[
            (":now", &self.now),
            (":idle_cutoff", &self.idle_cutoff),
            (":ended", &ended),
            (":age_cutoff", &self.age_cutoff),
            (":prefix", &self.prefix),
            (":exclude", &self.exclude),
            (":max_attempts", &self.max_attempts),
        ])
    }
}

/// Marks the owned running job done for its watermark. False when not owned.
fn finish_owned(tx: &rusqlite::Transaction<'_>, job: &ClaimedJob, now: i64) -> Result<bool> {
    let changed = tx.execute(
        &done_statement(Dialect::Sqlite),
        params![job.thread_id, job.owner_token, now],
    )?;
    Ok(changed > 0)
}

// The statements on a leased job, the same on both backends. Parameters 1 and 2 of each are
// the thread id and the owner token: a job is written only while that token holds its lease.

/// The condition that a job is still leased to the token of parameter 2.
fn held_job(dialect: Dialect) -> String {
    let p = |n| dialect.parameter(n);
    format!(
        "thread_id = {} AND status = 'running' AND owner_token = {}",
        p(1),
        p(2)
    )
}

/// Extends a held job's lease to parameter 3.
pub(crate) fn heartbeat_statement(dialect: Dialect) -> String {
    format!(
        "UPDATE {STAGE_ONE_JOBS} SET lease_expires_at = {} WHERE {}",
        dialect.parameter(3),
        held_job(dialect)
    )
}

/// Marks a held job done for its watermark, finished at parameter 3.
pub(crate) fn done_statement(dialect: Dialect) -> String {
    format!(
        "UPDATE {STAGE_ONE_JOBS} SET status = 'done', owner_token = NULL,
            lease_expires_at = NULL, attempts = 0, retry_after_at = NULL, last_error = NULL,
            last_success_watermark = input_watermark, finished_at = {}
         WHERE {}",
        dialect.parameter(3),
        held_job(dialect)
    )
}

/// Records a failed attempt on a held job: retried after parameter 3, with error parameter 4,
/// finished at parameter 5.
pub(crate) fn failed_statement(dialect: Dialect) -> String {
    let p = |n| dialect.parameter(n);
    format!(
        "UPDATE {STAGE_ONE_JOBS} SET status = 'error', owner_token = NULL,
            lease_expires_at = NULL, attempts = attempts + 1, retry_after_at = {},
            last_error = {}, finished_at = {}
         WHERE {}",
        p(3),
        p(4),
        p(5),
        held_job(dialect)
    )
}

/// Gives a held job back without spending an attempt, with parameter 3 as its last error.
pub(crate) fn release_statement(dialect: Dialect) -> String {
    format!(
        "UPDATE {STAGE_ONE_JOBS} SET status = 'pending', owner_token = NULL,
            lease_expires_at = NULL, retry_after_at = NULL, last_error = {}
         WHERE {}",
        dialect.parameter(3),
        held_job(dialect)
    )
}

/// Gives back a held job whose process ended before finishing.
pub(crate) fn reclaim_statement(dialect: Dialect) -> String {
    format!(
        "UPDATE {STAGE_ONE_JOBS} SET status = 'pending', owner_token = NULL,
            lease_expires_at = NULL, last_error = 'its process ended before finishing'
         WHERE {}",
        held_job(dialect)
    )
}

/// Makes every failed job claimable now, with its attempts cleared.
pub(crate) fn retry_failed_statement() -> String {
    format!(
        "UPDATE {STAGE_ONE_JOBS} SET status = 'pending', attempts = 0, retry_after_at = NULL
         WHERE status = 'error'"
    )
}

/// Tells phase 2 there is new input: its input watermark strictly increases (and is at least
/// the changed thread's watermark), so `input_watermark > last_success_watermark` means
/// "consolidate again".
pub(super) fn signal_phase_two(tx: &rusqlite::Transaction<'_>, watermark: i64) -> Result<()> {
    tx.execute(&signal_statement(Dialect::Sqlite), [watermark])?;
    Ok(())
}
