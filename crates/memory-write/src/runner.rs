//! The main job as a library: a [`Runner`] opens the selected store, prunes stale memories and
//! registers the rollouts of a folder ([`Runner::prepare`]), then extracts memories from the
//! eligible ones (phase 1) and consolidates them into the memory root (phase 2) with
//! [`Runner::run`], telling a [`RunProgress`] as jobs finish. One [`RunReport`] says what the
//! run did; its serde form is the documented `run --json` object.
//!
//! The two steps are separate so a host can hold the store between them: the CLI gives every
//! held lease back when a signal stops [`Runner::run`] (see [`Runner::store`]).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use memory_protocol::{ContextWindow, ModelClient, StructuredOutputMode};
use memory_transcript::claude_code::ended::{ENDED_SESSIONS_FILE, read_ended};
use serde::Serialize;

use crate::config::MemoriesConfig;
use crate::housekeeping::prune_stale_memories;
use crate::memory_root::MemoryRoot;
use crate::phase_one::{JobOutcome, JobReport, PhaseOneHooks, PhaseOneObserver};
use crate::phase_two::{PhaseTwoOptions, PhaseTwoReport, run_phase_two};
use crate::skip_reason::{SkipCounts, SkipReason, count_skips};
use crate::store::{ClaimParams, SharedStore, WriteStore, now_unix};
use crate::store_selection::{StoreSelection, open_store};
use crate::{
    Error, PhaseOneOptions, PhaseOneReport, Result, ScanOptions, ScanReport, run_phase_one,
    scan_rollouts,
};

/// Where a run's rollouts come from, which decides its default limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RolloutFolder {
    /// A folder the user named: every rollout there that passes the idle rule, unless an
    /// option or the config file sets a limit.
    Given,
    /// codex's sessions folder, read as a host agent reads it at startup: at most
    /// `max_rollouts_per_startup` rollouts, the age and idle rules.
    CodexSessions,
    /// Claude Code's `projects` folder, read with the same startup limits as codex's.
    ClaudeCodeProjects,
}

/// The limits of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunLimits {
    /// Most jobs this run claims (`None`: no limit).
    pub max_claims: Option<usize>,
    /// Only rollouts active within this many days (`None`: any age).
    pub max_age_days: Option<i64>,
    /// Most jobs running at once across processes (`None`: no limit).
    pub max_running: Option<u32>,
}

impl RunLimits {
    /// The limits of a run over `folder`: the host's options (`limit`, `max_age_days`) win,
    /// then the config file. A [`RolloutFolder::Given`] has no age or per-run limit unless one
    /// of them sets it; an agent's own sessions folder gets codex's startup limits.
    pub fn new(
        folder: RolloutFolder,
        limit: Option<u64>,
        max_age_days: Option<u64>,
        config: &MemoriesConfig,
    ) -> RunLimits {
        let per_run = usize::try_from(config.rollouts_per_startup()).unwrap_or(1);
        let limit = limit.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        let age = max_age_days.map(|days| i64::try_from(days).unwrap_or(i64::MAX));
        match folder {
            RolloutFolder::Given => RunLimits {
                max_claims: limit.or(config.max_rollouts_per_startup.map(|_| per_run)),
                max_age_days: age.or(config.max_rollout_age_days),
                max_running: None,
            },
            RolloutFolder::CodexSessions | RolloutFolder::ClaudeCodeProjects => RunLimits {
                max_claims: Some(limit.unwrap_or(per_run)),
                max_age_days: Some(age.unwrap_or(config.rollout_age_days())),
                // As codex does at startup: the per-run limit also caps jobs running at once
                // across processes.
                max_running: Some(u32::try_from(per_run).unwrap_or(u32::MAX)),
            },
        }
    }
}

/// The models of a run.
#[derive(Clone)]
pub struct RunModels {
    /// The model that extracts (phase 1).
    pub extract: Arc<dyn ModelClient>,
    /// The extraction model's context window, as the host found it (reported as is).
    pub context_window: ContextWindow,
    /// The model that consolidates (phase 2); often the same one.
    pub consolidate: Arc<dyn ModelClient>,
}

/// The structured-output mode each model ended the run on (`None`: a model with no server,
/// such as the offline engine).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StructuredOutputModes {
    /// The extraction model's.
    pub extract: Option<StructuredOutputMode>,
    /// The consolidation model's.
    pub consolidate: Option<StructuredOutputMode>,
}

