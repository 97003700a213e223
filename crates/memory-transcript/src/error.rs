//! The crate's error type.

use std::path::PathBuf;

/// Why reading a rollout file failed. Malformed lines are not errors: the reader reports them as
/// [`crate::reader::Diagnostic`]s and goes on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be opened or read.
    // The cause is part of the message and deliberately not a `source()`, so a report that
    // prints the error chain does not repeat it.
    #[error("cannot read `{}`: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        error: std::io::Error,
    },
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
