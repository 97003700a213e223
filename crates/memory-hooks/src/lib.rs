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

#![deny(missing_docs)]

pub mod claude_code;
mod error;

pub use crate::error::{Error, Result};
