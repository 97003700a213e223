//! Session transcripts as they are on disk, read for memory.
//!
//! - [`reader`]: streaming rollout reading that turns malformed lines into diagnostics;
//! - [`claude_code`]: Claude Code transcripts, read into the same rollout form;
//! - [`filter`]: what memory extraction may see of a rollout, serialized as compact JSON;
//! - [`injected`]: the one list of blocks a host injects into user messages, and stripping them;
//! - [`file_ops`]: which files a tool call reads or modifies;
//! - [`paths`]: the one path recogniser: which words of a text are paths, and which tool
//!   arguments are plausible paths;
//! - [`shell`]: the one shell tokeniser: command lines as segments of quote-aware words, and
//!   what kind of command each is;
//! - [`tool_output`]: the exit code a tool's output records;
//! - [`anchors`]: the words of a memory text a rewrite must not lose silently.
//!
//! Redaction, escaping, token counting and truncation are `memory-sanitize`'s; this crate uses
//! its redaction for the paths it reports. It does no I/O beyond reading what it is handed
//! ([`read_rollout_path`] opens the one file it is given; [`claude_code::subagent_files`] lists
//! the subagents beside a session's file) and never panics on any input.
//!
//! # Example
//!
//! A rollout as the write path reads it: a bad line becomes a diagnostic with its number, and
//! only what memory may see of the rest is kept (no developer messages, no reasoning).
//!
//! ```
//! use memory_transcript::{ReaderOptions, filter_for_memory, read_rollout, serialize_for_memory};
//!
//! let rollout = concat!(
//!     r#"{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"sandbox rules"}]}}"#, "\n",
//!     "not json\n",
//!     r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Fix the build"}]}}"#, "\n",
//! );
//! let read = read_rollout(rollout.as_bytes(), &ReaderOptions::default());
//! assert_eq!(read.diagnostics.len(), 1);
//! assert_eq!(read.diagnostics[0].line_number, 2);
//! let kept = filter_for_memory(read.items());
//! assert_eq!(kept.len(), 1);
//! let json = serialize_for_memory(&kept);
//! assert!(json.contains("Fix the build") && !json.contains("sandbox rules"));
//! ```

#![deny(missing_docs)]

pub mod anchors;
pub mod claude_code;
mod error;
pub mod file_ops;
pub mod filter;
pub mod injected;
pub mod paths;
pub mod reader;
pub mod shell;
pub mod tool_output;

pub use crate::error::{Error, Result};
pub use crate::filter::{filter_for_memory, serialize_for_memory};
pub use crate::injected::strip_injected;
pub use crate::reader::{
    Diagnostic, ReaderOptions, RolloutRead, RolloutReader, read_rollout, read_rollout_path,
};