impl std::fmt::Debug for RunModels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunModels")
            .field("extract", &self.extract.name())
            .field("context_window", &self.context_window)
            .field("consolidate", &self.consolidate.name())
            .finish()
    }
}

/// What [`Runner::run`] does besides extracting.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The memory root phase 2 writes.
    pub root: MemoryRoot,
    /// The run's limits.
    pub limits: RunLimits,
    /// When another process is consolidating, how long to wait for it before reporting that
    /// consolidation is still pending.
    pub consolidation_wait: Duration,
    /// Retry failed jobs now, whatever their back-off and spent attempts (the user fixed the
    /// cause).
    pub retry_failed: bool,
}

/// What a host hears while a run goes on. Every method has an empty default.
pub trait RunProgress: Send + Sync {
    /// Phase 1 is about to claim up to `expected_jobs` jobs.
    fn extraction_started(&self, expected_jobs: usize) {
        let _ = expected_jobs;
    }

    /// A phase-1 job finished and its outcome is recorded.
    fn job_finished(&self, job: &JobReport) {
        let _ = job;
    }
}

/// A [`RunProgress`] heard through phase 1's observer hook.
struct ProgressObserver(Arc<dyn RunProgress>);

impl PhaseOneObserver for ProgressObserver {
    fn started(&self, expected_jobs: usize) {
        self.0.extraction_started(expected_jobs);
    }

    fn job_finished(&self, job: &JobReport) {
        self.0.job_finished(job);
    }
}

/// A run over one home's store and one folder of rollouts, after pruning and scanning.
pub struct Runner {
    store: SharedStore,
    config: MemoriesConfig,
    home: PathBuf,
    rollouts_dir: PathBuf,
    pruned: usize,
    scan: ScanReport,
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("home", &self.home)
            .field("rollouts_dir", &self.rollouts_dir)
            .field("pruned", &self.pruned)
            .finish_non_exhaustive()
    }
}

impl Runner {
    /// Opens the store `selection` names under `home`, prunes stale memories and registers the
    /// rollouts under `rollouts_dir`. Files it cannot read are listed in [`Runner::scan`].
    pub async fn prepare(
        home: &Path,
        selection: &StoreSelection,
        config: &MemoriesConfig,
        rollouts_dir: &Path,
    ) -> Result<Runner> {
        let scan_options = ScanOptions::from_config(config);
        let scan_error = |source| Error::Scan {
            dir: rollouts_dir.to_owned(),
            source: Box::new(source),
        };
        let store = open_store(home, selection).await?;
        let pruned = prune_stale_memories(store.as_ref(), config, now_unix()).await?;
        let scan = scan_rollouts(store.as_ref(), rollouts_dir, &scan_options, now_unix())
            .await
            .map_err(scan_error)?;
        Ok(Runner {
            store,
            config: config.clone(),
            home: home.to_owned(),
            rollouts_dir: rollouts_dir.to_owned(),
            pruned,
            scan,
        })
    }

    /// The store the run works on: a host that stops [`Runner::run`] early gives the leases
    /// this process holds back through it.
    pub fn store(&self) -> &SharedStore {
        &self.store
    }

    /// What the scan found.
    pub fn scan(&self) -> &ScanReport {
        &self.scan
    }

    /// How many stale memories were pruned before the scan.
    pub fn pruned(&self) -> usize {
        self.pruned
    }

