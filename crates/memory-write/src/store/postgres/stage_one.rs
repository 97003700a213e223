//! Leased stage-one jobs and their outputs on PostgreSQL (rules as in the SQLite store's
//! `stage_one` module; how claims exclude each other is in the parent module's docs).

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use deadpool_postgres::GenericClient;
use memory_protocol::stage_one::{StageOneJob, StageOneOutputRecord};
use memory_store::ddl::Dialect;
use memory_store::names::tables::{
    PHASE_TWO_LEASE, ROLLOUT_CONTENTS, STAGE_ONE_JOBS, STAGE_ONE_OUTPUTS, THREADS,
};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;

use super::super::stage_one::{
    CandidateArgs, JOB_COLUMNS, OUTPUT_REPLACED, done_statement, failed_statement,
    heartbeat_statement, job_from_row, output_from_row, output_query, reclaim_statement,
    release_statement, retry_failed_statement,
};
use super::PgStore;
use crate::error::Result;
use crate::store::phase_two::signal_statement;
use crate::store::{
    ClaimParams, ClaimedJob, Heartbeat, ReleasedLeases, StageOneFailure, StageOneSuccess,
};

/// Candidates a claim tries before concluding that racing claimers took them all. A candidate
/// lost to a race is invisible to the next statement, so this only bounds pathological churn.
const CLAIM_TRIES: usize = 8;

/// Key of the advisory lock that makes the running cap exact across machines.
const RUNNING_CAP_LOCK: i64 = 0x6167_656e_7463_6170;

/// The eligibility rule shared by claiming and counting; parameters `$1` now, `$2` idle
/// cutoff, `$3` age cutoff, `$4` path prefix, `$5` excluded thread, `$6` max attempts, `$7`
/// the threads reported ended (exempt from the idle cutoff). Only a
/// thread whose stored items match its registration is eligible: the worker extracts from
/// them, wherever the file is.
fn candidate_filter() -> String {
    format!(
        "{} AND EXISTS (SELECT 1 FROM {ROLLOUT_CONTENTS} c
             WHERE c.thread_id = t.id AND c.source_fingerprint = t.source_fingerprint)",
        candidate_conditions()
    )
}

/// [`candidate_filter`] but for the stored items, which the claim joins. `source_watermark >
/// done_watermark` says again what the job row says of a finished extraction, so a claim
/// walks the partial index of threads still to extract (`threads_claimable`) instead of
/// passing over every done thread first.
fn candidate_conditions() -> String {
    format!(
        "t.skip_reason IS NULL AND t.memory_mode = 'enabled'
         AND t.source_watermark > t.done_watermark
         AND (t.last_activity_at <= $2 OR t.id = ANY($7::TEXT[]))
         AND ($3::BIGINT IS NULL OR t.last_activity_at >= $3::BIGINT)
         AND ($4::TEXT IS NULL OR left(t.rollout_path, length($4::TEXT)) = $4::TEXT)
         AND ($5::TEXT IS NULL OR t.id <> $5::TEXT)
         AND NOT EXISTS (SELECT 1 FROM {STAGE_ONE_OUTPUTS} o
             WHERE o.thread_id = t.id AND o.source_updated_at >= t.source_watermark)
         AND NOT EXISTS (SELECT 1 FROM {STAGE_ONE_JOBS} j WHERE j.thread_id = t.id AND (
             j.last_success_watermark >= t.source_watermark
             OR (j.status = 'running' AND j.lease_expires_at > $1)
             OR (j.input_watermark >= t.source_watermark
                 AND (j.retry_after_at > $1 OR j.attempts >= $6))))"
    )
}

impl CandidateArgs {
    /// The values as [`candidate_filter`] numbers them.
    fn values(&self) -> [&(dyn ToSql + Sync); 7] {
        [
            &self.now,
            &self.idle_cutoff,
            &self.age_cutoff,
            &self.prefix,
            &self.exclude,
            &self.max_attempts,
            &self.ended,
        ]
    }
}

