//! The crate's error type.

use std::path::PathBuf;

use memory_protocol::goal::ThreadGoalStatus;

use crate::status::InvalidTransition;

/// Why a goal operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The state database could not be opened or prepared.
    #[error("cannot open goal store {path}: {error}")]
    Open {
        /// Path of the database file.
        path: PathBuf,
        /// What SQLite said.
        error: rusqlite::Error,
    },
    /// A goal store operation failed.
    #[error("goal store: {0}")]
    Sqlite(rusqlite::Error),
    /// A stored status this build does not know (the row was written by another program).
    #[error("goal store holds an unknown goal status `{0}`")]
    CorruptStatus(String),
    /// The PostgreSQL server could not be reached (refused, timed out, authentication).
    #[cfg(feature = "postgres")]
    #[error("cannot reach the goal store at {url}: {message}")]
    Unreachable {
        /// The server, password redacted.
        url: String,
        /// What the driver said.
        message: String,
    },
    /// The store URL or options are not valid.
    #[cfg(feature = "postgres")]
    #[error("invalid goal store url {url}: {message}")]
    StoreUrl {
        /// The URL, password redacted.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// A PostgreSQL goal store operation failed.
    #[cfg(feature = "postgres")]
    #[error("goal store: {}", memory_store::postgres::postgres_message(.0))]
    Postgres(tokio_postgres::Error),
    /// The runtime that drives the PostgreSQL connections could not start or stopped.
    #[cfg(feature = "postgres")]
    #[error("goal store runtime: {0}")]
    Runtime(std::io::Error),
    /// The store foundation failed in a way none of the variants above names.
    #[error("goal store: {0}")]
    Store(memory_store::Error),
    /// The goal tables were written by a newer build.
    #[error("goal tables schema version {found} is newer than this build supports ({supported})")]
    SchemaTooNew {
        /// Version found in the file.
        found: i64,
        /// Newest version this build knows.
        supported: i64,
    },
    /// A file or folder could not be read or created.
    #[error("{path}: {error}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// A host hook's input (its payload, or the transcript it names) cannot be read as one.
    #[error("hook input: {0}")]
    HookInput(String),
    /// The objective is empty or too long.
    #[error("invalid objective: {0}")]
    Objective(memory_protocol::Error),
    /// A thread id that is empty, too long or holds control characters.
    #[error("invalid thread id: {0}")]
    ThreadId(&'static str),
    /// A token budget of zero or less.
    #[error("a goal token budget must be positive, got {0}")]
    BudgetNotPositive(i64),
    /// A token budget above the configured maximum.
    #[error("goal token budget {budget} exceeds the configured maximum of {max}")]
    BudgetTooLarge {
        /// The budget asked for.
        budget: i64,
        /// The configured maximum.
        max: i64,
    },
    /// The thread has no goal.
    #[error("thread {thread_id} has no goal")]
    NoGoal {
        /// The thread.
        thread_id: String,
    },
    /// `set` without `replace` while the thread has a goal that is not complete.
    #[error(
        "thread {thread_id} already has an unfinished goal ({status}); replace it explicitly or clear it first"
    )]
    UnfinishedGoal {
        /// The thread.
        thread_id: String,
        /// The status of the goal in the way.
        status: ThreadGoalStatus,
    },
    /// The caller named a goal id the thread no longer has.
    #[error("goal {expected} is stale: thread {thread_id} now has goal {found}")]
    StaleGoal {
        /// The thread.
        thread_id: String,
        /// The goal id the caller expected.
        expected: String,
        /// The goal id the thread has.
        found: String,
    },
    /// The action is not allowed from the goal's status.
    #[error("{0}")]
    InvalidTransition(InvalidTransition),
    /// Turn usage that cannot be charged.
    #[error("invalid turn usage: {0}")]
    InvalidTurn(String),
    /// A tool name this crate does not handle.
    #[error("unknown goal tool `{0}`")]
    UnknownTool(String),
    /// A steering prompt failed to render.
    #[error("cannot render a goal prompt: {0}")]
    Prompt(memory_prompts::Error),
}

// Causes are part of the messages and deliberately not a `source()`, so a report that prints
// the error chain does not repeat them.
impl From<rusqlite::Error> for Error {
    fn from(error: rusqlite::Error) -> Self {
        Error::Sqlite(error)
    }
}

#[cfg(feature = "postgres")]
impl From<tokio_postgres::Error> for Error {
    fn from(error: tokio_postgres::Error) -> Self {
        Error::Postgres(error)
    }
}

impl From<memory_store::Error> for Error {
    fn from(error: memory_store::Error) -> Self {
        match error {
            memory_store::Error::Open { path, source } => Error::Open {
                path,
                error: source,
            },
            memory_store::Error::Sqlite(error) => Error::Sqlite(error),
            memory_store::Error::SchemaTooNew {
                found, supported, ..
            } => Error::SchemaTooNew { found, supported },
            #[cfg(feature = "postgres")]
            memory_store::Error::StoreUrl { url, message } => Error::StoreUrl { url, message },
            #[cfg(feature = "postgres")]
            memory_store::Error::Unreachable { url, message } => {
                Error::Unreachable { url, message }
            }
            #[cfg(feature = "postgres")]
            memory_store::Error::Postgres(error) => Error::Postgres(error),
            other => Error::Store(other),
        }
    }
}

impl From<memory_protocol::Error> for Error {
    fn from(error: memory_protocol::Error) -> Self {
        Error::Objective(error)
    }
}

impl From<InvalidTransition> for Error {
    fn from(error: InvalidTransition) -> Self {
        Error::InvalidTransition(error)
    }
}

impl From<memory_prompts::Error> for Error {
    fn from(error: memory_prompts::Error) -> Self {
        Error::Prompt(error)
    }
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
