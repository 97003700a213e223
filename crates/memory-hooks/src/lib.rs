//! Hooks for agents that own their loop.
//!
//! Claude Code runs a command at points of a session and passes it JSON on stdin; what the
//! command prints goes back into the session. [`claude_code`] answers every event from the
//! home's memory ([`memory_introspect::Introspector`]) and the session's goal
//! ([`goal_steering::GoalStore`]), keeps per-session state so nothing is injected twice, and
//! installs or removes the hooks in Claude Code's `settings.json`.
//!
//! The crate sits above `memory-introspect` and `goal-steering` (a hook needs both), beside
//! `memory-mcp`; the CLI's `agent-memory hook` parses arguments and prints what it returns.
//!
//! # Example
//!
//! Claude Code starts a session: the hook answers with the memory block, here a fresh home's,
//! which says memory is empty.
//!
//! ```
//! use memory_hooks::claude_code::{HookContext, answer};
//! use memory_introspect::{IntrospectConfig, Introspector};
//!
//! let home = tempfile::tempdir()?;
//! let memory = Introspector::open(home.path(), IntrospectConfig::default())?;
//! let mut context = HookContext {
//!     memory: &memory,
//!     goals: None,
//!     state_dir: home.path().join("hooks/claude-code"),
//!     claude_config_dir: None,
//! };
//! let stdin = r#"{"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"}"#;
//! let printed = answer(stdin, &mut context)?;
//! assert!(printed.contains("agent-memory"), "{printed}");
//! assert!(answer("not json", &mut context).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

pub mod claude_code;
mod error;

pub use crate::error::{Error, Result};
