//! What the goal store needs from a database, so one body of goal logic runs on SQLite and on
//! PostgreSQL alike.
//!
//! Every write is one [`GoalTx`]: it is opened for one thread, and no other writer of that
//! thread's goal runs until it commits or is dropped (dropping rolls back). SQLite gets that
//! from `BEGIN IMMEDIATE` (one writer for the whole file); PostgreSQL from a transaction-scoped
//! advisory lock on the thread. The logic reads the goal row, decides in Rust, and writes it
//! back, so both backends make the same decisions from the same rows.

use memory_protocol::goal::{GoalTurnRecord, ThreadGoalStatus};
use memory_store::columns::Columns;
use memory_store::ddl::Dialect;
use memory_store::names::tables::{GOAL_ARCHIVE, GOAL_TURNS, THREAD_GOALS};

use super::GoalRow;
use crate::audit::BlockerAuditState;
use crate::error::{Error, Result};

/// A turn's charge, applied by [`GoalTx::charge`] in one statement.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Charge<'a> {
    pub(crate) thread_id: &'a str,
    pub(crate) goal_id: &'a str,
    pub(crate) tokens: i64,
    pub(crate) seconds: i64,
    pub(crate) now_ms: i64,
}

/// A turn to record, by [`GoalTx::insert_turn`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct TurnInsert<'a> {
    pub(crate) thread_id: &'a str,
    /// The turn's place among the goal's turns, from 1.
    pub(crate) seq: i64,
    pub(crate) turn: &'a GoalTurnRecord,
    pub(crate) recorded_at_ms: i64,
}

