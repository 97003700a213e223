//! The compaction error type.

use memory_protocol::ModelError;

/// What can go wrong reading a session or compacting it. A compaction that fails writes
/// nothing: every error leaves the session as it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompactionError {
    /// Compaction is turned off in the settings; no plan is produced, whatever the reason.
    #[error("compaction is disabled")]
    Disabled,
    /// A line of a session file is not a session entry.
    #[error("session line {line}: {message}")]
    SessionLine {
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        message: String,
    },
    /// The session's entries contradict each other (a duplicate id, a compaction entry whose
    /// kept entry does not exist before it).
    #[error("invalid session: {0}")]
    InvalidSession(String),
    /// `--previous` names a session of another conversation.
    #[error("the previous session does not match this conversation: {0}")]
    PreviousMismatch(String),
    /// A summarizer call failed.
    #[error("{stage} window {window} of {windows} failed: {source}")]
    Model {
        /// Which summary: `summary`, `turn prefix` or `short summary`.
        stage: &'static str,
        /// 1-based window number.
        window: usize,
        /// Windows planned when it failed.
        windows: usize,
        /// The model's error.
        #[source]
        source: ModelError,
    },
    /// The summarizer answered with nothing (after redaction).
    #[error("the summarizer returned an empty {stage}")]
    EmptySummary {
        /// Which summary.
        stage: &'static str,
    },
    /// The model kept reporting a context overflow until the window would drop below the
    /// input floor.
    #[error(
        "{stage} window {window} overflows the model's context even at {sent} tokens; halving it would go below the floor of {floor} tokens"
    )]
    BelowFloor {
        /// Which summary.
        stage: &'static str,
        /// 1-based window number.
        window: usize,
        /// Tokens of conversation sent in the last attempt.
        sent: u64,
        /// The input floor.
        floor: u64,
    },
    /// A prompt could not be rendered.
    #[error("cannot render the summarizer prompt: {0}")]
    Prompt(#[from] memory_prompts::Error),
    /// A value could not be encoded as JSON (the summarizer's structured input, a session
    /// entry).
    #[error("cannot encode as json: {0}")]
    Encode(#[source] serde_json::Error),
}

/// A result with [`CompactionError`].
pub type Result<T, E = CompactionError> = std::result::Result<T, E>;
