//! The goal store: the goal tables in the shared state file `<home>/state.sqlite`.
//!
//! The file is shared with `memory-write`, which versions its own tables with
//! `PRAGMA user_version`. This store never reads or writes that pragma: it keeps its version in
//! the `schema_versions` table under the owner `goal-steering`, so either side can migrate
//! without disturbing the other, in any order. Like every user of the file it runs in WAL mode
//! with a busy timeout, and every write is one `BEGIN IMMEDIATE` transaction that reads the goal
//! it changes, so concurrent processes serialize instead of overwriting each other.
//!
//! The table enforces the budget invariants itself (`CHECK` constraints): an active goal is
//! below its budget, and a budget-limited goal is at or above it.

mod goals;
mod turns;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use memory_protocol::goal::{ThreadGoal, ThreadGoalStatus};
use memory_protocol::names::schema_owners::GOAL_STEERING;
use memory_protocol::names::tables::{GOAL_TURNS, SCHEMA_VERSIONS, THREAD_GOALS};
use rusqlite::{Connection, OptionalExtension, Row, Transaction, TransactionBehavior, params};

use crate::audit::BlockerAuditState;
use crate::clock::{Clock, SystemClock};
use crate::config::GoalConfig;
use crate::error::{Error, Result};

pub use self::goals::NewGoal;
pub use self::turns::{
    IDLE_CONTINUATION_LIMIT, MAX_TURN_SECONDS, MAX_TURN_TOKENS, TurnTokens, TurnUsage,
};

/// File name of the state database under the agent-memory home (shared with `memory-write`).
pub const STATE_FILE_NAME: &str = "state.sqlite";

/// How long a writer waits for another process's write transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// Longest thread id accepted, in characters.
const MAX_THREAD_ID_CHARS: usize = 256;

/// One migration per schema version of the goal tables; index `i` brings them to version
/// `i + 1`.
fn migrations() -> [String; 1] {
    [format!(
        "CREATE TABLE {THREAD_GOALS} (
            thread_id TEXT PRIMARY KEY,
            goal_id TEXT NOT NULL UNIQUE,
            objective TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN
                ('active', 'paused', 'blocked', 'usage_limited', 'budget_limited', 'complete')),
            status_reason TEXT,
            token_budget INTEGER CHECK (token_budget IS NULL OR token_budget > 0),
            tokens_used INTEGER NOT NULL DEFAULT 0 CHECK (tokens_used >= 0),
            time_used_seconds INTEGER NOT NULL DEFAULT 0 CHECK (time_used_seconds >= 0),
            created_at_ms INTEGER NOT NULL,
            updated_at_ms INTEGER NOT NULL,
            blocker_key TEXT,
            blocker_reason TEXT,
            blocker_reports INTEGER NOT NULL DEFAULT 0 CHECK (blocker_reports >= 0),
            blocker_reported_this_turn INTEGER NOT NULL DEFAULT 0,
            turn_goal_tool_calls INTEGER NOT NULL DEFAULT 0,
            turn_refused_goal_tool_calls INTEGER NOT NULL DEFAULT 0,
            idle_continuations INTEGER NOT NULL DEFAULT 0 CHECK (idle_continuations >= 0),
            objective_notice_pending INTEGER NOT NULL DEFAULT 0,
            budget_notice_pending INTEGER NOT NULL DEFAULT 0,
            continuations_issued INTEGER NOT NULL DEFAULT 0,
            last_continuation_at_ms INTEGER,
            CHECK (status <> 'active' OR token_budget IS NULL OR tokens_used < token_budget),
            CHECK (status <> 'budget_limited'
                   OR (token_budget IS NOT NULL AND tokens_used >= token_budget))
        );
        CREATE TABLE {GOAL_TURNS} (
            goal_id TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            trigger TEXT NOT NULL CHECK (trigger IN ('user', 'continuation')),
            plan_mode INTEGER NOT NULL,
            input_tokens INTEGER,
            cached_input_tokens INTEGER,
            output_tokens INTEGER,
            tokens_charged INTEGER NOT NULL CHECK (tokens_charged >= 0),
            seconds INTEGER NOT NULL CHECK (seconds >= 0),
            tool_calls INTEGER NOT NULL CHECK (tool_calls >= 0),
            goal_tool_calls INTEGER NOT NULL,
            refused_goal_tool_calls INTEGER NOT NULL,
            error_kind TEXT CHECK (error_kind IS NULL OR error_kind IN ('usage_limit', 'other')),
            status_after TEXT NOT NULL,
            recorded_at_ms INTEGER NOT NULL,
            PRIMARY KEY (goal_id, turn_id)
        );
        CREATE INDEX {GOAL_TURNS}_thread ON {GOAL_TURNS} (thread_id, seq);"
    )]
}