/// One write transaction on one thread's goal.
pub(crate) trait GoalTx {
    /// The thread's goal row.
    fn read_row(&mut self, thread_id: &str) -> Result<Option<GoalRow>>;
    /// Writes every mutable column of `row` back to its goal.
    fn write_row(&mut self, row: &GoalRow) -> Result<()>;
    /// Inserts a new goal row (its usage included), archiving the thread's previous goal.
    fn insert_row(&mut self, row: &GoalRow, now_ms: i64) -> Result<()>;
    /// Moves the goal to the archive; its turn records stay.
    fn archive_goal(&mut self, goal_id: &str, now_ms: i64) -> Result<()>;
    /// How many turns are recorded for the goal.
    fn turn_count(&mut self, goal_id: &str) -> Result<i64>;
    /// Whether the turn is already recorded for the goal.
    fn turn_recorded(&mut self, goal_id: &str, turn_id: &str) -> Result<bool>;
    /// Adds a turn's tokens and seconds and, when an active goal reaches its budget, switches
    /// it to budget-limited, in one statement that reads the usage it writes (no interleaving
    /// can leave an active goal at or above its budget). Returns the status after it.
    fn charge(&mut self, charge: &Charge<'_>) -> Result<ThreadGoalStatus>;
    /// Records a turn of the goal.
    fn insert_turn(&mut self, insert: &TurnInsert<'_>) -> Result<()>;
    /// Makes the transaction's writes visible to everyone.
    fn commit(self: Box<Self>) -> Result<()>;
}

/// The SQL spelling of a status, shared by both backends.
pub(crate) fn status_to_sql(status: ThreadGoalStatus) -> &'static str {
    match status {
        ThreadGoalStatus::Active => "active",
        ThreadGoalStatus::Paused => "paused",
        ThreadGoalStatus::Blocked => "blocked",
        ThreadGoalStatus::UsageLimited => "usage_limited",
        ThreadGoalStatus::BudgetLimited => "budget_limited",
        ThreadGoalStatus::Complete => "complete",
    }
}

/// The status a stored spelling names.
pub(crate) fn status_from_sql(text: &str) -> Option<ThreadGoalStatus> {
    ThreadGoalStatus::ALL
        .into_iter()
        .find(|status| status_to_sql(*status) == text)
}

/// The columns of the goal table, in [`GoalRow`] field order (both backends read them so).
pub(crate) const COLUMNS: &str = "thread_id, goal_id, objective, status, status_reason, \
    token_budget, tokens_used, time_used_seconds, created_at_ms, updated_at_ms, blocker_key, \
    blocker_reason, blocker_reports, blocker_reported_this_turn, turn_goal_tool_calls, \
    turn_refused_goal_tool_calls, idle_continuations, objective_notice_pending, \
    budget_notice_pending, continuations_issued, last_continuation_at_ms, partial_turn_id, \
    partial_turn_tokens";

/// The goal row in `row`, whose columns are [`COLUMNS`], on either backend.
pub(crate) fn goal_row<R: Columns>(row: &R) -> Result<GoalRow>
where
    Error: From<R::Error>,
{
    let status = row.text(3)?;
    let status = status_from_sql(&status).ok_or(Error::CorruptStatus(status))?;
    // The counts are stored as 64-bit integers; one beyond `u32` saturates rather than fail
    // the whole read.
    let count = |index: usize| -> Result<u32> {
        Ok(u32::try_from(row.integer(index)?).unwrap_or(u32::MAX))
    };
    Ok(GoalRow {
        thread_id: row.text(0)?,
        goal_id: row.text(1)?,
        objective: row.text(2)?,
        status,
        status_reason: row.text_or_null(4)?,
        token_budget: row.integer_or_null(5)?,
        tokens_used: row.integer(6)?,
        time_used_seconds: row.integer(7)?,
        created_at_ms: row.integer(8)?,
        updated_at_ms: row.integer(9)?,
        audit: BlockerAuditState {
            key: row.text_or_null(10)?,
            reason: row.text_or_null(11)?,
            reports: count(12)?,
            reported_this_turn: row.flag(13)?,
        },
        turn_goal_tool_calls: row.integer(14)?,
        turn_refused_goal_tool_calls: row.integer(15)?,
        idle_continuations: count(16)?,
        objective_notice_pending: row.flag(17)?,
        budget_notice_pending: row.flag(18)?,
        continuations_issued: row.integer(19)?,
        last_continuation_at_ms: row.integer_or_null(20)?,
        partial_turn_id: row.text_or_null(21)?,
        partial_turn_tokens: row.integer(22)?,
    })
}

/// Copies a goal row into the archive; `{where_goal}` and `{now}` are the dialect's placeholders
/// for the goal id and the archive time.
pub(crate) fn archive_statement(where_goal: &str, now: &str) -> String {
    format!(
        "INSERT INTO {GOAL_ARCHIVE} (goal_id, thread_id, objective, status, status_reason,
            token_budget, tokens_used, time_used_seconds, created_at_ms, updated_at_ms,
            archived_at_ms)
         SELECT goal_id, thread_id, objective, status, status_reason, token_budget, tokens_used,
            time_used_seconds, created_at_ms, updated_at_ms, {now}
         FROM {THREAD_GOALS} WHERE {where_goal}"
    )
}

/// Version 2: the archive of replaced and cleared goals (goal records are never deleted: a
/// replaced goal's usage and turns stay readable), and the running turn's tokens already
/// charged by mid-turn budget checks.
pub(crate) fn tables_v2(dialect: Dialect) -> String {
    let int = dialect.integer();
    format!(
        "CREATE TABLE {GOAL_ARCHIVE} (
            goal_id TEXT PRIMARY KEY,
            thread_id TEXT NOT NULL,
            objective TEXT NOT NULL,
            status TEXT NOT NULL,
            status_reason TEXT,
            token_budget {int},
            tokens_used {int} NOT NULL,
            time_used_seconds {int} NOT NULL,
            created_at_ms {int} NOT NULL,
            updated_at_ms {int} NOT NULL,
            archived_at_ms {int} NOT NULL
        );
        CREATE INDEX {GOAL_ARCHIVE}_thread ON {GOAL_ARCHIVE} (thread_id, archived_at_ms);
        ALTER TABLE {THREAD_GOALS} ADD COLUMN partial_turn_id TEXT;
        ALTER TABLE {THREAD_GOALS} ADD COLUMN partial_turn_tokens {int} NOT NULL DEFAULT 0;"
    )
}

