//! Conversation compaction: when a conversation nears its context window, the older part is
//! summarized into a structured hand-off and the recent part is kept verbatim.
//!
//! The pieces, in the order a compaction uses them:
//!
//! - [`Session`]: a conversation's entries (messages and compaction entries) read from JSONL,
//!   and the live messages the latest compaction left in context; [`session_from_rollout`]
//!   converts a codex rollout into one;
//! - [`CompactionConfig`]: the `[compaction]` table of `config.toml`; [`check_due`] says
//!   whether a conversation is due and why;
//! - [`should_compact`]: the pure trigger, over the larger of the provider-reported and the
//!   estimated context size, with a re-arm band so a compaction that cannot get far below the
//!   threshold does not run at every step; [`Budgets`] derives every token budget;
//! - the cut ([`plan_compaction`]): never at a tool result, at least `keep_recent_tokens`
//!   kept, a split turn's beginning summarized on its own, the latest user message always kept,
//!   and the span starting at the previous compaction's first kept entry;
//! - serialization ([`serialize_messages`]): `[User]`, `[Assistant]`, `[Think]`,
//!   `[Tool Call]`, `[Tool Result]` and `[Shell]` blocks, secrets redacted, useless results
//!   dropped with their calls, results cut to 2,000 characters;
//! - windows ([`plan_windows`]): the span packed on message boundaries into texts that fit the
//!   input budget, folded into a running summary by [`compact`], with overflow replanning;
//! - file tracking ([`merge_details`]): read and modified files, bounded, their block stripped
//!   from the previous summary before it is sent again;
//! - the Done guard ([`keep_done_items`]): finished work survives every update.

mod codex;
mod config;
mod cut;
mod error;
mod files;
mod run;
mod serialize;
mod session;
mod settings;
mod summary_text;
mod windows;

pub use self::codex::{CODEX_ENGINE, session_from_rollout};
pub use self::config::{
    CompactionConfig, KEEP_RECENT_TOKENS_RANGE, THRESHOLD_PERCENT_RANGE, TOKENS_RANGE,
};
pub use self::cut::{Preparation, prepare};
pub use self::error::{CompactionError, Result};
pub use self::files::{
    FILE_LIST_LIMIT, files_block, merge_details, scan_messages, strip_files_blocks,
};
pub use self::run::{
    Compaction, CompactionOptions, CompactionOutcome, CompactionReason, PlannedCompaction, compact,
    plan_compaction,
};
pub use self::serialize::{
    CleanStats, Dialect, TOOL_RESULT_MAX_CHARS, clean_messages, serialize_message,
    serialize_messages,
};
pub use self::session::{LiveView, Session, message_tokens};
pub use self::settings::{
    Budgets, CompactionSettings, ContextSize, DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_REARM_PERCENT,
    DEFAULT_RESERVE_TOKENS, DEFAULT_WINDOW_TOKENS, DueCheck, INPUT_WINDOW_PERCENT,
    MAX_INPUT_FLOOR_TOKENS, MAX_SHORT_SUMMARY_TOKENS, MAX_SUMMARY_TOKENS, MIN_INPUT_FLOOR_TOKENS,
    MIN_RESERVE_PERCENT, ThresholdSource, check_due, should_compact, trigger_tokens,
};
pub use self::summary_text::{GuardReport, keep_done_items, normalize_item};
pub use self::windows::{Window, fit_message, plan_windows};
