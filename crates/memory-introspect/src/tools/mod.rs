//! The memory tools, answered natively: `memory_status`, `memory_list`, `memory_read`,
//! `memory_search` and `memory_note`.
//!
//! Each returns its result or a [`MemoryToolFailure`]: disabled and unavailable memory,
//! not-found (never confused with empty), invalid input (never an empty result), refused paths,
//! read-only mode and exceeded budgets are all failures with what to tell the user and what to
//! do. [`Introspector::call_tool`] takes a tool's name and JSON arguments, as a host or the MCP
//! server receives them.

mod list;
mod note;
mod note_edit;
mod read;
mod repeats;
mod search;
mod status;

use memory_protocol::introspect::{
    MemoryFailureCode, MemoryListRequest, MemoryMode, MemoryNoteRequest, MemoryReadRequest,
    MemorySearchRequest, MemoryToolFailure,
};
use memory_protocol::tools::{MEMORY_NOTE_TOOL, NoArgs, ToolDefinition, memory_tools};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::introspector::Introspector;
use crate::paths::{Refusal, ResolveError};

pub use crate::tools::list::{DEFAULT_DEPTH as DEFAULT_LIST_DEPTH, MAX_DEPTH as MAX_LIST_DEPTH};
pub use crate::tools::search::{
    DEFAULT_RESULTS as DEFAULT_SEARCH_RESULTS, MAX_RESULTS as MAX_SEARCH_RESULTS,
};

/// What a tool call answered.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// The tool's result, serialized.
    Ok(Value),
    /// The tool failed; the failure says why and what to do.
    Failed(MemoryToolFailure),
}

impl ToolOutcome {
    fn from_result<T: Serialize>(result: Result<T, MemoryToolFailure>) -> ToolOutcome {
        match result {
            Ok(value) => match serde_json::to_value(value) {
                Ok(value) => ToolOutcome::Ok(value),
                Err(error) => ToolOutcome::Failed(failure(
                    MemoryFailureCode::Failed,
                    format!("cannot serialize the result: {error}"),
                )),
            },
            Err(failure) => ToolOutcome::Failed(failure),
        }
    }
}

impl Introspector {
    /// The memory tools this home offers: all of them, `memory_note` only when the mode is
    /// writable (so a read-only block never sits beside a note tool).
    pub fn tool_definitions(&self) -> Vec<ToolDefinition> {
        let writable = self.config().effective_mode() == MemoryMode::Writable;
        memory_tools()
            .into_iter()
            .filter(|tool| writable || tool.name != MEMORY_NOTE_TOOL)
            .collect()
    }

    /// Calls the memory tool `name` with JSON `arguments` (`null` counts as `{}`). `None` when
    /// `name` is not a memory tool.
    pub fn call_tool(&self, name: &str, arguments: Value) -> Option<ToolOutcome> {
        let arguments = if arguments.is_null() {
            Value::Object(serde_json::Map::new())
        } else {
            arguments
        };
        Some(match name {
            "memory_status" => {
                ToolOutcome::from_result(parse::<NoArgs>(arguments).map(|NoArgs {}| self.status()))
            }
            "memory_list" => ToolOutcome::from_result(
                parse::<MemoryListRequest>(arguments).and_then(|request| self.list(&request)),
            ),
            "memory_read" => ToolOutcome::from_result(
                parse::<MemoryReadRequest>(arguments).and_then(|request| self.read(&request)),
            ),
            "memory_search" => ToolOutcome::from_result(
                parse::<MemorySearchRequest>(arguments).and_then(|request| self.search(&request)),
            ),
            MEMORY_NOTE_TOOL => ToolOutcome::from_result(
                parse::<MemoryNoteRequest>(arguments).and_then(|request| self.note(&request)),
            ),
            _ => return None,
        })
    }

    /// Fails when memory is disabled.
    pub(crate) fn require_enabled(&self) -> Result<(), MemoryToolFailure> {
        if self.config().enabled {
            Ok(())
        } else {
            Err(disabled())
        }
    }
}

