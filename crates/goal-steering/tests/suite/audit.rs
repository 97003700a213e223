//! The blocked audit, counted in code: the same blocker on three consecutive goal turns.

use goal_steering::audit::{BLOCKER_REPORTS_REQUIRED, normalize_blocker};
use memory_protocol::goal::{GoalRefusalCode, ThreadGoalStatus};
use proptest::prelude::*;

use super::on_every_backend;
use super::{
    THREAD, answered, continuation_turn, record, refused, set, store, update_goal, user_turn,
};

const BLOCKER: &str = "The staging database rejects our credentials; an admin must reset them.";

#[test]
fn the_blocked_sequence_is_refused_twice_then_accepted_and_restarts_after_resume() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "migrate the staging data", None);

        // Turn 1, started by the user: the first report is refused with 1/3.
        let first = refused(update_goal(&mut store, "blocked", Some(BLOCKER)));
        assert_eq!(first.code, GoalRefusalCode::BlockedAuditPending);
        assert!(
            first.message.contains("reports so far: 1/3"),
            "{}",
            first.message
        );
        assert!(first.message.contains("2 more consecutive goal turn(s)"));
        assert_eq!(
            (first.reports_so_far, first.reports_required),
            (Some(1), Some(3))
        );
        assert!(!first.retryable);
        assert_eq!(first.goal.unwrap().status, ThreadGoalStatus::Active);
        record(&mut store, &user_turn(500));
        assert!(store.next_steering(THREAD).unwrap().is_some());

        // Turn 2, a continuation: 2/3, reworded only in case, spacing and punctuation.
        let second = refused(update_goal(
            &mut store,
            "blocked",
            Some("the staging database rejects our credentials  an admin must reset them"),
        ));
        assert!(
            second.message.contains("reports so far: 2/3"),
            "{}",
            second.message
        );
        assert!(second.message.contains("1 more consecutive goal turn(s)"));
        record(&mut store, &continuation_turn(400, 2));
        assert!(store.next_steering(THREAD).unwrap().is_some());

        // Turn 3: accepted.
        let accepted = answered(update_goal(&mut store, "blocked", Some(BLOCKER)));
        let goal = accepted.goal.unwrap();
        assert_eq!(goal.status, ThreadGoalStatus::Blocked);
        assert_eq!(goal.status_reason.as_deref(), Some(BLOCKER));
        record(&mut store, &continuation_turn(300, 0));
        assert_eq!(store.next_steering(THREAD).unwrap(), None);

        // Resuming starts a fresh audit.
        store.resume(THREAD, None).unwrap();
        let after_resume = refused(update_goal(&mut store, "blocked", Some(BLOCKER)));
        assert!(after_resume.message.contains("reports so far: 1/3"));
        record(&mut store, &continuation_turn(10, 1));
        // A different blocker starts over too.
        let different = refused(update_goal(&mut store, "blocked", Some("the VPN is down")));
        assert!(
            different.message.contains("reports so far: 1/3"),
            "{}",
            different.message
        );
        assert_eq!(
            store.get(THREAD).unwrap().unwrap().status,
            ThreadGoalStatus::Active
        );
    });
}

#[test]
fn a_goal_turn_without_a_report_resets_the_count() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "migrate the staging data", None);
        refused(update_goal(&mut store, "blocked", Some(BLOCKER)));
        record(&mut store, &user_turn(10));
        refused(update_goal(&mut store, "blocked", Some(BLOCKER)));
        record(&mut store, &continuation_turn(10, 3));
        // This turn works without reporting the blocker.
        record(&mut store, &continuation_turn(10, 3));
        let again = refused(update_goal(&mut store, "blocked", Some(BLOCKER)));
        assert!(
            again.message.contains("reports so far: 1/3"),
            "{}",
            again.message
        );
        assert_eq!(
            store
                .snapshot(THREAD)
                .unwrap()
                .unwrap()
                .blocker
                .unwrap()
                .reports,
            1
        );
    });
}

#[test]
fn repeating_the_report_in_one_turn_counts_once_and_changes_nothing() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "migrate the staging data", None);
        refused(update_goal(&mut store, "blocked", Some(BLOCKER)));
        let before = store.snapshot(THREAD).unwrap().unwrap();
        for _ in 0..5 {
            let again = refused(update_goal(&mut store, "blocked", Some(BLOCKER)));
            assert_eq!(again.code, GoalRefusalCode::AlreadyReportedThisTurn);
            assert!(again.message.contains("reports so far: 1/3"));
            assert!(!again.retryable);
        }
        let after = store.snapshot(THREAD).unwrap().unwrap();
        assert_eq!(after.blocker, before.blocker);
        assert_eq!(after.goal.status, ThreadGoalStatus::Active);
        let turn = record(&mut store, &user_turn(10)).turn;
        assert_eq!((turn.goal_tool_calls, turn.refused_goal_tool_calls), (6, 6));
    });
}

#[test]
fn a_blocked_report_needs_a_reason_and_a_blank_one_is_not_counted() {
    on_every_backend(|| {
        let (mut store, _) = store();
        set(&mut store, "migrate the staging data", None);
        for reason in [None, Some("   "), Some("?!..")] {
            let refusal = refused(update_goal(&mut store, "blocked", reason));
            assert_eq!(refusal.code, GoalRefusalCode::ReasonRequired);
            assert!(
                refusal.message.contains("reports so far: 0/3"),
                "{}",
                refusal.message
            );
        }
        assert_eq!(store.snapshot(THREAD).unwrap().unwrap().blocker, None);
    });
}

#[test]
fn normalization_ignores_case_spacing_and_punctuation() {
    assert_eq!(
        normalize_blocker("  The CI runner is DOWN!!\n(again)  "),
        "the ci runner is down again"
    );
    assert_eq!(
        normalize_blocker("can't reach api.example.com"),
        "cant reach apiexamplecom"
    );
    assert_eq!(normalize_blocker("…¡¿—"), "");
    assert_eq!(BLOCKER_REPORTS_REQUIRED, 3);
}

proptest! {
    #[test]
    fn normalization_is_idempotent_and_leaves_only_lowercase_words(text in any::<String>()) {
        let once = normalize_blocker(&text);
        prop_assert_eq!(normalize_blocker(&once), once.as_str());
        prop_assert!(!once.starts_with(' ') && !once.ends_with(' ') && !once.contains("  "));
        prop_assert!(once.chars().all(|ch| ch == ' ' || ch.is_alphanumeric()));
        prop_assert_eq!(once.to_lowercase(), once);
    }

    #[test]
    fn rewording_only_case_spacing_or_punctuation_keeps_the_key(
        words in proptest::collection::vec("[a-zA-Z0-9]{1,8}", 1..8),
        separators in proptest::collection::vec("[ \t\n]{1,3}[.,;:!?]{0,2}", 8),
    ) {
        let plain = words.join(" ");
        let mut noisy = String::new();
        for (index, word) in words.iter().enumerate() {
            noisy.push_str(&word.to_uppercase());
            noisy.push_str(&separators[index % separators.len()]);
        }
        prop_assert_eq!(normalize_blocker(&noisy), normalize_blocker(&plain));
    }
}
