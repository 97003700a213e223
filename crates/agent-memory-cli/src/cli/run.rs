//! `agent-memory run`: the main job. Scans a folder of rollouts, extracts memories from the
//! eligible ones (phase 1), and reports what it did.
//!
//! With no folder it reads codex's sessions (`$CODEX_HOME/sessions`, default
//! `~/.codex/sessions`) and behaves as a host agent at startup: at most
//! `max_rollouts_per_startup` rollouts, the age and idle rules. Given a folder, it processes
//! every rollout there that passes the idle rule, unless `--limit`, `--max-age-days` or the
//! config file set a limit. `--codex` also writes the memory root into codex's
//! (`$CODEX_HOME/memories`), where codex's read path finds it. Stale memories are pruned
//! before anything is extracted.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use agent_memory::write::config::{MemoriesConfig, MemoriesToml};
use agent_memory::write::housekeeping::prune_stale_memories;
use agent_memory::write::phase_one::{JobOutcome, JobReport, PhaseOneHooks, PhaseOneObserver};
use agent_memory::write::phase_two::DEFAULT_PRUNE_LIMIT;
use agent_memory::write::phase_two::{PhaseTwoOptions, PhaseTwoReport, run_phase_two};
use agent_memory::write::store::{ClaimParams, SharedStore, WriteStore, now_unix};
use agent_memory::write::store_selection::{StoreSelection, open_store};
use agent_memory::write::{
    AsyncStateStore, PhaseOneOptions, PhaseOneReport, ScanOptions, ScanReport, StateStore,
    run_phase_one, scan_rollouts, scan_rollouts_into,
};
use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};

use agent_memory::models::DEFAULT_MODEL_SPEC;
use agent_memory::protocol::{ContextWindow, ContextWindowSource};
use agent_memory::sanitize::{display_safe, redact_secrets};

use super::codex::{self, RootArgs};
use super::exit::{self, print_json, print_safe};
use super::home::{CommonArgs, build, load_config, resolve_home, runtime};
use super::interrupt::until_signal;
use super::json::Phase2Json;

/// Arguments of `agent-memory run`.
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// Folder of rollout files (default: $CODEX_HOME/sessions, with codex's startup limits).
    #[arg(conflicts_with = "codex")]
    rollouts_dir: Option<PathBuf>,
    /// Read codex's sessions and write the memory root into $CODEX_HOME/memories (default
    /// ~/.codex/memories), in codex's layout, for codex's own read path.
    #[arg(long)]
    codex: bool,
    #[command(flatten)]
    common: CommonArgs,
    /// Print one JSON object instead of a summary.
    #[arg(long)]
    json: bool,
    /// Most rollouts to extract in this run.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    limit: Option<u64>,
    /// Only rollouts active within this many days.
    #[arg(long)]
    max_age_days: Option<u64>,
    /// When another process is consolidating, wait this many seconds for it before reporting
    /// that consolidation is still pending.
    #[arg(long, default_value_t = DEFAULT_CONSOLIDATION_WAIT_SECS)]
    consolidation_wait: u64,
    #[command(flatten)]
    store: super::store::StoreArgs,
}

/// How long `run` waits for another process's consolidation by default.
pub(crate) const DEFAULT_CONSOLIDATION_WAIT_SECS: u64 = 120;

pub(crate) fn run(args: RunArgs) -> ExitCode {
    match execute(args) {
        Ok(Finished::Clean) => ExitCode::SUCCESS,
        Ok(Finished::JobsFailed) => ExitCode::from(exit::JOBS_FAILED),
        Err(e) => exit::report_error(&e),
    }
}

/// How a run that printed its summary ended.
enum Finished {
    Clean,
    /// At least one job failed (exit code [`exit::JOBS_FAILED`]).
    JobsFailed,
}

