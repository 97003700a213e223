//! The crate's error type.

use std::path::PathBuf;

/// Why a write-path operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A state database operation failed.
    #[error("state database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A store selection that names no backend this crate has.
    #[error("unsupported store {url:?}: use postgres://... or sqlite")]
    UnsupportedStore {
        /// The selection as given.
        url: String,
    },
    /// A shared store was selected, but this build has no PostgreSQL backend.
    #[error("this build has no PostgreSQL store (cargo feature `postgres`)")]
    NoPostgres,
    /// A PostgreSQL store operation failed.
    #[cfg(feature = "postgres")]
    #[error("state store (postgres): {}", memory_store::postgres::postgres_message(.0))]
    Postgres(#[source] tokio_postgres::Error),
    /// A file or folder could not be read or written.
    #[error("{path}: {error}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// A rollout file could not be read.
    #[error("cannot read rollout: {0}")]
    Rollout(#[from] memory_transcript::Error),
    /// The rollouts folder of a run could not be scanned.
    #[error("cannot scan {dir}")]
    Scan {
        /// The folder.
        dir: PathBuf,
        /// Why.
        #[source]
        source: Box<Error>,
    },
    /// A rollout file holds nothing readable.
    #[error("rollout {path}: {message}")]
    UnreadableRollout {
        /// The rollout file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The memory root holds something phase 2 must not write through.
    #[error("unsafe memory root entry {path}: {reason}")]
    UnsafeMemoryRoot {
        /// The offending path.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A memory root published on a shared store cannot be read back.
    #[error("shared memory-root revision {revision} is not valid: {source}")]
    InvalidSharedRoot {
        /// The revision.
        revision: i64,
        /// What the parser said of its file list.
        #[source]
        source: serde_json::Error,
    },
    /// Another worker took over the phase-2 lease (this one's expired).
    #[error("the phase-2 lease was lost to another worker")]
    LeaseLost,
    /// A model call failed.
    #[error("model call failed: {0}")]
    Model(memory_protocol::ModelError),
    /// The model answered, but not in the required form.
    #[error("invalid model output: {0}")]
    InvalidModelOutput(String),
    /// A prompt could not be rendered.
    #[error("cannot render prompt: {0}")]
    Prompt(#[from] memory_prompts::Error),
    /// Phase-2 data could not be serialized.
    #[error("cannot serialize phase-2 data: {0}")]
    Serialize(serde_json::Error),
    /// Opening, reaching or migrating the state store failed in `memory-store`: an unreachable
    /// server, an unusable store URL, a schema written by a newer build among others.
    #[error("state store: {0}")]
    Store(#[from] memory_store::Error),
    /// Codex is set to read a memory layout agent-memory does not write.
    #[error(
        "codex is set to memories.version = \"v2\" in {path}: codex then reads memories_v2/, \
         and agent-memory writes codex's v1 layout (memories/); remove that setting or set it \
         to \"v1\""
    )]
    CodexMemoriesV2 {
        /// Codex's config file.
        path: PathBuf,
    },
    /// Codex's config file cannot be read.
    #[error("cannot read codex's config {path}: {source}")]
    CodexConfigRead {
        /// Codex's config file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Codex's config file is not TOML.
    #[error("cannot read codex's config {path}: {}", .source.to_string().trim_end())]
    CodexConfigToml {
        /// Codex's config file.
        path: PathBuf,
        /// What the parser said.
        #[source]
        source: toml::de::Error,
    },
    /// Work on the blocking pool panicked or was cancelled.
    #[error("a blocking task did not finish: {0}")]
    Task(#[from] tokio::task::JoinError),
}

#[cfg(feature = "postgres")]
impl From<tokio_postgres::Error> for Error {
    fn from(error: tokio_postgres::Error) -> Error {
        Error::Postgres(error)
    }
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            error,
        }
    }
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
