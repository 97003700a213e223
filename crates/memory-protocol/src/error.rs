//! The crate's error type.

/// Why a text is not a valid wire value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The text is not JSON.
    #[error("invalid json: {0}")]
    Json(#[source] serde_json::Error),
    /// A rollout line that is not a JSON object.
    #[error("a rollout line must be a json object, found {0}")]
    NotAnObject(&'static str),
    /// A known item has fields of the wrong type.
    #[error("invalid `{item_type}` item: {message}")]
    InvalidItem {
        /// The item's `type`.
        item_type: String,
        /// What was wrong.
        message: String,
    },
    /// A goal objective that is empty after trimming.
    #[error("goal objective must not be empty")]
    EmptyObjective,
    /// A goal objective longer than the maximum, counted after trimming.
    #[error("goal objective has {chars} characters; at most {max} are allowed")]
    ObjectiveTooLong {
        /// Characters after trimming.
        chars: usize,
        /// The maximum.
        max: usize,
    },
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
