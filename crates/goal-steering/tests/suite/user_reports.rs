//! One test per problem users of codex's goals reported, with our own inputs.

use std::time::Duration;

use goal_steering::GoalToolContext;
use memory_protocol::goal::{GoalRefusalCode, GoalSteeringKind, ThreadGoalStatus};
use serde_json::json;

use super::on_every_backend;
use super::{
    THREAD, answered, block_through_audit, continuation_turn, record, refused, set, store,
    update_goal, user_turn,
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
