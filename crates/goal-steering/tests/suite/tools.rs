//! The goal tools as a model calls them.

use goal_steering::{Error, GoalToolContext};
use memory_protocol::goal::{GoalRefusalCode, ThreadGoalStatus};
use serde_json::json;

use super::on_every_backend;
use super::{THREAD, answered, record, refused, set, store, update_goal, user_turn};

#[test]
fn get_goal_reads_without_changing_anything() {
    on_every_backend(|| {
        let (mut store, _) = store();
        let context = GoalToolContext::thread(THREAD);
        let empty = answered(
            store
                .call_goal_tool(&context, "get_goal", &json!({}))
                .unwrap(),
        );
        assert_eq!((empty.goal, empty.remaining_tokens), (None, None));
        set(&mut store, "ship it", Some(1_000));
        record(&mut store, &user_turn(250));
        let before = store.snapshot(THREAD).unwrap();
        // Function-call APIs deliver arguments as a JSON string; null means none.
        for arguments in [json!("{}"), json!(null)] {
            let response = answered(
                store
                    .call_goal_tool(&context, "get_goal", &arguments)
                    .unwrap(),
            );
            assert_eq!(response.remaining_tokens, Some(750));
            assert_eq!(response.goal.unwrap().objective, "ship it");
        }
        assert_eq!(store.snapshot(THREAD).unwrap(), before);
    });
}

#[test]
fn create_goal_never_sets_a_budget_and_never_replaces_an_unfinished_goal() {
    on_every_backend(|| {
        let (mut store, _) = store();
        let context = GoalToolContext::thread(THREAD);
        let with_budget = refused(
            store
                .call_goal_tool(
                    &context,
                    "create_goal",
                    &json!({"objective": "ship it", "token_budget": 5000}),
                )
                .unwrap(),
        );
        assert_eq!(with_budget.code, GoalRefusalCode::InvalidArguments);
        assert_eq!(
            with_budget.message,
            "create_goal takes no budget: token budgets are set only by the user"
        );
        assert_eq!(store.get(THREAD).unwrap(), None);

        let created = answered(
            store
                .call_goal_tool(&context, "create_goal", &json!({"objective": " ship it "}))
                .unwrap(),
        );
        let goal = created.goal.unwrap();
        assert_eq!(
            (goal.objective.as_str(), goal.token_budget),
            ("ship it", None)
        );
        assert_eq!(goal.status, ThreadGoalStatus::Active);

        let second = refused(
            store
                .call_goal_tool(&context, "create_goal", &json!({"objective": "ship less"}))
                .unwrap(),
        );
        assert_eq!(second.code, GoalRefusalCode::UnfinishedGoal);
        assert!(
            second
                .message
                .contains("Only the user can replace or clear it")
        );
        assert!(!second.retryable);
        assert_eq!(store.get(THREAD).unwrap().unwrap().objective, "ship it");

        // Once complete, the next goal is the user's to set: re-creating one would shed the
        // budget and the history.
        record(&mut store, &user_turn(40));
        answered(update_goal(
            &mut store,
            "complete",
            Some("shipped and verified"),
        ));
        let next = refused(
            store
                .call_goal_tool(
                    &context,
                    "create_goal",
                    &json!({"objective": "ship the docs"}),
                )
                .unwrap(),
        );
        assert_eq!(next.code, GoalRefusalCode::UnfinishedGoal);
        assert!(
            next.message.contains("Only the user sets the next goal"),
            "{}",
            next.message
        );
        let kept = store.get(THREAD).unwrap().unwrap();
        assert_eq!((kept.goal_id, kept.tokens_used), (goal.goal_id, 40));
    });
}

