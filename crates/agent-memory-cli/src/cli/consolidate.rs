//! `agent-memory consolidate`: phase 2 alone. Consolidates the stored stage-one outputs into
//! the memory root (`<home>/memories/`) and reports what it did.

use std::process::ExitCode;
use std::time::Duration;

use agent_memory::write::phase_two::{PhaseTwoOptions, PhaseTwoReport, run_phase_two};
use anyhow::Context;

use agent_memory::models::DEFAULT_MODEL_SPEC;

use super::codex::RootArgs;
use super::exit::{print_json, print_safe};
use super::home::{CommonArgs, build, load_config, options_for_config_spec, resolve_home, runtime};
use super::interrupt::until_signal;
use super::json::ConsolidateJson;

/// Arguments of `agent-memory consolidate`.
#[derive(Debug, clap::Args)]
pub(crate) struct ConsolidateArgs {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    root: RootArgs,
    /// Respect the cooldown after a recent success even when there is new input.
    #[arg(long, conflicts_with = "now")]
    no_force: bool,
    /// Consolidate now, whatever the cooldown and even with no new input.
    #[arg(long)]
    now: bool,
    /// Print one JSON object instead of a summary.
    #[arg(long)]
    json: bool,
    /// When another process is consolidating, wait this many seconds for it before reporting
    /// that consolidation is still pending.
    #[arg(long, default_value_t = super::run::DEFAULT_CONSOLIDATION_WAIT_SECS)]
    consolidation_wait: u64,
    #[command(flatten)]
    store: super::store::StoreArgs,
}

pub(crate) fn run(args: ConsolidateArgs) -> ExitCode {
    match execute(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => super::exit::report_error_as(&error, args.json),
    }
}

fn execute(args: &ConsolidateArgs) -> anyhow::Result<()> {
    let home = resolve_home(args.common.home.as_deref())?;
    let loaded = load_config(args.common.config.as_deref(), &home)?;
    let config = loaded.memories;
    let spec = args
        .common
        .model
        .clone()
        .or_else(|| config.consolidation_model.clone())
        .or_else(|| config.extract_model.clone())
        .unwrap_or_else(|| DEFAULT_MODEL_SPEC.to_owned());
    let runtime = runtime()?;
    let mut options = args.common.model_options(&loaded.model);
    if args.common.model.is_none() {
        options = options_for_config_spec(&spec, &options);
    }
    let model = build(&runtime, &spec, &options)?.client;
    let store = super::store::open(&runtime, &home, &args.store.selection(&loaded.store))?;
    let root = args.root.memory_root(&home)?;
    let options = PhaseTwoOptions {
        force: !args.no_force,
        now: args.now,
        wait_for_holder: Duration::from_secs(args.consolidation_wait),
        ..PhaseTwoOptions::from_config(&config)
    };
    let pass = async {
        run_phase_two(store.as_ref(), &root, model.as_ref(), &options)
            .await
            .context("phase 2 (consolidation) failed")
    };
    // Ctrl-C or SIGTERM gives the lease back before exiting.
    let report = runtime.block_on(until_signal(store.as_ref(), pass))?;
    if args.json {
        let json = ConsolidateJson::new(&report, model.name(), root.dir().display().to_string());
        print_json(serde_json::to_value(&json)?);
    } else {
        print_safe(&summary_text(&report, &model.name()));
        print_safe(&format!("memory root: {}\n", root.dir().display()));
    }
    Ok(())
}

/// The human summary of a phase-2 pass, shared with `run`.
pub(crate) fn summary_text(report: &PhaseTwoReport, model: &str) -> String {
    let mut out = String::new();
    if let Some(revision) = report.materialized_revision {
        out.push_str(&format!(
            "shared memory root: revision {revision}, consolidated on another machine, \
             materialized here\n"
        ));
    }
    if !report.repaired.is_empty() {
        out.push_str(&format!(
            "memory root damaged ({}): rebuilding it whatever the cooldown\n",
            report.repaired.join("; ")
        ));
    }
    if report.pending {
        out.push_str(
            "phase 2 pending: stored memories are not all consolidated yet; the process \
             consolidating now includes them before it finishes, or the next run does\n",
        );
    }
    if let Some(reason) = &report.skipped {
        out.push_str(&format!("phase 2 skipped: {reason}\n"));
        return out;
    }
    out.push_str(&format!(
        "phase 2 ({model}): {} memories selected, {} files written, {} model call(s)",
        report.selected, report.files_written, report.model_calls
    ));
    if report.passes > 1 {
        out.push_str(&format!(
            " in {} passes (new memories arrived meanwhile)",
            report.passes
        ));
    }
    if report.unchanged {
        out.push_str(" (inputs unchanged since the last pass)");
    }
    out.push('\n');
    let changes = &report.changes;
    if !changes.is_empty() {
        out.push_str(&format!(
            "  since the last pass: {} added, {} changed, {} removed\n",
            changes.added.len(),
            changes.changed.len(),
            changes.removed.len()
        ));
    }
    if report.forgotten > 0 {
        out.push_str(&format!(
            "  {} anchor(s) only removed sessions supported were forgotten\n",
            report.forgotten
        ));
    }
    if report.pruned > 0 {
        out.push_str(&format!("  pruned {} stale memories\n", report.pruned));
    }
    if !report.guard_missing.is_empty() {
        out.push_str(&format!(
            "  the rewrite of MEMORY.md dropped {} anchor(s) and was rejected; the new material \
             was appended instead (first: {})\n",
            report.guard_missing.len(),
            report
                .guard_missing
                .first()
                .map(String::as_str)
                .unwrap_or("")
        ));
    }
    out
}
