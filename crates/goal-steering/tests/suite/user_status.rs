//! The status machine is the user's (issue 28): the model cannot complete an objective it has
//! not seen, cannot re-create a goal to shed a budget, a pause or the breaker, and a call that
//! names a replaced goal changes nothing.

use goal_steering::{Error, GoalConfig, GoalStore, GoalToolContext, NewGoal, STATE_FILE_NAME};
use memory_protocol::goal::{GoalRefusalCode, ThreadGoalStatus};
use serde_json::json;

use super::{
    THREAD, answered, continuation_turn, on_every_backend, record, refused, set, store,
    update_goal, user_turn,
};

fn replace(
    store: &mut GoalStore,
    objective: &str,
    expected: &str,
) -> goal_steering::Result<String> {
    store
        .set_goal(
            THREAD,
            &NewGoal {
                objective: objective.to_owned(),
                token_budget: None,
                replace: true,
                expected_goal_id: Some(expected.to_owned()),
            },
        )
        .map(|goal| goal.goal_id)
}

#[test]
fn complete_is_refused_while_an_objective_update_is_unseen_and_the_refusal_delivers_it() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "fix the parser", Some(1_000));
        record(&mut store, &user_turn(10));
        store
            .edit_objective(THREAD, None, "fix the parser and the lexer")
            .unwrap();
        let refusal = refused(update_goal(&mut store, "complete", Some("parser fixed")));
        assert_eq!(refusal.code, GoalRefusalCode::ObjectiveUpdated);
        assert!(
            refusal.message.contains("fix the parser and the lexer"),
            "{}",
            refusal.message
        );
        let goal = store.get(THREAD).unwrap().unwrap();
        assert_eq!(goal.status, ThreadGoalStatus::Active);
        // Delivered by the refusal: the model has now seen the objective it must audit against.
        assert!(
            !store
                .snapshot(THREAD)
                .unwrap()
                .unwrap()
                .objective_notice_pending
        );
        let done = answered(update_goal(
            &mut store,
            "complete",
            Some("parser and lexer fixed, tests green"),
        ));
        assert_eq!(done.goal.unwrap().status, ThreadGoalStatus::Complete);
    });
}

#[test]
fn the_model_cannot_recreate_a_budget_limited_or_paused_goal() {
    on_every_backend(|| {
        let (mut store, _) = store();
        let context = GoalToolContext::thread(THREAD);
        set(&mut store, "ship it", Some(100));
        record(&mut store, &user_turn(100));
        assert_eq!(
            store.get(THREAD).unwrap().unwrap().status,
            ThreadGoalStatus::BudgetLimited
        );
        answered(update_goal(&mut store, "complete", Some("wrapped up")));
        let again = refused(
            store
                .call_goal_tool(&context, "create_goal", &json!({"objective": "ship it"}))
                .unwrap(),
        );
        assert_eq!(again.code, GoalRefusalCode::UnfinishedGoal);
        let goal = store.get(THREAD).unwrap().unwrap();
        assert_eq!((goal.token_budget, goal.tokens_used), (Some(100), 100));

        // The breaker's pause, then complete and create: the same refusal.
        store
            .set_goal(
                THREAD,
                &NewGoal {
                    objective: "loop".to_owned(),
                    token_budget: None,
                    replace: false,
                    expected_goal_id: None,
                },
            )
            .unwrap();
        for _ in 0..3 {
            record(&mut store, &continuation_turn(1, 0));
        }
        assert_eq!(
            store.get(THREAD).unwrap().unwrap().status,
            ThreadGoalStatus::Paused
        );
        answered(update_goal(&mut store, "complete", Some("done")));
        refused(
            store
                .call_goal_tool(&context, "create_goal", &json!({"objective": "loop"}))
                .unwrap(),
        );
        assert_eq!(store.next_steering(THREAD).unwrap(), None);
    });
}