/// Whether a claim statement runs on its own (so a cancelled one can simply run again) or
/// inside a transaction (which a cancelled statement aborts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Alone {
    Yes,
    No,
}

/// One claim call: its prepared statement and values, the same for each of its attempts.
struct ClaimCall<'a> {
    statement: &'a tokio_postgres::Statement,
    args: CandidateArgs,
    lease_seconds: i64,
    alone: Alone,
}

/// What one run of the claim statement came to.
enum Attempt {
    Taken(ClaimedJob),
    /// A candidate was picked, but its job row, read under the upsert's lock, no longer allows
    /// it (a racing claimer took it after this statement's snapshot).
    Lost,
    NoCandidate,
}

/// The claim as one statement: pick the newest eligible thread, skipping rows other claimers
/// hold (`FOR UPDATE SKIP LOCKED`), and take its job with an upsert whose `WHERE` re-checks the
/// job row under its lock, so a claimer whose snapshot predates another's commit cannot lease
/// the same job. Parameters `$1` to `$7` as in [`candidate_filter`], then `$8` the ownership
/// token, `$9` the lease end, `$10` to `$12` the owner's host, pid and start. One row when a
/// thread was picked, whose last column says whether its job was taken; none when nothing is
/// eligible.
///
/// The candidates fall in two parts, picked apart and the newer of the two taken: threads
/// whose job is not running (`NOT claimed`: the claimable index holds only those), and
/// threads whose running job's lease ran out, found from the jobs' status index. A claim so
/// never walks past the jobs in flight, which all sit at the newest end of the index.
///
/// The claim's commit does not wait for its WAL flush (`relaxed`: `synchronous_commit` off for
/// this transaction only, what `SET LOCAL` does, here without a round trip of its own). The
/// lease already tolerates losing it: a claim lost in a server crash leaves the job as it
/// was before, so another worker claims it, and the worker that thought it held it is fenced
/// off by its owner token when it records the outcome, which stays fully durable. No other
/// transaction is relaxed, and the server's setting is untouched.
fn claim_statement() -> String {
    let conditions = candidate_conditions();
    format!(
        "WITH relaxed AS (
            SELECT set_config('synchronous_commit', 'off', true) AS setting
         ), free AS (
            SELECT t.id, t.rollout_path, t.cwd, t.source_watermark, c.items, t.last_activity_at
            FROM {THREADS} t
            JOIN {ROLLOUT_CONTENTS} c
               ON c.thread_id = t.id AND c.source_fingerprint = t.source_fingerprint
            WHERE NOT t.claimed AND {conditions}
            ORDER BY t.last_activity_at DESC, t.id DESC LIMIT 1
            FOR UPDATE OF t SKIP LOCKED
         ), expired AS (
            SELECT t.id, t.rollout_path, t.cwd, t.source_watermark, c.items, t.last_activity_at
            FROM {STAGE_ONE_JOBS} e
            JOIN {THREADS} t ON t.id = e.thread_id
            JOIN {ROLLOUT_CONTENTS} c
               ON c.thread_id = t.id AND c.source_fingerprint = t.source_fingerprint
            WHERE e.status = 'running' AND e.lease_expires_at <= $1 AND t.claimed
               AND {conditions}
            ORDER BY t.last_activity_at DESC, t.id DESC LIMIT 1
            FOR UPDATE OF t SKIP LOCKED
         ), pick AS (
            SELECT * FROM free UNION ALL SELECT * FROM expired
            ORDER BY last_activity_at DESC, id DESC LIMIT 1
         ), take AS (
            INSERT INTO {STAGE_ONE_JOBS} AS j (thread_id, status, owner_token,
               lease_expires_at, attempts, input_watermark, started_at, owner_host,
               owner_pid, owner_started)
            SELECT p.id, 'running', $8::TEXT, $9::BIGINT, 0, p.source_watermark, $1::BIGINT,
               $10::TEXT, $11::BIGINT, $12::TEXT
            FROM pick p
            ON CONFLICT (thread_id) DO UPDATE SET
               status = 'running',
               owner_token = excluded.owner_token,
               lease_expires_at = excluded.lease_expires_at,
               attempts = CASE WHEN excluded.input_watermark > j.input_watermark
                   THEN 0 ELSE j.attempts END,
               retry_after_at = NULL,
               input_watermark = excluded.input_watermark,
               started_at = excluded.started_at,
               finished_at = NULL,
               owner_host = excluded.owner_host,
               owner_pid = excluded.owner_pid,
               owner_started = excluded.owner_started
            WHERE (j.last_success_watermark >= excluded.input_watermark) IS NOT TRUE
               AND (j.status = 'running' AND j.lease_expires_at > $1) IS NOT TRUE
               AND (j.input_watermark >= excluded.input_watermark
                    AND (j.retry_after_at > $1 OR j.attempts >= $6)) IS NOT TRUE
            RETURNING j.thread_id
         )
         SELECT p.id, p.rollout_path, p.cwd, p.source_watermark, p.items,
            EXISTS (SELECT 1 FROM take)
         FROM pick p, relaxed"
    )
}