    /// Phase 1 over the eligible rollouts, then phase 2, forced (new input from this run
    /// skips the success cooldown). A model that cannot serve any job (rejected key, unknown
    /// model) cannot consolidate either: phase 2 is skipped and waits for the run after the
    /// fix. A failed phase 2 is [`RunReport::phase_two_error`], so the phase-1 report is kept.
    pub async fn run(
        &self,
        models: &RunModels,
        options: &RunOptions,
        progress: Option<Arc<dyn RunProgress>>,
    ) -> Result<RunReport> {
        let config = &self.config;
        let phase_one_options = PhaseOneOptions {
            claim: ClaimParams {
                min_idle_hours: config.min_rollout_idle_hours,
                max_age_days: options.limits.max_age_days,
                // A shared store's workers take any machine's threads (from their stored
                // items); a local run keeps to the folder it scanned.
                rollout_prefix: (!self.store.is_shared()).then(|| self.scan.rollout_prefix()),
                ended_thread_ids: ended_threads(self.store.as_ref(), &self.home).await?,
                max_running: options.limits.max_running,
                ..ClaimParams::default()
            },
            max_claims: options.limits.max_claims,
            min_rate_limit_remaining_percent: config.min_rate_limit_remaining_percent,
            ..PhaseOneOptions::default()
        };
        let retried_failed = if options.retry_failed {
            self.store.retry_failed_stage_one_jobs().await?
        } else {
            0
        };
        let observer = progress
            .map(|progress| Arc::new(ProgressObserver(progress)) as Arc<dyn PhaseOneObserver>);
        let phase_one = run_phase_one(
            &self.store,
            Arc::clone(&models.extract),
            &phase_one_options,
            PhaseOneHooks {
                rate_limit: None,
                observer,
            },
        )
        .await?;
        let phase_two = if phase_one.fatal_error.is_some() {
            Ok(PhaseTwoReport {
                skipped: Some("the model cannot be used (see above)".to_owned()),
                ..PhaseTwoReport::default()
            })
        } else {
            let phase_two_options = PhaseTwoOptions {
                force: true,
                wait_for_holder: options.consolidation_wait,
                ..PhaseTwoOptions::from_config(config)
            };
            run_phase_two(
                self.store.as_ref(),
                &options.root,
                models.consolidate.as_ref(),
                &phase_two_options,
            )
            .await
        };
        let claimed: HashSet<&str> = phase_one
            .jobs
            .iter()
            .map(|job| job.thread_id.as_str())
            .collect();
        let skips = count_skips(
            self.store.as_ref(),
            &self.scan.rollout_prefix(),
            &claimed,
            &phase_one_options.claim,
            now_unix(),
        )
        .await?;
        let (phase_two, phase_two_error) = match phase_two {
            Ok(report) => (report, None),
            Err(error) => (PhaseTwoReport::default(), Some(error)),
        };
        Ok(RunReport {
            home: self.home.clone(),
            rollouts_dir: self.rollouts_dir.clone(),
            model: models.extract.name(),
            context_window: models.context_window,
            structured_output: StructuredOutputModes {
                extract: models.extract.structured_output(),
                consolidate: models.consolidate.structured_output(),
            },
            min_rate_limit_remaining_percent: config.min_rate_limit_remaining_percent,
            pruned: self.pruned,
            scan: self.scan.clone(),
            retried_failed,
            skips,
            phase_one,
            phase_two,
            phase_two_error,
        })
    }
}

/// The threads a Claude Code `SessionEnd` hook reported ended (the home's
/// [`ENDED_SESSIONS_FILE`]) and that saw no activity after their end: a resumed session waits
/// for its next end, or for the idle rule.
async fn ended_threads(store: &dyn WriteStore, home: &Path) -> Result<Vec<String>> {
    let path = home.join(ENDED_SESSIONS_FILE);
    let ended = read_ended(&path).map_err(|error| Error::Io { path, error })?;
    if ended.is_empty() {
        return Ok(Vec::new());
    }
    Ok(store
        .threads()
        .await?
        .into_iter()
        .filter(|thread| {
            ended
                .get(&thread.session.id)
                .is_some_and(|&ended_at| ended_at >= thread.last_activity_at)
        })
        .map(|thread| thread.session.id)
        .collect())
}

/// What a run did. Its serde form is the `run --json` object: the phase-1 counts, `skipped`,
/// the model and its context window, the home and folder, `phase2` ([`PhaseTwoPass`]) and the
/// failed jobs.
#[derive(Debug)]
pub struct RunReport {
    /// The home the run worked in.
    pub home: PathBuf,
    /// The folder it scanned.
    pub rollouts_dir: PathBuf,
    /// The extraction model's name.
    pub model: String,
    /// The extraction model's context window.
    pub context_window: ContextWindow,
    /// The structured-output mode each model ended on.
    pub structured_output: StructuredOutputModes,
    /// The rate-limit floor phase 1 stopped claiming at (`min_rate_limit_remaining_percent`).
    pub min_rate_limit_remaining_percent: i64,
    /// Stale memories pruned before the scan.
    pub pruned: usize,
    /// What the scan found.
    pub scan: ScanReport,
    /// Failed jobs made claimable at once by [`RunOptions::retry_failed`].
    pub retried_failed: usize,
    /// Why the rollouts not extracted were skipped.
    pub skips: SkipCounts,
    /// What phase 1 did.
    pub phase_one: PhaseOneReport,
    /// What phase 2 did (the default when it failed).
    pub phase_two: PhaseTwoReport,
    /// Why phase 2 failed, when it did.
    pub phase_two_error: Option<Error>,
}

