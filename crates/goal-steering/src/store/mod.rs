//! The goal store: one goal per thread, on SQLite (the shared state file
//! `<home>/state.sqlite`, the default) or, with the `postgres` feature, on a PostgreSQL server
//! every machine of a fleet shares.
//!
//! The goal logic is written once against [`backend::GoalTx`]: each write is a transaction on
//! one thread's goal that reads the row, decides in Rust, and writes it back, while no other
//! writer of that goal runs. The tables enforce the budget invariants themselves (`CHECK`
//! constraints) on both backends: an active goal is below its budget, and a budget-limited goal
//! is at or above it.

mod backend;
mod goals;
#[cfg(feature = "postgres")]
mod postgres;
mod sqlite;
mod turns;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use memory_protocol::goal::{ThreadGoal, ThreadGoalStatus};
use rusqlite::Connection;

use crate::audit::BlockerAuditState;
use crate::clock::{Clock, SystemClock};
use crate::config::GoalConfig;
use crate::error::{Error, Result};

use self::backend::Charge;
pub(crate) use self::backend::GoalTx;
pub use self::goals::NewGoal;
#[cfg(feature = "postgres")]
pub use self::postgres::PgGoalOptions;
pub use self::turns::{
    IDLE_CONTINUATION_LIMIT, MAX_TURN_SECONDS, MAX_TURN_TOKENS, TurnTokens, TurnUsage,
};

/// File name of the state database under the agent-memory home (shared with `memory-write`).
pub const STATE_FILE_NAME: &str = "state.sqlite";

/// Longest thread id accepted, in characters.
const MAX_THREAD_ID_CHARS: usize = 256;

/// Where the goal tables live.
enum Backend {
    Sqlite(Connection),
    #[cfg(feature = "postgres")]
    Postgres(Box<postgres::PgGoals>),
}

/// The goal store. Every method that writes runs in its own transaction on the thread's goal;
/// calls block (an async host calls them from a blocking task).
pub struct GoalStore {
    backend: Backend,
    /// The SQLite file; empty on PostgreSQL.
    path: PathBuf,
    config: GoalConfig,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for GoalStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoalStore")
            .field("path", &self.path)
            .field("shared_url", &self.shared_url())
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
    /// date, leaving every other owner's tables alone.
    pub fn open(path: &Path, config: GoalConfig) -> Result<GoalStore> {
        let mut conn = sqlite::open(path)?;
        sqlite::migrate(&mut conn)?;
        Ok(GoalStore::new(
            Backend::Sqlite(conn),
            path.to_owned(),
            config,
        ))
    }

    /// An in-memory store, for tests and hosts that keep goals for one process only.
    pub fn open_in_memory(config: GoalConfig) -> Result<GoalStore> {
        let mut conn = sqlite::open_in_memory()?;
        sqlite::migrate(&mut conn)?;
        Ok(GoalStore::new(
            Backend::Sqlite(conn),
            PathBuf::from(":memory:"),
            config,
        ))
    }

    /// Connects to the PostgreSQL server at `url` (`postgres://USER@HOST:PORT/DB`) and brings
    /// the goal tables up to date: the goals every machine using that server shares. An
    /// unreachable server, and tables written by a newer build, are [`Error::Store`]
    /// ([`memory_store::Error::Unreachable`], [`memory_store::Error::SchemaTooNew`]).
    #[cfg(feature = "postgres")]
    pub fn connect(url: &str, options: &PgGoalOptions, config: GoalConfig) -> Result<GoalStore> {
        let goals = postgres::PgGoals::connect(url, options)?;
        Ok(GoalStore::new(
            Backend::Postgres(Box::new(goals)),
            PathBuf::new(),
            config,
        ))
    }

    fn new(backend: Backend, path: PathBuf, config: GoalConfig) -> GoalStore {
        GoalStore {
            backend,
            path,
            config,
            clock: Arc::new(SystemClock),
        }
    }