impl PgStore {
    pub(super) async fn pg_claim_next_stage_one_job(
        &self,
        params: &ClaimParams,
        now: i64,
    ) -> Result<Option<ClaimedJob>> {
        if self.claims_closed() {
            return Ok(None);
        }
        let mut client = self.client().await?;
        let args = CandidateArgs::new(params, now);
        let Some(cap) = params.max_running else {
            // Each statement commits on its own: a claim is one statement, so it needs no
            // transaction (two round trips fewer). Jobs of a crashed process on this host are
            // free at once, not when their lease ends; the gone-owner query and the first
            // claim go out together (tokio-postgres pipelines futures polled at once; the
            // server runs them in order). When that claim found nothing but the reclaim freed
            // a job, the loop claims again, so a freed job is still taken by this call.
            let statement = client.prepare_cached(&claim_statement()).await?;
            let call = ClaimCall {
                statement: &statement,
                args,
                lease_seconds: params.lease_seconds,
                alone: Alone::Yes,
            };
            let (reclaimed, first) = tokio::try_join!(
                reclaim_gone_jobs(&client, self, now),
                self.claim_once(&client, &call)
            )?;
            let first = (matches!(first, Attempt::Taken(_)) || reclaimed == 0).then_some(first);
            return self.claim_until_settled(&client, &call, first).await;
        };
        let tx = client.transaction().await?;
        // Jobs of a crashed process on this host are free at once, not when their lease ends;
        // before counting, so they do not count against the cap.
        reclaim_gone_jobs(&tx, self, now).await?;
        // Counting and claiming under one lock keeps the cap exact across machines.
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&RUNNING_CAP_LOCK])
            .await?;
        let running: i64 = tx
            .query_one(
                &format!(
                    "SELECT COUNT(*) FROM {STAGE_ONE_JOBS}
                     WHERE status = 'running' AND lease_expires_at > $1"
                ),
                &[&now],
            )
            .await?
            .try_get(0)?;
        if running >= i64::from(cap) {
            return Ok(None);
        }
        let statement = tx.prepare_cached(&claim_statement()).await?;
        let call = ClaimCall {
            statement: &statement,
            args,
            lease_seconds: params.lease_seconds,
            alone: Alone::No,
        };
        let claimed = self.claim_until_settled(&tx, &call, None).await?;
        tx.commit().await?;
        Ok(claimed)
    }

    /// Claims until a job is taken or none is left, starting from `first` when an attempt was
    /// already made. A candidate lost to a racing claimer is invisible to the next attempt.
    async fn claim_until_settled<C: GenericClient>(
        &self,
        client: &C,
        call: &ClaimCall<'_>,
        mut first: Option<Attempt>,
    ) -> Result<Option<ClaimedJob>> {
        for _ in 0..CLAIM_TRIES {
            let attempt = match first.take() {
                Some(attempt) => attempt,
                None => self.claim_once(client, call).await?,
            };
            match attempt {
                Attempt::Taken(job) => return Ok(Some(job)),
                Attempt::NoCandidate => return Ok(None),
                Attempt::Lost => {}
            }
        }
        Ok(None)
    }

    /// One run of the claim statement, with a fresh ownership token.
    async fn claim_once<C: GenericClient>(
        &self,
        client: &C,
        call: &ClaimCall<'_>,
    ) -> Result<Attempt> {
        let owner_token = uuid::Uuid::new_v4().to_string();
        let lease_expires_at = call.args.now.saturating_add(call.lease_seconds);
        let pid = i64::from(self.owner.pid);
        let [now, idle, age, prefix, exclude, attempts, ended] = call.args.values();
        let values: [&(dyn ToSql + Sync); 12] = [
            now,
            idle,
            age,
            prefix,
            exclude,
            attempts,
            ended,
            &owner_token,
            &lease_expires_at,
            &self.owner.host,
            &pid,
            &self.owner.started,
        ];
        let row = match client.query_opt(call.statement, &values).await {
            Ok(row) => row,
            // The claim locks the thread, then its job; a job's status change locks the job,
            // then (through the trigger that keeps `claimed`) the thread. The two meet only
            // when a lease ran out while its owner was still finishing, and the server then
            // cancels one of them: a claim on its own tries again, as after a lost race.
            Err(error)
                if call.alone == Alone::Yes
                    && error.code() == Some(&SqlState::T_R_DEADLOCK_DETECTED) =>
            {
                return Ok(Attempt::Lost);
            }
            Err(error) => return Err(error.into()),
        };
        let Some(row) = row else {
            return Ok(Attempt::NoCandidate);
        };
        if !row.try_get::<_, bool>(5)? {
            return Ok(Attempt::Lost);
        }
        let rollout_path: String = row.try_get(1)?;
        Ok(Attempt::Taken(ClaimedJob {
            open_path: PathBuf::from(&rollout_path),
            stored_items: Some(row.try_get(4)?),
            thread_id: row.try_get(0)?,
            rollout_path,
            cwd: row.try_get(2)?,
            owner_token,
            input_watermark: row.try_get(3)?,
        }))
    }

    pub(super) async fn pg_count_stage_one_candidates(
        &self,
        params: &ClaimParams,
        now: i64,
    ) -> Result<usize> {
        let client = self.client().await?;
        let args = CandidateArgs::new(params, now);
        let count: i64 = client
            .query_one(
                &format!(
                    "SELECT COUNT(*) FROM {THREADS} t WHERE {}",
                    candidate_filter()
                ),
                &args.values(),
            )
            .await?
            .try_get(0)?;
        Ok(usize::try_from(count).unwrap_or(0))
    }

    pub(super) async fn pg_heartbeat_stage_one_job(
        &self,
        job: &ClaimedJob,
        beat: Heartbeat,
    ) -> Result<bool> {
        let values: [&(dyn ToSql + Sync); 3] =
            [&job.thread_id, &job.owner_token, &beat.expires_at()];
        Ok(self
            .execute(&heartbeat_statement(Dialect::Postgres), &values)
            .await?
            > 0)
    }

    pub(super) async fn pg_mark_stage_one_succeeded(
        &self,
        job: &ClaimedJob,
        success: &StageOneSuccess,
    ) -> Result<bool> {
        let (output, now) = (&success.output, &success.now);
        let client = self.client().await?;
        let record = client.prepare_cached(&record_success_statement()).await?;
        let values: [&(dyn ToSql + Sync); 7] = [
            &job.thread_id,
            &job.owner_token,
            now,
            &output.raw_memory,
            &output.rollout_summary,
            &output.rollout_slug,
            &job.input_watermark,
        ];
        // One statement commits on its own: one round trip. A job finishing while a claimer
        // takes it over (its lease ran out) can meet that claimer in a deadlock the server
        // breaks by cancelling one of them (see `claim_once`); run again, this one then finds
        // whether the job is still its own.
        let row = match client.query_one(&record, &values).await {
            Err(error) if error.code() == Some(&SqlState::T_R_DEADLOCK_DETECTED) => {
                client.query_one(&record, &values).await?
            }
            row => row?,
        };
        Ok(row.try_get(0)?)
    }

    pub(super) async fn pg_mark_stage_one_no_output(
        &self,
        job: &ClaimedJob,
        now: i64,
    ) -> Result<bool> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let finish = Finish::prepare(&tx).await?;
        let delete = tx
            .prepare_cached(&format!(
                "DELETE FROM {STAGE_ONE_OUTPUTS} WHERE thread_id = $1"
            ))
            .await?;
        let delete_values: [&(dyn ToSql + Sync); 1] = [&job.thread_id];
        let (owned, deleted) = tokio::try_join!(
            finish.run(&tx, job, now),
            ours(tx.execute(&delete, &delete_values))
        )?;
        if !owned {
            return Ok(false);
        }
        if deleted > 0 {
            signal_phase_two(&tx, job.input_watermark).await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    pub(super) async fn pg_mark_stage_one_failed(
        &self,
        job: &ClaimedJob,
        failure: &StageOneFailure,
    ) -> Result<bool> {
        let values: [&(dyn ToSql + Sync); 5] = [
            &job.thread_id,
            &job.owner_token,
            &failure.retry_after(),
            &failure.error,
            &failure.now,
        ];
        Ok(self
            .execute(&failed_statement(Dialect::Postgres), &values)
            .await?
            > 0)
    }

    pub(super) async fn pg_release_stage_one_job(
        &self,
        job: &ClaimedJob,
        note: &str,
    ) -> Result<bool> {
        let values: [&(dyn ToSql + Sync); 3] = [&job.thread_id, &job.owner_token, &note];
        Ok(self
            .execute(&release_statement(Dialect::Postgres), &values)
            .await?
            > 0)
    }

    pub(super) async fn pg_retry_failed_stage_one_jobs(&self) -> Result<usize> {
        let changed = self.execute(&retry_failed_statement(), &[]).await?;
        Ok(usize::try_from(changed).unwrap_or(usize::MAX))
    }

    pub(super) async fn pg_stage_one_job(&self, thread_id: &str) -> Result<Option<StageOneJob>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!("SELECT {JOB_COLUMNS} FROM {STAGE_ONE_JOBS} WHERE thread_id = $1"),
                &[&thread_id],
            )
            .await?;
        Ok(row.as_ref().map(job_from_row).transpose()?)
    }

    pub(super) async fn pg_stage_one_jobs(&self) -> Result<Vec<StageOneJob>> {
        let client = self.client().await?;
        let rows = client
            .query(
                &format!("SELECT {JOB_COLUMNS} FROM {STAGE_ONE_JOBS} ORDER BY thread_id"),
                &[],
            )
            .await?;
        Ok(rows.iter().map(job_from_row).collect::<Result<_, _>>()?)
    }

    pub(super) async fn pg_stage_one_output(
        &self,
        thread_id: &str,
    ) -> Result<Option<StageOneOutputRecord>> {
        let client = self.client().await?;
        let row = client
            .query_opt(&output_query("WHERE o.thread_id = $1"), &[&thread_id])
            .await?;
        Ok(row.as_ref().map(output_from_row).transpose()?)
    }

    pub(super) async fn pg_stage_one_outputs(&self) -> Result<Vec<StageOneOutputRecord>> {
        let client = self.client().await?;
        let rows = client
            .query(&output_query("ORDER BY o.thread_id"), &[])
            .await?;
        Ok(rows.iter().map(output_from_row).collect::<Result<_, _>>()?)
    }

    pub(super) async fn pg_reclaim_jobs_of_gone_owners(&self, now: i64) -> Result<usize> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let reclaimed = reclaim_gone_jobs(&tx, self, now).await?;
        tx.commit().await?;
        Ok(reclaimed)
    }

    pub(super) async fn pg_release_leases_of_this_process(&self) -> Result<ReleasedLeases> {
        self.claims_closed.store(true, Ordering::SeqCst);
        let owner = &self.owner;
        let pid = i64::from(owner.pid);
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let jobs = tx
            .execute(
                &format!(
                    "UPDATE {STAGE_ONE_JOBS} SET status = 'pending', owner_token = NULL,
                        lease_expires_at = NULL, retry_after_at = NULL,
                        last_error = 'interrupted before finishing'
                     WHERE status = 'running' AND owner_host = $1 AND owner_pid = $2
                        AND owner_started IS NOT DISTINCT FROM $3"
                ),
                &[&owner.host, &pid, &owner.started],
            )
            .await?;
        let phase_two = tx
            .execute(
                &format!(
                    "UPDATE {PHASE_TWO_LEASE}
                     SET status = 'pending', owner_token = NULL, lease_expires_at = NULL
                     WHERE id = 1 AND status = 'running' AND owner_host = $1 AND owner_pid = $2
                        AND owner_started IS NOT DISTINCT FROM $3"
                ),
                &[&owner.host, &pid, &owner.started],
            )
            .await?;
        tx.commit().await?;
        Ok(ReleasedLeases {
            jobs: usize::try_from(jobs).unwrap_or(usize::MAX),
            phase_two: phase_two > 0,
        })
    }
}

