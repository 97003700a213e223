//! Property tests: any sequence of user actions, turns, tool calls and steering leaves a legal
//! goal, and the remaining budget is never negative.

use goal_steering::audit::BLOCKER_REPORTS_REQUIRED;
use goal_steering::status::transition;
use goal_steering::{
    Error, GoalAction, GoalConfig, GoalStore, GoalToolContext, GoalToolOutcome,
    IDLE_CONTINUATION_LIMIT, NewGoal, TurnTokens, TurnUsage,
};
use memory_protocol::goal::{
    GoalSteeringKind, GoalTurnError, GoalTurnTrigger, ThreadGoalStatus, validate_objective,
};
use proptest::prelude::*;
use serde_json::json;

use super::{THREAD, store_with};

const MAX_BUDGET: i64 = 2_000;
const OBJECTIVES: [&str; 4] = [
    "ship the parser",
    "  ship the parser and the docs ",
    "",
    "port </objective> & <b>tags</b>",
];
const REASONS: [&str; 3] = ["the VPN is down", "The VPN is down!", "no access to prod"];

#[derive(Debug, Clone)]
enum Op {
    Set {
        objective: usize,
        budget: Option<i64>,
        replace: bool,
    },
    Edit(usize),
    Budget(Option<i64>),
    Pause,
    Resume,
    Clear,
    Turn {
        user: bool,
        plan: bool,
        tokens: i64,
        tool_calls: i64,
        error: Option<bool>,
    },
    Blocked(usize),
    Complete,
    Create(usize),
    Next,
    Wait(u64),
}

fn budget() -> impl Strategy<Value = Option<i64>> {
    prop_oneof![Just(None), (-5i64..=MAX_BUDGET + 5).prop_map(Some)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..OBJECTIVES.len(), budget(), any::<bool>()).prop_map(|(objective, budget, replace)| {
            Op::Set {
                objective,
                budget,
                replace,
            }
        }),
        (0..OBJECTIVES.len()).prop_map(Op::Edit),
        budget().prop_map(Op::Budget),
        Just(Op::Pause),
        Just(Op::Resume),
        Just(Op::Clear),
        (
            any::<bool>(),
            any::<bool>(),
            0i64..600,
            0i64..3,
            proptest::option::of(any::<bool>())
        )
            .prop_map(|(user, plan, tokens, tool_calls, error)| Op::Turn {
                user,
                plan,
                tokens,
                tool_calls,
                error
            }),
        (0..REASONS.len()).prop_map(Op::Blocked),
        Just(Op::Complete),
        (0..OBJECTIVES.len()).prop_map(Op::Create),
        Just(Op::Next),
        (0u64..120).prop_map(Op::Wait),
    ]
}

/// The goal and its side state obey every invariant of the store.
fn assert_legal(store: &GoalStore) -> Result<(), TestCaseError> {
    let Some(snapshot) = store.snapshot(THREAD).unwrap() else {
        return Ok(());
    };
    let goal = &snapshot.goal;
    prop_assert!(goal.tokens_used >= 0 && goal.time_used_seconds >= 0);
    if let Some(budget) = goal.token_budget {
        prop_assert!((1..=MAX_BUDGET).contains(&budget));
    }
    let remaining = goal.remaining_tokens();
    prop_assert_eq!(
        remaining,
        goal.token_budget
            .map(|budget| (budget - goal.tokens_used).max(0))
    );
    prop_assert!(remaining.is_none_or(|remaining| remaining >= 0));
    let over = goal
        .token_budget
        .is_some_and(|budget| goal.tokens_used >= budget);
    match goal.status {
        ThreadGoalStatus::Active => {
            prop_assert!(!over, "active at or over budget: {goal:?}");
            prop_assert!(goal.status_reason.is_none());
            prop_assert!(snapshot.idle_continuations < IDLE_CONTINUATION_LIMIT);
        }
        ThreadGoalStatus::BudgetLimited => prop_assert!(over, "limited under budget: {goal:?}"),
        _ => prop_assert!(goal.status_reason.is_some(), "{goal:?}"),
    }
    prop_assert_eq!(
        validate_objective(&goal.objective).ok(),
        Some(goal.objective.as_str())
    );
    if let Some(blocker) = &snapshot.blocker {
        prop_assert!(blocker.reports >= 1 && blocker.reports < BLOCKER_REPORTS_REQUIRED);
    }
    Ok(())
}

