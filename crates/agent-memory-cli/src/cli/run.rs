//! `agent-memory run`: the main job. Scans a folder of rollouts, extracts memories from the
//! eligible ones (phase 1), and reports what it did.
//!
//! With no folder it reads codex's sessions (`$CODEX_HOME/sessions`, default
//! `~/.codex/sessions`) and behaves as a host agent at startup: at most
//! `max_rollouts_per_startup` rollouts, the age and idle rules. Given a folder, it processes
//! every rollout there that passes the idle rule, unless `--limit`, `--max-age-days` or the
//! config file set a limit. `--claude` reads Claude Code's sessions
//! (`$CLAUDE_CONFIG_DIR/projects`, default `~/.claude/projects`) with the same startup limits;
//! a folder may hold either agent's files. `--codex` also writes the memory root into codex's
//! (`$CODEX_HOME/memories`), where codex's read path finds it. Stale memories are pruned
//! before anything is extracted. The pipeline is [`agent_memory::write::runner::Runner`]'s;
//! this module parses the options, shows progress and prints the report.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use agent_memory::prompts::introspect::format_utc;
use agent_memory::write::codex_home::{CodexLease, hold_consolidation_lease};
use agent_memory::write::phase_one::{JobOutcome, JobReport};
use agent_memory::write::runner::{
    RolloutFolder, RunLimits, RunModels, RunOptions, RunProgress, RunReport, Runner,
};
use agent_memory::write::skip_reason::SkipReason;
use agent_memory::write::store::now_unix;
use indicatif::{ProgressBar, ProgressStyle};

use agent_memory::models::DEFAULT_MODEL_SPEC;
use agent_memory::protocol::{ContextWindowSource, StructuredOutputMode};
use agent_memory::sanitize::{display_safe, redact_secrets};

use super::claude;
use super::codex::{self, RootArgs};
use super::exit::{self, outln, print_json, print_safe};
use super::home::{CommonArgs, build, load_config, options_for_config_spec, resolve_home, runtime};
use super::interrupt::until_signal;

/// Arguments of `agent-memory run`.
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// Folder of rollout files, codex's or Claude Code's (default: $CODEX_HOME/sessions, with
    /// codex's startup limits).
    #[arg(conflicts_with_all = ["codex", "claude"])]
    rollouts_dir: Option<PathBuf>,
    /// Read codex's sessions and write the memory root into $CODEX_HOME/memories (default
    /// ~/.codex/memories), in codex's layout, for codex's own read path.
    #[arg(long)]
    codex: bool,
    /// Read Claude Code's sessions ($CLAUDE_CONFIG_DIR/projects, default ~/.claude/projects)
    /// with codex's startup limits.
    #[arg(long, conflicts_with = "codex")]
    claude: bool,
    #[command(flatten)]
    common: CommonArgs,
    /// Print one JSON object instead of a summary.
    #[arg(long)]
    json: bool,
    /// Most rollouts to extract in this run.
    #[arg(long, value_parser = super::home::at_least(1))]
    limit: Option<u64>,
    /// Only rollouts active within this many days.
    #[arg(long)]
    max_age_days: Option<u64>,
    /// When another process is consolidating, wait this many seconds for it before reporting
    /// that consolidation is still pending.
    #[arg(long, default_value_t = DEFAULT_CONSOLIDATION_WAIT_SECS)]
    consolidation_wait: u64,
    /// Retry failed jobs now, ignoring their back-off and spent attempts (after fixing what
    /// made them fail: a server not started, a wrong key or model).
    #[arg(long)]
    retry_failed: bool,
    #[command(flatten)]
    store: super::store::StoreArgs,
}

/// How long `run` waits for another process's consolidation by default.
pub(crate) const DEFAULT_CONSOLIDATION_WAIT_SECS: u64 = 120;

