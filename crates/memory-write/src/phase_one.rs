//! Phase 1: extract one stage-one output per eligible rollout.
//!
//! Workers (at most [`CONCURRENCY_LIMIT`] at once) each claim a job, run it, then record its
//! outcome while claiming the next (two independent store calls at once), until the claim
//! budget is spent or nothing is eligible. One
//! job runs: read -> filter -> redact each item -> serialize -> redact the text -> truncate
//! head+tail to 70% of the model's input window -> render the stage-one prompts -> model call
//! with the strict output schema -> strict parse -> redact the three fields -> record one of
//! three outcomes:
//!
//! - **succeeded**: the output is stored;
//! - **no output**: the rollout (or the model) had nothing worth keeping; nothing is stored
//!   and any earlier output of the thread is deleted;
//! - **failed**: the error text is kept and the job is retried after a back-off.
//!
//! While a job runs, its lease is extended every third of the lease length, so a lease can be
//! short (a worker on another machine that dies is replaced within one lease) however long
//! the model takes; a job whose lease was taken over stops waiting for its model call.
//!
//! File reading and the CPU-bound steps run on tokio's blocking pool; the store is reached
//! through [`crate::store::WriteStore`] (the SQLite [`crate::store::StateStore`] or the
//! PostgreSQL store).

use crate::blocking::blocking;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use memory_protocol::{ModelClient, ModelError, StageOneOutput, TokenUsage, input_token_budget};
use tokio::task::JoinSet;

use crate::error::{Error, Result};
use crate::rate_limit::{RateLimitProbe, rate_limit_allows};
use crate::stage_one_request::{
    Loaded, MIN_ROLLOUT_TOKEN_BUDGET, load_job_rollout, parse_stage_one_output, render_request,
};
use crate::store::{
    ClaimParams, ClaimedJob, Heartbeat, SharedStore, StageOneFailure, StageOneSuccess, now_unix,
};

/// Jobs in flight at once, per process.
pub const CONCURRENCY_LIMIT: usize = 8;
/// Default delay before a failed job is retried.
pub const DEFAULT_RETRY_DELAY: Duration = Duration::from_secs(3600);

/// How a phase-1 run claims and runs jobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseOneOptions {
    /// Which threads may be claimed, and the lease.
    pub claim: ClaimParams,
    /// Most jobs claimed by this run; `None` for no limit.
    pub max_claims: Option<usize>,
    /// Jobs in flight at once (at least 1, at most [`CONCURRENCY_LIMIT`]).
    pub concurrency: usize,
    /// Delay before a failed job may be retried.
    pub retry_delay: Duration,
    /// Below this remaining rate-limit percentage (from the probe before the run, or the
    /// model's last rate-limit headers before each claim) the run claims nothing more.
    pub min_rate_limit_remaining_percent: i64,
}

impl Default for PhaseOneOptions {
    fn default() -> Self {
        PhaseOneOptions {
            claim: ClaimParams::default(),
            max_claims: Some(
                usize::try_from(crate::config::DEFAULT_MAX_ROLLOUTS_PER_STARTUP).unwrap_or(1),
            ),
            concurrency: CONCURRENCY_LIMIT,
            retry_delay: DEFAULT_RETRY_DELAY,
            min_rate_limit_remaining_percent:
                crate::config::DEFAULT_MIN_RATE_LIMIT_REMAINING_PERCENT,
        }
    }
}

/// Optional callbacks of a phase-1 run.
#[derive(Default)]
pub struct PhaseOneHooks<'a> {
    /// Consulted once before anything is claimed.
    pub rate_limit: Option<&'a dyn RateLimitProbe>,
    /// Told about progress (for a progress bar, or a test's log).
    pub observer: Option<Arc<dyn PhaseOneObserver>>,
}

/// Watches a phase-1 run.
pub trait PhaseOneObserver: Send + Sync {
    /// The run is about to claim up to `expected_jobs` jobs.
    fn started(&self, expected_jobs: usize) {
        let _ = expected_jobs;
    }