/// Live jobs of gone processes on this host back to pending (no attempt spent), on the caller's
/// connection (inside its transaction when it has one). Other hosts' jobs are never judged here: they keep the expiry rule.
async fn reclaim_gone_jobs<C: GenericClient>(
    client: &C,
    store: &PgStore,
    now: i64,
) -> Result<usize> {
    let me = &store.owner;
    // Every claim asks: a cached statement saves a round trip to the server each time.
    let held_here = client
        .prepare_cached(&format!(
            "SELECT thread_id, owner_token, owner_pid, owner_started FROM {STAGE_ONE_JOBS}
             WHERE status = 'running' AND lease_expires_at > $1 AND owner_host = $2
                AND owner_pid IS NOT NULL AND owner_token IS NOT NULL"
        ))
        .await?;
    let held = client.query(&held_here, &[&now, &me.host]).await?;
    let mut reclaimed = 0;
    for row in held {
        let pid = u32::try_from(row.try_get::<_, i64>(2)?).unwrap_or(u32::MAX);
        let started: Option<String> = row.try_get(3)?;
        if me.is_gone(&me.host, pid, started.as_deref()) {
            let thread_id: String = row.try_get(0)?;
            let token: String = row.try_get(1)?;
            let changed = client
                .execute(&reclaim_statement(Dialect::Postgres), &[&thread_id, &token])
                .await?;
            reclaimed += usize::try_from(changed).unwrap_or(0);
        }
    }
    Ok(reclaimed)
}

