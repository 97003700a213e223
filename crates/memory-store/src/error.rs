//! The crate's error type.

use std::path::PathBuf;

/// Why opening, migrating or reaching a store failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A SQLite file could not be opened or prepared.
    #[error("cannot open {path}: {source}")]
    Open {
        /// Path of the database file.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// A SQLite statement failed.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// An owner's tables were written by a newer build.
    #[error(
        "schema version {found} of the {owner} tables is newer than this build supports ({supported})"
    )]
    SchemaTooNew {
        /// The owner whose tables are too new.
        owner: &'static str,
        /// Version found in the database.
        found: i64,
        /// Newest version this build knows.
        supported: i64,
    },
    /// A store URL or option that cannot be used.
    #[error("cannot use {url}: {message}")]
    StoreUrl {
        /// The URL, without its password.
        url: String,
        /// What is wrong with it.
        message: String,
    },
    /// The PostgreSQL server cannot be reached (or refused the connection).
    #[cfg(feature = "postgres")]
    #[error("cannot reach {url}: {}", crate::postgres::pool_error_message(.source))]
    Unreachable {
        /// The server, without a password.
        url: String,
        /// Why, as the pool and the driver said it.
        #[source]
        source: deadpool_postgres::PoolError,
    },
    /// The connection pool for a PostgreSQL server could not be set up.
    #[cfg(feature = "postgres")]
    #[error("cannot set up connections to {url}: {source}")]
    Pool {
        /// The server, without a password.
        url: String,
        /// What the pool said.
        #[source]
        source: deadpool_postgres::BuildError,
    },
    /// A PostgreSQL statement failed.
    #[cfg(feature = "postgres")]
    #[error("postgres: {}", crate::postgres::postgres_message(.0))]
    Postgres(#[source] tokio_postgres::Error),
}

#[cfg(feature = "postgres")]
impl From<tokio_postgres::Error> for Error {
    fn from(error: tokio_postgres::Error) -> Error {
        Error::Postgres(error)
    }
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
