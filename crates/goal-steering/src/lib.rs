//! Thread goals: long tasks that continue across turns, under a budget the user owns, with
//! exits the model cannot fake and defences against runaway loops.
//!
//! - [`GoalStore`]: one goal per thread in the shared state file (`<home>/state.sqlite`), its
//!   own tables versioned in `schema_versions` under the owner `goal-steering`, so it never
//!   collides with `memory-write`'s migrations; with the `postgres` feature, `GoalStore::connect` keeps the same tables on a PostgreSQL server, so every
//!   machine of a fleet reads and steers the same goals. User actions
//!   ([`GoalStore::set_goal`], [`GoalStore::edit_objective`], [`GoalStore::set_budget`],
//!   [`GoalStore::pause`], [`GoalStore::resume`], [`GoalStore::clear`]) take the expected goal
//!   id, so a stale update is refused.
//! - Turns ([`GoalStore::record_turn`]): tokens charged are input − cached + output (none in
//!   plan mode); the budget check and the switch to budget-limited are one statement.
//! - [`status`]: the status machine; an illegal action is an [`InvalidTransition`] naming the
//!   legal next actions. Budgets are the user's: the model can neither set nor raise one.
//! - Steering ([`GoalStore::next_steering`]): the continuation, budget-limit and
//!   objective-updated prompts as hidden internal context from the source `goal`, decided in
//!   the transaction that records them; after a compaction ([`SteeringEvent::Compacted`],
//!   [`GoalStore::steering_for`]) the goal restated for the next request; a circuit breaker pauses the goal after three idle
//!   continuation turns; an optional minimum interval spaces continuations.
//! - Tools ([`GoalStore::call_goal_tool`]): `get_goal`, `create_goal` (never with a budget),
//!   `update_goal` (complete, or blocked through the [`audit`] counted in code: the third
//!   consecutive goal turn reporting the same blocker). Refusals say what is still needed and
//!   are never retryable.
//! - Hosts that report no turns (an MCP client): [`GapTurns`] delimits goal turns by quiet gaps
//!   between goal-tool calls, so the blocked audit still counts one report per turn.
//!
//! - Hosts whose hooks can continue a turn: [`claude_code`], Claude Code's `Stop` hook (record
//!   the turn from the transcript, block with the continuation while the goal is active).
//!
//! The wire types live in [`memory_protocol::goal`]; the prompt templates in
//! `memory_prompts::goals`. `docs/goals.md` has the transition table.
//!
//! # Example
//!
//! The user sets a goal; when the thread goes idle, and again after a compaction, the host gets a
//! hidden continuation that restates the objective; the model reads the goal through its tool.
//!
//! ```
//! use goal_steering::{GoalConfig, GoalStore, GoalToolContext, NewGoal, SteeringEvent};
//!
//! let mut goals = GoalStore::open_in_memory(GoalConfig::default())?;
//! goals.set_goal(
//!     "thread-1",
//!     &NewGoal {
//!         objective: "Port the ledger to integer cents".to_owned(),
//!         token_budget: Some(200_000),
//!         replace: false,
//!         expected_goal_id: None,
//!     },
//! )?;
//! for event in [SteeringEvent::Idle, SteeringEvent::Compacted] {
//!     let steering = goals.steering_for("thread-1", event)?.expect("the goal is active");
//!     assert!(steering.text.contains("Port the ledger to integer cents"));
//! }
//! let answer = goals.call_goal_tool(
//!     &GoalToolContext::thread("thread-1"),
//!     "get_goal",
//!     &serde_json::json!({}),
//! )?;
//! assert!(answer.to_json().to_string().contains("200000"));
//! # Ok::<(), goal_steering::Error>(())
//! ```

#![deny(missing_docs)]

pub mod audit;
pub mod claude_code;
mod clock;
mod config;
mod error;
mod gap_turns;
pub mod status;
mod steering;
mod store;
mod tools;

pub use crate::clock::{Clock, ManualClock, SystemClock};
pub use crate::config::{
    DEFAULT_MAX_TOKEN_BUDGET, DEFAULT_MCP_TURN_GAP_SECONDS, GoalConfig, MAX_TOKEN_BUDGET_RANGE,
    MCP_TURN_GAP_SECONDS_RANGE, MIN_CONTINUATION_SECONDS_RANGE,
};
pub use crate::error::{Error, Result};
pub use crate::gap_turns::GapTurns;
pub use crate::status::{GoalAction, InvalidTransition, SystemEvent};
pub use crate::steering::{SteeringEvent, internal_context_message, render_steering};
#[cfg(feature = "postgres")]
pub use crate::store::PgGoalOptions;
pub use crate::store::{
    BlockerStreak, GoalSnapshot, GoalStore, IDLE_CONTINUATION_LIMIT, MAX_TURN_SECONDS,
    MAX_TURN_TOKENS, NewGoal, STATE_FILE_NAME, TurnTokens, TurnUsage,
};
pub use crate::tools::{GoalToolContext, GoalToolOutcome};
