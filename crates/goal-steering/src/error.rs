//! The crate's error type.

use std::path::PathBuf;

use memory_protocol::goal::ThreadGoalStatus;

use crate::status::InvalidTransition;

/// Why a goal operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A goal store operation failed.
    #[error("goal store: {0}")]
    Sqlite(rusqlite::Error),
    /// A stored status this build does not know (the row was written by another program).
    #[error("goal store holds an unknown goal status `{0}`")]
    CorruptStatus(String),
    /// A PostgreSQL goal store operation failed.
    #[cfg(feature = "postgres")]
    #[error("goal store: {}", memory_store::postgres::postgres_message(.0))]
    Postgres(tokio_postgres::Error),
    /// The runtime that drives the PostgreSQL connections could not start or stopped.
    #[cfg(feature = "postgres")]
    #[error("goal store runtime: {0}")]
    Runtime(std::io::Error),
    /// Opening, reaching or migrating the goal tables failed in `memory-store`: an unreachable
    /// server, an unusable store URL, tables written by a newer build among others.
    #[error("goal store: {0}")]
    Store(memory_store::Error),
    /// A file or folder could not be read or created.
    #[error("{path}: {error}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// The transcript a host hook names holds no turn to charge (no user prompt, or a last
    /// turn with neither an answer id nor a line uuid).
    #[error("hook input: {0}")]
    HookInput(String),
    /// A Stop hook's stdin is not JSON of the payload's shape.
    #[error("not a Stop hook payload: {0}")]
    StopPayload(#[source] serde_json::Error),
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
        Error::Store(error)
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
