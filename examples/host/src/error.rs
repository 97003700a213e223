//! The host's error.

use std::path::PathBuf;

/// What stops a host run.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The script cannot be read or is inconsistent.
    #[error("invalid script: {0}")]
    Script(String),
    /// A file or folder could not be read or written.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What went wrong.
        error: std::io::Error,
    },
    /// The conversation model failed.
    #[error("model: {0}")]
    Model(String),
    /// A rollout line could not be written.
    #[error("rollout: {0}")]
    Rollout(String),
    /// Memory (the block, recall or a memory tool) failed.
    #[error(transparent)]
    Memory(#[from] memory_introspect::Error),
    /// The goal store failed.
    #[error(transparent)]
    Goal(#[from] goal_steering::Error),
    /// A compaction failed.
    #[error(transparent)]
    Compaction(#[from] memory_compaction::compaction::CompactionError),
    /// The working-memory session (its folder, a commit or an assembly) failed.
    #[error(transparent)]
    WorkingMemory(#[from] working_memory::Error),
    /// The write path failed.
    #[error(transparent)]
    Write(#[from] memory_write::Error),
    /// The rollout the host wrote could not be read back.
    #[error(transparent)]
    Transcript(#[from] memory_transcript::Error),
}

/// The host's result.
pub type Result<T, E = HostError> = std::result::Result<T, E>;
