//! Recording turns: what is charged, the budget switch, turn errors, the circuit breaker, and
//! two writers on one file.

use std::sync::{Arc, Barrier};

use goal_steering::{Error, GoalConfig, NewGoal, TurnTokens, TurnUsage};
use memory_protocol::goal::{GoalSteeringKind, GoalTurnError, GoalTurnTrigger, ThreadGoalStatus};

use super::on_every_backend;
use super::{Db, THREAD, continuation_turn, record, refused, set, store, update_goal, user_turn};

#[test]
fn tokens_charged_are_input_minus_cached_plus_output() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "ship it", Some(1_000));
        let usage = TurnUsage {
            tokens: TurnTokens::Breakdown {
                input: 7,
                cached_input: 2,
                output: 10,
            },
            seconds: 42,
            ..user_turn(0)
        };
        let result = record(&mut store, &usage);
        assert_eq!(result.turn.tokens_charged, 15);
        assert_eq!(
            (
                result.turn.input_tokens,
                result.turn.cached_input_tokens,
                result.turn.output_tokens
            ),
            (Some(7), Some(2), Some(10))
        );
        assert_eq!(result.goal.tokens_used, 15);
        assert_eq!(result.goal.time_used_seconds, 42);
        assert_eq!(result.goal.remaining_tokens(), Some(985));
        assert_eq!(result.turn.turn_id, usage.turn_id);
    });
}

#[test]
fn a_mid_turn_budget_check_delivers_the_wrap_up_inside_the_running_turn() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "ship it", Some(100));
        let check = |store: &mut goal_steering::GoalStore, tokens| {
            store
                .check_budget_mid_turn(THREAD, None, "t-1", TurnTokens::Charged(tokens))
                .unwrap()
        };
        assert_eq!(check(&mut store, 60), None);
        assert_eq!(store.get(THREAD).unwrap().unwrap().tokens_used, 60);
        let notice = check(&mut store, 130).expect("the wrap-up notice, inside the turn");
        assert_eq!(notice.kind, GoalSteeringKind::BudgetLimit);
        let goal = store.get(THREAD).unwrap().unwrap();
        assert_eq!(
            (goal.status, goal.tokens_used),
            (ThreadGoalStatus::BudgetLimited, 130)
        );
        // Once per turn, and not again between turns: the wrap-up costs no extra turn.
        assert_eq!(check(&mut store, 140), None);
        let usage = TurnUsage {
            turn_id: "t-1".to_owned(),
            ..user_turn(150)
        };
        let result = record(&mut store, &usage);
        assert_eq!(result.turn.tokens_charged, 150);
        assert_eq!(result.goal.tokens_used, 150);
        assert_eq!(store.next_steering(THREAD).unwrap(), None);
    });
}

#[test]
fn plan_mode_turns_are_recorded_but_not_charged() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "ship it", Some(100));
        let plan = TurnUsage {
            plan_mode: true,
            ..user_turn(5_000)
        };
        let result = record(&mut store, &plan);
        assert_eq!(result.turn.tokens_charged, 0);
        assert!(result.turn.plan_mode);
        assert_eq!(result.goal.tokens_used, 0);
        assert_eq!(result.goal.status, ThreadGoalStatus::Active);
        assert_eq!(result.goal.time_used_seconds, 1);
    });
}

#[test]
fn bad_usage_is_a_clear_error_and_charges_nothing() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "ship it", None);
        let cases = [
            (TurnTokens::Charged(-1), "tokens must be between 0 and"),
            (
                TurnTokens::Breakdown {
                    input: 5,
                    cached_input: 6,
                    output: 0,
                },
                "cached input tokens (6) exceed input tokens (5)",
            ),
            (
                TurnTokens::Charged(i64::MAX),
                "tokens must be between 0 and",
            ),
        ];
        for (tokens, message) in cases {
            let usage = TurnUsage {
                tokens,
                ..user_turn(0)
            };
            let error = store.record_turn(THREAD, None, &usage).unwrap_err();
            assert!(matches!(error, Error::InvalidTurn(_)));
            assert!(error.to_string().contains(message), "{error}");
        }
        let negative_seconds = TurnUsage {
            seconds: -3,
            ..user_turn(1)
        };
        assert!(store.record_turn(THREAD, None, &negative_seconds).is_err());
        assert_eq!(store.get(THREAD).unwrap().unwrap().tokens_used, 0);
    });
}

