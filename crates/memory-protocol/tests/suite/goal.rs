//! Goal objectives, tool arguments and the goal tools' descriptions.

use memory_protocol::Error;
use memory_protocol::goal::{
    CreateGoalArgs, GoalToolRefusal, MAX_OBJECTIVE_CHARS, UpdateGoalArgs, validate_objective,
};
use memory_protocol::tools::all_tools;
use proptest::prelude::*;
use serde_json::json;

#[test]
fn objectives_are_trimmed_and_bounded_with_clear_errors() {
    assert_eq!(validate_objective("  ship it \n").unwrap(), "ship it");
    let empty = validate_objective(" \n\t ").unwrap_err();
    assert!(matches!(empty, Error::EmptyObjective));
    assert_eq!(empty.to_string(), "goal objective must not be empty");
    let at_max = "é".repeat(MAX_OBJECTIVE_CHARS);
    assert_eq!(validate_objective(&format!(" {at_max} ")).unwrap(), at_max);
    let too_long = validate_objective(&"x".repeat(MAX_OBJECTIVE_CHARS + 1)).unwrap_err();
    assert_eq!(
        too_long.to_string(),
        "goal objective has 4001 characters; at most 4000 are allowed"
    );
}

proptest! {
    #[test]
    fn validation_never_panics_and_accepts_exactly_the_bounded_non_blank_texts(text in any::<String>()) {
        let trimmed = text.trim();
        match validate_objective(&text) {
            Ok(objective) => {
                prop_assert_eq!(objective, trimmed);
                prop_assert!(!objective.is_empty());
                prop_assert!(objective.chars().count() <= MAX_OBJECTIVE_CHARS);
            }
            Err(Error::EmptyObjective) => prop_assert!(trimmed.is_empty()),
            Err(Error::ObjectiveTooLong { chars, max }) => {
                prop_assert_eq!(chars, trimmed.chars().count());
                prop_assert!(chars > max);
            }
            Err(other) => prop_assert!(false, "unexpected error {other}"),
        }
    }
}

#[test]
fn the_model_cannot_pass_a_budget_or_a_user_status() {
    let with_budget = serde_json::from_value::<CreateGoalArgs>(
        json!({"objective": "ship it", "token_budget": 1000}),
    );
    assert!(
        with_budget
            .unwrap_err()
            .to_string()
            .contains("unknown field `token_budget`")
    );
    for status in ["paused", "active", "budget_limited", "usage_limited"] {
        assert!(
            serde_json::from_value::<UpdateGoalArgs>(json!({"status": status, "reason": null}))
                .is_err(),
            "{status}"
        );
    }
    let blocked: UpdateGoalArgs =
        serde_json::from_value(json!({"status": "blocked", "reason": "no VPN access"})).unwrap();
    assert_eq!(blocked.reason.as_deref(), Some("no VPN access"));
}

#[test]
fn create_goal_exports_no_budget_and_update_goal_requires_a_nullable_reason() {
    let tools = all_tools();
    let tool = |name: &str| tools.iter().find(|tool| tool.name == name).unwrap();
    let create = &tool("create_goal").parameters;
    assert_eq!(create["required"], json!(["objective"]));
    assert!(create["properties"].get("token_budget").is_none());
    let update = &tool("update_goal").parameters;
    assert_eq!(update["required"], json!(["status", "goal_id", "reason"]));
    assert_eq!(
        update["properties"]["reason"]["type"],
        json!(["string", "null"])
    );
}

#[test]
fn tool_descriptions_say_what_is_refused_and_why() {
    let tools = all_tools();
    let description = |name: &str| {
        tools
            .iter()
            .find(|tool| tool.name == name)
            .unwrap()
            .description
    };
    let create = description("create_goal");
    for needle in [
        "explicitly asks",
        "budgets belong to the user",
        "unfinished goal",
        "4,000 characters",
        "not retryable",
    ] {
        assert!(create.contains(needle), "create_goal lacks {needle:?}");
    }
    let update = description("update_goal");
    for needle in [
        "third consecutive goal turn",
        "counting the turn the user started",
        "reports so far: n/3",
        "a resumed goal starts the count again",
        "A question for the user is not a blocker",
        "Never because work is stopping or the budget is low",
        "belong to the user and the system",
        "not retryable",
    ] {
        assert!(update.contains(needle), "update_goal lacks {needle:?}");
    }
    assert!(description("get_goal").contains("changes nothing"));
}

#[test]
fn refusals_round_trip_in_camel_case() {
    let refusal: GoalToolRefusal = serde_json::from_value(json!({
        "code": "blockedAuditPending", "message": "reports so far: 1/3", "retryable": false,
        "reportsSoFar": 1, "reportsRequired": 3, "goal": null
    }))
    .unwrap();
    assert_eq!(refusal.reports_so_far, Some(1));
    assert_eq!(
        serde_json::to_value(&refusal).unwrap()["code"],
        "blockedAuditPending"
    );
}