impl RunReport {
    /// Rollouts under the run's folder not extracted in this run, for any reason
    /// ([`RunReport::skips`] counts them by reason).
    pub fn skipped(&self) -> usize {
        self.skips.total()
    }
}

/// The `phase2` object of a run's report: what a consolidation pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PhaseTwoPass {
    /// True when this process held the lease and finished a pass.
    pub ran: bool,
    /// Stage-one outputs selected.
    pub selected: usize,
    /// Memory-root files created, rewritten or removed.
    pub files_written: usize,
    /// Model calls made (0 when the inputs were unchanged).
    pub model_calls: usize,
    /// True when stored memories are not all consolidated yet (another process held the lease
    /// when this one stopped waiting, or new ones kept arriving).
    pub pending: bool,
    /// Why no pass ran, with when that ends (`null` when one ran).
    pub skipped: Option<String>,
}

impl From<&PhaseTwoReport> for PhaseTwoPass {
    fn from(report: &PhaseTwoReport) -> Self {
        PhaseTwoPass {
            ran: report.ran,
            selected: report.selected,
            files_written: report.files_written,
            model_calls: report.model_calls,
            pending: report.pending,
            skipped: report.skipped.clone(),
        }
    }
}

/// One failed job in a run's report.
#[derive(Serialize)]
struct FailureJson<'a> {
    rollout_path: &'a str,
    error: Option<&'a str>,
}

/// The serde form of [`RunReport`].
#[derive(Serialize)]
struct RunJson<'a> {
    scanned: usize,
    claimed: usize,
    succeeded: usize,
    no_output: usize,
    failed: usize,
    invalid_output: usize,
    skipped: usize,
    skipped_by_reason: &'a BTreeMap<SkipReason, usize>,
    next_retry_at: Option<i64>,
    retried_failed: usize,
    lease_lost: usize,
    skipped_rate_limit: bool,
    stopped_at_rate_limit: Option<f64>,
    released: usize,
    fatal_error: Option<&'a str>,
    model: &'a str,
    context_window: ContextWindow,
    structured_output: StructuredOutputModes,
    home: String,
    rollouts_dir: String,
    phase2: PhaseTwoPass,
    failures: Vec<FailureJson<'a>>,
}

