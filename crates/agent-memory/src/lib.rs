//! agent-memory: the memory layer of a coding agent.
//!
//! This facade re-exports each crate of the workspace as a module, so a host can depend on
//! this one crate, or on any single crate it needs:
//!
//! - [`protocol`]: wire types and the [`ModelClient`] trait;
//! - [`transcript`]: reading session transcripts: rollouts, filtering, injected context, file
//!   operations, tool output, anchors;
//! - [`sanitize`]: redacting, escaping, counting and truncating text;
//! - [`prompts`]: every prompt template with its typed render function;
//! - [`models`]: model specs and, with the `openai` feature (on by default), an
//!   OpenAI-compatible HTTP client;
//! - [`offline`]: the built-in offline engine (the default model);
//! - [`store`]: the state store's foundation: SQLite opener, migrator, PostgreSQL pool, table
//!   names;
//! - [`write`](mod@crate::write): the state store and the two-phase write path;
//! - [`compaction`]: compaction of a conversation that outgrows its context window;
//! - [`working_memory`]: the seven-section working memory and the session window;
//! - [`goals`]: thread goals and steering;
//! - [`introspect`]: memory states, blocks and tools;
//! - [`mcp`]: the MCP server over the memory and goal tools, mountable on any byte stream or
//!   stdio;
//! - [`hooks`]: Claude Code's hooks answered from memory and the goal, and their installer.
//!
//! It holds no behaviour of its own. The `agent-memory` command-line tool lives in the
//! `agent-memory-cli` crate, so depending on this facade never compiles a CLI parser or a
//! progress bar, and `default-features = false` leaves out the HTTP client too.

#![deny(missing_docs)]

pub use goal_steering as goals;
pub use memory_compaction as compaction;
pub use memory_config as config;
pub use memory_hooks as hooks;
pub use memory_introspect as introspect;
pub use memory_mcp as mcp;
pub use memory_models as models;
pub use memory_offline as offline;
pub use memory_prompts as prompts;
pub use memory_protocol as protocol;
pub use memory_sanitize as sanitize;
pub use memory_store as store;
pub use memory_transcript as transcript;
pub use memory_write as write;
pub use working_memory;

pub use memory_protocol::ModelClient;
