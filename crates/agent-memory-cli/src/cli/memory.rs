//! What the introspection commands (`status`, `search`, `list`, `read`, `note`, `block`, `mcp`)
//! share: their options, opening the home's memory, and exit codes.
//!
//! Exit codes: 0 on success; 3 when memory is disabled or unavailable (the output still says
//! so); 1 for any other error (bad input, not found, a refused path, a broken config). With
//! `--json`, a failure is the one error object on stdout (`{"error": {code, message, action}}`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agent_memory::introspect::{IntrospectConfig, Introspector};
use agent_memory::protocol::introspect::{MemoryState, MemoryToolFailure};
use serde::Serialize;

use super::exit::{report_error_as, say, warn_safe};
use super::home::{load_config, resolve_home};
use super::json::ErrorJson;

/// The options every introspection command takes.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct MemoryArgs {
    /// agent-memory home (default: $AGENT_MEMORY_HOME, else ~/.agent-memory).
    #[arg(long)]
    pub(crate) home: Option<PathBuf>,
    /// Config file (default: `<home>/config.toml` when present): `[memories] use_memories` and
    /// the `[introspect]` table.
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) store: super::store::StoreArgs,
    #[command(flatten)]
    pub(crate) root: super::codex::RootArgs,
}

/// The home's memory, as every introspection command and the MCP server see it: one
/// [`Introspector`], so they agree on the root, the state and the mode. With `--codex` the
/// root is codex's (`$CODEX_HOME/memories`) and the state stays the home's.
pub(crate) fn open_memory(args: &MemoryArgs) -> anyhow::Result<Introspector> {
    let home = resolve_home(args.home.as_deref())?;
    let loaded = load_config(args.config.as_deref(), &home)?;
    let config = IntrospectConfig {
        enabled: loaded.memories.use_memories,
        ..loaded.config.section::<IntrospectConfig>()?.value
    };
    let memory = Introspector::open(&home, config)?;
    if args.root.codex {
        return Ok(memory.with_root(args.root.memory_root(&home)?.dir())?);
    }
    Ok(memory)
}

/// The exit code of a command that showed memory in `state`.
pub(crate) fn state_exit(state: MemoryState) -> ExitCode {
    match state {
        MemoryState::Disabled | MemoryState::Unavailable => {
            ExitCode::from(super::exit::UNAVAILABLE_OR_REFUSED)
        }
        MemoryState::Empty | MemoryState::Ready | MemoryState::Degraded => ExitCode::SUCCESS,
    }
}

/// The memory tools' names, as the library's messages use them (written for a model calling
/// tools), and the commands that do the same from the command line.
const TOOL_COMMANDS: [(&str, &str); 5] = [
    ("memory_status", "`agent-memory status`"),
    ("memory_list", "`agent-memory list`"),
    ("memory_read", "`agent-memory read`"),
    ("memory_search", "`agent-memory search`"),
    ("memory_note", "`agent-memory note`"),
];

/// `text` with each memory tool's name replaced by its command, so an error points at the
/// tool the user has.
pub(crate) fn in_cli_words(text: &str) -> String {
    TOOL_COMMANDS
        .iter()
        .fold(text.to_owned(), |text, (tool, command)| {
            text.replace(tool, command)
        })
}

/// Reports a tool failure in the CLI's words (text on stderr, and with `--json` the error
/// object on stdout too), and returns its exit code.
pub(crate) fn report_failure(failure: &MemoryToolFailure, json: bool) -> ExitCode {
    let error = in_cli_words(failure.error.as_deref().unwrap_or("the memory tool failed"));
    let warning = failure.warning.as_deref().map(in_cli_words);
    let action = failure.action.as_deref().map(in_cli_words);
    warn_safe!("error: {error}");
    for line in [&warning, &action].into_iter().flatten() {
        warn_safe!("  {line}");
    }
    if json {
        let message = match warning {
            Some(warning) => format!("{error}; {warning}"),
            None => error,
        };
        let code = serde_json::to_value(failure.code)
            .ok()
            .and_then(|code| code.as_str().map(str::to_owned))
            .unwrap_or_else(|| "failed".to_owned());
        print_json(&ErrorJson::new(&code, message, action));
    }
    if failure.disabled || failure.unavailable {
        ExitCode::from(super::exit::UNAVAILABLE_OR_REFUSED)
    } else {
        ExitCode::FAILURE
    }
}

/// Prints `value` as one line of JSON.
pub(crate) fn print_json(value: &impl Serialize) {
    match serde_json::to_string(value) {
        Ok(text) => say!("{text}"),
        Err(error) => warn_safe!("error: cannot serialize the output: {error}"),
    }
}

/// On a shared store, brings this machine's memory root up to the fleet's (the newest
/// consolidated files, every machine's notes) and sends its own notes. A store that cannot be
/// reached is a warning: the command goes on with this machine's copy. A home or config that
/// cannot be used is not a sync problem: the command meets it when it opens memory and
/// reports it once, as its error.
pub(crate) fn sync_shared(args: &MemoryArgs) {
    let Ok(home) = resolve_home(args.home.as_deref()) else {
        return;
    };
    let Ok(loaded) = load_config(args.config.as_deref(), &home) else {
        return;
    };
    let synced = super::store::sync_shared_memory(&home, &args.store.selection(&loaded.store));
    if let Err(error) = synced {
        warn_safe!(
            "warning: cannot sync with the shared store ({}); using this machine's copy",
            super::exit::error_text(&error)
        );
    }
}

/// Runs a tool command: syncs with a shared store, opens memory, calls `tool`, prints its result with `print` (or as JSON),
/// and maps a failure to its exit code.
pub(crate) fn run_tool<T: Serialize>(
    args: &MemoryArgs,
    tool: impl FnOnce(&Introspector) -> Result<T, MemoryToolFailure>,
    print: impl FnOnce(&T),
) -> ExitCode {
    run_tool_in(args, None, tool, print)
}

/// [`run_tool`] with memory scoped to the project of working directory `cwd`, when given.
pub(crate) fn run_tool_in<T: Serialize>(
    args: &MemoryArgs,
    cwd: Option<&Path>,
    tool: impl FnOnce(&Introspector) -> Result<T, MemoryToolFailure>,
    print: impl FnOnce(&T),
) -> ExitCode {
    sync_shared(args);
    let opened = open_memory(args).and_then(|memory| match cwd {
        Some(cwd) => Ok(memory.with_cwd(cwd)?),
        None => Ok(memory),
    });
    let memory = match opened {
        Ok(memory) => memory,
        Err(error) => return report_error_as(&error, args.json),
    };
    match tool(&memory) {
        Ok(result) if args.json => {
            print_json(&result);
            ExitCode::SUCCESS
        }
        Ok(result) => {
            print(&result);
            ExitCode::SUCCESS
        }
        Err(failure) => report_failure(&failure, args.json),
    }
}
