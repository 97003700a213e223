//! Phase 1: extract one stage-one output per eligible rollout.
//!
//! Workers (at most [`CONCURRENCY_LIMIT`] at once) each claim a job, run it, record its
//! outcome, and claim the next, until the claim budget is spent or nothing is eligible. One
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
//! File reading and the CPU-bound steps run on tokio's blocking pool; the store is reached
//! through [`AsyncStateStore`].

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use memory_prompts::UntrustedText;
use memory_prompts::memories::{StageOneInputContext, stage_one_input, stage_one_system};
use memory_protocol::model::ReasoningEffort;
use memory_protocol::stage_one::StageOneInput;
use memory_protocol::{
    ModelClient, ModelRequest, ResponseItem, StageOneOutput, TaskKind, TokenUsage,
};
use memory_sanitize::{
    ReaderOptions, TruncationPolicy, filter_for_memory, o200k, read_rollout_path,
    redact_json_strings, redact_secrets, serialize_for_memory, truncate_middle,
};
use serde::Serialize;
use tokio::task::JoinSet;

use crate::error::{Error, Result};
use crate::rate_limit::{RateLimitProbe, rate_limit_allows};
use crate::store::{AsyncStateStore, ClaimParams, ClaimedJob, now_unix};

/// Jobs in flight at once, per process.
pub const CONCURRENCY_LIMIT: usize = 8;
/// Token budget of the rollout contents when the model's window is unknown.
pub const DEFAULT_ROLLOUT_TOKEN_LIMIT: u64 = 150_000;
/// Share of the model's input window the rollout contents may fill, in percent.
pub const CONTEXT_WINDOW_PERCENT: u64 = 70;
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
    /// Below this remaining rate-limit percentage the run is skipped.
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
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
}

/// One job's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
}

/// What a phase-1 run did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
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
    /// Jobs whose lease was taken over before they finished.
    pub lease_lost: usize,
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
            JobOutcome::Failed => self.failed += 1,
            JobOutcome::LeaseLost => self.lease_lost += 1,
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
    store: &AsyncStateStore,
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
    let params = options.claim.clone();
    report.candidates = store
        .call(move |s| s.count_stage_one_candidates(&params, now_unix()))
        .await?;
    let budget = options.max_claims.unwrap_or(usize::MAX);
    if let Some(observer) = &hooks.observer {
        observer.started(report.candidates.min(budget));
    }
    let shared = Arc::new(Worker {
        store: store.clone(),
        model,
        claim: options.claim.clone(),
        retry_delay: options.retry_delay,
        claims_left: AtomicUsize::new(budget),
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
                first_error.get_or_insert(Error::Task(e.to_string()));
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(report),
    }
}

struct Worker {
    store: AsyncStateStore,
    model: Arc<dyn ModelClient>,
    claim: ClaimParams,
    retry_delay: Duration,
    claims_left: AtomicUsize,
    observer: Option<Arc<dyn PhaseOneObserver>>,
}

impl Worker {
    async fn run(&self) -> Result<Vec<JobReport>> {
        let mut reports = Vec::new();
        while self.take_claim() {
            let params = self.claim.clone();
            let claimed = self
                .store
                .call(move |s| s.claim_next_stage_one_job(&params, now_unix()))
                .await?;
            let Some(job) = claimed else {
                break;
            };
            let report = self.run_job(job).await?;
            if let Some(observer) = &self.observer {
                observer.job_finished(&report);
            }
            reports.push(report);
        }
        Ok(reports)
    }

    fn take_claim(&self) -> bool {
        self.claims_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                left.checked_sub(1)
            })
            .is_ok()
    }

    async fn run_job(&self, job: ClaimedJob) -> Result<JobReport> {
        let extracted = extract(self.model.as_ref(), &job).await;
        let (outcome, message, usage) = match extracted {
            Extraction::Output { output, usage } => {
                let job = job.clone();
                let owned = self
                    .store
                    .call(move |s| s.mark_stage_one_succeeded(&job, &output, now_unix()))
                    .await?;
                (owned.then_some(JobOutcome::Succeeded), None, usage)
            }
            Extraction::Nothing { reason, usage } => {
                let job = job.clone();
                let owned = self
                    .store
                    .call(move |s| s.mark_stage_one_no_output(&job, now_unix()))
                    .await?;
                (owned.then_some(JobOutcome::NoOutput), Some(reason), usage)
            }
            Extraction::Failed { error, retry_after } => {
                let delay = retry_after.map_or(self.retry_delay, |d| d.max(self.retry_delay));
                let (job, text) = (job.clone(), error.clone());
                let owned = self
                    .store
                    .call(move |s| s.mark_stage_one_failed(&job, &text, delay, now_unix()))
                    .await?;
                (owned.then_some(JobOutcome::Failed), Some(error), None)
            }
        };
        Ok(JobReport {
            thread_id: job.thread_id,
            rollout_path: job.rollout_path,
            outcome: outcome.unwrap_or(JobOutcome::LeaseLost),
            message,
            usage,
        })
    }
}

/// What running one job produced, before it is recorded.
#[derive(Debug, Clone, PartialEq)]
pub enum Extraction {
    /// A redacted output to store.
    Output {
        /// The output, its three fields redacted.
        output: StageOneOutput,
        /// Token usage of the model call.
        usage: Option<TokenUsage>,
    },
    /// Nothing worth keeping.
    Nothing {
        /// Why.
        reason: String,
        /// Token usage of the model call, when one was made.
        usage: Option<TokenUsage>,
    },
    /// The job failed.
    Failed {
        /// What went wrong.
        error: String,
        /// How long the model asked us to wait, when it did.
        retry_after: Option<Duration>,
    },
}