fn execute(args: RunArgs) -> anyhow::Result<Finished> {
    let home = resolve_home(args.common.home.as_deref())?;
    let loaded = load_config(args.common.config.as_deref(), &home)?;
    let (file, config) = (&loaded.file, &loaded.memories);
    let (rollouts_dir, explicit) = match &args.rollouts_dir {
        Some(dir) => (dir.clone(), true),
        None => (codex::sessions_dir()?, false),
    };
    let root = RootArgs { codex: args.codex }.memory_root(&home)?;
    let plan = RunPlan::new(&args, file, config, explicit);
    let spec = args
        .common
        .model
        .clone()
        .or_else(|| config.extract_model.clone())
        .unwrap_or_else(|| DEFAULT_MODEL_SPEC.to_owned());
    let model_options = args.common.model_options(&loaded.model);
    let runtime = runtime()?;
    let built = build(&runtime, &spec, &model_options)?;
    let (model, context_window) = (built.client, built.context_window);

    let selection = args.store.selection(&loaded.store);
    let (store, pruned, scan) = open_and_scan(&runtime, &home, &selection, config, &rollouts_dir)?;
    for (path, reason) in &scan.unreadable {
        let warning = format!("warning: skipped {}: {reason}", path.display());
        eprintln!("{}", display_safe(&redact_secrets(&warning)));
    }

    let options = PhaseOneOptions {
        claim: ClaimParams {
            min_idle_hours: config.min_rollout_idle_hours,
            max_age_days: plan.max_age_days,
            // A shared store's workers take any machine's threads (from their stored items);
            // a local run keeps to the folder it scanned.
            rollout_prefix: (!store.is_shared()).then(|| scan.rollout_prefix()),
            max_running: plan.max_running,
            ..ClaimParams::default()
        },
        max_claims: plan.max_claims,
        min_rate_limit_remaining_percent: config.min_rate_limit_remaining_percent,
        ..PhaseOneOptions::default()
    };
    let observer = (!args.json && std::io::stderr().is_terminal())
        .then(|| Arc::new(Progress::default()) as Arc<dyn PhaseOneObserver>);
    let consolidation_model = match &config.consolidation_model {
        Some(spec) if args.common.model.is_none() => build(&runtime, spec, &model_options)?.client,
        _ => Arc::clone(&model),
    };
    // Phase 2 ends the run, forced: new input from this run skips the success cooldown.
    let phase_two_options = PhaseTwoOptions {
        force: true,
        wait_for_holder: Duration::from_secs(args.consolidation_wait),
        ..PhaseTwoOptions::from_config(config)
    };
    let work = async {
        let report = run_phase_one(
            &store,
            Arc::clone(&model),
            &options,
            PhaseOneHooks {
                rate_limit: None,
                observer: observer.clone(),
            },
        )
        .await?;
        // A model that cannot serve any job (rejected key, unknown model) cannot consolidate
        // either: phase 2 waits for the run after the fix.
        let phase_two = if report.fatal_error.is_some() {
            Ok(PhaseTwoReport {
                skipped: Some("the model cannot be used (see above)".to_owned()),
                ..PhaseTwoReport::default()
            })
        } else {
            run_phase_two(
                store.as_ref(),
                &root,
                consolidation_model.as_ref(),
                &phase_two_options,
            )
            .await
        };
        Ok((report, phase_two))
    };
    // Ctrl-C or SIGTERM gives back every held lease before exiting.
    let (report, phase_two) = runtime.block_on(until_signal(store.as_ref(), work))?;
    drop(observer);

    if pruned > 0 && !args.json {
        println!("pruned {pruned} stale memories before extracting");
    }
    let summary = Summary {
        home: &home,
        rollouts_dir: &rollouts_dir,
        model: model.name(),
        context_window,
        min_rate_limit_remaining_percent: config.min_rate_limit_remaining_percent,
        scan: &scan,
        phase_one: &report,
        phase_two: phase_two.as_ref().ok().cloned().unwrap_or_default(),
    };
    if args.json {
        print_json(summary.json());
    } else {
        print_safe(&summary.text());
        if args.codex {
            print_safe(&format!("memory root: {}\n", root.dir().display()));
        }
    }
    if let Some(fatal) = &report.fatal_error {
        bail!(
            "the model cannot be used: {fatal}\n{} job(s) were given back without spending an \
             attempt; fix the cause and run again to process them",
            report.released
        );
    }
    phase_two.context("phase 2 (consolidation) failed")?;
    Ok(if report.failed > 0 {
        Finished::JobsFailed
    } else {
        Finished::Clean
    })
}

