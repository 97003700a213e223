//! Untrusted text, made safe for a model.
//!
//! Everything a model sees passes through this crate. It owns:
//!
//! - [`redact`]: secret redaction (a keyword prefilter plus 60-odd rules);
//! - [`safe_text`]: terminal- and display-safe text (no control characters but newline and tab,
//!   no bidirectional controls) for everything written to the memory root or printed;
//! - [`escape_xml_text`], [`escape_boundary_tags`], [`escape_control_tokens`]: escaping XML text, boundary tags and chat-template control tokens;
//! - [`TokenCounter`]: token counting (exact o200k, a bytes/4 estimate, a script-aware estimate,
//!   characters);
//! - [`truncate_middle`], [`truncate_tool_result`]: head-and-tail truncation to a byte, token or character budget.
//!
//! Reading transcripts (rollouts, filtering, injected blocks, file operations, tool output) is
//! the `memory-transcript` crate's. This one does no I/O and never panics on any input.

#![deny(missing_docs)]

mod escape;
pub mod redact;
pub mod safe_text;
mod tokens;
mod truncate;

pub use crate::escape::{escape_boundary_tags, escape_control_tokens, escape_xml_text};
pub use crate::redact::{LineRedactor, redact_bytes, redact_json_strings, redact_secrets};
pub use crate::safe_text::display_safe;
pub use crate::tokens::{
    ByteEstimate, CharCount, CjkEstimate, O200kCounter, TokenCounter, is_cjk, o200k,
};
pub use crate::truncate::{
    DEFAULT_TOOL_RESULT_CHARS, TruncationPolicy, truncate_middle, truncate_tool_result,
};