/// What [`prepare_stage_one_request`] produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Prepared {
    /// A request to send.
    Request(Box<ModelRequest>),
    /// The rollout holds nothing a model could extract from; no call is needed.
    Nothing(String),
}

/// Runs one job's pipeline (everything but recording the outcome).
pub async fn extract(model: &dyn ModelClient, job: &ClaimedJob) -> Extraction {
    let context_window = model.context_window();
    let owned_job = job.clone();
    let prepared =
        tokio::task::spawn_blocking(move || prepare_stage_one_request(&owned_job, context_window))
            .await;
    let request = match prepared {
        Ok(Ok(Prepared::Request(request))) => request,
        Ok(Ok(Prepared::Nothing(reason))) => {
            return Extraction::Nothing {
                reason,
                usage: None,
            };
        }
        Ok(Err(error)) => {
            return Extraction::Failed {
                error,
                retry_after: None,
            };
        }
        Err(e) => {
            return Extraction::Failed {
                error: format!("preparing the rollout failed: {e}"),
                retry_after: None,
            };
        }
    };
    let response = match model.complete(*request).await {
        Ok(response) => response,
        Err(e) => {
            return Extraction::Failed {
                retry_after: e.retry_after(),
                error: e.to_string(),
            };
        }
    };
    match parse_stage_one_output(&response.text) {
        Ok(output) if output.is_no_output() => Extraction::Nothing {
            reason: "the model found nothing worth keeping".to_owned(),
            usage: response.usage,
        },
        Ok(output) => Extraction::Output {
            output,
            usage: response.usage,
        },
        Err(error) => Extraction::Failed {
            error,
            retry_after: None,
        },
    }
}

/// The token budget of the rollout contents for a model with this input window.
pub fn rollout_token_limit(context_window: Option<u64>) -> u64 {
    match context_window {
        Some(window) if window > 0 => (window.saturating_mul(CONTEXT_WINDOW_PERCENT) / 100).max(1),
        _ => DEFAULT_ROLLOUT_TOKEN_LIMIT,
    }
}

/// Reads, filters, redacts, serializes and truncates one rollout and renders the stage-one
/// request. `Err` carries a message for the job's error record.
pub fn prepare_stage_one_request(
    job: &ClaimedJob,
    context_window: Option<u64>,
) -> Result<Prepared, String> {
    let path = std::path::Path::new(&job.rollout_path);
    let read = read_rollout_path(path, &ReaderOptions::default())
        .map_err(|e| format!("cannot read rollout: {e}"))?;
    if read.lines.is_empty() {
        return match read.diagnostics.first() {
            None => Ok(Prepared::Nothing("the rollout file is empty".to_owned())),
            Some(first) => Err(format!(
                "the rollout has no readable lines ({} malformed; first: {first})",
                read.diagnostics.len()
            )),
        };
    }
    let items = filter_for_memory(read.lines.into_iter().map(|line| line.item));
    if items.is_empty() {
        return Ok(Prepared::Nothing(
            "the rollout has no messages or tool activity to extract from".to_owned(),
        ));
    }
    let items = items
        .into_iter()
        .map(redact_item)
        .collect::<Result<Vec<_>, String>>()?;
    let serialized = serialize_for_memory(&items);
    let redacted = redact_secrets(&serialized);
    let limit = usize::try_from(rollout_token_limit(context_window)).unwrap_or(usize::MAX);
    let contents = truncate_middle(&redacted, TruncationPolicy::Tokens(limit), o200k());
    let truncated = contents.len() != redacted.len();
    let cwd = job.cwd.clone().unwrap_or_default();
    let instructions =
        stage_one_system().map_err(|e| format!("cannot render the stage-one prompt: {e}"))?;
    let input = stage_one_input(&StageOneInputContext {
        rollout_path: UntrustedText::new(job.rollout_path.clone()),
        rollout_cwd: UntrustedText::new(cwd),
        rollout_contents: UntrustedText::new(contents.into_owned()),
    })
    .map_err(|e| format!("cannot render the stage-one input: {e}"))?;
    let structured = StageOneInput {
        thread_id: job.thread_id.clone(),
        rollout_path: job.rollout_path.clone(),
        rollout_cwd: job.cwd.clone(),
        items,
        truncated,
    };
    let structured_input = serde_json::to_value(&structured)
        .map_err(|e| format!("cannot encode the stage-one input: {e}"))?;
    Ok(Prepared::Request(Box::new(ModelRequest {
        task: TaskKind::StageOneExtraction,
        instructions,
        input,
        structured_input,
        output_schema: Some(StageOneOutput::output_schema()),
        reasoning_effort: Some(ReasoningEffort::Low),
        max_output_tokens: None,
    })))
}

/// Redacts every string of an item (message text, tool arguments, tool output).
fn redact_item(item: ResponseItem) -> Result<ResponseItem, String> {
    let mut value =
        serde_json::to_value(&item).map_err(|e| format!("cannot encode a rollout item: {e}"))?;
    redact_json_strings(&mut value);
    ResponseItem::from_value(value).map_err(|e| format!("cannot decode a redacted item: {e}"))
}

/// Parses a model answer strictly as a [`StageOneOutput`] and redacts its three fields.
pub fn parse_stage_one_output(text: &str) -> Result<StageOneOutput, String> {
    let output: StageOneOutput = serde_json::from_str(text)
        .map_err(|e| format!("the model output is not a valid stage-one output: {e}"))?;
    Ok(StageOneOutput {
        raw_memory: redact_secrets(&output.raw_memory).into_owned(),
        rollout_summary: redact_secrets(&output.rollout_summary).into_owned(),
        rollout_slug: output
            .rollout_slug
            .map(|slug| redact_secrets(&slug).into_owned()),
    })
}
