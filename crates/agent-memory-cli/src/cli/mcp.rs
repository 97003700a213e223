//! `agent-memory mcp`: the memory tools served over MCP on stdin/stdout by
//! [`agent_memory::mcp::MemoryServer`], over the home's memory.
//!
//! With `--cwd DIR` the notes it saves are that project's (see `agent-memory block --cwd`).
//!
//! With `--thread THREAD` it also serves that thread's goal tools (`get_goal`, `update_goal`)
//! from the home's goal store, answered exactly as `agent-memory goal update` answers.
//!
//! On a shared store (`--store`, `AGENT_MEMORY_STORE` or `[store] url`) the server serves the
//! fleet's memory: it syncs the memory root at start, again before a memory tool when the last
//! sync is more than a few seconds old, and right after a saved note, so the note reaches the
//! other machines; goal tools act on the shared goals. A store it cannot reach is a warning,
//! and the server goes on with this machine's copy.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use agent_memory::mcp::{MemoryServer, SharedLink, ThreadGoals};
use agent_memory::write::memory_root::MemoryRoot;

use super::exit::report_error;
use super::exit::warn_safe;
use super::goal::open_at;
use super::home::{load_config, resolve_home, runtime};
use super::memory::{MemoryArgs, open_memory};

/// Arguments of `agent-memory mcp`. It speaks JSON-RPC on stdout, so `--json` changes nothing.
#[derive(Debug, clap::Args)]
pub(crate) struct McpArgs {
    #[command(flatten)]
    memory: MemoryArgs,
    /// Also serve this thread's goal tools (`get_goal`, `update_goal`).
    #[arg(long, value_name = "THREAD")]
    thread: Option<String>,
    /// The working directory of the session: notes saved through the server are that
    /// project's, kept out of other projects' blocks.
    #[arg(long, value_name = "DIR")]
    cwd: Option<std::path::PathBuf>,
}

pub(crate) fn run(args: McpArgs) -> ExitCode {
    match serve(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => report_error(&error),
    }
}

fn serve(args: &McpArgs) -> anyhow::Result<()> {
    let home = resolve_home(args.memory.home.as_deref())?;
    let loaded = load_config(args.memory.config.as_deref(), &home)?;
    let selection = args.memory.store.selection(&loaded.store);
    let runtime = runtime()?;
    let shared = match &selection.url {
        Some(_) => match super::store::open(&runtime, &home, &selection) {
            Ok(store) => Some(SharedLink::new(store, MemoryRoot::under_home(&home))),
            // As the other memory commands do: serve this machine's copy.
            Err(error) => {
                warn_safe!(
                    "warning: cannot reach the shared store ({}); serving this machine's copy",
                    super::exit::error_text(&error)
                );
                None
            }
        },
        None => None,
    };
    if let Some(shared) = &shared {
        runtime.block_on(shared.sync_now());
    }
    let mut memory = open_memory(&args.memory)?;
    if let Some(cwd) = &args.cwd {
        memory = memory.with_cwd(cwd)?;
    }
    let goal_store = match &args.thread {
        Some(_) => Some(Arc::new(Mutex::new(open_at(&home, &selection)?))),
        None => None,
    };
    let goals = args
        .thread
        .iter()
        .zip(&goal_store)
        .map(|(thread, store)| ThreadGoals::new(thread.clone(), Arc::clone(store)))
        .next();
    let server = MemoryServer::new(memory, goals, shared)?;
    let served = runtime.block_on(server.serve_stdio());
    // The goal store is dropped here, after the runtime: a PostgreSQL goal store's blocking
    // client closes its connection on drop, which tokio forbids on its async threads.
    drop(runtime);
    drop(goal_store);
    Ok(served?)
}
