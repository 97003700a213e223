//! `agent-memory block`: exactly what would be injected this turn (the same text
//! `show --injection` prints), and with `--query` the recall for a message.

use std::process::ExitCode;

use agent_memory::introspect::{BlockOptions, HostEnvironment, Introspector, RenderedBlock};

use super::exit::report_error_as;
use super::exit::{print_safe, say, warn_safe};
use super::json::{BlockJson, RecallJson};
use super::memory::{MemoryArgs, open_memory, print_json, state_exit};

/// Passages recalled for `--query` when `--max-recall` is not given.
pub(crate) const DEFAULT_RECALL_HITS: usize = 3;

/// Arguments of `agent-memory block`.
#[derive(Debug, clap::Args)]
pub(crate) struct BlockArgs {
    /// Also render the recall for this message (the `<memory-recall>` fence).
    #[arg(long)]
    query: Option<String>,
    /// Most passages recalled for `--query`.
    #[arg(long, default_value_t = DEFAULT_RECALL_HITS, requires = "query")]
    max_recall: usize,
    /// The host harness's name; adds the environment block.
    #[arg(long, requires = "host_state_dir")]
    host: Option<String>,
    /// Where the host keeps its own state (with `--host`).
    #[arg(long, requires = "host")]
    host_state_dir: Option<String>,
    /// Record this block as injected: `memory_status` reports its numbers, and the next block
    /// says when the state changed.
    #[arg(long)]
    record: bool,
    /// The working directory of the session: the block holds the global profile and the
    /// memories of the project this folder is in; other projects' are left to search.
    #[arg(long, value_name = "DIR")]
    cwd: Option<std::path::PathBuf>,
    #[command(flatten)]
    memory: MemoryArgs,
}

pub(crate) fn run(args: BlockArgs) -> ExitCode {
    match execute(&args) {
        Ok(code) => code,
        Err(error) => report_error_as(&error, args.memory.json),
    }
}

fn execute(args: &BlockArgs) -> anyhow::Result<ExitCode> {
    let mut memory = open_memory(&args.memory)?;
    if let Some(cwd) = &args.cwd {
        memory = memory.with_cwd(cwd)?;
    }
    let options = BlockOptions {
        environment: match (&args.host, &args.host_state_dir) {
            (Some(host), Some(dir)) => Some(HostEnvironment::current(host, dir)),
            _ => None,
        },
        ..BlockOptions::default()
    };
    let block = memory.render_block(&options)?;
    let recall = match &args.query {
        Some(query) => Some(memory.recall(query, args.max_recall)?),
        None => None,
    };
    if args.record {
        memory.record_injection(&block.snapshot)?;
    }
    if args.memory.json {
        print_json(&BlockJson::new(
            &block,
            recall.as_ref().map(RecallJson::from),
        ));
    } else {
        print_safe(&block.text);
        if let Some(note) = recall.as_ref().and_then(|recall| recall.note.as_deref()) {
            warn_safe!("recall: {note}");
        }
        if let Some(recall) = recall.filter(|recall| !recall.text.is_empty()) {
            if !block.text.is_empty() {
                say!();
            }
            print_safe(&recall.text);
        }
    }
    Ok(state_exit(block.state))
}

/// The injection `show --injection` prints: the same rendering as `block` without options.
pub(crate) fn injection(memory: &Introspector) -> anyhow::Result<RenderedBlock> {
    Ok(memory.render_block(&BlockOptions::default())?)
}
