//! Untrusted transcript text, made safe for a model.
//!
//! Everything a model sees passes through this crate. It owns:
//!
//! - [`anchors`]: the words of a memory text a rewrite must not lose silently;
//! - [`file_ops`]: which files a tool call reads or modifies;
//! - [`reader`]: streaming rollout reading that turns malformed lines into diagnostics;
//! - [`filter`]: what memory extraction may see of a rollout, serialized as compact JSON;
//! - [`injected`]: the one list of blocks a host injects into user messages, and stripping them;
//! - [`redact`]: secret redaction (a keyword prefilter plus 60-odd rules);
//! - [`safe_text`]: terminal- and display-safe text (no control characters but newline and tab,
//!   no bidirectional controls) for everything written to the memory root or printed;
//! - [`escape`]: escaping XML text, boundary tags and chat-template control tokens;
//! - [`tokens`]: token counting (exact o200k, a bytes/4 estimate, a script-aware estimate,
//!   characters);
//! - [`tool_output`]: the exit code a tool's output records;
//! - [`truncate`]: head-and-tail truncation to a byte, token or character budget.
//!
//! It does no I/O beyond reading what it is handed ([`read_rollout_path`] opens the one file it
//! is given) and never panics on any input.

#![deny(missing_docs)]

pub mod anchors;
mod error;
pub mod escape;
pub mod file_ops;
pub mod filter;
pub mod injected;
pub mod reader;
pub mod redact;
pub mod safe_text;
pub mod tokens;
pub mod tool_output;
pub mod truncate;

pub use crate::error::{Error, Result};
pub use crate::escape::{escape_boundary_tags, escape_control_tokens, escape_xml_text};
pub use crate::filter::{filter_for_memory, serialize_for_memory};
pub use crate::injected::strip_injected;
pub use crate::reader::{
    Diagnostic, ReaderOptions, RolloutRead, RolloutReader, read_rollout, read_rollout_path,
};
pub use crate::redact::{LineRedactor, redact_bytes, redact_json_strings, redact_secrets};
pub use crate::safe_text::display_safe;
pub use crate::tokens::{ByteEstimate, CharCount, CjkEstimate, O200kCounter, TokenCounter, o200k};
pub use crate::truncate::{
    DEFAULT_TOOL_RESULT_CHARS, TruncationPolicy, truncate_middle, truncate_tool_result,
};