    /// A job finished and its outcome is recorded.
    fn job_finished(&self, job: &JobReport) {
        let _ = job;
    }
}

/// How one job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobOutcome {
    /// An output was stored.
    Succeeded,
    /// Nothing worth keeping; any earlier output was deleted.
    NoOutput,
    /// The job failed and will be retried later.
    Failed,
    /// The lease was taken over by another worker before this one finished; nothing was
    /// recorded.
    LeaseLost,
    /// The model cannot serve any job until the user changes something (credentials, model
    /// name, base URL): the job went back to pending without spending an attempt.
    Released,
}

/// One job's result.
#[derive(Debug, Clone, PartialEq)]
pub struct JobReport {
    /// The thread.
    pub thread_id: String,
    /// Its rollout file.
    pub rollout_path: String,
    /// How it ended.
    pub outcome: JobOutcome,
    /// Why, for no-output and failed jobs.
    pub message: Option<String>,
    /// Token usage of the model call, when reported.
    pub usage: Option<TokenUsage>,
    /// True for a failed job whose model answered, but not with the output the schema asks
    /// for (as against a transport or server failure).
    pub invalid_output: bool,
}

/// What a phase-1 run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PhaseOneReport {
    /// The run did not start because too little rate limit remained.
    pub skipped_rate_limit: bool,
    /// Threads eligible when the run started.
    pub candidates: usize,
    /// Jobs claimed.
    pub claimed: usize,
    /// Jobs that stored an output.
    pub succeeded: usize,
    /// Jobs with nothing worth keeping.
    pub no_output: usize,
    /// Jobs that failed.
    pub failed: usize,
    /// Of the failed jobs, those whose model answered with output that does not match the
    /// schema (the rest failed in transport, on the server or reading the rollout).
    pub invalid_output: usize,
    /// Jobs whose lease was taken over before they finished.
    pub lease_lost: usize,
    /// Jobs given back unspent because the model could not serve them (see `fatal_error`).
    pub released: usize,
    /// Why the run stopped claiming: a failure of the model no retry can fix. The next run
    /// after the fix does the released work at once.
    pub fatal_error: Option<String>,
    /// The remaining rate-limit percentage at which the run stopped claiming, when it did.
    pub stopped_at_rate_limit: Option<f64>,
    /// Token usage summed over every job that reported it.
    pub token_usage: Option<TokenUsage>,
    /// Every job, in the order they finished.
    pub jobs: Vec<JobReport>,
}

impl PhaseOneReport {
    fn add(&mut self, job: JobReport) {
        self.claimed += 1;
        match job.outcome {
            JobOutcome::Succeeded => self.succeeded += 1,
            JobOutcome::NoOutput => self.no_output += 1,
            JobOutcome::Failed => {
                self.failed += 1;
                self.invalid_output += usize::from(job.invalid_output);
            }
            JobOutcome::LeaseLost => self.lease_lost += 1,
            JobOutcome::Released => self.released += 1,
        }
        if let Some(usage) = &job.usage {
            self.token_usage
                .get_or_insert_with(TokenUsage::default)
                .add(usage);
        }
        self.jobs.push(job);
    }
}

