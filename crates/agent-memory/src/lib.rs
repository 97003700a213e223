//! agent-memory: the memory layer of a coding agent, as a library and a CLI.
//!
//! This facade re-exports each crate of the workspace as a module, so a host can depend on
//! this one crate, or on any single crate it needs:
//!
//! - [`protocol`]: wire types and the [`ModelClient`] trait;
//! - [`sanitize`]: reading, filtering, redacting, escaping, counting and truncating text;
//! - [`prompts`]: every prompt template with its typed render function;
//! - [`write`](mod@crate::write): the state store and the two-phase write path;
//! - [`compaction`]: compaction and working memory;
//! - [`goals`]: thread goals and steering;
//! - [`introspect`]: memory states, blocks and tools.
//!
//! It also ships the two [`ModelClient`] implementations a host needs to run the write path:
//! the built-in offline engine (no network, the default) and an OpenAI-compatible HTTP client.

#![deny(missing_docs)]

pub use goal_steering as goals;
pub use memory_compaction as compaction;
pub use memory_introspect as introspect;
pub use memory_prompts as prompts;
pub use memory_protocol as protocol;
pub use memory_sanitize as sanitize;
pub use memory_write as write;

pub mod models;
pub mod offline;
pub mod openai;

pub use memory_protocol::ModelClient;
