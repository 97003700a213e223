//! Conversation compaction and working memory.
//!
//! This crate owns what happens when a conversation outgrows its context window:
//!
//! - [`compaction`]: choosing the cut point, the span to summarize (starting at the previous
//!   compaction's first kept entry, so kept messages are never lost), serializing it with
//!   secrets redacted, summarizing it window by window through [`memory_protocol::ModelClient`],
//!   and tracking the files it read and modified;
//! - **working memory**: the seven-section document the model edits with KEEP / UPDATE /
//!   APPEND operations, the guards that refuse edits which lose facts, merging, reminders and
//!   recovery from malformed tool output.
//!
//! The wire types it works on ([`memory_protocol::compaction`] and
//! [`memory_protocol::working_memory`]) live in `memory-protocol`.

#![deny(missing_docs)]

pub mod compaction;
pub mod working_memory;
