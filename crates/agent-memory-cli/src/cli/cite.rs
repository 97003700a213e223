//! `agent-memory cite`: records which memories an answer used. Reads an assistant message on
//! standard input, finds its citation block (the one the read path asks for, or codex's),
//! resolves it against the memory root, and counts one use for every cited thread's memory,
//! which ranks it higher in the next consolidation. On a shared store the uses are recorded
//! there, for every machine's consolidation.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use agent_memory::write::citations::record_citations;
use anyhow::Context;

use super::codex::RootArgs;
use super::exit::{print_json, print_safe, report_error_as};
use super::home::{load_config, resolve_home, runtime};
use super::store::StoreArgs;

/// Most bytes read from standard input.
const MAX_MESSAGE_BYTES: u64 = 16 * 1024 * 1024;

/// Arguments of `agent-memory cite`.
#[derive(Debug, clap::Args)]
pub(crate) struct CiteArgs {
    /// agent-memory home (default: $AGENT_MEMORY_HOME, else ~/.agent-memory).
    #[arg(long)]
    home: Option<PathBuf>,
    #[command(flatten)]
    root: RootArgs,
    /// Print one JSON object instead of a sentence.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: StoreArgs,
}

pub(crate) fn run(args: CiteArgs) -> ExitCode {
    match execute(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => report_error_as(&error, args.json),
    }
}

fn execute(args: &CiteArgs) -> anyhow::Result<()> {
    let home = resolve_home(args.home.as_deref())?;
    let root = args.root.memory_root(&home)?;
    let mut message = String::new();
    std::io::stdin()
        .take(MAX_MESSAGE_BYTES)
        .read_to_string(&mut message)
        .context("cannot read the message from standard input (is it UTF-8?)")?;
    // Uses count fleet-wide on a shared store: the next consolidation, on any machine, ranks
    // by them.
    let selection = args.store.selection(&load_config(None, &home)?.store);
    let runtime = runtime()?;
    let store = super::store::open(&runtime, &home, &selection)?;
    let report = runtime.block_on(record_citations(store.as_ref(), &root, &message))?;
    if args.json {
        print_json(serde_json::json!({
            "blocks": report.blocks,
            "cited_threads": report.cited_threads,
            "recorded": report.recorded,
        }));
    } else if report.blocks == 0 {
        print_safe("no citation block in the message: nothing recorded\n");
    } else {
        print_safe(&format!(
            "recorded a use of {} memor{} ({} thread(s) cited{})\n",
            report.recorded,
            if report.recorded == 1 { "y" } else { "ies" },
            report.cited_threads.len(),
            if report.cited_threads.is_empty() {
                String::new()
            } else {
                format!(": {}", report.cited_threads.join(", "))
            }
        ));
    }
    Ok(())
}