pub(crate) fn run(args: RunArgs) -> ExitCode {
    let json = args.json;
    match execute(args) {
        Ok(Finished::Clean) => ExitCode::SUCCESS,
        Ok(Finished::FailedAfterReport(error)) => exit::report_error(&error),
        Err(e) => exit::report_error_as(&e, json),
    }
}

/// How a run that printed its summary ended.
enum Finished {
    Clean,
    /// The run stopped on an error, or some of its jobs failed, after its report was printed
    /// (exit code 1).
    FailedAfterReport(anyhow::Error),
}

fn execute(args: RunArgs) -> anyhow::Result<Finished> {
    let home = resolve_home(args.common.home.as_deref())?;
    let loaded = load_config(args.common.config.as_deref(), &home)?;
    let config = &loaded.memories;
    let (rollouts_dir, folder) = match &args.rollouts_dir {
        Some(dir) => (dir.clone(), RolloutFolder::Given),
        None if args.claude => (claude::projects_dir()?, RolloutFolder::ClaudeCodeProjects),
        None => (codex::sessions_dir()?, RolloutFolder::CodexSessions),
    };
    let root = RootArgs { codex: args.codex }.memory_root(&home)?;
    // Codex's own start-up consolidation would undo what this run writes into its folder.
    let codex_lease = match args.codex {
        true => Some(hold_consolidation_lease(&codex::codex_home()?, now_unix())?),
        false => None,
    };
    let limits = RunLimits::new(folder, args.limit, args.max_age_days, config);
    let spec = args
        .common
        .model
        .clone()
        .or_else(|| config.extract_model.clone())
        .unwrap_or_else(|| DEFAULT_MODEL_SPEC.to_owned());
    let model_options = args.common.model_options(&loaded.model);
    let runtime = runtime()?;
    let extract_options = match &args.common.model {
        Some(_) => model_options.clone(),
        None => options_for_config_spec(&spec, &model_options),
    };
    let built = build(&runtime, &spec, &extract_options)?;

    let selection = args.store.selection(&loaded.store);
    let runner = runtime.block_on(Runner::prepare(&home, &selection, config, &rollouts_dir))?;
    for (path, reason) in &runner.scan().unreadable {
        let warning = format!("warning: skipped {}: {reason}", path.display());
        eprintln!("{}", display_safe(&redact_secrets(&warning)));
    }

    let progress = (!args.json && std::io::stderr().is_terminal())
        .then(|| Arc::new(Progress::default()) as Arc<dyn RunProgress>);
    let consolidate = match &config.consolidation_model {
        Some(spec) if args.common.model.is_none() => {
            build(
                &runtime,
                spec,
                &options_for_config_spec(spec, &model_options),
            )?
            .client
        }
        _ => Arc::clone(&built.client),
    };
    let models = RunModels {
        extract: built.client,
        context_window: built.context_window,
        consolidate,
    };
    let options = RunOptions {
        root: root.clone(),
        limits,
        consolidation_wait: Duration::from_secs(args.consolidation_wait),
        retry_failed: args.retry_failed,
    };
    let work = async { Ok(runner.run(&models, &options, progress.clone()).await?) };
    // Ctrl-C or SIGTERM gives back every held lease before exiting.
    let report = runtime.block_on(until_signal(runner.store().as_ref(), work))?;
    drop(progress);

    if runner.pruned() > 0 && !args.json {
        outln!(
            "pruned {} stale memories before extracting",
            runner.pruned()
        );
    }
    if args.json {
        let mut value = serde_json::to_value(&report)?;
        if let (Some(lease), Some(object)) = (&codex_lease, value.as_object_mut()) {
            object.insert("codex_consolidation".to_owned(), lease_json(lease));
        }
        print_json(value);
    } else {
        print_safe(&summary_text(&report));
        if args.codex {
            print_safe(&format!("memory root: {}\n", root.dir().display()));
        }
        if let Some(lease) = &codex_lease {
            print_safe(&lease_text(lease));
        }
    }
    let phase_one = &report.phase_one;
    // The report is on stdout already (with `--json`, the one object): these errors go to
    // stderr only.
    if let Some(fatal) = &phase_one.fatal_error {
        return Ok(Finished::FailedAfterReport(anyhow::anyhow!(
            "the model cannot be used: {fatal}\n{} job(s) were given back without spending an \
             attempt; fix the cause and run again to process them",
            phase_one.released
        )));
    }
    if let Some(error) = report.phase_two_error {
        return Ok(Finished::FailedAfterReport(
            anyhow::Error::new(error).context("phase 2 (consolidation) failed"),
        ));
    }
    if phase_one.failed > 0 {
        return Ok(Finished::FailedAfterReport(anyhow::anyhow!(
            "{} job(s) failed: `agent-memory status` lists them with their errors; a later run \
             retries them after their back-off, `run --retry-failed` at once",
            phase_one.failed
        )));
    }
    Ok(Finished::Clean)
}

