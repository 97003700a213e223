//! The crate's error type.

use std::path::PathBuf;

/// What can go wrong outside a tool call (tool calls answer with a
/// [`memory_protocol::introspect::MemoryToolFailure`] instead).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The home folder cannot be made absolute (the current directory is unknown).
    #[error("cannot resolve the agent-memory home {path}: {error}")]
    Home {
        /// The home as given.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// The working directory cannot be made absolute (the current directory is unknown).
    #[error("cannot resolve the working directory {path}: {error}")]
    Cwd {
        /// The directory as given.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// A prompt failed to render.
    #[error("rendering the memory injection: {0}")]
    Prompt(#[from] memory_prompts::Error),
    /// The search index could not be opened, created or queried.
    #[error("search index {path}: {message}")]
    Index {
        /// The index file (`:memory:` for a transient one).
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
