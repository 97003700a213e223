//! Integration tests of goal-steering, one module per concern, with shared helpers here.

mod audit;
mod properties;
mod steering;
mod store;
mod tools;
mod transitions;
mod turns;
mod user_reports;

use std::sync::Arc;

use goal_steering::{
    GoalConfig, GoalStore, GoalToolContext, GoalToolOutcome, ManualClock, NewGoal, TurnTokens,
    TurnUsage,
};
use memory_protocol::goal::{
    GoalAccountResult, GoalToolRefusal, GoalToolResponse, GoalTurnError, GoalTurnTrigger,
    ThreadGoal,
};
use serde_json::json;

/// The thread most tests use.
pub(crate) const THREAD: &str = "thread-1";

/// An in-memory store on a manual clock starting at 1,000 s.
pub(crate) fn store() -> (GoalStore, Arc<ManualClock>) {
    store_with(GoalConfig::default())
}

pub(crate) fn store_with(config: GoalConfig) -> (GoalStore, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let store = GoalStore::open_in_memory(config)
        .unwrap()
        .with_clock(clock.clone());
    (store, clock)
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
            },
        )
        .unwrap()
}

/// A turn charging `tokens`, with `tool_calls` non-goal tool calls.
pub(crate) fn turn(trigger: GoalTurnTrigger, tokens: i64, tool_calls: i64) -> TurnUsage {
    TurnUsage {
        turn_id: None,
        trigger,
        plan_mode: false,
        tokens: TurnTokens::Charged(tokens),
        seconds: 1,
        tool_calls,
        error: None,
    }
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
