//! Wire shapes of the types other languages consume.

use memory_protocol::goal::{ThreadGoal, ThreadGoalStatus, UpdateGoalArgs, UpdateGoalStatus};
use memory_protocol::working_memory::{SectionOp, WorkingMemorySection, WorkingMemoryUpdate};
use memory_protocol::{ModelError, StageOneOutput};
use serde_json::json;

#[test]
fn stage_one_output_is_strict_and_the_slug_is_nullable() {
    let ok: StageOneOutput = serde_json::from_value(
        json!({"raw_memory": "m", "rollout_summary": "s", "rollout_slug": null}),
    )
    .unwrap();
    assert_eq!(ok.rollout_slug, None);
    let missing_slug: StageOneOutput =
        serde_json::from_value(json!({"raw_memory": "m", "rollout_summary": "s"})).unwrap();
    assert_eq!(missing_slug, ok);
    let extra = serde_json::from_value::<StageOneOutput>(
        json!({"raw_memory": "m", "rollout_summary": "s", "rollout_slug": null, "note": 1}),
    );
    assert!(
        extra
            .unwrap_err()
            .to_string()
            .contains("unknown field `note`")
    );
    assert!(StageOneOutput::default().is_no_output());
    assert!(
        StageOneOutput {
            raw_memory: "m".into(),
            rollout_summary: " \n".into(),
            rollout_slug: None
        }
        .is_no_output()
    );
    let schema = StageOneOutput::output_schema();
    assert_eq!(
        schema["required"],
        json!(["raw_memory", "rollout_summary", "rollout_slug"])
    );
    assert_eq!(
        schema["properties"]["rollout_slug"]["type"],
        json!(["string", "null"])
    );
}

#[test]
fn goal_statuses_are_camel_case_and_goals_report_remaining_tokens() {
    let statuses = [
        (ThreadGoalStatus::Active, "active"),
        (ThreadGoalStatus::Paused, "paused"),
        (ThreadGoalStatus::Blocked, "blocked"),
        (ThreadGoalStatus::UsageLimited, "usageLimited"),
        (ThreadGoalStatus::BudgetLimited, "budgetLimited"),
        (ThreadGoalStatus::Complete, "complete"),
    ];
    for (status, wire) in statuses {
        assert_eq!(serde_json::to_value(status).unwrap(), json!(wire));
    }
    let goal: ThreadGoal = serde_json::from_value(json!({
        "threadId": "t", "goalId": "g", "objective": "o", "status": "budgetLimited",
        "statusReason": "the token budget is spent", "tokenBudget": 100,
        "tokensUsed": 130, "timeUsedSeconds": 5, "createdAt": 1, "updatedAt": 2
    }))
    .unwrap();
    assert_eq!(goal.remaining_tokens(), Some(0));
    assert!(goal.status.is_terminal());
    let args: UpdateGoalArgs = serde_json::from_value(json!({"status": "blocked"})).unwrap();
    assert_eq!(args.status, UpdateGoalStatus::Blocked);
    assert!(serde_json::from_value::<UpdateGoalArgs>(json!({"status": "paused"})).is_err());
}

#[test]
fn working_memory_update_requires_all_seven_sections_by_exact_header() {
    let headers: Vec<&str> = WorkingMemorySection::ALL
        .iter()
        .map(|s| s.header())
        .collect();
    assert_eq!(
        headers,
        [
            "Session Title",
            "Current State",
            "Task & Goals",
            "Key Facts & Decisions",
            "Files & Context",
            "Errors & Corrections",
            "Open Issues"
        ]
    );
    let mut sections = serde_json::Map::new();
    for header in &headers {
        sections.insert((*header).to_owned(), json!({"op": "KEEP"}));
    }
    sections.insert(
        "Open Issues".to_owned(),
        json!({"op": "APPEND", "items": ["flaky test"]}),
    );
    let update: WorkingMemoryUpdate =
        serde_json::from_value(json!({"sections": sections.clone()})).unwrap();
    assert_eq!(
        update.sections.open_issues,
        SectionOp::Append {
            items: vec!["flaky test".into()]
        }
    );
    assert_eq!(update.sections.iter().count(), 7);

    let mut missing = sections.clone();
    missing.remove("Task & Goals");
    let err =
        serde_json::from_value::<WorkingMemoryUpdate>(json!({"sections": missing})).unwrap_err();
    assert!(
        err.to_string().contains("missing field `Task & Goals`"),
        "{err}"
    );

    let mut bad_op = sections;
    bad_op.insert("Session Title".to_owned(), json!({"op": "UPDATE"}));
    assert!(serde_json::from_value::<WorkingMemoryUpdate>(json!({"sections": bad_op})).is_err());
}

#[test]
fn model_errors_carry_their_kind_and_retry_hint() {
    let err = ModelError::RateLimited {
        retry_after_ms: Some(1500),
        message: "slow down".into(),
    };
    assert_eq!(
        err.retry_after(),
        Some(std::time::Duration::from_millis(1500))
    );
    assert!(err.is_retryable());
    assert_eq!(err.to_string(), "rate limited: slow down");
    assert_eq!(
        serde_json::to_value(&err).unwrap(),
        json!({"kind": "rate_limited", "retry_after_ms": 1500, "message": "slow down"})
    );
    assert!(
        !ModelError::InvalidOutput {
            message: "x".into()
        }
        .is_retryable()
    );
}

#[test]
fn task_kind_names_match_the_wire() {
    use memory_protocol::TaskKind;
    for task in TaskKind::ALL {
        assert_eq!(serde_json::to_value(task).unwrap(), task.as_str());
        assert_eq!(task.to_string(), task.as_str());
    }
}
