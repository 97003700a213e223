//! One test per problem users of codex's goals reported, with our own inputs.

use std::time::Duration;

use goal_steering::{GoalConfig, GoalToolContext, SteeringEvent};
use memory_protocol::goal::{GoalRefusalCode, GoalSteeringKind, ThreadGoalStatus};
use serde_json::json;

use super::on_every_backend;
use super::{
    THREAD, answered, block_through_audit, continuation_turn, record, refused, set, store,
    store_with, update_goal, user_turn,
};

/// codex #36503: a refused `update_goal` was retried 2,514 times. Here retries inside a turn
/// count once, and the same blocker on three turns ends the loop.
#[test]
fn report_36503_retrying_update_goal_counts_once_per_turn_and_the_loop_ends() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "deploy the service to staging", None);
        let blocker = "staging cluster refuses our kubeconfig";
        let mut calls = 0;
        for turn in 1..=3u32 {
            for _ in 0..838 {
                calls += 1;
                let outcome = update_goal(&mut store, "blocked", Some(blocker));
                if let goal_steering::GoalToolOutcome::Refused(refusal) = outcome {
                    assert!(!refusal.retryable);
                    if turn < 3 {
                        assert_eq!(refusal.reports_so_far, Some(turn));
                    }
                }
            }
            let result = record(&mut store, &continuation_turn(1_000, 0));
            assert_eq!(result.turn.goal_tool_calls, 838);
            if turn < 3 {
                assert_eq!(result.goal.status, ThreadGoalStatus::Active);
            }
        }
        assert_eq!(calls, 2_514);
        let goal = store.get(THREAD).unwrap().unwrap();
        assert_eq!(goal.status, ThreadGoalStatus::Blocked);
        assert_eq!(goal.tokens_used, 3_000);
        assert_eq!(store.next_steering(THREAD).unwrap(), None);
    });
}

/// codex #34248: continuations kept firing for days after the goal was paused or blocked.
#[test]
fn report_34248_no_continuation_after_pause_or_block_however_long_the_host_polls() {
    on_every_backend(|| {
        let (mut store, clock) = store();
        set(&mut store, "port the build to meson", None);
        assert!(store.next_steering(THREAD).unwrap().is_some());
        store.pause(THREAD, None).unwrap();
        for _ in 0..3 * 24 {
            clock.advance(Duration::from_secs(3_600));
            assert_eq!(store.next_steering(THREAD).unwrap(), None);
        }
        // A host that still records a turn for the paused goal is charged, not revived.
        let late = record(&mut store, &continuation_turn(50, 2));
        assert_eq!(late.goal.status, ThreadGoalStatus::Paused);
        assert_eq!(store.next_steering(THREAD).unwrap(), None);

        store.resume(THREAD, None).unwrap();
        block_through_audit(&mut store, "the meson wrap server is unreachable");
        for _ in 0..100 {
            clock.advance(Duration::from_secs(3_600));
            assert_eq!(store.next_steering(THREAD).unwrap(), None);
        }
        assert_eq!(
            store.get(THREAD).unwrap().unwrap().status,
            ThreadGoalStatus::Blocked
        );
        store.resume(THREAD, None).unwrap();
        assert!(store.next_steering(THREAD).unwrap().is_some());
    });
}

/// codex #44909, #41831, #23177: continuation turns that do nothing, back to back, used a
/// large share of all tokens. The breaker stops the loop after three idle continuations.
#[test]
fn report_44909_no_op_continuation_loops_stop_after_three_idle_turns() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "keep the nightly job green", Some(1_000_000));
        record(&mut store, &user_turn(2_000));
        // The host's idle loop: ask for steering, run the turn, record it.
        let mut continuations = 0;
        while let Some(steering) = store.next_steering(THREAD).unwrap() {
            assert_eq!(steering.kind, GoalSteeringKind::Continuation);
            continuations += 1;
            assert!(continuations <= 3, "the loop did not stop");
            record(&mut store, &continuation_turn(20_000, 0));
        }
        assert_eq!(continuations, 3);
        let goal = store.get(THREAD).unwrap().unwrap();
        assert_eq!(goal.status, ThreadGoalStatus::Paused);
        assert_eq!(goal.tokens_used, 62_000);
        assert!(goal.status_reason.unwrap().starts_with("circuit breaker"));
    });
}

/// codex #34215: a budget-limited goal whose budget could not be raised.
#[test]
fn report_34215_the_user_can_raise_the_budget_of_a_budget_limited_goal() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "translate the manual", Some(5_000));
        record(&mut store, &user_turn(5_200));
        assert_eq!(
            store.next_steering(THREAD).unwrap().unwrap().kind,
            GoalSteeringKind::BudgetLimit
        );
        assert_eq!(store.next_steering(THREAD).unwrap(), None);
        let raised = store.set_budget(THREAD, None, Some(20_000)).unwrap();
        assert_eq!(raised.status, ThreadGoalStatus::Active);
        assert_eq!(raised.remaining_tokens(), Some(14_800));
        let steering = store.next_steering(THREAD).unwrap().unwrap();
        assert_eq!(steering.kind, GoalSteeringKind::Continuation);
        assert!(steering.text.contains("- Tokens remaining: 14800\n"));
    });
}