impl Serialize for RunReport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let report = &self.phase_one;
        RunJson {
            scanned: self.scan.files,
            claimed: report.claimed,
            succeeded: report.succeeded,
            no_output: report.no_output,
            failed: report.failed,
            invalid_output: report.invalid_output,
            skipped: self.skipped(),
            skipped_by_reason: &self.skips.by_reason,
            next_retry_at: self.skips.next_retry_at,
            retried_failed: self.retried_failed,
            lease_lost: report.lease_lost,
            skipped_rate_limit: report.skipped_rate_limit,
            stopped_at_rate_limit: report.stopped_at_rate_limit,
            released: report.released,
            fatal_error: report.fatal_error.as_deref(),
            model: &self.model,
            context_window: self.context_window,
            structured_output: self.structured_output,
            home: self.home.display().to_string(),
            rollouts_dir: self.rollouts_dir.display().to_string(),
            phase2: PhaseTwoPass::from(&self.phase_two),
            failures: report
                .jobs
                .iter()
                .filter(|job| job.outcome == JobOutcome::Failed)
                .map(|job| FailureJson {
                    rollout_path: &job.rollout_path,
                    error: job.message.as_deref(),
                })
                .collect(),
        }
        .serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use memory_protocol::ContextWindowSource;

    use super::*;
    use memory_config::{Config, Origin};

    fn limits(
        folder: RolloutFolder,
        limit: Option<u64>,
        age: Option<u64>,
        config_text: &str,
    ) -> RunLimits {
        let no_env: [(&str, &str); 0] = [];
        let config = Config::parse(config_text, Origin::Text)
            .unwrap()
            .with_environment(no_env)
            .section::<MemoriesConfig>()
            .unwrap()
            .value;
        RunLimits::new(folder, limit, age, &config)
    }

    #[test]
    fn a_given_folder_has_no_limits_unless_an_option_or_the_file_sets_them() {
        let open = limits(RolloutFolder::Given, None, None, "");
        assert_eq!(open, RunLimits::default());
        let options = limits(RolloutFolder::Given, Some(5), Some(3), "");
        assert_eq!(
            (options.max_claims, options.max_age_days),
            (Some(5), Some(3))
        );
        let file = limits(
            RolloutFolder::Given,
            None,
            None,
            "[memories]\nmax_rollouts_per_startup = 4\nmax_rollout_age_days = 200\n",
        );
        assert_eq!((file.max_claims, file.max_age_days), (Some(4), Some(90)));
        let both = limits(
            RolloutFolder::Given,
            Some(7),
            None,
            "[memories]\nmax_rollouts_per_startup = 4\n",
        );
        assert_eq!(both.max_claims, Some(7), "options override the file");
    }

    #[test]
    fn codex_sessions_get_codex_startup_limits() {
        let startup = limits(RolloutFolder::CodexSessions, None, None, "");
        assert_eq!(
            startup,
            RunLimits {
                max_claims: Some(2),
                max_age_days: Some(10),
                max_running: Some(2),
            }
        );
        let options = limits(
            RolloutFolder::CodexSessions,
            Some(9),
            None,
            "[memories]\nmax_rollout_age_days = 1\n",
        );
        assert_eq!(
            (options.max_claims, options.max_age_days),
            (Some(9), Some(1))
        );
    }

    #[test]
    fn the_report_serializes_to_the_documented_run_object() {
        let report = RunReport {
            home: PathBuf::from("/h"),
            rollouts_dir: PathBuf::from("/r"),
            model: "offline".to_owned(),
            context_window: ContextWindow {
                tokens: Some(8000),
                source: ContextWindowSource::KnownModel,
            },
            structured_output: StructuredOutputModes {
                extract: Some(StructuredOutputMode::JsonObject),
                consolidate: None,
            },
            min_rate_limit_remaining_percent: 25,
            pruned: 2,
            scan: ScanReport {
                files: 6,
                ..ScanReport::default()
            },
            retried_failed: 0,
            skips: SkipCounts {
                by_reason: BTreeMap::from([(SkipReason::BackingOff, 1)]),
                next_retry_at: Some(1_800_000_000),
            },
            phase_one: PhaseOneReport {
                claimed: 5,
                succeeded: 3,
                no_output: 1,
                failed: 1,
                jobs: vec![JobReport {
                    thread_id: "t".to_owned(),
                    rollout_path: "/r/a.jsonl".to_owned(),
                    outcome: JobOutcome::Failed,
                    message: Some("timed out".to_owned()),
                    usage: None,
                    invalid_output: false,
                }],
                ..PhaseOneReport::default()
            },
            phase_two: PhaseTwoReport {
                ran: true,
                selected: 3,
                skipped: Some("cooling down".to_owned()),
                ..PhaseTwoReport::default()
            },
            phase_two_error: None,
        };
        assert_eq!(
            serde_json::to_value(&report).unwrap(),
            serde_json::json!({
                "scanned": 6, "claimed": 5, "succeeded": 3, "no_output": 1, "failed": 1,
                "invalid_output": 0, "skipped": 1, "skipped_by_reason": {"backing_off": 1},
                "next_retry_at": 1_800_000_000_i64, "retried_failed": 0,
                "lease_lost": 0, "skipped_rate_limit": false,
                "stopped_at_rate_limit": null, "released": 0, "fatal_error": null,
                "model": "offline",
                "context_window": {"tokens": 8000, "source": "known_model"},
                "structured_output": {"extract": "json_object", "consolidate": null},
                "home": "/h", "rollouts_dir": "/r",
                "phase2": {
                    "ran": true, "selected": 3, "files_written": 0, "model_calls": 0,
                    "pending": false, "skipped": "cooling down"
                },
                "failures": [{"rollout_path": "/r/a.jsonl", "error": "timed out"}],
            })
        );
    }
}
