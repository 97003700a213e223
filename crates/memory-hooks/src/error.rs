//! The crate's error type.

use std::path::PathBuf;

/// Why a hook could not answer, or the hooks could not be installed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The hook's stdin is not a hook payload.
    #[error("not a Claude Code hook payload: {0}")]
    Payload(#[source] serde_json::Error),
    /// What the hook writes (its answer, the session's saved state) could not be encoded.
    #[error("cannot encode the hook's json: {0}")]
    Encode(#[source] serde_json::Error),
    /// A file could not be read or written.
    #[error("cannot use `{}`: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        error: std::io::Error,
    },
    /// `settings.json` is not a JSON object of the shape Claude Code reads.
    #[error("`{}` is not a Claude Code settings file: {message}", path.display())]
    Settings {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// Memory could not be read.
    #[error(transparent)]
    Introspect(#[from] memory_introspect::Error),
    /// The goal store failed.
    #[error(transparent)]
    Goal(#[from] goal_steering::Error),
    /// A prompt could not be rendered.
    #[error(transparent)]
    Prompt(#[from] memory_prompts::Error),
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