/// codex #24629: the model set a budget nobody asked for. Here the model cannot set, raise or
/// change a budget at all, and a goal it creates has none.
#[test]
fn report_24629_the_model_never_sets_a_budget() {
    on_every_backend(|| {
        let (mut store, _) = store();
        let context = GoalToolContext::thread(THREAD);
        let created = answered(
            store
                .call_goal_tool(
                    &context,
                    "create_goal",
                    &json!({"objective": "tidy the repo"}),
                )
                .unwrap(),
        );
        assert_eq!(created.goal.unwrap().token_budget, None);
        assert_eq!(created.remaining_tokens, None);
        for arguments in [
            json!({"status": "complete", "reason": null, "token_budget": 10}),
            json!({"status": "budget_limited", "reason": null}),
        ] {
            let refusal = refused(
                store
                    .call_goal_tool(&context, "update_goal", &arguments)
                    .unwrap(),
            );
            assert_eq!(refusal.code, GoalRefusalCode::InvalidArguments);
        }
        assert_eq!(store.get(THREAD).unwrap().unwrap().token_budget, None);
        // The user can.
        assert_eq!(
            store
                .set_budget(THREAD, None, Some(9_000))
                .unwrap()
                .token_budget,
            Some(9_000)
        );
    });
}

/// gh-aw #39149: a refused call was retried in a loop. Every refusal here is final (not
/// retryable), repeating it changes nothing, and turns made of refused calls trip the breaker.
#[test]
fn report_gh_aw_39149_a_refused_call_retried_in_a_loop_changes_nothing_and_stops() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "ship the release notes", None);
        let context = GoalToolContext::thread(THREAD);
        let goal_before = store.get(THREAD).unwrap();
        let mut first_answer = None;
        for turn in 0..3 {
            for _ in 0..100 {
                let refusal = refused(
                    store
                        .call_goal_tool(
                            &context,
                            "create_goal",
                            &json!({"objective": "ship notes"}),
                        )
                        .unwrap(),
                );
                assert!(!refusal.retryable);
                let answer = (refusal.code, refusal.message);
                match &first_answer {
                    None => first_answer = Some(answer),
                    Some(first) => assert_eq!(first, &answer),
                }
            }
            let result = record(&mut store, &continuation_turn(300, 0));
            assert_eq!(result.turn.refused_goal_tool_calls, 100);
            assert_eq!(result.breaker_tripped, turn == 2);
        }
        let goal_after = store.get(THREAD).unwrap().unwrap();
        let goal_before = goal_before.unwrap();
        assert_eq!(goal_after.objective, goal_before.objective);
        assert_eq!(goal_after.goal_id, goal_before.goal_id);
        assert_eq!(goal_after.status, ThreadGoalStatus::Paused);
        assert_eq!(store.next_steering(THREAD).unwrap(), None);
    });
}

/// codex #29811, #19910, #31659, #42051: after a compaction the hidden goal context was gone and
/// the agent went back to an older instruction. Here the host's compaction event restates the
/// objective, the remaining budget and the audits for the next request, even when the minimum
/// interval says no continuation is due.
#[test]
fn report_29811_the_goal_is_restated_after_every_compaction_even_when_nothing_is_due() {
    on_every_backend(|| {
        let config = GoalConfig {
            min_continuation_interval: Duration::from_secs(3_600),
            ..GoalConfig::default()
        };
        let (mut store, _) = store_with(config);
        set(
            &mut store,
            "migrate the billing tables to the v2 schema",
            Some(50_000),
        );
        record(&mut store, &user_turn(4_000));
        assert!(store.next_steering(THREAD).unwrap().is_some());
        for compaction in 1..=3 {
            record(&mut store, &continuation_turn(1_000, 2));
            assert_eq!(store.next_steering(THREAD).unwrap(), None, "not due yet");
            let restated = store
                .steering_for(THREAD, SteeringEvent::Compacted)
                .unwrap()
                .unwrap_or_else(|| panic!("nothing restated after compaction {compaction}"));
            assert_eq!(restated.kind, GoalSteeringKind::AfterCompaction);
            assert!(
                restated
                    .text
                    .contains("migrate the billing tables to the v2 schema")
            );
            let remaining = 50_000 - 4_000 - 1_000 * compaction;
            assert!(
                restated
                    .text
                    .contains(&format!("- Tokens remaining: {remaining}\n")),
                "{}",
                restated.text
            );
            assert!(restated.text.contains("## Completion audit"));
        }
    });
}