/// The statement that marks the owned running job done for its watermark; the trigger on job
/// rows raises the thread's `done_watermark` and clears its `claimed` (schema version 3).
struct Finish {
    done_job: tokio_postgres::Statement,
}

impl Finish {
    async fn prepare(tx: &deadpool_postgres::Transaction<'_>) -> Result<Self> {
        // Cached statements: prepared once per connection, not once per job.
        let done_job = tx
            .prepare_cached(&done_statement(Dialect::Postgres))
            .await?;
        Ok(Self { done_job })
    }

    /// False when the job is not owned, and the caller then drops the transaction, which
    /// rolls everything it sent back.
    async fn run(
        &self,
        tx: &deadpool_postgres::Transaction<'_>,
        job: &ClaimedJob,
        now: i64,
    ) -> Result<bool> {
        let values: [&(dyn ToSql + Sync); 3] = [&job.thread_id, &job.owner_token, &now];
        Ok(tx.execute(&self.done_job, &values).await? > 0)
    }
}

/// A successful extraction recorded in one statement: the job marked done ([`Finish`]'s
/// update, parameters `$1` to `$3`), its output stored (`$4` to `$6`: raw memory, summary,
/// slug, for watermark `$7`) unless a newer one is, and phase 2 told (see [`PhaseTwoSignal`]:
/// the lease row is key-share locked when phase 2 is already due, raised otherwise). Nothing
/// but the job's row is written when the job is no longer this owner's. One row: whether it
/// was.
fn record_success_statement() -> String {
    format!(
        "WITH done AS (
            {}
            RETURNING thread_id
         ), stored AS (
            INSERT INTO {STAGE_ONE_OUTPUTS} AS o (thread_id, raw_memory, rollout_summary,
                rollout_slug, source_updated_at, generated_at)
            SELECT thread_id, $4, $5, $6, $7, $3 FROM done
            ON CONFLICT (thread_id) DO UPDATE SET {OUTPUT_REPLACED}
            WHERE excluded.source_updated_at >= o.source_updated_at
         ), due AS (
            SELECT 1 FROM {PHASE_TWO_LEASE}
            WHERE id = 1 AND status <> 'running'
                AND input_watermark > COALESCE(last_success_watermark, -1)
                AND input_watermark >= $7 AND EXISTS (SELECT 1 FROM done)
            FOR KEY SHARE
         ), raised AS (
            UPDATE {PHASE_TWO_LEASE} SET input_watermark = GREATEST(input_watermark + 1, $7)
            WHERE id = 1 AND EXISTS (SELECT 1 FROM done) AND NOT EXISTS (SELECT 1 FROM due)
         )
         SELECT EXISTS (SELECT 1 FROM done)",
        done_statement(Dialect::Postgres)
    )
}