#[test]
fn invalid_objectives_and_unknown_statuses_are_refused_with_the_reason() {
    on_every_backend(|| {
        let (mut store, _) = store();
        let context = GoalToolContext::thread(THREAD);
        let empty = refused(
            store
                .call_goal_tool(&context, "create_goal", &json!({"objective": "  "}))
                .unwrap(),
        );
        assert_eq!(
            empty.message,
            "invalid objective: goal objective must not be empty"
        );
        set(&mut store, "ship it", None);
        for status in ["paused", "active", "budget_limited"] {
            let refusal = refused(update_goal(&mut store, status, None));
            assert_eq!(refusal.code, GoalRefusalCode::InvalidArguments);
            assert!(
                refusal
                    .message
                    .contains("can only mark the goal complete or blocked"),
                "{}",
                refusal.message
            );
            assert!(
                refusal
                    .message
                    .contains("belong to the user and the system")
            );
        }
        let garbage = refused(
            store
                .call_goal_tool(&context, "update_goal", &json!("{not json"))
                .unwrap(),
        );
        assert!(garbage.message.starts_with("arguments are not JSON"));
        assert!(matches!(
            store.call_goal_tool(&context, "delete_goal", &json!({})),
            Err(Error::UnknownTool(name)) if name == "delete_goal"
        ));
        assert_eq!(
            store.get(THREAD).unwrap().unwrap().status,
            ThreadGoalStatus::Active
        );
    });
}

#[test]
fn completing_reports_the_budget_and_is_refused_twice() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "ship it", Some(1_000));
        record(&mut store, &user_turn(400));
        let done = answered(update_goal(
            &mut store,
            "complete",
            Some("tests pass: cargo test"),
        ));
        let goal = done.goal.unwrap();
        assert_eq!(goal.status, ThreadGoalStatus::Complete);
        assert_eq!(
            goal.status_reason.as_deref(),
            Some("tests pass: cargo test")
        );
        let report = done.completion_budget_report.unwrap();
        assert!(
            report.contains("400 tokens of a 1000-token budget (600 left) and 1 seconds"),
            "{report}"
        );
        let again = refused(update_goal(&mut store, "complete", None));
        assert_eq!(again.code, GoalRefusalCode::StatusNotAllowed);
        assert!(!again.retryable);
    });
}

#[test]
fn tool_calls_on_a_missing_or_replaced_goal_are_refused() {
    on_every_backend(|| {
        let (mut store, _) = store();
        let missing = refused(update_goal(&mut store, "complete", None));
        assert_eq!(missing.code, GoalRefusalCode::NoGoal);
        let old = set(&mut store, "ship it", None);
        let context = GoalToolContext {
            thread_id: THREAD,
            goal_id: Some("another-goal"),
        };
        let stale = refused(
            store
                .call_goal_tool(
                    &context,
                    "update_goal",
                    &json!({"status": "complete", "reason": null}),
                )
                .unwrap(),
        );
        assert_eq!(stale.code, GoalRefusalCode::StaleGoal);
        assert_eq!(stale.goal.unwrap().goal_id, old.goal_id);
        assert_eq!(
            store.get(THREAD).unwrap().unwrap().status,
            ThreadGoalStatus::Active
        );
    });
}

#[test]
fn reasons_are_redacted_and_bounded() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "ship it", None);
        let long = "x".repeat(2_001);
        let refusal = refused(update_goal(&mut store, "blocked", Some(&long)));
        assert_eq!(refusal.code, GoalRefusalCode::InvalidArguments);
        assert!(refusal.message.contains("at most 2000 are allowed"));
        let secret = "need access; the token ghp_abcdefghijklmnopqrstuvwxyz0123456789 was revoked";
        let done = answered(update_goal(&mut store, "complete", Some(secret)));
        let reason = done.goal.unwrap().status_reason.unwrap();
        assert!(!reason.contains("ghp_abcdefghij"), "{reason}");
        assert!(reason.contains("[REDACTED_SECRET]"));
    });
}

#[test]
fn answers_serialize_as_the_model_receives_them() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "ship it", None);
        let outcome = update_goal(&mut store, "blocked", Some("no access to the registry"));
        assert!(outcome.is_refused());
        let json = outcome.to_json();
        assert_eq!(json["code"], "blockedAuditPending");
        assert_eq!(json["retryable"], false);
        assert_eq!(json["reportsSoFar"], 1);
        assert_eq!(json["reportsRequired"], 3);
        assert_eq!(json["goal"]["status"], "active");
    });
}

mod any_text {
    use goal_steering::{GoalToolContext, GoalToolOutcome};
    use memory_protocol::goal::ThreadGoalStatus;
    use proptest::prelude::*;
    use serde_json::json;

    use super::super::{THREAD, set, store};