/// The goal store over one SQLite file. Every method that writes runs in its own
/// `BEGIN IMMEDIATE` transaction.
pub struct GoalStore {
    conn: Connection,
    path: PathBuf,
    config: GoalConfig,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for GoalStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoalStore")
            .field("path", &self.path)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl GoalStore {
    /// Opens (creating when missing) `<home>/state.sqlite`, creating `home` too.
    pub fn open_home(home: &Path, config: GoalConfig) -> Result<GoalStore> {
        std::fs::create_dir_all(home).map_err(|error| Error::Io {
            path: home.to_owned(),
            error,
        })?;
        GoalStore::open(&home.join(STATE_FILE_NAME), config)
    }

    /// Opens (creating when missing) the database at `path` and brings the goal tables up to
    /// date, leaving every other table and `PRAGMA user_version` alone.
    pub fn open(path: &Path, config: GoalConfig) -> Result<GoalStore> {
        let open_error = |error| Error::Open {
            path: path.to_owned(),
            error,
        };
        let conn = Connection::open(path).map_err(open_error)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_error)?;
        // Switching a new file to WAL needs a moment of exclusive access, and SQLite reports
        // a concurrent opener as busy without calling the busy handler, so retry here. A file
        // system without WAL support keeps its journal mode; the store still works.
        let _mode: String =
            retry_busy(|| conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0)))
                .map_err(open_error)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(open_error)?;
        let mut store = GoalStore {
            conn,
            path: path.to_owned(),
            config,
            clock: Arc::new(SystemClock),
        };
        store.migrate()?;
        Ok(store)
    }

    /// An in-memory store, for tests and hosts that keep goals for one process only.
    pub fn open_in_memory(config: GoalConfig) -> Result<GoalStore> {
        let conn = Connection::open_in_memory().map_err(|error| Error::Open {
            path: PathBuf::from(":memory:"),
            error,
        })?;
        let mut store = GoalStore {
            conn,
            path: PathBuf::from(":memory:"),
            config,
            clock: Arc::new(SystemClock),
        };
        store.migrate()?;
        Ok(store)
    }

    /// The store reading time from `clock` instead of the system clock.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> GoalStore {
        self.clock = clock;
        self
    }

    /// Path of the database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The configuration the store enforces.
    pub fn config(&self) -> &GoalConfig {
        &self.config
    }

    /// The schema version of the goal tables (the `goal-steering` row of `schema_versions`).
    pub fn schema_version(&self) -> Result<i64> {
        Ok(self.conn.query_row(
            &format!("SELECT version FROM {SCHEMA_VERSIONS} WHERE owner = ?1"),
            [GOAL_STEERING],
            |row| row.get(0),
        )?)
    }

    fn migrate(&mut self) -> Result<()> {
        let migrations = migrations();
        let supported = i64::try_from(migrations.len()).unwrap_or(i64::MAX);
        // The version is read inside the write transaction, so two processes opening a fresh
        // file at once apply each migration exactly once.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
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

    /// The thread's goal, if it has one.
    pub fn get(&self, thread_id: &str) -> Result<Option<ThreadGoal>> {
        Ok(self.snapshot(thread_id)?.map(|snapshot| snapshot.goal))
    }

    /// The thread's goal with the steering and audit state kept beside it.
    pub fn snapshot(&self, thread_id: &str) -> Result<Option<GoalSnapshot>> {
        validate_thread_id(thread_id)?;
        Ok(read_row(&self.conn, thread_id)?.map(GoalRow::into_snapshot))
    }

    /// Every goal in the store, by thread id.
    pub fn list(&self) -> Result<Vec<ThreadGoal>> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {COLUMNS} FROM {THREAD_GOALS} ORDER BY thread_id"
        ))?;
        let rows = statement.query_map([], GoalRow::from_row)?;
        let mut goals = Vec::new();
        for row in rows {
            goals.push(row?.into_snapshot().goal);
        }
        Ok(goals)
    }

    /// Starts a write transaction that other writers wait for.
    pub(crate) fn write(&mut self) -> Result<Transaction<'_>> {
        Ok(self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?)
    }

    pub(crate) fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// `budget` if it is positive and at most the configured maximum.
    fn validate_budget(&self, budget: Option<i64>) -> Result<Option<i64>> {
        match budget {
            None => Ok(None),
            Some(budget) if budget <= 0 => Err(Error::BudgetNotPositive(budget)),
            Some(budget) if budget > self.config.max_token_budget => Err(Error::BudgetTooLarge {
                budget,
                max: self.config.max_token_budget,
            }),
            Some(budget) => Ok(Some(budget)),
        }
    }
}

