//! Every cell of the transition table (docs/goals.md), through the pure status machine and
//! through the store.

use goal_steering::status::{legal_actions, system_transition, transition};
use goal_steering::{Error, GoalAction, GoalStore, NewGoal, SystemEvent};
use memory_protocol::goal::{GoalRefusalCode, GoalTurnError, ThreadGoalStatus};

use super::on_every_backend;
use super::{
    THREAD, answered, block_through_audit, continuation_turn, failed_turn, record, refused, set,
    store, update_goal, user_turn,
};

use ThreadGoalStatus::{Active, Blocked, BudgetLimited, Complete, Paused, UsageLimited};

/// What an action does from a status, under the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    To(ThreadGoalStatus),
    Removed,
    Illegal,
}
use Expect::{Illegal, Removed, To};

/// The actions, in the column order of the table below.
const ACTIONS: [GoalAction; 9] = [
    GoalAction::Resume,
    GoalAction::Pause,
    GoalAction::Edit,
    GoalAction::Budget,
    GoalAction::Clear,
    GoalAction::Set,
    GoalAction::Replace,
    GoalAction::Complete,
    GoalAction::Block,
];

/// The transition table of docs/goals.md, written out independently of the code.
const TABLE: [(ThreadGoalStatus, [Expect; 9]); 6] = [
    //            resume      pause       edit              budget            clear    set         replace     complete      blocked
    (
        Active,
        [
            Illegal,
            To(Paused),
            To(Active),
            To(Active),
            Removed,
            Illegal,
            To(Active),
            To(Complete),
            To(Blocked),
        ],
    ),
    (
        Paused,
        [
            To(Active),
            Illegal,
            To(Paused),
            To(Paused),
            Removed,
            Illegal,
            To(Active),
            To(Complete),
            Illegal,
        ],
    ),
    (
        Blocked,
        [
            To(Active),
            Illegal,
            To(Blocked),
            To(Blocked),
            Removed,
            Illegal,
            To(Active),
            To(Complete),
            Illegal,
        ],
    ),
    (
        UsageLimited,
        [
            To(Active),
            Illegal,
            To(UsageLimited),
            To(UsageLimited),
            Removed,
            Illegal,
            To(Active),
            To(Complete),
            Illegal,
        ],
    ),
    (
        BudgetLimited,
        [
            Illegal,
            Illegal,
            To(BudgetLimited),
            To(Active),
            Removed,
            Illegal,
            To(Active),
            To(Complete),
            Illegal,
        ],
    ),
    (
        Complete,
        [
            Illegal,
            Illegal,
            Illegal,
            Illegal,
            Removed,
            To(Active),
            To(Active),
            Illegal,
            Illegal,
        ],
    ),
];

#[test]
fn the_status_machine_matches_the_table() {
    for (from, row) in TABLE {
        for (action, expect) in ACTIONS.into_iter().zip(row) {
            // `budget` on a budget-limited goal is tested raising the budget above usage.
            let over = false;
            let got = match transition(from, action, over) {
                Ok(Some(to)) => To(to),
                Ok(None) => Removed,
                Err(invalid) => {
                    assert_eq!(invalid.from, from);
                    assert_eq!(invalid.legal, legal_actions(from));
                    assert!(!invalid.legal.contains(&action));
                    Illegal
                }
            };
            assert_eq!(got, expect, "{action} from {from}");
        }
    }
}

#[test]
fn over_budget_budget_and_resume_lead_to_budget_limited() {
    for from in [Active, BudgetLimited] {
        assert_eq!(
            transition(from, GoalAction::Budget, true).unwrap(),
            Some(BudgetLimited)
        );
    }
    for from in [Paused, Blocked, UsageLimited] {
        assert_eq!(
            transition(from, GoalAction::Resume, true).unwrap(),
            Some(BudgetLimited)
        );
        assert_eq!(
            transition(from, GoalAction::Budget, true).unwrap(),
            Some(from)
        );
    }
}

#[test]
fn system_events_move_only_active_goals() {
    let expected = [
        (SystemEvent::BudgetSpent, BudgetLimited),
        (SystemEvent::UsageLimitError, UsageLimited),
        (SystemEvent::TurnError, Blocked),
        (SystemEvent::BreakerTripped, Paused),
    ];
    for (event, to) in expected {
        assert_eq!(system_transition(Active, event), to);
        for from in [Paused, Blocked, UsageLimited, BudgetLimited, Complete] {
            assert_eq!(
                system_transition(from, event),
                from,
                "{event:?} from {from}"
            );
        }
    }
    assert_eq!(SystemEvent::ALL.len(), expected.len());
}

#[test]
fn an_invalid_transition_names_the_legal_next_actions() {
    on_every_backend(|| {
        let error = transition(BudgetLimited, GoalAction::Resume, false).unwrap_err();
        assert_eq!(
            error.to_string(),
            "cannot resume a goal that is budget-limited; legal next actions: edit, budget, clear, \
         set --replace, update_goal complete"
        );
        let (mut store, _) = store();
        set(&mut store, "ship it", None);
        let error = store.resume(THREAD, None).unwrap_err();
        assert!(matches!(error, Error::InvalidTransition(_)));
        assert_eq!(
            error.to_string(),
            "cannot resume a goal that is active; legal next actions: pause, edit, budget, clear, \
         set --replace, update_goal complete, update_goal blocked"
        );
    });
}

