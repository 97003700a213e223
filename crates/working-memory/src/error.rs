//! The working-memory error type.

use std::path::PathBuf;

/// What can go wrong keeping a session's working memory.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A session file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A session file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line of a messages file is not a conversation entry.
    #[error("{path}:{line}: not a conversation entry: {source}")]
    BadMessage {
        /// The file.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What the parser said.
        #[source]
        source: serde_json::Error,
    },
    /// Two messages of a session share an id.
    #[error("{path}: message id `{id}` appears twice")]
    DuplicateMessageId {
        /// The file.
        path: PathBuf,
        /// The repeated id.
        id: String,
    },
    /// A session state file is not valid JSON of the expected shape.
    #[error("{path}: unreadable session state: {source}")]
    BadState {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        #[source]
        source: serde_json::Error,
    },
    /// A prompt could not be rendered.
    #[error("cannot render a working-memory prompt: {0}")]
    Prompt(#[from] memory_prompts::Error),
    /// A value could not be serialized.
    #[error("cannot serialize {what}: {source}")]
    Serialize {
        /// What was being serialized.
        what: &'static str,
        /// What the serializer said.
        #[source]
        source: serde_json::Error,
    },
}

/// A result with the working-memory [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