/// The store a run works on, after pruning stale memories and registering the rollouts under
/// `rollouts_dir`. Returns the store, how many memories were pruned and the scan.
fn open_and_scan(
    runtime: &tokio::runtime::Runtime,
    home: &Path,
    selection: &StoreSelection,
    config: &MemoriesConfig,
    rollouts_dir: &Path,
) -> anyhow::Result<(SharedStore, usize, ScanReport)> {
    let scan_options = ScanOptions::from_config(config);
    if selection.url.is_none() {
        // The embedded default, exactly as before: synchronous pruning and scanning.
        let mut store = StateStore::open_home(home)?;
        let pruned = prune_stale_memories(&mut store, config, now_unix())?;
        let scan = scan_rollouts(&mut store, rollouts_dir, &scan_options, now_unix())
            .with_context(|| format!("cannot scan {}", rollouts_dir.display()))?;
        return Ok((Arc::new(AsyncStateStore::new(store)), pruned, scan));
    }
    runtime.block_on(async {
        let store = open_store(home, selection).await?;
        let pruned = store
            .prune_phase_two_outputs(now_unix(), config.max_unused_days, DEFAULT_PRUNE_LIMIT)
            .await?;
        let scan = scan_rollouts_into(store.as_ref(), rollouts_dir, &scan_options, now_unix())
            .await
            .with_context(|| format!("cannot scan {}", rollouts_dir.display()))?;
        Ok((store, pruned, scan))
    })
}

/// The limits of one run.
struct RunPlan {
    max_claims: Option<usize>,
    max_age_days: Option<i64>,
    max_running: Option<u32>,
}

impl RunPlan {
    /// A folder given explicitly has no age or per-run limit unless a flag or the config file
    /// sets one; the default sessions folder gets codex's startup limits (flags still win).
    fn new(args: &RunArgs, file: &MemoriesToml, config: &MemoriesConfig, explicit: bool) -> Self {
        let per_run = usize::try_from(config.max_rollouts_per_startup).unwrap_or(1);
        let limit = args.limit.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        let age = args
            .max_age_days
            .map(|days| i64::try_from(days).unwrap_or(i64::MAX));
        if explicit {
            RunPlan {
                max_claims: limit.or(file.max_rollouts_per_startup.map(|_| per_run)),
                max_age_days: age.or(file
                    .max_rollout_age_days
                    .map(|_| config.max_rollout_age_days)),
                max_running: None,
            }
        } else {
            RunPlan {
                max_claims: Some(limit.unwrap_or(per_run)),
                max_age_days: Some(age.unwrap_or(config.max_rollout_age_days)),
                // As codex does at startup: the per-run limit also caps jobs running at once
                // across processes.
                max_running: Some(u32::try_from(per_run).unwrap_or(u32::MAX)),
            }
        }
    }
}

/// A progress bar on stderr, shown only on a terminal.
#[derive(Default)]
struct Progress {
    bar: std::sync::OnceLock<ProgressBar>,
}

