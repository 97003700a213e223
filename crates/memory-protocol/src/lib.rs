//! Wire types of agent-memory.
//!
//! This crate owns every type that crosses a process or language boundary, with serde for the
//! wire and schemars for JSON Schemas (draft 2020-12; `cargo xtask codegen` writes them to
//! `schemas/`):
//!
//! - [`rollout`]: codex rollout files, every format version, read tolerantly;
//! - [`stage_one`]: stage-one input, output, jobs and stored outputs of the write path;
//! - [`consolidation`]: phase-2 input and output;
//! - [`goal`]: thread goals and the goal tools' arguments;
//! - [`working_memory`]: the seven sections and their KEEP / UPDATE / APPEND operations;
//! - [`compaction`]: sessions (messages and compaction entries), compaction plans and the
//!   summarizer's structured input;
//! - [`introspect`]: memory states and the memory tools' requests, results and failures;
//! - [`memory_format`]: the raw-memory and rollout-summary format both extraction engines write;
//! - [`model`]: the [`ModelClient`] trait every crate uses to reach a model;
//! - [`strict`]: the strict JSON Schema subset structured-output APIs accept, checked and made;
//! - [`tools`]: every tool a host's model calls, in OpenAI function and MCP form;
//! - [`names`]: the memory-root layout, table names, boundary tags and the redaction marker.
//!
//! It depends only on serde, serde_json, schemars, thiserror and async-trait.
//!
//! # Example
//!
//! A rollout line is read whatever codex version wrote it; an item type this version has never
//! seen is kept as it is, not refused.
//!
//! ```
//! use memory_protocol::{RolloutItem, RolloutLine};
//!
//! let line = RolloutLine::parse(
//!     r#"{"timestamp":"2025-11-03T09:12:40.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Fix the build"}]}}"#,
//! )?;
//! assert!(matches!(line.item, RolloutItem::ResponseItem(_)));
//!
//! let newer = RolloutLine::parse(r#"{"type":"brand_new_item","payload":{"x":1}}"#)?;
//! assert_eq!(newer.item.item_type(), "brand_new_item");
//! assert!(RolloutLine::parse("[1, 2]").is_err());
//! # Ok::<(), memory_protocol::Error>(())
//! ```

#![deny(missing_docs)]

pub mod compaction;
pub mod consolidation;
mod error;
pub mod goal;
pub mod introspect;
pub mod memory_format;
pub mod model;
pub mod names;
pub mod rollout;
pub mod stage_one;
pub mod strict;
pub mod tools;
pub mod working_memory;

pub use crate::error::{Error, Result};
pub use crate::model::{
    ContextWindow, ContextWindowSource, ModelClient, ModelError, ModelRequest, ModelResponse,
    RateLimitSnapshot, StructuredOutputMode, TaskKind, TokenUsage, input_token_budget,
};
pub use crate::names::REDACTED_SECRET;
pub use crate::rollout::{ContentItem, ResponseItem, RolloutItem, RolloutLine, SessionMeta};
pub use crate::stage_one::StageOneOutput;
