//! The reference host: a small coding-agent loop that uses every agent-memory crate, as a host
//! author would, and checks the invariants users lose at the seams between them.
//!
//! Read [`host`] first: its module docs are the loop, step by step, and each step is a few
//! library calls. The other modules are what a host needs around them:
//!
//! - [`script`]: the JSON script a scripted run replays (projects, sessions, user turns, the
//!   model's replies);
//! - [`model`]: the conversation model ([`HostModel`]) and [`ScriptedModel`]; [`chat`]: the
//!   same over an OpenAI-compatible server (`--base-url`);
//! - [`context`]: the request: the pinned preamble (host instructions, `AGENTS.md`, the memory
//!   block) plus the compacted conversation, or, in working-memory mode
//!   ([`ContextStrategy::WorkingMemory`]), the working memory and the messages it has not
//!   absorbed;
//! - [`tools`]: the shell, memory and goal tools the model calls;
//! - [`rollout`]: the session written as a codex-format rollout as it goes;
//! - [`seams`]: the invariants, each naming the user reports it answers;
//! - [`long_script`]: the generator of `scripts/long.json`, the 200-turn session.

#![deny(missing_docs)]

pub mod chat;
pub mod context;
mod error;
pub mod host;
pub mod long_script;
pub mod model;
pub mod rollout;
pub mod script;
pub mod seams;
pub mod tools;

pub use crate::error::{HostError, Result};
pub use crate::host::{ContextStrategy, Host, HostOptions, HostReport};
pub use crate::model::{HostModel, HostRequest, ModelReply, ScriptedModel};
pub use crate::script::Script;
pub use crate::seams::{Seam, Violation};