/// Runs phase 1: claims and runs jobs until the claim budget is spent or nothing is eligible.
/// Job failures are recorded, not returned; an error means the store itself failed.
pub async fn run_phase_one(
    store: &SharedStore,
    model: Arc<dyn ModelClient>,
    options: &PhaseOneOptions,
    hooks: PhaseOneHooks<'_>,
) -> Result<PhaseOneReport> {
    let mut report = PhaseOneReport::default();
    if let Some(probe) = hooks.rate_limit {
        let remaining = probe.remaining_percent().await;
        if !rate_limit_allows(remaining, options.min_rate_limit_remaining_percent) {
            report.skipped_rate_limit = true;
            return Ok(report);
        }
    }
    // Jobs left running by a crashed process on this host are counted (and claimed) at once.
    store.reclaim_jobs_of_gone_owners(now_unix()).await?;
    report.candidates = store
        .count_stage_one_candidates(&options.claim, now_unix())
        .await?;
    let budget = options.max_claims.unwrap_or(usize::MAX);
    if let Some(observer) = &hooks.observer {
        observer.started(report.candidates.min(budget));
    }
    let shared = Arc::new(Worker {
        store: Arc::clone(store),
        model,
        claim: options.claim.clone(),
        retry_delay: options.retry_delay,
        min_rate_limit_remaining_percent: options.min_rate_limit_remaining_percent,
        claims_left: AtomicUsize::new(budget),
        stop: Mutex::new(None),
        observer: hooks.observer,
    });
    let mut workers = JoinSet::new();
    for _ in 0..options.concurrency.clamp(1, CONCURRENCY_LIMIT) {
        let worker = Arc::clone(&shared);
        workers.spawn(async move { worker.run().await });
    }
    let mut first_error = None;
    while let Some(joined) = workers.join_next().await {
        match joined {
            Ok(Ok(jobs)) => jobs.into_iter().for_each(|job| report.add(job)),
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(e) => {
                first_error.get_or_insert(Error::Task(e));
            }
        }
    }
    if let Some(first) = first_error {
        return Err(first);
    }
    match shared.stop.lock().ok().and_then(|stop| stop.clone()) {
        Some(Stop::Fatal(message)) => report.fatal_error = Some(message),
        Some(Stop::RateLimit(remaining)) => report.stopped_at_rate_limit = Some(remaining),
        None => {}
    }
    Ok(report)
}

/// Why workers stopped claiming before the budget ran out.
#[derive(Debug, Clone)]
enum Stop {
    Fatal(String),
    RateLimit(f64),
}

struct Worker {
    store: SharedStore,
    model: Arc<dyn ModelClient>,
    claim: ClaimParams,
    retry_delay: Duration,
    min_rate_limit_remaining_percent: i64,
    claims_left: AtomicUsize,
    stop: Mutex<Option<Stop>>,
    observer: Option<Arc<dyn PhaseOneObserver>>,
}

impl Worker {
    async fn run(&self) -> Result<Vec<JobReport>> {
        let mut reports = Vec::new();
        let mut next = self.claim_next().await?;
        while let Some(job) = next {
            let extracted = self.extract_with_heartbeats(&job).await;
            if let Some(Extraction::Fatal { error }) = &extracted {
                // Before the next claim, so a model no retry can fix takes no further job.
                self.stop_for(error);
            }
            // Recording this outcome and claiming the next job are independent: doing both at
            // once, a slot waits for the slower of two store round trips instead of their sum
            // between one model call and the next.
            let (recorded, claimed) = tokio::join!(self.record(job, extracted), self.claim_next());
            let report = match recorded {
                Ok(report) => report,
                Err(error) => {
                    if let Ok(Some(claimed)) = &claimed {
                        self.give_back(claimed).await;
                    }
                    return Err(error);
                }
            };
            if let Some(observer) = &self.observer {
                observer.job_finished(&report);
            }
            reports.push(report);
            next = claimed?;
        }
        Ok(reports)
    }

    /// The next job, when the run may still claim one and the store has one.
    async fn claim_next(&self) -> Result<Option<ClaimedJob>> {
        if !(self.may_claim() && self.take_claim()) {
            return Ok(None);
        }
        self.store
            .claim_next_stage_one_job(&self.claim, now_unix())
            .await
    }

    /// Gives a claimed job back unspent because the run stops before running it. Best effort:
    /// the run is already failing, and a lease left behind lapses (at once on this host).
    async fn give_back(&self, job: &ClaimedJob) {
        if let Err(error) = self
            .store
            .release_stage_one_job(job, "the run stopped before running it")
            .await
        {
            tracing::warn!(thread = %job.thread_id, %error, "could not give a claimed job back");
        }
    }

    /// False once a worker hit a fatal model error, or the model's last rate-limit headers say
    /// too little quota is left.
    fn may_claim(&self) -> bool {
        let Ok(mut stop) = self.stop.lock() else {
            return false;
        };
        if stop.is_some() {
            return false;
        }
        if let Some(remaining) = self.model.rate_limit().and_then(|s| s.remaining_percent())
            && !rate_limit_allows(Some(remaining), self.min_rate_limit_remaining_percent)
        {
            *stop = Some(Stop::RateLimit(remaining));
            return false;
        }
        true
    }