/// A store whose `THREAD` goal is in `status` (usage 100 of a 1,000 budget, except
/// budget-limited: 100 of 100).
fn goal_in(status: ThreadGoalStatus) -> GoalStore {
    let (mut store, _) = store();
    let budget = if status == BudgetLimited { 100 } else { 1_000 };
    set(&mut store, "ship the parser", Some(budget));
    record(&mut store, &user_turn(100));
    match status {
        Active | BudgetLimited => {}
        Paused => {
            store.pause(THREAD, None).unwrap();
        }
        Blocked => block_through_audit(&mut store, "the staging database is down"),
        UsageLimited => {
            record(&mut store, &failed_turn(GoalTurnError::UsageLimit));
        }
        Complete => {
            answered(update_goal(&mut store, "complete", Some("all tests pass")));
        }
    }
    assert_eq!(store.get(THREAD).unwrap().unwrap().status, status);
    store
}

/// Applies `action` through the store: the status after it, or `Illegal` when it was refused
/// with the typed error (user actions) or a not-allowed refusal (model actions).
fn apply(store: &mut GoalStore, action: GoalAction) -> Expect {
    let replace_or_set = |store: &mut GoalStore, replace| {
        store.set_goal(
            THREAD,
            &NewGoal {
                objective: "a new goal".to_owned(),
                token_budget: None,
                replace,
                expected_goal_id: None,
            },
        )
    };
    let user = match action {
        GoalAction::Resume => store.resume(THREAD, None),
        GoalAction::Pause => store.pause(THREAD, None),
        GoalAction::Edit => store.edit_objective(THREAD, None, "ship the parser and the docs"),
        GoalAction::Budget => store.set_budget(THREAD, None, Some(1_000_000)),
        GoalAction::Clear => {
            store.clear(THREAD, None).unwrap();
            assert_eq!(store.get(THREAD).unwrap(), None);
            return Removed;
        }
        GoalAction::Set => replace_or_set(store, false),
        GoalAction::Replace => replace_or_set(store, true),
        GoalAction::Complete => {
            return match update_goal(store, "complete", Some("verified")) {
                goal_steering::GoalToolOutcome::Answered(response) => {
                    To(response.goal.unwrap().status)
                }
                goal_steering::GoalToolOutcome::Refused(refusal) => {
                    assert_eq!(refusal.code, GoalRefusalCode::StatusNotAllowed);
                    Illegal
                }
            };
        }
        GoalAction::Block => {
            let status = store.get(THREAD).unwrap().unwrap().status;
            if status == Active {
                block_through_audit(store, "no credentials for the registry");
                return To(store.get(THREAD).unwrap().unwrap().status);
            }
            let refusal = refused(update_goal(store, "blocked", Some("no credentials")));
            assert_eq!(refusal.code, GoalRefusalCode::StatusNotAllowed);
            assert!(!refusal.retryable);
            return Illegal;
        }
    };
    match user {
        Ok(goal) => To(goal.status),
        Err(Error::InvalidTransition(invalid)) => {
            assert_eq!(invalid.action, action);
            Illegal
        }
        Err(Error::UnfinishedGoal { .. }) if action == GoalAction::Set => Illegal,
        Err(other) => panic!("{action}: unexpected error {other}"),
    }
}

#[test]
fn every_cell_of_the_table_holds_in_the_store() {
    for (from, row) in TABLE {
        for (action, expect) in ACTIONS.into_iter().zip(row) {
            let mut store = goal_in(from);
            let before = store.get(THREAD).unwrap().unwrap();
            let got = apply(&mut store, action);
            assert_eq!(got, expect, "{action} from {from}");
            if got == Illegal {
                let after = store.get(THREAD).unwrap().unwrap();
                assert_eq!(after.status, before.status, "{action} from {from}");
                assert_eq!(after.objective, before.objective);
                assert_eq!(after.token_budget, before.token_budget);
            }
        }
    }
}

#[test]
fn budget_limited_is_not_overwritten_by_pause_or_blocked() {
    let mut store = goal_in(BudgetLimited);
    assert!(matches!(
        store.pause(THREAD, None),
        Err(Error::InvalidTransition(_))
    ));
    let refusal = refused(update_goal(&mut store, "blocked", Some("stuck")));
    assert_eq!(refusal.code, GoalRefusalCode::StatusNotAllowed);
    assert!(refusal.message.contains("only the user can raise it"));
    // A turn error after the budget ran out leaves it budget-limited too.
    record(&mut store, &failed_turn(GoalTurnError::Other));
    record(&mut store, &failed_turn(GoalTurnError::UsageLimit));
    assert_eq!(store.get(THREAD).unwrap().unwrap().status, BudgetLimited);
}

#[test]
fn system_events_in_the_store_follow_the_table() {
    for from in [
        Active,
        Paused,
        Blocked,
        UsageLimited,
        BudgetLimited,
        Complete,
    ] {
        for error in [GoalTurnError::UsageLimit, GoalTurnError::Other] {
            let mut store = goal_in(from);
            let result = record(&mut store, &failed_turn(error));
            let event = match error {
                GoalTurnError::UsageLimit => SystemEvent::UsageLimitError,
                GoalTurnError::Other => SystemEvent::TurnError,
            };
            assert_eq!(
                result.goal.status,
                system_transition(from, event),
                "{error:?} from {from}"
            );
        }
        // The breaker: three idle continuation turns.
        let mut store = goal_in(from);
        for _ in 0..3 {
            record(&mut store, &continuation_turn(1, 0));
        }
        assert_eq!(
            store.get(THREAD).unwrap().unwrap().status,
            system_transition(from, SystemEvent::BreakerTripped),
            "breaker from {from}"
        );
    }
}