/// What `run --codex` says about codex's consolidation lease.
fn lease_text(lease: &CodexLease) -> String {
    match lease {
        CodexLease::Held(db) => format!(
            "codex's own consolidation: held off (agent-memory holds its lease in {})\n",
            db.display()
        ),
        CodexLease::NoDatabase(db) => format!(
            "codex's own consolidation: {} does not exist yet; codex's first start-up with \
             memories on may rewrite the folder once: run `agent-memory run --codex` again after it\n",
            db.display()
        ),
    }
}

/// The `codex_consolidation` member of `run --codex --json`.
fn lease_json(lease: &CodexLease) -> serde_json::Value {
    match lease {
        CodexLease::Held(db) => serde_json::json!({"lease": "held", "database": db}),
        CodexLease::NoDatabase(db) => serde_json::json!({"lease": "no_database", "database": db}),
    }
}

/// A progress bar on stderr, shown only on a terminal.
#[derive(Default)]
struct Progress {
    bar: std::sync::OnceLock<ProgressBar>,
}

impl RunProgress for Progress {
    fn extraction_started(&self, expected_jobs: usize) {
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

/// The text summary of a run.
fn summary_text(run: &RunReport) -> String {
    let report = &run.phase_one;
    let mut out = format!(
        "scanned {} rollouts in {}\n",
        run.scan.files,
        run.rollouts_dir.display()
    );
    if report.skipped_rate_limit {
        out.push_str("phase 1 skipped: too little rate limit left\n");
    }
    if let Some(tokens) = run.context_window.tokens {
        let source = match run.context_window.source {
            ContextWindowSource::Configured => "configured",
            ContextWindowSource::Server => "reported by the server",
            ContextWindowSource::KnownModel => "known model",
            ContextWindowSource::Default => "default",
        };
        out.push_str(&format!("context window: {tokens} tokens ({source})\n"));
    }
    out.push_str(&format!(
        "phase 1 ({}): processed {}: {} stored, {} with nothing worth keeping, {} failed\n",
        run.model, report.claimed, report.succeeded, report.no_output, report.failed
    ));
    if report.invalid_output > 0 {
        out.push_str(&format!(
            "  {} of the failed answered with output that does not match the schema\n",
            report.invalid_output
        ));
    }
    if let Some(mode) = run
        .structured_output
        .extract
        .filter(|mode| *mode != StructuredOutputMode::JsonSchema)
    {
        out.push_str(&format!(
            "  structured output: {mode} (the server refused a stricter format or the config asked for it)\n"
        ));
    }
    if let Some(remaining) = report.stopped_at_rate_limit {
        out.push_str(&format!(
            "phase 1 stopped claiming: the server reports {remaining:.1}% of the rate limit \
             left, below min_rate_limit_remaining_percent = {}\n",
            run.min_rate_limit_remaining_percent
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
    if run.retried_failed > 0 {
        out.push_str(&format!(
            "retried {} failed job(s) now (--retry-failed)\n",
            run.retried_failed
        ));
    }
    if let Some(line) = skipped_line(run) {
        out.push_str(&line);
    }
    for job in &report.jobs {
        if job.outcome == JobOutcome::Failed {
            let message = job.message.as_deref().unwrap_or("unknown error");
            out.push_str(&format!("  failed: {}: {message}\n", job.rollout_path));
        }
    }
    out.push_str(&super::consolidate::summary_text(
        &run.phase_two,
        &run.model,
    ));
    out.push_str(&format!("home: {}\n", run.home.display()));
    out
}

/// `skipped N: ...`, each reason with its count, or `None` when nothing was skipped.
fn skipped_line(run: &RunReport) -> Option<String> {
    let skips = &run.skips;
    let mut reasons = Vec::new();
    for reason in SkipReason::ALL {
        let count = skips.count(reason);
        if count == 0 {
            continue;
        }
        let mut text = format!("{count} {}", reason.describe());
        match reason {
            SkipReason::Excluded if !run.scan.skipped_sources.is_empty() => {
                let sources: Vec<String> = run
                    .scan
                    .skipped_sources
                    .iter()
                    .map(|(source, count)| format!("{source} x{count}"))
                    .collect();
                text.push_str(&format!(" ({})", sources.join(", ")));
            }
            SkipReason::BackingOff => {
                if let Some(at) = skips.next_retry_at {
                    text.push_str(&format!(" (next retry {}", format_utc(at)));
                    text.push_str("; --retry-failed retries now)");
                }
            }
            SkipReason::GaveUp => {
                text.push_str(" (waits for the rollout to change; --retry-failed retries now)")
            }
            _ => {}
        }
        reasons.push(text);
    }
    let total = skips.total();
    (total > 0).then(|| format!("skipped {total}: {}\n", reasons.join("; ")))
}

#[cfg(test)]
mod tests {
    use agent_memory::protocol::ContextWindow;
    use agent_memory::write::phase_two::PhaseTwoReport;
    use agent_memory::write::{PhaseOneReport, ScanReport};
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: RunArgs,
    }

    #[test]
    fn a_limit_of_zero_is_refused() {
        assert!(Wrapper::try_parse_from(["run", "--limit", "0"]).is_err());
        assert!(Wrapper::try_parse_from(["run", "--limit", "1"]).is_ok());
    }

    #[test]
    fn the_json_summary_has_the_documented_keys() {
        let report = RunReport {
            home: PathBuf::from("/h"),
            rollouts_dir: PathBuf::from("/r"),
            model: "offline".to_owned(),
            context_window: ContextWindow {
                tokens: None,
                source: ContextWindowSource::Default,
            },
            structured_output: Default::default(),
            min_rate_limit_remaining_percent: 25,
            pruned: 0,
            scan: ScanReport {
                files: 6,
                ..ScanReport::default()
            },
            retried_failed: 0,
            skips: agent_memory::write::skip_reason::SkipCounts {
                by_reason: [(SkipReason::NotIdle, 1)].into(),
                next_retry_at: None,
            },
            phase_one: PhaseOneReport {
                claimed: 5,
                succeeded: 4,
                no_output: 1,
                ..PhaseOneReport::default()
            },
            phase_two: PhaseTwoReport::default(),
            phase_two_error: None,
        };
        let json = serde_json::to_value(&report).unwrap();
        for (key, value) in [
            ("scanned", 6),
            ("claimed", 5),
            ("succeeded", 4),
            ("no_output", 1),
            ("failed", 0),
            ("invalid_output", 0),
            ("skipped", 1),
        ] {
            assert_eq!(json[key], value, "{key}");
        }
        assert_eq!(json["model"], "offline");
        assert_eq!(
            json["structured_output"]["extract"],
            serde_json::Value::Null
        );
        assert_eq!(json["home"], "/h");
        assert_eq!(
            json["skipped_by_reason"],
            serde_json::json!({"not_idle": 1})
        );
        let text = summary_text(&report);
        assert!(text.contains("processed 5: 4 stored"), "{text}");
        assert!(text.contains("skipped 1: 1 not idle yet"), "{text}");
    }
}
