//! The goal tables in the shared SQLite state file.
//!
//! The file is shared with `memory-write`. Each keeps its version in `schema_versions`
//! (`memory-store`'s migrator) under its own owner, so either side can migrate without
//! disturbing the other, in any order. Like every user of the file it is opened by
//! `memory-store` (WAL mode, a busy timeout), and every write is one `BEGIN IMMEDIATE`
//! transaction, so concurrent processes serialize instead of overwriting each other.

use std::path::Path;

use memory_protocol::goal::ThreadGoalStatus;
use memory_store::ddl::Dialect;
use memory_store::migrate::Schema;
use memory_store::names::schema_owners::GOAL_STEERING;
use memory_store::names::tables::{GOAL_TURNS, THREAD_GOALS};
use memory_store::sqlite::DEFAULT_BUSY_TIMEOUT;
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use super::backend::{
    COLUMNS, Charge, GoalTx, TurnInsert, archive_statement, goal_row, status_from_sql,
    status_to_sql, tables_v1, tables_v2, trigger_to_sql, turn_error_to_sql,
};
use super::{BUDGET_LIMIT_REASON, GoalRow};
use crate::error::{Error, Result};

/// One migration per schema version of the goal tables; index `i` brings them to version
/// `i + 1`.
fn migrations() -> [String; 2] {
    [tables_v1(Dialect::Sqlite), tables_v2(Dialect::Sqlite)]
}

/// Opens (creating when missing) the database at `path` in WAL mode with a busy timeout.
pub(super) fn open(path: &Path) -> Result<Connection> {
    Ok(memory_store::sqlite::open(path, DEFAULT_BUSY_TIMEOUT)?)
}

/// A private database in memory.
pub(super) fn open_in_memory() -> Result<Connection> {
    Ok(memory_store::sqlite::open_in_memory(DEFAULT_BUSY_TIMEOUT)?)
}

/// Brings the goal tables up to date, leaving every other owner's tables alone, or refuses
/// tables written by a newer build.
pub(super) fn migrate(conn: &mut Connection) -> Result<()> {
    let migrations = migrations();
    memory_store::migrate::migrate_sqlite(conn, &schema(&migrations), |_, _| Ok(()))?;
    Ok(())
}

/// The goal tables as the migrator sees them.
pub(super) fn schema(migrations: &[String]) -> Schema<'_> {
    Schema {
        owner: GOAL_STEERING,
        migrations,
        legacy_user_version: false,
    }
}

/// The version recorded for the goal tables.
pub(super) fn schema_version(conn: &Connection) -> Result<i64> {
    Ok(memory_store::migrate::sqlite_version(conn, GOAL_STEERING)?)
}

/// Starts a write transaction that other writers wait for.
pub(super) fn begin(conn: &mut Connection) -> Result<Box<dyn GoalTx + '_>> {
    Ok(Box::new(SqliteTx(conn.transaction_with_behavior(
        TransactionBehavior::Immediate,
    )?)))
}

/// Reads the thread's goal row.
pub(super) fn read_row(conn: &Connection, thread_id: &str) -> Result<Option<GoalRow>> {
    let mut statement = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM {THREAD_GOALS} WHERE thread_id = ?1"
    ))?;
    let mut rows = statement.query([thread_id])?;
    rows.next()?.map(goal_row).transpose()
}

/// Every goal row, by thread id.
pub(super) fn list_rows(conn: &Connection) -> Result<Vec<GoalRow>> {
    let mut statement = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM {THREAD_GOALS} ORDER BY thread_id"
    ))?;
    let mut rows = statement.query([])?;
    let mut goals = Vec::new();
    while let Some(row) = rows.next()? {
        goals.push(goal_row(row)?);
    }
    Ok(goals)
}

/// A `BEGIN IMMEDIATE` transaction on the state file.
struct SqliteTx<'conn>(Transaction<'conn>);