/// Applies `op`; errors must be the typed refusals of bad input or illegal transitions.
fn apply(
    store: &mut GoalStore,
    clock: &goal_steering::ManualClock,
    op: &Op,
) -> Result<(), TestCaseError> {
    let before = store.snapshot(THREAD).unwrap();
    let context = GoalToolContext::thread(THREAD);
    let result: Result<(), Error> = match op {
        Op::Set {
            objective,
            budget,
            replace,
        } => store
            .set_goal(
                THREAD,
                &NewGoal {
                    objective: OBJECTIVES[*objective].to_owned(),
                    token_budget: *budget,
                    replace: *replace,
                    expected_goal_id: None,
                },
            )
            .map(|goal| {
                assert_eq!(
                    (goal.tokens_used, goal.status),
                    (0, ThreadGoalStatus::Active)
                )
            }),
        Op::Edit(objective) => store
            .edit_objective(THREAD, None, OBJECTIVES[*objective])
            .map(|goal| check_action(before.as_ref(), GoalAction::Edit, &goal)),
        Op::Budget(budget) => store
            .set_budget(THREAD, None, *budget)
            .map(|goal| check_action(before.as_ref(), GoalAction::Budget, &goal)),
        Op::Pause => store
            .pause(THREAD, None)
            .map(|goal| check_action(before.as_ref(), GoalAction::Pause, &goal)),
        Op::Resume => store
            .resume(THREAD, None)
            .map(|goal| check_action(before.as_ref(), GoalAction::Resume, &goal)),
        Op::Clear => store.clear(THREAD, None).map(|_| ()),
        Op::Turn {
            user,
            plan,
            tokens,
            tool_calls,
            error,
        } => {
            let usage = TurnUsage {
                turn_id: super::next_turn_id(),
                trigger: if *user {
                    GoalTurnTrigger::User
                } else {
                    GoalTurnTrigger::Continuation
                },
                plan_mode: *plan,
                tokens: TurnTokens::Charged(*tokens),
                seconds: 2,
                tool_calls: *tool_calls,
                error: error.map(|usage| {
                    if usage {
                        GoalTurnError::UsageLimit
                    } else {
                        GoalTurnError::Other
                    }
                }),
            };
            store.record_turn(THREAD, None, &usage).map(|result| {
                let before = before
                    .as_ref()
                    .map(|snapshot| snapshot.goal.tokens_used)
                    .unwrap_or(0);
                let charged = if *plan { 0 } else { *tokens };
                assert_eq!(result.goal.tokens_used, before + charged);
                assert_eq!(result.turn.tokens_charged, charged);
            })
        }
        Op::Blocked(reason) => store
            .call_goal_tool(
                &context,
                "update_goal",
                &json!({"status": "blocked", "reason": REASONS[*reason]}),
            )
            .map(check_tool),
        Op::Complete => store
            .call_goal_tool(
                &context,
                "update_goal",
                &json!({"status": "complete", "reason": "verified"}),
            )
            .map(check_tool),
        Op::Create(objective) => store
            .call_goal_tool(
                &context,
                "create_goal",
                &json!({"objective": OBJECTIVES[*objective]}),
            )
            .map(check_tool),
        Op::Next => store.next_steering(THREAD).map(|steering| {
            if let Some(steering) = steering {
                let snapshot = before.as_ref().expect("steering without a goal");
                match steering.kind {
                    GoalSteeringKind::BudgetLimit => {
                        assert_eq!(snapshot.goal.status, ThreadGoalStatus::BudgetLimited);
                        assert!(snapshot.budget_notice_pending);
                    }
                    _ => assert_eq!(snapshot.goal.status, ThreadGoalStatus::Active),
                }
            }
        }),
        Op::Wait(seconds) => {
            clock.advance(std::time::Duration::from_secs(*seconds));
            Ok(())
        }
    };
    match result {
        Ok(()) => {}
        Err(
            Error::InvalidTransition(_)
            | Error::NoGoal { .. }
            | Error::UnfinishedGoal { .. }
            | Error::Objective(_)
            | Error::BudgetNotPositive(_)
            | Error::BudgetTooLarge { .. },
        ) => {
            // A refused action changes nothing.
            prop_assert_eq!(store.snapshot(THREAD).unwrap(), before);
        }
        Err(other) => prop_assert!(false, "unexpected error for {op:?}: {other}"),
    }
    Ok(())
}

/// A legal user action led where the status machine says.
fn check_action(
    before: Option<&goal_steering::GoalSnapshot>,
    action: GoalAction,
    after: &memory_protocol::goal::ThreadGoal,
) {
    let before = before.expect("an action succeeded without a goal");
    let over = after
        .token_budget
        .is_some_and(|budget| after.tokens_used >= budget);
    let expected = transition(before.goal.status, action, over).unwrap();
    assert_eq!(
        Some(after.status),
        expected,
        "{action} from {}",
        before.goal.status
    );
}

fn check_tool(outcome: GoalToolOutcome) {
    if let GoalToolOutcome::Refused(refusal) = outcome {
        assert!(!refusal.retryable);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn any_sequence_leaves_a_legal_state(ops in proptest::collection::vec(op(), 1..60)) {
        let config = GoalConfig {
            max_token_budget: MAX_BUDGET,
            min_continuation_interval: std::time::Duration::from_secs(30),
            ..GoalConfig::default()
        };
        let (mut store, clock) = store_with(config);
        for op in &ops {
            apply(&mut store, &clock, op)?;
            assert_legal(&store)?;
        }
    }

    #[test]
    fn remaining_tokens_are_never_negative(
        budget in 1i64..=MAX_BUDGET,
        turns in proptest::collection::vec((0i64..900, proptest::option::of(1i64..=MAX_BUDGET)), 1..30),
    ) {
        let config = GoalConfig { max_token_budget: MAX_BUDGET, ..GoalConfig::default() };
        let (mut store, _) = store_with(config);
        super::set(&mut store, "ship it", Some(budget));
        for (tokens, new_budget) in turns {
            let result = store.record_turn(THREAD, None, &super::user_turn(tokens)).unwrap();
            let remaining = result.goal.remaining_tokens().unwrap();
            prop_assert!(remaining >= 0);
            prop_assert_eq!(remaining, (result.goal.token_budget.unwrap() - result.goal.tokens_used).max(0));
            let tool = store.get_goal_tool(&GoalToolContext::thread(THREAD)).unwrap();
            prop_assert_eq!(tool.to_json()["remainingTokens"].as_i64(), Some(remaining));
            if let Some(new_budget) = new_budget {
                let goal = store.set_budget(THREAD, None, Some(new_budget)).unwrap();
                prop_assert!(goal.remaining_tokens().unwrap() >= 0);
            }
            if let Some(steering) = store.next_steering(THREAD).unwrap() {
                prop_assert!(!steering.text.contains("Tokens remaining: -"));
            }
        }
    }
}