    proptest! {
        #[test]
        fn any_reason_or_objective_is_answered_or_refused_never_an_error(
            reason in any::<String>(),
            blocked in any::<bool>(),
            objective in any::<String>(),
        ) {
            let (mut store, _) = store();
            let context = GoalToolContext::thread(THREAD);
            let created = store
                .call_goal_tool(&context, "create_goal", &json!({"objective": objective}))
                .unwrap();
            if let GoalToolOutcome::Refused(refusal) = &created {
                prop_assert!(!refusal.retryable);
                set(&mut store, "ship it", None);
            }
            let status = if blocked { "blocked" } else { "complete" };
            let outcome = store
                .call_goal_tool(&context, "update_goal", &json!({"status": status, "reason": reason}))
                .unwrap();
            let goal = store.get(THREAD).unwrap().unwrap();
            // Whatever the text, what the model is shown is display-safe.
            let shown = outcome.to_json().to_string();
            prop_assert_eq!(memory_sanitize::display_safe(&shown), shown.as_str());
            let got = store.call_goal_tool(&context, "get_goal", &json!({})).unwrap();
            let got = got.to_json().to_string();
            prop_assert_eq!(memory_sanitize::display_safe(&got), got.as_str());
            if let Some(steering) = store.next_steering(THREAD).unwrap() {
                prop_assert_eq!(memory_sanitize::display_safe(&steering.text), steering.text.as_str());
            }
            match outcome {
                GoalToolOutcome::Answered(_) => {
                    prop_assert_eq!(goal.status, ThreadGoalStatus::Complete);
                    prop_assert!(!blocked);
                }
                GoalToolOutcome::Refused(refusal) => {
                    prop_assert!(!refusal.retryable);
                    prop_assert_eq!(goal.status, ThreadGoalStatus::Active);
                }
            }
        }
    }
}

/// An objective with a token and terminal escape sequences.
const HOSTILE: &str =
    "rotate ghp_abcdefghijklmnopqrstuvwxyz0123456789 \u{1b}[2J\u{1b}]0;owned\u{7}then\u{202e}ship";

/// `text` carries neither the token nor a raw control character.
fn assert_safe(what: &str, text: &str) {
    assert!(!text.contains("ghp_abcdef"), "{what}: {text}");
    assert!(
        memory_sanitize::display_safe(text) == text,
        "{what}: {text:?}"
    );
    assert!(text.contains("[REDACTED_SECRET]"), "{what}: {text}");
}

#[test]
fn the_model_sees_the_objective_redacted_and_display_safe_on_every_path() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, HOSTILE, Some(1_000));
        let context = GoalToolContext::thread(THREAD);
        let got = answered(
            store
                .call_goal_tool(&context, "get_goal", &json!({}))
                .unwrap(),
        );
        assert_safe("get_goal", &got.goal.unwrap().objective);
        let steering = store.next_steering(THREAD).unwrap().unwrap();
        assert_safe("continuation", &steering.text);
        let pending = refused(update_goal(&mut store, "blocked", Some("no token")));
        assert_safe("refusal goal", &pending.goal.unwrap().objective);
        // The stored objective stays as the user typed it: only what is shown changes.
        assert_eq!(store.get(THREAD).unwrap().unwrap().objective, HOSTILE);
        store
            .edit_objective(THREAD, None, &format!("{HOSTILE} and docs"))
            .unwrap();
        let notice = refused(update_goal(&mut store, "complete", Some("done")));
        assert_eq!(notice.code, GoalRefusalCode::ObjectiveUpdated);
        assert_safe("objective-updated refusal", &notice.message);
        let done = answered(update_goal(&mut store, "complete", Some("done")));
        assert_safe("completion", &done.goal.unwrap().objective);
    });
}

/// A host that mounts `goal_tools()` must be able to run every one of them: the list holds
/// only tools the goal store answers (the working memory's update tool is listed apart).
#[test]
fn every_tool_goal_tools_lists_is_one_the_store_answers() {
    on_every_backend(|| {
        let (mut store, _) = store();
        let context = GoalToolContext::thread(THREAD);
        let names: Vec<&str> = memory_protocol::tools::goal_tools()
            .iter()
            .map(|tool| tool.name)
            .collect();
        assert_eq!(names, ["get_goal", "create_goal", "update_goal"]);
        for name in names {
            let answer = store.call_goal_tool(&context, name, &json!({}));
            assert!(
                !matches!(answer, Err(Error::UnknownTool(_))),
                "{name}: {answer:?}"
            );
        }
    });
}