impl GoalTx for SqliteTx<'_> {
    fn read_row(&mut self, thread_id: &str) -> Result<Option<GoalRow>> {
        read_row(&self.0, thread_id)
    }

    fn write_row(&mut self, row: &GoalRow) -> Result<()> {
        self.0.execute(
            &format!(
                "UPDATE {THREAD_GOALS} SET objective = ?3, status = ?4, status_reason = ?5,
                    token_budget = ?6, tokens_used = ?7, time_used_seconds = ?8,
                    updated_at_ms = ?9, blocker_key = ?10, blocker_reason = ?11,
                    blocker_reports = ?12, blocker_reported_this_turn = ?13,
                    turn_goal_tool_calls = ?14, turn_refused_goal_tool_calls = ?15,
                    idle_continuations = ?16, objective_notice_pending = ?17,
                    budget_notice_pending = ?18, continuations_issued = ?19,
                    last_continuation_at_ms = ?20, partial_turn_id = ?21,
                    partial_turn_tokens = ?22
                 WHERE thread_id = ?1 AND goal_id = ?2"
            ),
            params![
                row.thread_id,
                row.goal_id,
                row.objective,
                status_to_sql(row.status),
                row.status_reason,
                row.token_budget,
                row.tokens_used,
                row.time_used_seconds,
                row.updated_at_ms,
                row.audit.key,
                row.audit.reason,
                row.audit.reports,
                row.audit.reported_this_turn,
                row.turn_goal_tool_calls,
                row.turn_refused_goal_tool_calls,
                row.idle_continuations,
                row.objective_notice_pending,
                row.budget_notice_pending,
                row.continuations_issued,
                row.last_continuation_at_ms,
                row.partial_turn_id,
                row.partial_turn_tokens,
            ],
        )?;
        Ok(())
    }

    fn insert_row(&mut self, row: &GoalRow, now_ms: i64) -> Result<()> {
        self.0.execute(
            &archive_statement("thread_id = ?1", "?2"),
            params![row.thread_id, now_ms],
        )?;
        self.0.execute(
            &format!("DELETE FROM {THREAD_GOALS} WHERE thread_id = ?1"),
            [&row.thread_id],
        )?;
        self.0.execute(
            &format!(
                "INSERT INTO {THREAD_GOALS} (thread_id, goal_id, objective, status, token_budget,
                    tokens_used, time_used_seconds, created_at_ms, updated_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
            ),
            params![
                row.thread_id,
                row.goal_id,
                row.objective,
                status_to_sql(row.status),
                row.token_budget,
                row.tokens_used,
                row.time_used_seconds,
                row.created_at_ms,
                row.updated_at_ms,
            ],
        )?;
        Ok(())
    }

    fn archive_goal(&mut self, goal_id: &str, now_ms: i64) -> Result<()> {
        self.0.execute(
            &archive_statement("goal_id = ?1", "?2"),
            params![goal_id, now_ms],
        )?;
        self.0.execute(
            &format!("DELETE FROM {THREAD_GOALS} WHERE goal_id = ?1"),
            [goal_id],
        )?;
        Ok(())
    }

    fn turn_count(&mut self, goal_id: &str) -> Result<i64> {
        Ok(self.0.query_row(
            &format!("SELECT count(*) FROM {GOAL_TURNS} WHERE goal_id = ?1"),
            [goal_id],
            |row| row.get(0),
        )?)
    }

    fn turn_recorded(&mut self, goal_id: &str, turn_id: &str) -> Result<bool> {
        Ok(self
            .0
            .query_row(
                &format!("SELECT 1 FROM {GOAL_TURNS} WHERE goal_id = ?1 AND turn_id = ?2"),
                params![goal_id, turn_id],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    fn charge(&mut self, charge: &Charge<'_>) -> Result<ThreadGoalStatus> {
        let status: String = self.0.query_row(
            &format!(
                "UPDATE {THREAD_GOALS} SET
                    tokens_used = min(tokens_used, 9223372036854775807 - ?3) + ?3,
                    time_used_seconds = min(time_used_seconds, 9223372036854775807 - ?4) + ?4,
                    status = CASE WHEN status = 'active' AND token_budget IS NOT NULL
                        AND min(tokens_used, 9223372036854775807 - ?3) + ?3 >= token_budget
                        THEN 'budget_limited' ELSE status END,
                    status_reason = CASE WHEN status = 'active' AND token_budget IS NOT NULL
                        AND min(tokens_used, 9223372036854775807 - ?3) + ?3 >= token_budget
                        THEN ?5 ELSE status_reason END,
                    budget_notice_pending = CASE WHEN status = 'active'
                        AND token_budget IS NOT NULL
                        AND min(tokens_used, 9223372036854775807 - ?3) + ?3 >= token_budget
                        THEN 1 ELSE budget_notice_pending END,
                    updated_at_ms = ?6
                 WHERE thread_id = ?1 AND goal_id = ?2
                 RETURNING status"
            ),
            params![
                charge.thread_id,
                charge.goal_id,
                charge.tokens,
                charge.seconds,
                BUDGET_LIMIT_REASON,
                charge.now_ms,
            ],
            |row| row.get(0),
        )?;
        status_from_sql(&status).ok_or(Error::CorruptStatus(status))
    }

    fn insert_turn(&mut self, insert: &TurnInsert<'_>) -> Result<()> {
        let turn = insert.turn;
        self.0.execute(
            &format!(
                "INSERT INTO {GOAL_TURNS} (goal_id, turn_id, thread_id, seq, trigger, plan_mode,
                    input_tokens, cached_input_tokens, output_tokens, tokens_charged, seconds,
                    tool_calls, goal_tool_calls, refused_goal_tool_calls, error_kind, status_after,
                    recorded_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"
            ),
            params![
                turn.goal_id,
                turn.turn_id,
                insert.thread_id,
                insert.seq,
                trigger_to_sql(turn.trigger),
                turn.plan_mode,
                turn.input_tokens,
                turn.cached_input_tokens,
                turn.output_tokens,
                turn.tokens_charged,
                turn.seconds,
                turn.tool_calls,
                turn.goal_tool_calls,
                turn.refused_goal_tool_calls,
                turn.error.map(turn_error_to_sql),
                status_to_sql(turn.status_after),
                insert.recorded_at_ms,
            ],
        )?;
        Ok(())
    }

    fn commit(self: Box<Self>) -> Result<()> {
        self.0.commit()?;
        Ok(())
    }
}