    fn stop_for(&self, error: &ModelError) {
        if let Ok(mut stop) = self.stop.lock()
            && !matches!(*stop, Some(Stop::Fatal(_)))
        {
            *stop = Some(Stop::Fatal(error.to_string()));
        }
    }

    fn take_claim(&self) -> bool {
        self.claims_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                left.checked_sub(1)
            })
            .is_ok()
    }

    /// Runs the job's extraction while extending its lease. `None` when the lease was lost
    /// on the way (another worker took the job over): the model's answer would be refused.
    async fn extract_with_heartbeats(&self, job: &ClaimedJob) -> Option<Extraction> {
        let lease_seconds = self.claim.lease_seconds;
        let period = heartbeat_period(lease_seconds);
        let extraction = extract(self.model.as_ref(), job);
        tokio::pin!(extraction);
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        loop {
            tokio::select! {
                done = &mut extraction => return Some(done),
                _ = ticker.tick() => {
                    let beat = Heartbeat::from_now(lease_seconds);
                    match self.store.heartbeat_stage_one_job(job, beat).await {
                        Ok(true) => {}
                        Ok(false) => return None,
                        // A store hiccup is not a lost lease: the next tick tries again, and
                        // recording the outcome reports a store that stays down.
                        Err(error) => {
                            tracing::warn!(thread = %job.thread_id, %error, "lease heartbeat failed");
                        }
                    }
                }
            }
        }
    }

    /// Records how `job` ended; `None` when its lease was lost while it ran.
    async fn record(&self, job: ClaimedJob, extracted: Option<Extraction>) -> Result<JobReport> {
        let Some(extracted) = extracted else {
            return Ok(JobReport {
                thread_id: job.thread_id,
                rollout_path: job.rollout_path,
                outcome: JobOutcome::LeaseLost,
                message: Some("another worker took the job over".to_owned()),
                usage: None,
                invalid_output: false,
            });
        };
        let invalid_output = matches!(
            extracted,
            Extraction::Failed {
                invalid_output: true,
                ..
            }
        );
        let (outcome, message, usage) = match extracted {
            Extraction::Output { output, usage } => {
                let owned = self
                    .store
                    .mark_stage_one_succeeded(
                        &job,
                        &StageOneSuccess {
                            now: now_unix(),
                            output,
                        },
                    )
                    .await?;
                (owned.then_some(JobOutcome::Succeeded), None, usage)
            }
            Extraction::Nothing { reason, usage } => {
                let owned = self
                    .store
                    .mark_stage_one_no_output(&job, now_unix())
                    .await?;
                (owned.then_some(JobOutcome::NoOutput), Some(reason), usage)
            }
            Extraction::Failed {
                error, retry_after, ..
            } => {
                let delay = retry_after.map_or(self.retry_delay, |d| d.max(self.retry_delay));
                let failure = StageOneFailure {
                    now: now_unix(),
                    error: error.clone(),
                    retry_delay: delay,
                };
                let owned = self.store.mark_stage_one_failed(&job, &failure).await?;
                (owned.then_some(JobOutcome::Failed), Some(error), None)
            }
            Extraction::Fatal { error } => {
                let owned = self
                    .store
                    .release_stage_one_job(&job, &error.to_string())
                    .await?;
                (
                    owned.then_some(JobOutcome::Released),
                    Some(error.to_string()),
                    None,
                )
            }
        };
        Ok(JobReport {
            thread_id: job.thread_id,
            rollout_path: job.rollout_path,
            outcome: outcome.unwrap_or(JobOutcome::LeaseLost),
            message,
            usage,
            invalid_output,
        })
    }
}

/// How often a running job's lease is extended: a third of its length, so two heartbeats can
/// fail before it lapses; at least once a second.
fn heartbeat_period(lease_seconds: i64) -> Duration {
    Duration::from_secs(u64::try_from(lease_seconds / 3).unwrap_or(0).max(1))
}