/// A goal with the steering and audit state the store keeps beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoalSnapshot {
    /// The goal.
    pub goal: ThreadGoal,
    /// The blocker being reported, with the consecutive goal turns that reported it.
    pub blocker: Option<BlockerStreak>,
    /// Consecutive continuation turns without a tool call other than goal tools.
    pub idle_continuations: u32,
    /// The objective-updated prompt is due (sent once after an edit, while active).
    pub objective_notice_pending: bool,
    /// The budget-limit prompt is due (sent once after the goal becomes budget-limited).
    pub budget_notice_pending: bool,
    /// Continuation prompts handed out for this goal.
    pub continuations_issued: i64,
    /// When the last continuation prompt was handed out, in Unix milliseconds.
    pub last_continuation_at_ms: Option<i64>,
}

/// A blocker the model has been reporting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockerStreak {
    /// The blocker as last reported (secrets redacted).
    pub reason: String,
    /// Consecutive goal turns that reported it.
    pub reports: u32,
    /// Whether the open turn already reported it.
    pub reported_this_turn: bool,
}

/// The columns of [`THREAD_GOALS`], in [`GoalRow::from_row`] order.
const COLUMNS: &str = "thread_id, goal_id, objective, status, status_reason, token_budget, \
    tokens_used, time_used_seconds, created_at_ms, updated_at_ms, blocker_key, blocker_reason, \
    blocker_reports, blocker_reported_this_turn, turn_goal_tool_calls, \
    turn_refused_goal_tool_calls, idle_continuations, objective_notice_pending, \
    budget_notice_pending, continuations_issued, last_continuation_at_ms";

/// One row of [`THREAD_GOALS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GoalRow {
    pub(crate) thread_id: String,
    pub(crate) goal_id: String,
    pub(crate) objective: String,
    pub(crate) status: ThreadGoalStatus,
    pub(crate) status_reason: Option<String>,
    pub(crate) token_budget: Option<i64>,
    pub(crate) tokens_used: i64,
    pub(crate) time_used_seconds: i64,
    pub(crate) created_at_ms: i64,
    pub(crate) updated_at_ms: i64,
    pub(crate) audit: BlockerAuditState,
    pub(crate) turn_goal_tool_calls: i64,
    pub(crate) turn_refused_goal_tool_calls: i64,
    pub(crate) idle_continuations: u32,
    pub(crate) objective_notice_pending: bool,
    pub(crate) budget_notice_pending: bool,
    pub(crate) continuations_issued: i64,
    pub(crate) last_continuation_at_ms: Option<i64>,
}

impl GoalRow {
    /// A fresh active goal.
    pub(crate) fn new(
        thread_id: &str,
        objective: &str,
        token_budget: Option<i64>,
        now_ms: i64,
    ) -> GoalRow {
        GoalRow {
            thread_id: thread_id.to_owned(),
            goal_id: uuid::Uuid::new_v4().to_string(),
            objective: objective.to_owned(),
            status: ThreadGoalStatus::Active,
            status_reason: None,
            token_budget,
            tokens_used: 0,
            time_used_seconds: 0,
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
            audit: BlockerAuditState::default(),
            turn_goal_tool_calls: 0,
            turn_refused_goal_tool_calls: 0,
            idle_continuations: 0,
            objective_notice_pending: false,
            budget_notice_pending: false,
            continuations_issued: 0,
            last_continuation_at_ms: None,
        }
    }

