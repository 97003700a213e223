//! Memory introspection: the model knows what it remembers, where, and in what state.
//!
//! This crate owns everything about memory that reaches a model:
//!
//! - the injection ([`Introspector::render_block`]): the read-path guidance and the
//!   `<memory>` block, whose header says what the memory is, who writes it, where it lives, how
//!   far it reaches, how full its budget is, the mode, which tools show more and when the
//!   numbers were taken; each source inside is labelled with who wrote it ([`RenderedBlock`]);
//! - per-turn recall in its own `<memory-recall>` fence ([`Introspector::recall`]);
//! - the states (disabled, empty, ready, degraded, unavailable), each with its own line, and a
//!   line when the state changed since the last turn; no failure renders as empty;
//! - the environment block naming the host harness apart from the project;
//! - the memory tools (`memory_status`, `memory_list`, `memory_read`, `memory_search`,
//!   `memory_note`) with paths confined to the root ([`Introspector::call_tool`]), answering results or a
//!   structured [`MemoryToolFailure`](memory_protocol::introspect::MemoryToolFailure);
//! - the search index: SQLite FTS5 in its own file, updated incrementally ([`Introspector`]).
//!
//! One function computes the memory root ([`memory_root`]); the block, `memory_status`, the
//! tools and the MCP server all go through an [`Introspector`] built on it.
//!
//! # Example
//!
//! A fresh home's memory says it is empty (so the model knows an absence means nothing); a note
//! the model saves is recalled into a later turn that asks about it.
//!
//! ```
//! use memory_introspect::{BlockOptions, IntrospectConfig, Introspector};
//! use memory_protocol::introspect::{MemoryNoteRequest, MemoryState};
//!
//! let home = tempfile::tempdir()?;
//! let memory = Introspector::open(home.path(), IntrospectConfig::default())?;
//! let block = memory.render_block(&BlockOptions::default())?;
//! assert_eq!(block.state, MemoryState::Empty);
//!
//! let note = MemoryNoteRequest {
//!     text: "The staging database listens on port 6543.".to_owned(),
//!     ..MemoryNoteRequest::default()
//! };
//! memory.note(&note).map_err(|failure| format!("{failure:?}"))?;
//! let recall = memory.recall("Which port does the staging database listen on?", 3)?;
//! assert!(recall.text.contains("6543"), "{}", recall.text);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod block;
mod blocks;
mod config;
mod error;
mod fence;
mod grams;
mod index;
mod introspector;
mod notes;
mod passage_scope;
mod paths;
mod probe;
mod project;
mod query;
mod scan;
mod tools;

use std::io;
use std::path::{Path, PathBuf};

use memory_protocol::names::{home, memory_root as root_names};

pub use crate::block::{
    BlockOptions, HostEnvironment, HostInstructionFile, Placement, RECALL_MIN_TERMS, RenderedBlock,
    RenderedRecall,
};
pub use crate::config::IntrospectConfig;
pub use crate::error::{Error, Result};
pub use crate::fence::{FenceKind, fence, strip_fence};
pub use crate::index::MemoryRead;
pub use crate::introspector::Introspector;
pub use crate::notes::NoteAuthor;
pub use crate::tools::{
    DEFAULT_LIST_DEPTH, DEFAULT_SEARCH_RESULTS, MAX_LIST_DEPTH, MAX_SEARCH_RESULTS, ToolOutcome,
};

/// The memory root of an agent-memory home: `<home>/memories`, with a relative home made
/// absolute against the current directory. The block, `memory_status`, the tools and the MCP
/// server all take the root from here.
pub fn memory_root(home: &Path) -> Result<PathBuf> {
    Ok(absolute_home(home)?.join(root_names::DIR))
}

/// The search index file of a home.
pub fn index_file(home: &Path) -> Result<PathBuf> {
    Ok(absolute_home(home)?.join(home::MEMORY_INDEX_FILE))
}

fn absolute_home(home: &Path) -> Result<PathBuf> {
    std::path::absolute(home).map_err(|error| Error::Home {
        path: home.to_owned(),
        error,
    })
}

/// A file's version as `memory_read` shows it and `memory_note` checks it: the first 16 hex
/// digits of the SHA-256 of its bytes.
pub(crate) fn version_of(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .take(8)
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// A short, lowercase reason for an I/O error, fit for a state line.
pub(crate) fn io_reason(error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        io::ErrorKind::NotFound => "missing".to_owned(),
        io::ErrorKind::InvalidData => "not valid UTF-8".to_owned(),
        io::ErrorKind::IsADirectory => "a folder, not a file".to_owned(),
        io::ErrorKind::NotADirectory => "a file, not a folder".to_owned(),
        _ => error.to_string().to_lowercase(),
    }
}

/// A short reason for a failed confined resolve.
pub(crate) fn resolve_reason(error: &paths::ResolveError) -> String {
    match error {
        paths::ResolveError::NotFound(_) => "missing".to_owned(),
        paths::ResolveError::Symlink(at) => format!("{at} is a symlink, not followed"),
        paths::ResolveError::NotAFolder(at) => format!("{at} is a file, not a folder"),
        paths::ResolveError::NotRegular(kind) => format!("{kind}, not a regular file"),
        paths::ResolveError::Changed => "changed while it was opened".to_owned(),
        paths::ResolveError::Io(error) => io_reason(error),
    }
}
