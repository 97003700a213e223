//! `agent-memory forget`: removes memories.
//!
//! `forget THREAD` forgets one session (a thread id, a unique id prefix, or the rollout's
//! path): its stored memory and job go, its memory is disabled so later runs do not extract it
//! again, and a consolidation pass removes it from the memory files (its rollout summary file,
//! its `raw_memories.md` block, and what only it supported in `MEMORY.md` and
//! `memory_summary.md`). `forget --all` resets everything: every stored memory and job, the
//! consolidation state, and the memory root's files, after a prompt or `--yes`.
//!
//! On a shared store (`--store`, `AGENT_MEMORY_STORE` or `[store] url`) both act on the store:
//! a forgotten thread leaves the files the consolidation publishes for every machine, and
//! `--all` also drops the published memory roots and the fleet's notes.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use agent_memory::goals::STATE_FILE_NAME;
use agent_memory::models::DEFAULT_MODEL_SPEC;
use agent_memory::sanitize::redact_secrets;
use agent_memory::write::phase_two::{PhaseTwoOptions, run_phase_two};
use agent_memory::write::store::{ThreadMatch, now_unix};
use anyhow::{Context, bail};

use super::codex::RootArgs;
use super::exit::{print_safe, report_error};
use super::home::{CommonArgs, build, load_config, resolve_home, runtime};
use super::store::StoreArgs;

/// Arguments of `agent-memory forget`.
#[derive(Debug, clap::Args)]
pub(crate) struct ForgetArgs {
    /// The session to forget: its thread id, a unique prefix of it, or its rollout file.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    thread: Option<String>,
    /// Forget everything: every stored memory, the extraction state and the memory files.
    #[arg(long)]
    all: bool,
    /// Do not ask before `--all`.
    #[arg(long, requires = "all")]
    yes: bool,
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    root: RootArgs,
    #[command(flatten)]
    store: StoreArgs,
}

pub(crate) fn run(args: ForgetArgs) -> ExitCode {
    match execute(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => report_error(&error),
    }
}

fn execute(args: &ForgetArgs) -> anyhow::Result<()> {
    let home = resolve_home(args.common.home.as_deref())?;
    let root = args.root.memory_root(&home)?;
    let loaded = load_config(args.common.config.as_deref(), &home)?;
    let selection = args.store.selection(&loaded.store);
    let runtime = runtime()?;
    let store = super::store::open(&runtime, &home, &selection)?;
    if args.all {
        let state = match &selection.url {
            // A password in the URL is not printed.
            Some(url) => format!(
                "the shared store {} (every machine's memory, published files and notes)",
                redact_secrets(url)
            ),
            None => home.join(STATE_FILE_NAME).display().to_string(),
        };
        if !args.yes
            && !confirm(&format!(
                "Forget every memory: empty {} and reset the extraction state in {state}?",
                root.dir().display(),
            ))?
        {
            bail!("nothing forgotten");
        }
        let reset = runtime.block_on(store.reset_memories())?;
        let removed = root.clear()?;
        print_safe(&format!(
            "forgot everything: {} stored memories, {} jobs, {} entries of {}; the next run \
             extracts the sessions again\n",
            reset.outputs,
            reset.jobs,
            removed,
            root.dir().display()
        ));
        if selection.url.is_some() {
            print_safe(
                "other machines keep their copies of the memory files until the next \
                 consolidation replaces them\n",
            );
        }
        return Ok(());
    }
    let reference = args.thread.as_deref().unwrap_or_default();
    let thread_id = match runtime.block_on(store.resolve_thread(reference))? {
        ThreadMatch::One(id) => id,
        ThreadMatch::None => bail!("no known session matches `{reference}`"),
        ThreadMatch::Ambiguous(ids) => bail!(
            "`{reference}` matches several sessions ({}): give more of the id",
            ids.join(", ")
        ),
    };
    let report = runtime.block_on(store.forget_thread(&thread_id, now_unix()))?;
    if !report.output_deleted && !report.was_consolidated {
        print_safe(&format!(
            "{thread_id} had no memory; later runs will not extract it\n"
        ));
        return Ok(());
    }

    let config = &loaded.memories;
    let spec = args
        .common
        .model
        .clone()
        .or_else(|| config.consolidation_model.clone())
        .unwrap_or_else(|| DEFAULT_MODEL_SPEC.to_owned());
    let model = build(&runtime, &spec, &args.common.model_options(&loaded.model))?.client;
    let options = PhaseTwoOptions {
        force: true,
        ..PhaseTwoOptions::from_config(config)
    };
    // On a shared store the pass publishes the files without the thread for every machine.
    let pass = runtime
        .block_on(run_phase_two(
            store.as_ref(),
            &root,
            model.as_ref(),
            &options,
        ))
        .context("the memory was forgotten, but consolidating the memory files failed")?;
    print_safe(&format!("forgot {thread_id}\n"));
    print_safe(&super::consolidate::summary_text(&pass, &model.name()));
    Ok(())
}

/// Asks a yes/no question on the terminal; refuses to guess when nobody can answer.
fn confirm(question: &str) -> anyhow::Result<bool> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        bail!("refusing to forget everything without --yes (standard input is not a terminal)");
    }
    let mut stderr = std::io::stderr();
    write!(stderr, "{question} [y/N] ")?;
    stderr.flush()?;
    let mut answer = String::new();
    stdin.lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes" | "YES"))
}