#[test]
fn a_call_naming_a_replaced_goal_is_refused_with_the_current_id() {
    on_every_backend(|| {
        let (mut store, _) = store();
        let a = set(&mut store, "goal A", None).goal_id;
        let b = replace(&mut store, "goal B", &a).unwrap();
        // A late update meant for A.
        let stale = refused(
            store
                .call_goal_tool(
                    &GoalToolContext::thread(THREAD),
                    "update_goal",
                    &json!({"status": "complete", "reason": "A done", "goal_id": a}),
                )
                .unwrap(),
        );
        assert_eq!(stale.code, GoalRefusalCode::StaleGoal);
        assert!(stale.message.contains(&b), "{}", stale.message);
        assert_eq!(
            store.get(THREAD).unwrap().unwrap().status,
            ThreadGoalStatus::Active
        );
        // A's turn charged with A's id.
        let error = store
            .record_turn(THREAD, Some(&a), &user_turn(5))
            .unwrap_err();
        assert!(
            matches!(&error, Error::StaleGoal { found, .. } if *found == b),
            "{error}"
        );
        assert_eq!(store.get(THREAD).unwrap().unwrap().tokens_used, 0);
        // Replacing A again, or pausing or clearing it, names B.
        let error = replace(&mut store, "goal C", &a).unwrap_err();
        assert!(error.to_string().contains(&b), "{error}");
        for error in [
            store.pause(THREAD, Some(&a)).unwrap_err(),
            store.clear(THREAD, Some(&a)).unwrap_err(),
        ] {
            assert!(error.to_string().contains(&b), "{error}");
        }
    });
}

#[test]
fn pause_and_clear_take_effect_before_the_next_continuation() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "keep going", None);
        assert!(store.next_steering(THREAD).unwrap().is_some());
        store.pause(THREAD, None).unwrap();
        // The turn in flight when the user paused ends afterwards.
        record(&mut store, &continuation_turn(10, 2));
        assert_eq!(store.next_steering(THREAD).unwrap(), None);
        store.resume(THREAD, None).unwrap();
        store.clear(THREAD, None).unwrap();
        assert_eq!(store.next_steering(THREAD).unwrap(), None);
    });
}

#[test]
fn replaced_and_cleared_goals_are_archived_with_their_turns() {
    let home = tempfile::tempdir().unwrap();
    let mut store = GoalStore::open_home(home.path(), GoalConfig::default()).unwrap();
    let a = set(&mut store, "goal A", Some(1_000)).goal_id;
    record(&mut store, &user_turn(30));
    let b = replace(&mut store, "goal B", &a).unwrap();
    record(&mut store, &user_turn(7));
    store.clear(THREAD, Some(&b)).unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(home.path().join(STATE_FILE_NAME)).unwrap();
    let archived: Vec<(String, i64, Option<i64>)> = conn
        .prepare("SELECT goal_id, tokens_used, token_budget FROM goal_archive ORDER BY archived_at_ms, objective")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        archived,
        vec![(a.clone(), 30, Some(1_000)), (b.clone(), 7, None)]
    );
    let turns: i64 = conn
        .query_row(
            "SELECT count(*) FROM goal_turns WHERE goal_id IN (?1, ?2)",
            [&a, &b],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(turns, 2);
}

#[test]
fn a_configured_default_budget_applies_to_goals_set_or_created_without_one() {
    on_every_backend(|| {
        let config = GoalConfig {
            default_token_budget: Some(5_000),
            ..GoalConfig::default()
        };
        let (mut store, _) = super::store_with(config);
        assert_eq!(set(&mut store, "user goal", None).token_budget, Some(5_000));
        store.clear(THREAD, None).unwrap();
        let created = answered(
            store
                .call_goal_tool(
                    &GoalToolContext::thread(THREAD),
                    "create_goal",
                    &json!({"objective": "model goal"}),
                )
                .unwrap(),
        );
        assert_eq!(created.goal.unwrap().token_budget, Some(5_000));
    });
}
