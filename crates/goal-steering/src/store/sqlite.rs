//! The goal tables in the shared SQLite state file.
//!
//! The file is shared with `memory-write`, which versions its own tables with
//! `PRAGMA user_version`. This backend never reads or writes that pragma: it keeps its version
//! in the `schema_versions` table under the owner `goal-steering`, so either side can migrate
//! without disturbing the other, in any order. Like every user of the file it runs in WAL mode
//! with a busy timeout, and every write is one `BEGIN IMMEDIATE` transaction, so concurrent
//! processes serialize instead of overwriting each other.

use std::path::Path;
use std::time::{Duration, Instant};

use memory_protocol::goal::{GoalTurnRecord, ThreadGoalStatus};
use memory_protocol::names::schema_owners::GOAL_STEERING;
use memory_protocol::names::tables::{GOAL_TURNS, SCHEMA_VERSIONS, THREAD_GOALS};
use rusqlite::{Connection, OptionalExtension, Row, Transaction, TransactionBehavior, params};

use super::GoalRow;
use super::backend::{
    COLUMNS, Charge, GoalTx, SqlTypes, status_from_sql, status_to_sql, tables_v1, trigger_to_sql,
    turn_error_to_sql,
};
use crate::audit::BlockerAuditState;
use crate::error::{Error, Result};

/// How long a writer waits for another process's write transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// One migration per schema version of the goal tables; index `i` brings them to version
/// `i + 1`.
fn migrations() -> [String; 1] {
    [tables_v1(&SqlTypes {
        int: "INTEGER",
        flag: "INTEGER",
        no: "0",
    })]
}

/// Opens (creating when missing) the database at `path` in WAL mode with a busy timeout.
pub(super) fn open(path: &Path) -> Result<Connection> {
    let open_error = |error| Error::Open {
        path: path.to_owned(),
        error,
    };
    let conn = Connection::open(path).map_err(open_error)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(open_error)?;
    // Switching a new file to WAL needs a moment of exclusive access, and SQLite reports a
    // concurrent opener as busy without calling the busy handler, so retry here. A file system
    // without WAL support keeps its journal mode; the store still works.
    let _mode: String =
        retry_busy(|| conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0)))
            .map_err(open_error)?;
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(open_error)?;
    Ok(conn)
}

/// Brings the goal tables up to date, leaving every other table and `PRAGMA user_version`
/// alone, or refuses tables written by a newer build.
pub(super) fn migrate(conn: &mut Connection) -> Result<()> {
    let migrations = migrations();
    let supported = i64::try_from(migrations.len()).unwrap_or(i64::MAX);
    // The version is read inside the write transaction, so two processes opening a fresh file
    // at once apply each migration exactly once.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(&format!(
        "CREATE TABLE IF NOT EXISTS {SCHEMA_VERSIONS} (
            owner TEXT PRIMARY KEY,
            version INTEGER NOT NULL
        )"
    ))?;
    let found: i64 = tx
        .query_row(
            &format!("SELECT version FROM {SCHEMA_VERSIONS} WHERE owner = ?1"),
            [GOAL_STEERING],
            |row| row.get(0),
        )
        .optional()?
        .unwrap_or(0);
    if found > supported {
        return Err(Error::SchemaTooNew { found, supported });
    }
    for (index, sql) in migrations.iter().enumerate() {
        let version = i64::try_from(index + 1).unwrap_or(i64::MAX);
        if version > found {
            tx.execute_batch(sql)?;
        }
    }
    tx.execute(
        &format!(
            "INSERT INTO {SCHEMA_VERSIONS} (owner, version) VALUES (?1, ?2)
             ON CONFLICT (owner) DO UPDATE SET version = excluded.version"
        ),
        params![GOAL_STEERING, supported.max(found)],
    )?;
    tx.commit()?;
    Ok(())
}

/// The version recorded for the goal tables.
pub(super) fn schema_version(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row(
        &format!("SELECT version FROM {SCHEMA_VERSIONS} WHERE owner = ?1"),
        [GOAL_STEERING],
        |row| row.get(0),
    )?)
}

