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
//!
//! # Example
//!
//! A conversation that outgrew its budget, compacted: the older part becomes the summarizer's
//! hand-off, the recent part is kept verbatim, and the entry is applied only because it makes
//! the context smaller. The summarizer is any [`memory_protocol::ModelClient`] (a host passes its
//! model, or the offline engine); here one that always writes the same hand-off.
//!
//! ```
//! use memory_compaction::compaction::{
//!     CompactionOptions, CompactionOutcome, CompactionSettings, Session, compact,
//! };
//! use memory_protocol::{ModelClient, ModelError, ModelRequest, ModelResponse};
//! use memory_sanitize::ByteEstimate;
//!
//! struct Summarizer;
//!
//! #[async_trait::async_trait]
//! impl ModelClient for Summarizer {
//!     fn name(&self) -> String {
//!         "fixed".to_owned()
//!     }
//!     fn context_window(&self) -> Option<u64> {
//!         None
//!     }
//!     async fn complete(&self, _request: ModelRequest) -> Result<ModelResponse, ModelError> {
//!         let text = "## Goal\n- Port the ledger to integer cents".to_owned();
//!         Ok(ModelResponse { text, usage: None })
//!     }
//! }
//!
//! let mut jsonl = String::new();
//! for step in 0..20 {
//!     let words = "checked the rounding of every entry ".repeat(20);
//!     jsonl += &format!(
//!         "{{\"type\":\"message\",\"id\":\"u{step}\",\"message\":{{\"role\":\"user\",\"text\":\"Step {step}\"}}}}\n"
//!     );
//!     jsonl += &format!(
//!         "{{\"type\":\"message\",\"id\":\"a{step}\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"{words}\"}}]}}}}\n"
//!     );
//! }
//! let mut session = Session::from_jsonl(&jsonl)?;
//! let options = CompactionOptions {
//!     settings: CompactionSettings { keep_recent_tokens: 500, ..CompactionSettings::default() },
//!     ..CompactionOptions::default()
//! };
//! let runtime = tokio::runtime::Builder::new_current_thread().build()?;
//! let outcome = runtime.block_on(compact(&session, &Summarizer, &options, &ByteEstimate))?;
//! let CompactionOutcome::Compacted(compaction) = outcome else {
//!     panic!("expected a compaction, got {outcome:?}");
//! };
//! assert!(compaction.entry.tokens_after < compaction.entry.tokens_before);
//! assert!(compaction.entry.summary.starts_with("## Goal"));
//! session.push_compaction(compaction.entry)?;
//! assert!(session.live().messages.len() < 40);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

pub mod compaction;
