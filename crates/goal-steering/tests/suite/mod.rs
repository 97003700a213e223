//! Integration tests of goal-steering, one module per concern, with shared helpers here.

mod audit;
mod claude_code;
mod gap_turns;
mod postgres;
mod properties;
mod steering;
mod store;
mod tools;
mod transitions;
mod turns;
mod user_reports;
mod user_status;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use goal_steering::{
    GoalConfig, GoalStore, GoalToolContext, GoalToolOutcome, ManualClock, NewGoal, PgGoalOptions,
    TurnTokens, TurnUsage,
};
use memory_protocol::goal::{
    GoalAccountResult, GoalToolRefusal, GoalToolResponse, GoalTurnError, GoalTurnTrigger,
    ThreadGoal,
};
use serde_json::json;

/// The thread most tests use.
pub(crate) const THREAD: &str = "thread-1";

/// Names a PostgreSQL server for the tests that need one (CI starts one with
/// `.ci/postgres.sh`); without it they are skipped, saying so on standard error.
pub(crate) const PG_URL_VAR: &str = "AGENT_MEMORY_TEST_PG_URL";

thread_local! {
    /// Set while [`on_every_backend`] runs a test on PostgreSQL: [`store`] then gives a fresh
    /// schema on the test server instead of in-memory SQLite.
    static ON_POSTGRES: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `test` on in-memory SQLite, then again on PostgreSQL when [`PG_URL_VAR`] names a
/// server: one switch, and the two backends pass the same tests.
pub(crate) fn on_every_backend(test: impl Fn()) {
    test();
    if std::env::var(PG_URL_VAR).is_ok() {
        ON_POSTGRES.set(true);
        test();
        ON_POSTGRES.set(false);
    }
}

/// One database for one test; [`Db::open`] gives handles on it (each its own connection, as
/// another process or machine would have).
pub(crate) enum Db {
    Sqlite {
        _dir: tempfile::TempDir,
        path: std::path::PathBuf,
    },
    Postgres {
        url: String,
        schema: String,
    },
}

impl Db {
    pub(crate) fn sqlite() -> Db {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(goal_steering::STATE_FILE_NAME);
        Db::Sqlite { _dir: dir, path }
    }

    /// A schema of its own on the test server, or `None` (and a note) without one.
    pub(crate) fn postgres() -> Option<Db> {
        static SCHEMAS: AtomicUsize = AtomicUsize::new(0);
        let Ok(url) = std::env::var(PG_URL_VAR) else {
            eprintln!("{PG_URL_VAR} is not set: the PostgreSQL goal tests are skipped");
            return None;
        };
        let schema = format!(
            "goals_{}_{}",
            std::process::id(),
            SCHEMAS.fetch_add(1, Ordering::SeqCst)
        );
        Some(Db::Postgres { url, schema })
    }

    /// SQLite, and PostgreSQL when a server is named.
    pub(crate) fn all() -> Vec<Db> {
        std::iter::once(Db::sqlite())
            .chain(Db::postgres())
            .collect()
    }

    pub(crate) fn open(&self, config: GoalConfig) -> GoalStore {
        match self {
            Db::Sqlite { path, .. } => GoalStore::open(path, config).unwrap(),
            Db::Postgres { url, schema } => {
                let options = PgGoalOptions {
                    schema: Some(schema.clone()),
                    ..PgGoalOptions::default()
                };
                GoalStore::connect(url, &options, config).unwrap()
            }
        }
    }
}

/// A store on a manual clock starting at 1,000 s: in-memory SQLite, or a fresh PostgreSQL
/// schema inside [`on_every_backend`]'s PostgreSQL run.
pub(crate) fn store() -> (GoalStore, Arc<ManualClock>) {
    store_with(GoalConfig::default())
}

pub(crate) fn store_with(config: GoalConfig) -> (GoalStore, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let store = if ON_POSTGRES.get() {
        Db::postgres()
            .unwrap_or_else(|| panic!("the PostgreSQL run needs {PG_URL_VAR}"))
            .open(config)
    } else {
        GoalStore::open_in_memory(config).unwrap()
    };
    (store.with_clock(clock.clone()), clock)
}

/// Sets `THREAD`'s goal.
pub(crate) fn set(store: &mut GoalStore, objective: &str, budget: Option<i64>) -> ThreadGoal {
    store
        .set_goal(
            THREAD,
            &NewGoal {
                objective: objective.to_owned(),
                token_budget: budget,
                replace: false,
                expected_goal_id: None,
            },
        )
        .unwrap()
}

/// A turn charging `tokens`, with `tool_calls` non-goal tool calls.
pub(crate) fn turn(trigger: GoalTurnTrigger, tokens: i64, tool_calls: i64) -> TurnUsage {
    TurnUsage {
        turn_id: next_turn_id(),
        trigger,
        plan_mode: false,
        tokens: TurnTokens::Charged(tokens),
        seconds: 1,
        tool_calls,
        error: None,
    }
}

/// A turn id no other test turn has.
pub(crate) fn next_turn_id() -> String {
    static TURNS: AtomicUsize = AtomicUsize::new(0);
    format!("turn-{}", TURNS.fetch_add(1, Ordering::Relaxed))
}

/// A user turn that did some work.
pub(crate) fn user_turn(tokens: i64) -> TurnUsage {
    turn(GoalTurnTrigger::User, tokens, 1)
}

/// A continuation turn with `tool_calls` non-goal tool calls.
pub(crate) fn continuation_turn(tokens: i64, tool_calls: i64) -> TurnUsage {
    turn(GoalTurnTrigger::Continuation, tokens, tool_calls)
}

/// A turn that ended on `error`.
pub(crate) fn failed_turn(error: GoalTurnError) -> TurnUsage {
    TurnUsage {
        error: Some(error),
        ..user_turn(1)
    }
}

/// Records `usage` on `THREAD`.
pub(crate) fn record(store: &mut GoalStore, usage: &TurnUsage) -> GoalAccountResult {
    store.record_turn(THREAD, None, usage).unwrap()
}

/// Calls `update_goal` on `THREAD` as the model would.
pub(crate) fn update_goal(
    store: &mut GoalStore,
    status: &str,
    reason: Option<&str>,
) -> GoalToolOutcome {
    store
        .call_goal_tool(
            &GoalToolContext::thread(THREAD),
            "update_goal",
            &json!({"status": status, "reason": reason}),
        )
        .unwrap()
}

pub(crate) fn refused(outcome: GoalToolOutcome) -> GoalToolRefusal {
    match outcome {
        GoalToolOutcome::Refused(refusal) => refusal,
        GoalToolOutcome::Answered(response) => panic!("expected a refusal, got {response:?}"),
    }
}

pub(crate) fn answered(outcome: GoalToolOutcome) -> GoalToolResponse {
    match outcome {
        GoalToolOutcome::Answered(response) => response,
        GoalToolOutcome::Refused(refusal) => panic!("expected an answer, got {refusal:?}"),
    }
}

/// Drives `THREAD`'s active goal to blocked through the audit: the same blocker on three
/// consecutive goal turns.
pub(crate) fn block_through_audit(store: &mut GoalStore, reason: &str) {
    for _ in 0..2 {
        refused(update_goal(store, "blocked", Some(reason)));
        record(store, &continuation_turn(10, 1));
    }
    answered(update_goal(store, "blocked", Some(reason)));
}
