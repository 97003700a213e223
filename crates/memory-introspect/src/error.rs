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
    /// The search index file could not be opened or created, or its tables set up.
    #[error("cannot {} {path}: {}", if *.existed { "open" } else { "create" }, store_message(.source))]
    IndexOpen {
        /// The index file (`:memory:` for a transient one).
        path: PathBuf,
        /// Whether the file existed: an existing file that cannot be used is unavailable, a
        /// new one that cannot be made is missing.
        existed: bool,
        /// What the store said.
        #[source]
        source: memory_store::Error,
    },
    /// The folder the search index file belongs in does not exist.
    #[error("cannot create {path}: {} does not exist", .folder.display())]
    IndexFolder {
        /// The index file.
        path: PathBuf,
        /// Its folder.
        folder: PathBuf,
    },
    /// A query of the search index failed.
    #[error("search index {path}: {source}")]
    IndexQuery {
        /// The index file (`:memory:` for a transient one).
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// The numbers of an injected block could not be encoded for the index.
    #[error("search index {path}: {source}")]
    IndexEncode {
        /// The index file.
        path: PathBuf,
        /// What the encoder said.
        #[source]
        source: serde_json::Error,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong opening or setting up the index: SQLite's own message (the store's would
/// name the file a second time), or the store's.
fn store_message(error: &memory_store::Error) -> String {
    match error {
        memory_store::Error::Open { source, .. } => source.to_string(),
        memory_store::Error::Sqlite(error) => error.to_string(),
        other => other.to_string(),
    }
}