/// codex #39715: the goal was narrowed silently and then marked complete. Here the model has no
/// way to change the objective: `create_goal` is refused while the thread has a goal, and
/// `update_goal` takes no objective.
#[test]
fn report_39715_the_model_cannot_narrow_the_objective() {
    on_every_backend(|| {
        let (mut store, _) = store();
        let objective = "port every parser test to the new harness";
        set(&mut store, objective, None);
        let context = GoalToolContext::thread(THREAD);
        let narrowed = json!({"objective": "port the lexer tests"});
        refused(
            store
                .call_goal_tool(&context, "create_goal", &narrowed)
                .unwrap(),
        );
        let with_objective =
            json!({"status": "complete", "reason": "done", "objective": "port the lexer tests"});
        assert_eq!(
            refused(
                store
                    .call_goal_tool(&context, "update_goal", &with_objective)
                    .unwrap()
            )
            .code,
            GoalRefusalCode::InvalidArguments
        );
        let goal = store.get(THREAD).unwrap().unwrap();
        assert_eq!(goal.objective, objective);
        assert_eq!(goal.status, ThreadGoalStatus::Active);
    });
}

/// codex #22260: the goal was marked complete with plan items still pending. Every message that
/// keeps the goal running (continuation and the restatement after a compaction) carries the
/// completion audit: each requirement proven from evidence, anything unverified counted as not
/// done.
#[test]
fn report_22260_every_continuation_carries_the_completion_audit() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(
            &mut store,
            "finish the five items of the release plan",
            None,
        );
        let continuation = store.next_steering(THREAD).unwrap().unwrap();
        let restated = store
            .steering_for(THREAD, SteeringEvent::Compacted)
            .unwrap()
            .unwrap();
        for steering in [continuation, restated] {
            assert!(steering.text.contains("## Completion audit"));
            assert!(steering.text.contains("For each requirement"));
            assert!(
                steering
                    .text
                    .contains("Count anything you have not verified as not done")
            );
        }
    });
}

/// codex #47293: the goal resumed 13 minutes after the user said stop. Here a pause takes effect
/// before the next continuation: the turn that was running when the user paused is still
/// charged, no continuation or restatement follows however long the host polls or compacts, and
/// only the user's resume brings it back.
#[test]
fn report_47293_a_pause_holds_until_the_user_resumes() {
    on_every_backend(|| {
        let (mut store, clock) = store();
        set(
            &mut store,
            "rewrite the importer in streaming style",
            Some(100_000),
        );
        record(&mut store, &user_turn(3_000));
        assert!(store.next_steering(THREAD).unwrap().is_some());
        // The user says stop while a continuation turn is running.
        store.pause(THREAD, None).unwrap();
        let in_flight = record(&mut store, &continuation_turn(2_000, 4));
        assert_eq!(in_flight.goal.status, ThreadGoalStatus::Paused);
        assert_eq!(in_flight.goal.tokens_used, 5_000);
        for _ in 0..13 {
            clock.advance(Duration::from_secs(60));
            assert_eq!(store.next_steering(THREAD).unwrap(), None);
            assert_eq!(
                store
                    .steering_for(THREAD, SteeringEvent::Compacted)
                    .unwrap(),
                None
            );
        }
        assert_eq!(
            store.get(THREAD).unwrap().unwrap().status,
            ThreadGoalStatus::Paused
        );
        store.resume(THREAD, None).unwrap();
        assert!(store.next_steering(THREAD).unwrap().is_some());
    });
}

/// codex #40929: a resumed goal went straight into a fast loop of turns that made no progress.
/// Here resuming does not disarm the breaker: three idle continuations after the resume pause
/// the goal again, and a configured minimum interval spaces the continuations out.
#[test]
fn report_40929_a_resumed_goal_cannot_loop_without_progress() {
    on_every_backend(|| {
        let config = GoalConfig {
            min_continuation_interval: Duration::from_secs(30),
            ..GoalConfig::default()
        };
        let (mut store, clock) = store_with(config);
        set(&mut store, "get the flaky integration test to pass", None);
        record(&mut store, &user_turn(1_000));
        for round in 0..2 {
            let mut continuations = 0;
            loop {
                let Some(steering) = store.next_steering(THREAD).unwrap() else {
                    // Not due yet: the host waits out the interval, unless the goal stopped.
                    if store.get(THREAD).unwrap().unwrap().status != ThreadGoalStatus::Active {
                        break;
                    }
                    clock.advance(Duration::from_secs(30));
                    continue;
                };
                assert_eq!(steering.kind, GoalSteeringKind::Continuation);
                continuations += 1;
                assert!(continuations <= 3, "round {round}: the loop did not stop");
                record(&mut store, &continuation_turn(500, 0));
                // Straight away, the next continuation is not due.
                assert_eq!(store.next_steering(THREAD).unwrap(), None);
            }
            assert_eq!(continuations, 3, "round {round}");
            let goal = store.get(THREAD).unwrap().unwrap();
            assert_eq!(goal.status, ThreadGoalStatus::Paused);
            assert!(goal.status_reason.unwrap().starts_with("circuit breaker"));
            store.resume(THREAD, None).unwrap();
        }
    });
}