#[test]
fn a_turn_is_charged_once() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "ship it", None);
        let usage = TurnUsage {
            turn_id: "t-7".to_owned(),
            ..user_turn(100)
        };
        assert!(!record(&mut store, &usage).already_recorded);
        // A retried call is answered, and charges nothing.
        let again = store.record_turn(THREAD, None, &usage).unwrap();
        assert!(again.already_recorded);
        assert_eq!(again.turn.tokens_charged, 0);
        assert_eq!(again.goal.tokens_used, 100);
        assert_eq!(store.get(THREAD).unwrap().unwrap().tokens_used, 100);
    });
}

#[test]
fn reaching_the_budget_switches_to_budget_limited_once_and_usage_keeps_accruing() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "ship it", Some(25));
        let below = record(&mut store, &user_turn(24));
        assert!(!below.budget_limit_reached);
        assert_eq!(below.goal.status, ThreadGoalStatus::Active);
        let reached = record(&mut store, &continuation_turn(1, 1));
        assert!(reached.budget_limit_reached);
        assert_eq!(reached.goal.status, ThreadGoalStatus::BudgetLimited);
        assert_eq!(reached.goal.remaining_tokens(), Some(0));
        // The wrap-up turn is still charged, and does not report the switch again.
        let wrap_up = record(&mut store, &continuation_turn(10, 1));
        assert!(!wrap_up.budget_limit_reached);
        assert_eq!(wrap_up.goal.tokens_used, 35);
        assert_eq!(wrap_up.goal.status, ThreadGoalStatus::BudgetLimited);
        assert_eq!(wrap_up.goal.remaining_tokens(), Some(0));
    });
}

#[test]
fn turn_errors_stop_an_active_goal() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "ship it", None);
        let usage_limit = TurnUsage {
            error: Some(GoalTurnError::UsageLimit),
            ..user_turn(10)
        };
        let result = record(&mut store, &usage_limit);
        assert_eq!(result.goal.status, ThreadGoalStatus::UsageLimited);
        assert_eq!(result.goal.tokens_used, 10);
        assert_eq!(result.turn.status_after, ThreadGoalStatus::UsageLimited);
        store.resume(THREAD, None).unwrap();
        let other = TurnUsage {
            error: Some(GoalTurnError::Other),
            ..continuation_turn(10, 4)
        };
        let result = record(&mut store, &other);
        assert_eq!(result.goal.status, ThreadGoalStatus::Blocked);
        assert_eq!(
            result.goal.status_reason.as_deref(),
            Some("a turn ended with an error")
        );
    });
}

#[test]
fn the_breaker_pauses_after_three_idle_continuations_and_user_turns_reset_it() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "ship it", None);
        record(&mut store, &continuation_turn(10, 0));
        record(&mut store, &continuation_turn(10, 0));
        // A user turn, even without tool calls, resets the count.
        record(&mut store, &super::turn(GoalTurnTrigger::User, 10, 0));
        record(&mut store, &continuation_turn(10, 0));
        record(&mut store, &continuation_turn(10, 0));
        // So does a continuation that did real work.
        record(&mut store, &continuation_turn(10, 2));
        record(&mut store, &continuation_turn(10, 0));
        record(&mut store, &continuation_turn(10, 0));
        assert_eq!(
            store.get(THREAD).unwrap().unwrap().status,
            ThreadGoalStatus::Active
        );
        let third = record(&mut store, &continuation_turn(10, 0));
        assert!(third.breaker_tripped);
        assert_eq!(third.goal.status, ThreadGoalStatus::Paused);
        let reason = third.goal.status_reason.unwrap();
        assert!(
            reason.starts_with("circuit breaker: 3 consecutive continuation turns"),
            "{reason}"
        );
        assert_eq!(store.next_steering(THREAD).unwrap(), None);
    });
}