impl PhaseOneObserver for Progress {
    fn started(&self, expected_jobs: usize) {
        let bar = ProgressBar::new(u64::try_from(expected_jobs).unwrap_or(u64::MAX));
        if let Ok(style) =
            ProgressStyle::with_template("{spinner} extracting [{bar:30}] {pos}/{len} {msg}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        let _ = self.bar.set(bar);
    }

    fn job_finished(&self, job: &JobReport) {
        if let Some(bar) = self.bar.get() {
            bar.inc(1);
            if job.outcome == JobOutcome::Failed {
                bar.set_message(format!("(last failure: {})", short_name(&job.rollout_path)));
            }
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.get() {
            bar.finish_and_clear();
        }
    }
}

fn short_name(path: &str) -> &str {
    Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(path)
}

struct Summary<'a> {
    home: &'a Path,
    rollouts_dir: &'a Path,
    model: String,
    context_window: ContextWindow,
    min_rate_limit_remaining_percent: i64,
    scan: &'a ScanReport,
    phase_one: &'a PhaseOneReport,
    phase_two: PhaseTwoReport,
}

impl Summary<'_> {
    /// Rollouts found but not extracted in this run, for any reason (source, idle or age
    /// rule, already up to date, backing off, per-run limit).
    fn skipped(&self) -> usize {
        self.scan.files.saturating_sub(self.phase_one.claimed)
    }

    fn json(&self) -> serde_json::Value {
        let report = self.phase_one;
        serde_json::json!({
            "scanned": self.scan.files,
            "claimed": report.claimed,
            "succeeded": report.succeeded,
            "no_output": report.no_output,
            "failed": report.failed,
            "skipped": self.skipped(),
            "lease_lost": report.lease_lost,
            "skipped_rate_limit": report.skipped_rate_limit,
            "stopped_at_rate_limit": report.stopped_at_rate_limit,
            "released": report.released,
            "fatal_error": report.fatal_error,
            "model": self.model,
            "context_window": self.context_window,
            "home": self.home.display().to_string(),
            "rollouts_dir": self.rollouts_dir.display().to_string(),
            "phase2": Phase2Json::from(&self.phase_two),
            "failures": report.jobs.iter()
                .filter(|job| job.outcome == JobOutcome::Failed)
                .map(|job| serde_json::json!({
                    "rollout_path": job.rollout_path,
                    "error": job.message,
                }))
                .collect::<Vec<_>>(),
        })
    }

    fn text(&self) -> String {
        let report = self.phase_one;
        let mut out = format!(
            "scanned {} rollouts in {}\n",
            self.scan.files,
            self.rollouts_dir.display()
        );
        if report.skipped_rate_limit {
            out.push_str("phase 1 skipped: too little rate limit left\n");
        }
        if let Some(tokens) = self.context_window.tokens {
            let source = match self.context_window.source {
                ContextWindowSource::Configured => "configured",
                ContextWindowSource::Server => "reported by the server",
                ContextWindowSource::KnownModel => "known model",
                ContextWindowSource::Default => "default",
            };
            out.push_str(&format!("context window: {tokens} tokens ({source})\n"));
        }
        out.push_str(&format!(
            "phase 1 ({}): processed {}: {} stored, {} with nothing worth keeping, {} failed\n",
            self.model, report.claimed, report.succeeded, report.no_output, report.failed
        ));
        if let Some(remaining) = report.stopped_at_rate_limit {
            out.push_str(&format!(
                "phase 1 stopped claiming: the server reports {remaining:.1}% of the rate limit \
                 left, below min_rate_limit_remaining_percent = {}\n",
                self.min_rate_limit_remaining_percent
            ));
        }
        if report.released > 0 {
            out.push_str(&format!(
                "  {} given back unspent: the model cannot be used\n",
                report.released
            ));
        }
        if report.lease_lost > 0 {
            out.push_str(&format!(
                "  {} taken over by another process before finishing\n",
                report.lease_lost
            ));
        }
        let never: usize = self.scan.skipped_sources.values().sum();
        let waiting = self.skipped().saturating_sub(never);
        let mut reasons = Vec::new();
        if waiting > 0 {
            reasons.push(format!(
                "{waiting} up to date, not idle yet, too old, backing off or over the limit"
            ));
        }
        if never > 0 {
            let sources: Vec<String> = self
                .scan
                .skipped_sources
                .iter()
                .map(|(reason, count)| format!("{reason} x{count}"))
                .collect();
            reasons.push(format!("{never} never extracted ({})", sources.join(", ")));
        }
        if !reasons.is_empty() {
            out.push_str(&format!(
                "skipped {}: {}\n",
                self.skipped(),
                reasons.join("; ")
            ));
        }
        for job in &report.jobs {
            if job.outcome == JobOutcome::Failed {
                let message = job.message.as_deref().unwrap_or("unknown error");
                out.push_str(&format!("  failed: {}: {message}\n", job.rollout_path));
            }
        }
        out.push_str(&super::consolidate::summary_text(
            &self.phase_two,
            &self.model,
        ));
        out.push_str(&format!("home: {}\n", self.home.display()));
        out
    }
}

