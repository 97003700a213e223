//! The crate's error type.

use std::path::PathBuf;

/// Why a write-path operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The state database could not be opened or prepared.
    // Causes are part of the messages and deliberately not a `source()`, so a report that
    // prints the error chain does not repeat them.
    #[error("cannot open state database {path}: {error}")]
    Open {
        /// Path of the database file.
        path: PathBuf,
        /// What SQLite said.
        error: rusqlite::Error,
    },
    /// A state database operation failed.
    #[error("state database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The database was written by a newer build.
    #[error(
        "state database schema version {found} is newer than this build supports ({supported})"
    )]
    SchemaTooNew {
        /// Version found in the file.
        found: i64,
        /// Newest version this build knows.
        supported: i64,
    },
    /// A store URL that cannot be used.
    #[error("state store {url}: {message}")]
    StoreUrl {
        /// The URL, without its password.
        url: String,
        /// What is wrong with it.
        message: String,
    },
    /// A store selection that names no backend this crate has.
    #[error("unsupported store {url:?}: use postgres://... or sqlite")]
    UnsupportedStore {
        /// The selection as given.
        url: String,
    },
    /// A shared store was selected, but this build has no PostgreSQL backend.
    #[error("this build has no PostgreSQL store (cargo feature `postgres`)")]
    NoPostgres,
    /// The PostgreSQL server cannot be reached (or refused the connection).
    #[error("cannot reach the state store at {url}: {message}")]
    Unreachable {
        /// The server, without a password.
        url: String,
        /// Why, as the driver said it.
        message: String,
    },
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
    #[error("shared memory-root revision {revision} is not valid: {message}")]
    InvalidSharedRoot {
        /// The revision.
        revision: i64,
        /// What is wrong with it.
        message: String,
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
    /// The store foundation failed in a way none of the variants above names.
    #[error("{0}")]
    Store(memory_store::Error),
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
    /// Codex's config file cannot be read or is not TOML.
    #[error("cannot read codex's config {path}: {message}")]
    CodexConfig {
        /// Codex's config file.
        path: PathBuf,
        /// What went wrong.
        message: String,
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

impl From<memory_store::Error> for Error {
    fn from(error: memory_store::Error) -> Error {
        match error {
            memory_store::Error::Open { path, source } => Error::Open {
                path,
                error: source,
            },
            memory_store::Error::Sqlite(error) => Error::Sqlite(error),
            memory_store::Error::SchemaTooNew {
                found, supported, ..
            } => Error::SchemaTooNew { found, supported },
            memory_store::Error::StoreUrl { url, message } => Error::StoreUrl { url, message },
            memory_store::Error::Unreachable { url, message } => {
                Error::Unreachable { url, message }
            }
            #[cfg(feature = "postgres")]
            memory_store::Error::Postgres(error) => error.into(),
            other => Error::Store(other),
        }
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
