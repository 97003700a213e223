//! Every prompt template of agent-memory, typed, escaped and tested.
//!
//! Templates live in the top-level `prompts/` folder as Markdown with minijinja syntax and are
//! embedded at build time. The environment treats an unknown variable as an error. Each
//! template has one typed render function taking a context struct; every slot that carries
//! user, tool, file or model text is an [`UntrustedText`], escaped for the template's boundary
//! tags (and chat-template control tokens) as it is rendered, so the data can neither open nor
//! close the tags that delimit it. Goal objectives are escaped as XML text.
//!
//! Families: [`memories`] (write and read path), [`compaction`], [`working_memory`],
//! [`goals`], [`introspect`] and [`hooks`]. [`fixtures`] renders each template with an example context.

#![deny(missing_docs)]

mod engine;
mod error;
mod registry;
mod untrusted;

pub mod compaction;
pub mod fixtures;
pub mod goals;
pub mod hooks;
pub mod introspect;
pub mod labels;
pub mod memories;
pub mod working_memory;

pub use crate::error::{Error, Result};
pub use crate::untrusted::UntrustedText;
