//! `agent-memory consolidate`: phase 2 alone. Consolidates the stored stage-one outputs into
//! the memory root (`<home>/memories/`) and reports what it did.

use std::process::ExitCode;

use agent_memory::write::phase_two::{PhaseTwoOptions, PhaseTwoReport, run_phase_two};
use agent_memory::write::{AsyncStateStore, StateStore};
use anyhow::Context;

use agent_memory::models::{DEFAULT_MODEL_SPEC, model_from_spec};

use super::codex::RootArgs;
use super::home::{CommonArgs, load_config, resolve_home, runtime};

/// Arguments of `agent-memory consolidate`.
#[derive(Debug, clap::Args)]
pub(crate) struct ConsolidateArgs {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    root: RootArgs,
    /// Respect the cooldown after a recent success even when there is new input.
    #[arg(long)]
    no_force: bool,
    /// Print one JSON object instead of a summary.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: ConsolidateArgs) -> ExitCode {
    match execute(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn execute(args: &ConsolidateArgs) -> anyhow::Result<()> {
    let home = resolve_home(args.common.home.as_deref())?;
    let (_, config) = load_config(args.common.config.as_deref(), &home)?;
    let spec = args
        .common
        .model
        .clone()
        .or_else(|| config.consolidation_model.clone())
        .unwrap_or_else(|| DEFAULT_MODEL_SPEC.to_owned());
    let model = model_from_spec(&spec, args.common.base_url.as_deref())?;
    let store = AsyncStateStore::new(StateStore::open_home(&home)?);
    let root = args.root.memory_root(&home)?;
    let options = PhaseTwoOptions {
        force: !args.no_force,
        ..PhaseTwoOptions::from_config(&config)
    };
    let runtime = runtime()?;
    let report = runtime
        .block_on(run_phase_two(&store, &root, model.as_ref(), &options))
        .context("phase 2 (consolidation) failed")?;
    if args.json {
        let mut json = serde_json::to_value(&report)?;
        if let Some(object) = json.as_object_mut() {
            object.insert("skipped".into(), report.skipped.clone().into());
            object.insert("unchanged".into(), report.unchanged.into());
            object.insert("pruned".into(), report.pruned.into());
            object.insert("guard_missing".into(), report.guard_missing.into());
            object.insert("forgotten_anchors".into(), report.forgotten.into());
            object.insert(
                "changes".into(),
                serde_json::json!({
                    "added": report.changes.added,
                    "changed": report.changes.changed,
                    "removed": report.changes.removed,
                }),
            );
            object.insert("model".into(), model.name().into());
            object.insert(
                "memory_root".into(),
                root.dir().display().to_string().into(),
            );
        }
        println!("{json}");
    } else {
        print!("{}", summary_text(&report, &model.name()));
        println!("memory root: {}", root.dir().display());
    }
    Ok(())
}

/// The human summary of a phase-2 pass, shared with `run`.
pub(crate) fn summary_text(report: &PhaseTwoReport, model: &str) -> String {
    if let Some(reason) = &report.skipped {
        return format!("phase 2 skipped: {reason}\n");
    }
    let mut out = format!(
        "phase 2 ({model}): {} memories selected, {} files written, {} model call(s)",
        report.selected, report.files_written, report.model_calls
    );
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