#[cfg(test)]
mod tests {
    use agent_memory::write::config::parse_config;
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: RunArgs,
    }

    fn plan(argv: &[&str], config_text: &str) -> RunPlan {
        let args = Wrapper::try_parse_from(std::iter::once("run").chain(argv.iter().copied()))
            .unwrap()
            .args;
        let file = parse_config(config_text).unwrap();
        let (config, _) = MemoriesConfig::resolve(&file);
        RunPlan::new(&args, &file, &config, args.rollouts_dir.is_some())
    }

    #[test]
    fn an_explicit_folder_has_no_limits_unless_a_flag_or_the_file_sets_them() {
        let open = plan(&["dir"], "");
        assert_eq!(
            (open.max_claims, open.max_age_days, open.max_running),
            (None, None, None)
        );
        let flags = plan(&["dir", "--limit", "5", "--max-age-days", "3"], "");
        assert_eq!((flags.max_claims, flags.max_age_days), (Some(5), Some(3)));
        let file = plan(
            &["dir"],
            "[memories]\nmax_rollouts_per_startup = 4\nmax_rollout_age_days = 200\n",
        );
        assert_eq!((file.max_claims, file.max_age_days), (Some(4), Some(90)));
        let both = plan(
            &["dir", "--limit", "7"],
            "[memories]\nmax_rollouts_per_startup = 4\n",
        );
        assert_eq!(both.max_claims, Some(7), "flags override the file");
    }

    #[test]
    fn the_default_folder_gets_codex_startup_limits() {
        let startup = plan(&[], "");
        assert_eq!(
            (
                startup.max_claims,
                startup.max_age_days,
                startup.max_running
            ),
            (Some(2), Some(10), Some(2))
        );
        let flags = plan(&["--limit", "9"], "[memories]\nmax_rollout_age_days = 1\n");
        assert_eq!((flags.max_claims, flags.max_age_days), (Some(9), Some(1)));
        assert!(Wrapper::try_parse_from(["run", "--limit", "0"]).is_err());
    }

    #[test]
    fn the_json_summary_has_the_documented_keys() {
        let scan = ScanReport {
            files: 6,
            ..ScanReport::default()
        };
        let phase_one = PhaseOneReport {
            claimed: 5,
            succeeded: 4,
            no_output: 1,
            ..PhaseOneReport::default()
        };
        let summary = Summary {
            home: Path::new("/h"),
            rollouts_dir: Path::new("/r"),
            model: "offline".to_owned(),
            context_window: ContextWindow {
                tokens: None,
                source: ContextWindowSource::Default,
            },
            min_rate_limit_remaining_percent: 25,
            scan: &scan,
            phase_one: &phase_one,
            phase_two: PhaseTwoReport::default(),
        };
        let json = summary.json();
        for (key, value) in [
            ("scanned", 6),
            ("claimed", 5),
            ("succeeded", 4),
            ("no_output", 1),
            ("failed", 0),
            ("skipped", 1),
        ] {
            assert_eq!(json[key], value, "{key}");
        }
        assert_eq!(json["model"], "offline");
        assert_eq!(json["home"], "/h");
        assert!(summary.text().contains("processed 5: 4 stored"));
    }
}