/// A driver call with this crate's error, so it can be joined with the store's own steps.
async fn ours<T>(
    call: impl std::future::Future<Output = std::result::Result<T, tokio_postgres::Error>>,
) -> Result<T> {
    Ok(call.await?)
}

/// Tells phase 2 there is new input (see the SQLite store's `signal_phase_two`).
pub(super) async fn signal_phase_two(
    tx: &deadpool_postgres::Transaction<'_>,
    watermark: i64,
) -> Result<()> {
    let signal = PhaseTwoSignal::prepare(tx).await?;
    if !signal.already_due(tx, watermark).await? {
        signal.raise(tx, watermark).await?;
    }
    Ok(())
}

/// Telling phase 2 there is new input, in two statements, for a finisher that runs in a
/// transaction (a job with no output); a successful job's one statement holds the same two
/// steps as parts of its `WITH`.
///
/// Raising the watermark locks the one lease row until commit, so every finishing worker in
/// the fleet would queue on it, one commit (one WAL flush) at a time. Most find phase 2
/// already due, not running, and its watermark at or past theirs, where raising it again
/// changes nothing; they only take a key-share lock on the row, which finishers share and a
/// phase-2 claim's `FOR UPDATE` waits for, so a claim that follows still sees this output.
/// While phase 2 runs, or once it has caught up, the watermark is raised as before, so a
/// running pass sees new input.
struct PhaseTwoSignal {
    already_due: tokio_postgres::Statement,
    raise: tokio_postgres::Statement,
}

impl PhaseTwoSignal {
    async fn prepare(tx: &deadpool_postgres::Transaction<'_>) -> Result<Self> {
        let already_due = tx
            .prepare_cached(&format!(
                "SELECT 1 FROM {PHASE_TWO_LEASE}
                 WHERE id = 1 AND status <> 'running'
                    AND input_watermark > COALESCE(last_success_watermark, -1)
                    AND input_watermark >= $1
                 FOR KEY SHARE"
            ))
            .await?;
        let raise = tx
            .prepare_cached(&signal_statement(Dialect::Postgres))
            .await?;
        Ok(Self { already_due, raise })
    }

    /// True when phase 2 is already due for `watermark` (the row is then key-share locked).
    async fn already_due(
        &self,
        tx: &deadpool_postgres::Transaction<'_>,
        watermark: i64,
    ) -> Result<bool> {
        Ok(tx
            .query_opt(&self.already_due, &[&watermark])
            .await?
            .is_some())
    }

    async fn raise(&self, tx: &deadpool_postgres::Transaction<'_>, watermark: i64) -> Result<()> {
        tx.execute(&self.raise, &[&watermark]).await?;
        Ok(())
    }
}
