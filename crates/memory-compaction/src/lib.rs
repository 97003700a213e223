//! Conversation compaction.
//!
//! This crate owns what happens when a conversation outgrows its context window. The
//! [`compaction`] module chooses the cut point and the span to summarize (starting at the
//! previous compaction's first kept entry, so kept messages are never lost), serializes it with
//! secrets redacted, summarizes it window by window through [`memory_protocol::ModelClient`],
//! and tracks the files it read and modified. The seven-section working memory lives in the
//!   `working-memory` crate.
//!
//! The wire types it works on ([`memory_protocol::compaction`]) live in `memory-protocol`.

#![deny(missing_docs)]

pub mod compaction;