    /// The store reading time from `clock` instead of the system clock.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> GoalStore {
        self.clock = clock;
        self
    }

    /// Path of the SQLite database file (`:memory:` for an in-memory store); empty when the
    /// goals live on a PostgreSQL server (see [`GoalStore::shared_url`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The PostgreSQL server holding the goals, as shown in messages (password redacted), or
    /// `None` for a SQLite store.
    pub fn shared_url(&self) -> Option<&str> {
        match &self.backend {
            Backend::Sqlite(_) => None,
            #[cfg(feature = "postgres")]
            Backend::Postgres(goals) => Some(goals.display_url()),
        }
    }

    /// The configuration the store enforces.
    pub fn config(&self) -> &GoalConfig {
        &self.config
    }

    /// The schema version of the goal tables (the `goal-steering` row of `schema_versions`).
    pub fn schema_version(&self) -> Result<i64> {
        match &self.backend {
            Backend::Sqlite(conn) => sqlite::schema_version(conn),
            #[cfg(feature = "postgres")]
            Backend::Postgres(goals) => goals.schema_version(),
        }
    }

    /// The thread's goal, if it has one.
    pub fn get(&self, thread_id: &str) -> Result<Option<ThreadGoal>> {
        Ok(self.snapshot(thread_id)?.map(|snapshot| snapshot.goal))
    }

    /// The thread's goal with the steering and audit state kept beside it.
    pub fn snapshot(&self, thread_id: &str) -> Result<Option<GoalSnapshot>> {
        validate_thread_id(thread_id)?;
        let row = match &self.backend {
            Backend::Sqlite(conn) => sqlite::read_row(conn, thread_id)?,
            #[cfg(feature = "postgres")]
            Backend::Postgres(goals) => goals.read_row(thread_id)?,
        };
        Ok(row.map(GoalRow::into_snapshot))
    }

    /// Every goal in the store, by thread id.
    pub fn list(&self) -> Result<Vec<ThreadGoal>> {
        let rows = match &self.backend {
            Backend::Sqlite(conn) => sqlite::list_rows(conn)?,
            #[cfg(feature = "postgres")]
            Backend::Postgres(goals) => goals.list_rows()?,
        };
        Ok(rows.into_iter().map(|row| row.to_goal()).collect())
    }

    /// Starts a write transaction on the thread's goal that other writers of it wait for.
    // Without PostgreSQL the thread is not needed: SQLite has one writer for the whole file.
    #[cfg_attr(not(feature = "postgres"), allow(unused_variables))]
    pub(crate) fn write(&mut self, thread_id: &str) -> Result<Box<dyn GoalTx + '_>> {
        match &mut self.backend {
            Backend::Sqlite(conn) => sqlite::begin(conn),
            #[cfg(feature = "postgres")]
            Backend::Postgres(goals) => goals.begin(thread_id),
        }
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

/// One row of the goal table.
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
    /// The running turn whose tokens mid-turn checks already charged, and how many.
    pub(crate) partial_turn_id: Option<String>,
    pub(crate) partial_turn_tokens: i64,
}

impl GoalRow {
    /// Tokens of `turn_id` that a budget check in the middle of that turn already charged.
    pub(crate) fn charged_mid_turn(&self, turn_id: &str) -> i64 {
        match &self.partial_turn_id {
            Some(partial) if partial == turn_id => self.partial_turn_tokens,
            _ => 0,
        }
    }

    /// A charge of `tokens` and `seconds` to this goal at `now_ms`, with the budget check.
    pub(crate) fn charge(&self, tokens: i64, seconds: i64, now_ms: i64) -> Charge<'_> {
        Charge {
            thread_id: &self.thread_id,
            goal_id: &self.goal_id,
            tokens,
            seconds,
            now_ms,
        }
    }

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
            partial_turn_id: None,
            partial_turn_tokens: 0,
        }
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
            ThreadGoalStatus::BudgetLimited => Some(BUDGET_LIMIT_REASON.to_owned()),
            _ => reason,
        };
    }
}

/// The status reason of a budget-limited goal.
pub(crate) const BUDGET_LIMIT_REASON: &str =
    "the token budget is spent; raise or remove the budget to continue";

/// Reads the thread's goal row, or the error for a missing or stale goal.
pub(crate) fn read_expected(
    tx: &mut dyn GoalTx,
    thread_id: &str,
    expected_goal_id: Option<&str>,
) -> Result<GoalRow> {
    validate_thread_id(thread_id)?;
    let row = tx.read_row(thread_id)?.ok_or_else(|| Error::NoGoal {
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