/// Starts a write transaction that other writers wait for.
pub(super) fn begin(conn: &mut Connection) -> Result<Box<dyn GoalTx + '_>> {
    Ok(Box::new(SqliteTx(conn.transaction_with_behavior(
        TransactionBehavior::Immediate,
    )?)))
}

/// Reads the thread's goal row.
pub(super) fn read_row(conn: &Connection, thread_id: &str) -> Result<Option<GoalRow>> {
    Ok(conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM {THREAD_GOALS} WHERE thread_id = ?1"),
            [thread_id],
            row_from_sql,
        )
        .optional()?)
}

/// Every goal row, by thread id.
pub(super) fn list_rows(conn: &Connection) -> Result<Vec<GoalRow>> {
    let mut statement = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM {THREAD_GOALS} ORDER BY thread_id"
    ))?;
    let rows = statement.query_map([], row_from_sql)?;
    let mut goals = Vec::new();
    for row in rows {
        goals.push(row?);
    }
    Ok(goals)
}

fn row_from_sql(row: &Row<'_>) -> rusqlite::Result<GoalRow> {
    let status: String = row.get(3)?;
    let status = status_from_sql(&status).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            3,
            rusqlite::types::Type::Text,
            format!("unknown goal status `{status}`").into(),
        )
    })?;
    Ok(GoalRow {
        thread_id: row.get(0)?,
        goal_id: row.get(1)?,
        objective: row.get(2)?,
        status,
        status_reason: row.get(4)?,
        token_budget: row.get(5)?,
        tokens_used: row.get(6)?,
        time_used_seconds: row.get(7)?,
        created_at_ms: row.get(8)?,
        updated_at_ms: row.get(9)?,
        audit: BlockerAuditState {
            key: row.get(10)?,
            reason: row.get(11)?,
            reports: row.get(12)?,
            reported_this_turn: row.get(13)?,
        },
        turn_goal_tool_calls: row.get(14)?,
        turn_refused_goal_tool_calls: row.get(15)?,
        idle_continuations: row.get(16)?,
        objective_notice_pending: row.get(17)?,
        budget_notice_pending: row.get(18)?,
        continuations_issued: row.get(19)?,
        last_continuation_at_ms: row.get(20)?,
    })
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
                    last_continuation_at_ms = ?20
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
            ],
        )?;
        Ok(())
    }

    fn insert_row(&mut self, row: &GoalRow) -> Result<()> {
        self.0.execute(
            &format!("DELETE FROM {GOAL_TURNS} WHERE thread_id = ?1"),
            [&row.thread_id],
        )?;
        self.0.execute(
            &format!("DELETE FROM {THREAD_GOALS} WHERE thread_id = ?1"),
            [&row.thread_id],
        )?;
        self.0.execute(
            &format!(
                "INSERT INTO {THREAD_GOALS} (thread_id, goal_id, objective, status, token_budget,
                    created_at_ms, updated_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
            ),
            params![
                row.thread_id,
                row.goal_id,
                row.objective,
                status_to_sql(row.status),
                row.token_budget,
                row.created_at_ms,
                row.updated_at_ms,
            ],
        )?;
        Ok(())
    }

    fn delete_goal(&mut self, goal_id: &str) -> Result<()> {
        self.0.execute(
            &format!("DELETE FROM {GOAL_TURNS} WHERE goal_id = ?1"),
            [goal_id],
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
                charge.budget_limit_reason,
                charge.now_ms,
            ],
            |row| row.get(0),
        )?;
        status_from_sql(&status).ok_or(Error::CorruptStatus(status))
    }

    fn insert_turn(
        &mut self,
        thread_id: &str,
        seq: i64,
        turn: &GoalTurnRecord,
        recorded_at_ms: i64,
    ) -> Result<()> {
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
                thread_id,
                seq,
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
                recorded_at_ms,
            ],
        )?;
        Ok(())
    }

    fn commit(self: Box<Self>) -> Result<()> {
        self.0.commit()?;
        Ok(())
    }
}

/// Runs `op` again while SQLite reports the database busy or locked, up to the busy timeout.
fn retry_busy<T>(mut op: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    loop {
        match op() {
            Err(rusqlite::Error::SqliteFailure(error, _))
                if matches!(
                    error.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            other => return other,
        }
    }
}