    fn from_row(row: &Row<'_>) -> rusqlite::Result<GoalRow> {
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

    /// Whether usage is at or above `budget` (never without one).
    pub(crate) fn over(&self, budget: Option<i64>) -> bool {
        budget.is_some_and(|budget| self.tokens_used >= budget)
    }

    pub(crate) fn to_goal(&self) -> ThreadGoal {
        ThreadGoal {
            thread_id: self.thread_id.clone(),
            goal_id: self.goal_id.clone(),
            objective: self.objective.clone(),
            status: self.status,
            status_reason: self.status_reason.clone(),
            token_budget: self.token_budget,
            tokens_used: self.tokens_used,
            time_used_seconds: self.time_used_seconds,
            created_at: self.created_at_ms.div_euclid(1000),
            updated_at: self.updated_at_ms.div_euclid(1000),
        }
    }

    fn into_snapshot(self) -> GoalSnapshot {
        let blocker = match (&self.audit.reason, self.audit.reports) {
            (Some(reason), reports) if reports > 0 => Some(BlockerStreak {
                reason: reason.clone(),
                reports,
                reported_this_turn: self.audit.reported_this_turn,
            }),
            _ => None,
        };
        GoalSnapshot {
            goal: self.to_goal(),
            blocker,
            idle_continuations: self.idle_continuations,
            objective_notice_pending: self.objective_notice_pending,
            budget_notice_pending: self.budget_notice_pending,
            continuations_issued: self.continuations_issued,
            last_continuation_at_ms: self.last_continuation_at_ms,
        }
    }

    /// Enters `status` for `reason`, raising the budget-limit prompt when the goal has just
    /// become budget-limited.
    pub(crate) fn enter(&mut self, status: ThreadGoalStatus, reason: Option<String>) {
        if status == ThreadGoalStatus::BudgetLimited && self.status != status {
            self.budget_notice_pending = true;
        }
        if status != ThreadGoalStatus::BudgetLimited {
            self.budget_notice_pending = false;
        }
        self.status = status;
        self.status_reason = match status {
            ThreadGoalStatus::Active => None,
            ThreadGoalStatus::BudgetLimited => Some(budget_limit_reason()),
            _ => reason,
        };
    }
}

/// The status reason of a budget-limited goal.
pub(crate) fn budget_limit_reason() -> String {
    "the token budget is spent; raise or remove the budget to continue".to_owned()
}

/// Reads the thread's goal row.
pub(crate) fn read_row(conn: &Connection, thread_id: &str) -> Result<Option<GoalRow>> {
    Ok(conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM {THREAD_GOALS} WHERE thread_id = ?1"),
            [thread_id],
            GoalRow::from_row,
        )
        .optional()?)
}

/// Reads the thread's goal row, or the error for a missing or stale goal.
pub(crate) fn read_expected(
    conn: &Connection,
    thread_id: &str,
    expected_goal_id: Option<&str>,
) -> Result<GoalRow> {
    validate_thread_id(thread_id)?;
    let row = read_row(conn, thread_id)?.ok_or_else(|| Error::NoGoal {
        thread_id: thread_id.to_owned(),
    })?;
    if let Some(expected) = expected_goal_id
        && expected != row.goal_id
    {
        return Err(Error::StaleGoal {
            thread_id: thread_id.to_owned(),
            expected: expected.to_owned(),
            found: row.goal_id,
        });
    }
    Ok(row)
}

/// Writes every mutable column of `row` back to its goal.
pub(crate) fn write_row(conn: &Connection, row: &GoalRow) -> Result<()> {
    conn.execute(
        &format!(
            "UPDATE {THREAD_GOALS} SET objective = ?3, status = ?4, status_reason = ?5,
                token_budget = ?6, tokens_used = ?7, time_used_seconds = ?8, updated_at_ms = ?9,
                blocker_key = ?10, blocker_reason = ?11, blocker_reports = ?12,
                blocker_reported_this_turn = ?13, turn_goal_tool_calls = ?14,
                turn_refused_goal_tool_calls = ?15, idle_continuations = ?16,
                objective_notice_pending = ?17, budget_notice_pending = ?18,
                continuations_issued = ?19, last_continuation_at_ms = ?20
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

/// Inserts a new goal row, replacing the thread's previous goal and its turns.
pub(crate) fn insert_row(conn: &Connection, row: &GoalRow) -> Result<()> {
    conn.execute(
        &format!("DELETE FROM {GOAL_TURNS} WHERE thread_id = ?1"),
        [&row.thread_id],
    )?;
    conn.execute(
        &format!("DELETE FROM {THREAD_GOALS} WHERE thread_id = ?1"),
        [&row.thread_id],
    )?;
    conn.execute(
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

/// The snake_case form a status is stored in.
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

pub(crate) fn status_from_sql(text: &str) -> Option<ThreadGoalStatus> {
    ThreadGoalStatus::ALL
        .into_iter()
        .find(|status| status_to_sql(*status) == text)
}

/// A thread id: not empty, at most 256 characters, no control characters.
pub(crate) fn validate_thread_id(thread_id: &str) -> Result<()> {
    if thread_id.trim().is_empty() {
        return Err(Error::ThreadId("it must not be empty"));
    }
    if thread_id.chars().count() > MAX_THREAD_ID_CHARS {
        return Err(Error::ThreadId("it must be at most 256 characters"));
    }
    if thread_id.chars().any(char::is_control) {
        return Err(Error::ThreadId("it must not contain control characters"));
    }
    Ok(())
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