#[test]
fn turns_with_only_refused_goal_tool_calls_are_idle() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "ship it", None);
        for turn in 0..3 {
            refused(update_goal(
                &mut store,
                "blocked",
                Some(&format!("blocker {turn}")),
            ));
            refused(update_goal(&mut store, "paused", None));
            let result = record(&mut store, &continuation_turn(10, 0));
            assert_eq!(result.turn.refused_goal_tool_calls, 2);
            assert_eq!(result.breaker_tripped, turn == 2);
        }
        let goal = store.get(THREAD).unwrap().unwrap();
        assert_eq!(goal.status, ThreadGoalStatus::Paused);
        assert!(
            goal.status_reason
                .unwrap()
                .contains("(2 refused goal-tool calls in the last one)")
        );
    });
}

#[test]
fn stale_goal_ids_are_refused() {
    on_every_backend(|| {
        let (mut store, _) = store();
        let old = set(&mut store, "ship it", None);
        let new = store
            .set_goal(
                THREAD,
                &NewGoal {
                    objective: "ship something else".to_owned(),
                    token_budget: None,
                    replace: true,
                    expected_goal_id: None,
                },
            )
            .unwrap();
        assert_ne!(old.goal_id, new.goal_id);
        let stale = store
            .record_turn(THREAD, Some(&old.goal_id), &user_turn(10))
            .unwrap_err();
        assert!(matches!(stale, Error::StaleGoal { .. }));
        assert!(store.pause(THREAD, Some(&old.goal_id)).is_err());
        assert!(
            store
                .set_budget(THREAD, Some(&old.goal_id), Some(5))
                .is_err()
        );
        assert!(
            store
                .edit_objective(THREAD, Some(&old.goal_id), "x")
                .is_err()
        );
        assert!(store.clear(THREAD, Some(&old.goal_id)).is_err());
        let current = store.get(THREAD).unwrap().unwrap();
        assert_eq!(
            (current.tokens_used, current.status),
            (0, ThreadGoalStatus::Active)
        );
        assert!(
            store
                .record_turn(THREAD, Some(&new.goal_id), &user_turn(10))
                .is_ok()
        );
    });
}

#[test]
fn two_concurrent_writers_never_push_usage_past_the_budget_without_flipping_the_status() {
    for db in Db::all() {
        concurrent_writers_keep_the_budget(&db);
    }
}

fn concurrent_writers_keep_the_budget(db: &Db) {
    const BUDGET: i64 = 10_000;
    const TURNS: usize = 120;
    const CHARGE: i64 = 73;
    let mut first = db.open(GoalConfig::default());
    set(&mut first, "ship it", Some(BUDGET));
    drop(first);

    let barrier = Arc::new(Barrier::new(2));
    let results: Vec<_> = std::thread::scope(|scope| {
        // Both writers must be spawned before either is joined, or they would not overlap.
        #[allow(clippy::needless_collect)]
        let writers: Vec<_> = (0..2)
            .map(|writer| {
                let barrier = Arc::clone(&barrier);
                scope.spawn(move || {
                    let mut store = db.open(GoalConfig::default());
                    barrier.wait();
                    (0..TURNS)
                        .map(|turn| {
                            let usage = TurnUsage {
                                turn_id: format!("w{writer}-{turn}"),
                                ..continuation_turn(CHARGE, 1)
                            };
                            store.record_turn(THREAD, None, &usage).unwrap()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        writers
            .into_iter()
            .flat_map(|writer| writer.join().unwrap())
            .collect()
    });

    let store = db.open(GoalConfig::default());
    let goal = store.get(THREAD).unwrap().unwrap();
    // No charge was lost.
    assert_eq!(goal.tokens_used, CHARGE * 2 * TURNS as i64);
    assert_eq!(goal.status, ThreadGoalStatus::BudgetLimited);
    // Whenever a writer saw usage at or past the budget, the status had flipped.
    for result in &results {
        if result.goal.tokens_used >= BUDGET {
            assert_eq!(
                result.goal.status,
                ThreadGoalStatus::BudgetLimited,
                "{result:?}"
            );
        } else {
            assert_eq!(result.goal.status, ThreadGoalStatus::Active, "{result:?}");
        }
    }
    // Exactly one turn crossed the budget, and it is the one that reached it.
    let crossings: Vec<_> = results.iter().filter(|r| r.budget_limit_reached).collect();
    assert_eq!(crossings.len(), 1);
    let crossing = crossings[0];
    assert!(crossing.goal.tokens_used >= BUDGET);
    assert!(crossing.goal.tokens_used - CHARGE < BUDGET);
}