/// The stored spelling of a turn's trigger.
pub(crate) fn trigger_to_sql(trigger: memory_protocol::goal::GoalTurnTrigger) -> &'static str {
    match trigger {
        memory_protocol::goal::GoalTurnTrigger::User => "user",
        memory_protocol::goal::GoalTurnTrigger::Continuation => "continuation",
    }
}

/// The stored spelling of a turn's error.
pub(crate) fn turn_error_to_sql(error: memory_protocol::goal::GoalTurnError) -> &'static str {
    match error {
        memory_protocol::goal::GoalTurnError::UsageLimit => "usage_limit",
        memory_protocol::goal::GoalTurnError::Other => "other",
    }
}

/// Version 1 of the goal tables, in `dialect`: the same tables and checks on every backend.
pub(crate) fn tables_v1(dialect: Dialect) -> String {
    let (int, flag, no) = (dialect.integer(), dialect.flag(), dialect.no());
    format!(
        "CREATE TABLE {THREAD_GOALS} (
            thread_id TEXT PRIMARY KEY,
            goal_id TEXT NOT NULL UNIQUE,
            objective TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN
                ('active', 'paused', 'blocked', 'usage_limited', 'budget_limited', 'complete')),
            status_reason TEXT,
            token_budget {int} CHECK (token_budget IS NULL OR token_budget > 0),
            tokens_used {int} NOT NULL DEFAULT 0 CHECK (tokens_used >= 0),
            time_used_seconds {int} NOT NULL DEFAULT 0 CHECK (time_used_seconds >= 0),
            created_at_ms {int} NOT NULL,
            updated_at_ms {int} NOT NULL,
            blocker_key TEXT,
            blocker_reason TEXT,
            blocker_reports {int} NOT NULL DEFAULT 0 CHECK (blocker_reports >= 0),
            blocker_reported_this_turn {flag} NOT NULL DEFAULT {no},
            turn_goal_tool_calls {int} NOT NULL DEFAULT 0,
            turn_refused_goal_tool_calls {int} NOT NULL DEFAULT 0,
            idle_continuations {int} NOT NULL DEFAULT 0 CHECK (idle_continuations >= 0),
            objective_notice_pending {flag} NOT NULL DEFAULT {no},
            budget_notice_pending {flag} NOT NULL DEFAULT {no},
            continuations_issued {int} NOT NULL DEFAULT 0,
            last_continuation_at_ms {int},
            CHECK (status <> 'active' OR token_budget IS NULL OR tokens_used < token_budget),
            CHECK (status <> 'budget_limited'
                   OR (token_budget IS NOT NULL AND tokens_used >= token_budget))
        );
        CREATE TABLE {GOAL_TURNS} (
            goal_id TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            seq {int} NOT NULL,
            trigger TEXT NOT NULL CHECK (trigger IN ('user', 'continuation')),
            plan_mode {flag} NOT NULL,
            input_tokens {int},
            cached_input_tokens {int},
            output_tokens {int},
            tokens_charged {int} NOT NULL CHECK (tokens_charged >= 0),
            seconds {int} NOT NULL CHECK (seconds >= 0),
            tool_calls {int} NOT NULL CHECK (tool_calls >= 0),
            goal_tool_calls {int} NOT NULL,
            refused_goal_tool_calls {int} NOT NULL,
            error_kind TEXT CHECK (error_kind IS NULL OR error_kind IN ('usage_limit', 'other')),
            status_after TEXT NOT NULL,
            recorded_at_ms {int} NOT NULL,
            PRIMARY KEY (goal_id, turn_id)
        );
        CREATE INDEX {GOAL_TURNS}_thread ON {GOAL_TURNS} (thread_id, seq);"
    )
}