fn parse<T: DeserializeOwned>(arguments: Value) -> Result<T, MemoryToolFailure> {
    serde_json::from_value(arguments)
        .map_err(|error| invalid_input(format!("invalid arguments: {error}")))
}

/// A failure with only a code and an error.
pub(crate) fn failure(code: MemoryFailureCode, error: String) -> MemoryToolFailure {
    MemoryToolFailure {
        code,
        disabled: false,
        unavailable: false,
        error: Some(error),
        warning: None,
        action: None,
    }
}

pub(crate) fn disabled() -> MemoryToolFailure {
    MemoryToolFailure {
        code: MemoryFailureCode::Disabled,
        disabled: true,
        unavailable: false,
        error: Some("long-term memory is turned off".to_owned()),
        warning: Some(
            "Tell the user that long-term memory is turned off, so nothing from past sessions \
             is available."
                .to_owned(),
        ),
        action: Some(
            "The user can turn it on with `use_memories = true` under [memories] in the \
             agent-memory config.toml."
                .to_owned(),
        ),
    }
}

pub(crate) fn unavailable(problem: String, root: &str) -> MemoryToolFailure {
    MemoryToolFailure {
        code: MemoryFailureCode::Unavailable,
        disabled: false,
        unavailable: true,
        error: Some(problem),
        warning: Some(
            "Tell the user that long-term memory could not be read, so a missing memory says \
             nothing about what they said before."
                .to_owned(),
        ),
        action: Some(format!(
            "Check the files under {root} (permissions, encoding); `agent-memory status` shows \
             the problem. Then retry."
        )),
    }
}

pub(crate) fn invalid_input(error: String) -> MemoryToolFailure {
    failure(MemoryFailureCode::InvalidInput, error)
}

pub(crate) fn not_found(error: String) -> MemoryToolFailure {
    MemoryToolFailure {
        action: Some("memory_list shows what exists.".to_owned()),
        ..failure(MemoryFailureCode::NotFound, error)
    }
}

pub(crate) fn refused(path: &str, reason: &str) -> MemoryToolFailure {
    MemoryToolFailure {
        action: Some(
            "Give a path relative to the memory root, as memory_list shows it.".to_owned(),
        ),
        ..failure(
            MemoryFailureCode::PathRefused,
            format!("`{path}`: {reason}"),
        )
    }
}

pub(crate) fn refusal(path: &str, refusal: Refusal) -> MemoryToolFailure {
    refused(path, refusal.reason())
}

/// The failure for a confined resolve that did not succeed.
pub(crate) fn resolve_failure(
    introspector: &Introspector,
    path: &str,
    error: &ResolveError,
) -> MemoryToolFailure {
    match error {
        // No memory root: empty memory in a home that exists, unreadable memory otherwise (a
        // mistyped home must not look like a memory with nothing in it).
        ResolveError::NotFound(missing) if missing.is_empty() => {
            match introspector.home_problem() {
                Some(problem) => unavailable(problem, &introspector.display_root()),
                None => not_found(format!("`{path}` does not exist: memory has no files yet")),
            }
        }
        ResolveError::NotFound(missing) => not_found(format!(
            "`{path}` does not exist (no `{missing}` in memory)"
        )),
        ResolveError::Symlink(at) => refused(path, &format!("`{at}` is a symlink, not followed")),
        ResolveError::NotAFolder(at) => not_found(format!(
            "`{path}` does not exist (`{at}` is a file, not a folder)"
        )),
        ResolveError::NotRegular(kind) => failure(
            MemoryFailureCode::InvalidInput,
            format!("`{path}` is {kind}, not a regular file: only files are read"),
        ),
        ResolveError::Changed => failure(
            MemoryFailureCode::Failed,
            format!("`{path}` changed while it was opened; retry"),
        ),
        ResolveError::Io(error) => unavailable(
            format!("`{path}`: {}", crate::io_reason(error)),
            &introspector.display_root(),
        ),
    }
}
