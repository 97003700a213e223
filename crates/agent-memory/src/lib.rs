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
//!
//! # Example: a host loop
//!
//! What a host does around its own model: the memory block in the system prompt, recall in front
//! of each user message, and, when the conversation outgrows its budget, a compaction after
//! which the goal is restated. (`examples/host` is the whole loop: tools, rollout, write path.)
//!
//! ```
//! use agent_memory::compaction::compaction::{self, CompactionOptions, CompactionOutcome, Session};
//! use agent_memory::goals::{GoalConfig, GoalStore, NewGoal, SteeringEvent};
//! use agent_memory::introspect::{BlockOptions, IntrospectConfig, Introspector};
//! use agent_memory::protocol::compaction::{AssistantBlock, ConversationEntry, ConversationMessage};
//! use agent_memory::{offline::OfflineEngine, sanitize::ByteEstimate};
//!
//! fn push(session: &mut Session, message: ConversationMessage) -> compaction::Result<()> {
//!     let id = session.fresh_id("m");
//!     session.push_message(ConversationEntry { id, message })
//! }
//!
//! let home = tempfile::tempdir()?;
//! let memory = Introspector::open(home.path(), IntrospectConfig::default())?;
//! let mut goals = GoalStore::open_home(home.path(), GoalConfig::default())?;
//! let objective = "Port the ledger to integer cents".to_owned();
//! let goal = NewGoal { objective, token_budget: None, replace: false, expected_goal_id: None };
//! goals.set_goal("t1", &goal)?;
//! // The memory block goes into every request's system prompt.
//! let system = memory.render_block(&BlockOptions::default())?.text;
//! let (mut session, runtime) = (Session::new(Vec::new())?, tokio::runtime::Runtime::new()?);
//! for step in 0..60 {
//!     let user = format!("Step {step}: port module {step}.");
//!     let recall = memory.recall(&user, 3)?.text; // this turn's recall fence, if any
//!     push(&mut session, ConversationMessage::User { text: format!("{recall}{user}") })?;
//!     // Here the host sends `system` and `session.live()` to its model; a stand-in answers.
//!     let text = format!("Ported module {step}; tests pass. {}", "details ".repeat(400));
//!     push(&mut session, ConversationMessage::Assistant { content: vec![AssistantBlock::Text { text }] })?;
//!     if session.context_tokens(&ByteEstimate) > 30_000 {
//!         let (engine, options) = (OfflineEngine::new(), CompactionOptions::default());
//!         let outcome = runtime.block_on(compaction::compact(&session, &engine, &options, &ByteEstimate))?;
//!         if let CompactionOutcome::Compacted(compaction) = outcome {
//!             session.push_compaction(compaction.entry)?;
//!             // What the summary dropped comes back: the goal, as a hidden message.
//!             let goal = goals.steering_for("t1", SteeringEvent::Compacted)?.expect("an active goal");
//!             push(&mut session, ConversationMessage::User { text: goal.text })?;
//!         }
//!     }
//! }
//! assert!(!system.is_empty() && session.latest_compaction().is_some());
//! let restated = |e: &&ConversationEntry| matches!(&e.message, ConversationMessage::User { text } if text.contains("integer cents"));
//! assert!(session.live().messages.iter().any(restated));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

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