/// What running one job produced, before it is recorded.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Extraction {
    /// A redacted output to store.
    Output {
        output: StageOneOutput,
        usage: Option<TokenUsage>,
    },
    /// Nothing worth keeping.
    Nothing {
        reason: String,
        usage: Option<TokenUsage>,
    },
    /// The job failed; it will be retried after a back-off.
    Failed {
        error: String,
        retry_after: Option<Duration>,
        /// The model answered with output that does not match the schema.
        invalid_output: bool,
    },
    /// The model cannot serve any job until the user changes something (see
    /// [`ModelError::is_fatal`]): the job goes back unspent and the run stops claiming.
    Fatal { error: ModelError },
}

/// Runs one job's pipeline (everything but recording the outcome). When the model answers
/// that the input does not fit its window, the transcript is cut to half the tokens of what was
/// sent and the request rebuilt, down to [`MIN_ROLLOUT_TOKEN_BUDGET`]; the same input is never
/// sent twice.
pub(crate) async fn extract(model: &dyn ModelClient, job: &ClaimedJob) -> Extraction {
    let owned_job = job.clone();
    let material = match blocking(move || load_job_rollout(&owned_job)).await {
        Ok(Loaded::Material(material)) => Arc::new(material),
        Ok(Loaded::Nothing(reason)) => {
            return Extraction::Nothing {
                reason,
                usage: None,
            };
        }
        Err(error) => return failed(error.to_string()),
    };
    let mut budget = input_token_budget(model.context_window());
    let mut last_sent_bytes = None;
    loop {
        let (owned_job, owned_material) = (job.clone(), Arc::clone(&material));
        let rendered =
            match blocking(move || render_request(&owned_job, &owned_material, budget)).await {
                Ok(rendered) => rendered,
                Err(error) => return failed(error.to_string()),
            };
        if last_sent_bytes == Some(rendered.contents_bytes) {
            // Halving the budget did not shorten what is sent (the rollout was already
            // shorter than the new budget): halve again rather than repeat the input.
            match smaller_budget(budget) {
                Some(next) => {
                    budget = next;
                    continue;
                }
                None => return overflow_failure(budget, "the model still refused the input"),
            }
        }
        let response = match model.complete(rendered.request).await {
            Ok(response) => response,
            Err(ModelError::ContextOverflow { message }) => {
                last_sent_bytes = Some(rendered.contents_bytes);
                match smaller_budget(budget) {
                    Some(next) => {
                        tracing::debug!(thread = %job.thread_id, budget = next, "input too long; cutting");
                        budget = next;
                        continue;
                    }
                    None => return overflow_failure(budget, &message),
                }
            }
            Err(error) if error.is_fatal() => return Extraction::Fatal { error },
            Err(error) => {
                return Extraction::Failed {
                    retry_after: error.retry_after(),
                    invalid_output: matches!(error, ModelError::InvalidOutput { .. }),
                    error: error.to_string(),
                };
            }
        };
        return match parse_stage_one_output(&response.text) {
            Ok(output) if output.is_no_output() => Extraction::Nothing {
                reason: "the model found nothing worth keeping".to_owned(),
                usage: response.usage,
            },
            Ok(output) => Extraction::Output {
                output,
                usage: response.usage,
            },
            Err(error) => Extraction::Failed {
                error: error.to_string(),
                retry_after: None,
                invalid_output: true,
            },
        };
    }
}

fn failed(error: String) -> Extraction {
    Extraction::Failed {
        error,
        retry_after: None,
        invalid_output: false,
    }
}

/// Half of `budget`, or `None` below the floor.
fn smaller_budget(budget: u64) -> Option<u64> {
    let next = budget / 2;
    (next >= MIN_ROLLOUT_TOKEN_BUDGET).then_some(next)
}

fn overflow_failure(budget: u64, message: &str) -> Extraction {
    failed(format!(
        "the rollout does not fit the model's context window even cut to {budget} tokens \
         ({message}); set --context-window or model_context_window to the model's real window"
    ))
}
