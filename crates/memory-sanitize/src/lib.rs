//! Untrusted transcript text, made safe for a model.
//!
//! Everything a model sees passes through this crate: reading rollout files, filtering them to
//! what memory extraction may see, redacting secrets, escaping boundary tags and control
//! tokens, counting tokens and truncating to a budget. It does no I/O beyond reading what it is
//! handed and never panics on any input.

#![deny(missing_docs)]

pub mod escape;

pub use crate::escape::{escape_boundary_tags, escape_control_tokens, escape_xml_text};
