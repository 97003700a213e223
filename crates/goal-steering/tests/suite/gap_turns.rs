//! Goal turns delimited by quiet gaps, for hosts that report none (an MCP client).

use std::time::Duration;

use goal_steering::{GapTurns, GoalConfig};
use memory_protocol::goal::{GoalRefusalCode, ThreadGoalStatus};

use super::{THREAD, answered, on_every_backend, refused, set, store, update_goal};

#[test]
fn three_reports_after_quiet_gaps_block_and_reports_without_a_gap_count_once() {
    on_every_backend(|| {
        let (mut store, clock) = store();
        set(&mut store, "publish the crate", None);
        let gap = GoalConfig::default().mcp_turn_gap;
        let mut turns = GapTurns::new(gap);
        let blocker = "the registry token expired; the owner must issue a new one";

        assert!(
            turns.before_call(&mut store, THREAD).unwrap(),
            "the first call opens a turn"
        );
        assert_eq!(
            refused(update_goal(&mut store, "blocked", Some(blocker))).reports_so_far,
            Some(1)
        );
        // Busy in the same turn: calls closer than the gap never end it, get_goal included.
        for _ in 0..3 {
            clock.advance(gap / 4);
            assert!(!turns.before_call(&mut store, THREAD).unwrap());
            let again = refused(update_goal(&mut store, "blocked", Some(blocker)));
            assert_eq!(again.code, GoalRefusalCode::AlreadyReportedThisTurn);
            assert_eq!(again.reports_so_far, Some(1));
        }
        clock.advance(gap);
        assert!(turns.before_call(&mut store, THREAD).unwrap());
        assert_eq!(
            refused(update_goal(&mut store, "blocked", Some(blocker))).reports_so_far,
            Some(2)
        );
        clock.advance(gap + Duration::from_secs(5));
        assert!(turns.before_call(&mut store, THREAD).unwrap());
        let blocked = answered(update_goal(&mut store, "blocked", Some(blocker)));
        assert_eq!(blocked.goal.unwrap().status, ThreadGoalStatus::Blocked);
    });
}

#[test]
fn a_turn_without_a_report_breaks_the_streak() {
    on_every_backend(|| {
        let (mut store, clock) = store();
        set(&mut store, "publish the crate", None);
        let gap = Duration::from_secs(10);
        let mut turns = GapTurns::new(gap);
        let blocker = "the registry is down";
        turns.before_call(&mut store, THREAD).unwrap();
        refused(update_goal(&mut store, "blocked", Some(blocker)));
        // A turn that only read the goal.
        clock.advance(gap);
        turns.before_call(&mut store, THREAD).unwrap();
        clock.advance(gap);
        turns.before_call(&mut store, THREAD).unwrap();
        let restarted = refused(update_goal(&mut store, "blocked", Some(blocker)));
        assert_eq!(restarted.reports_so_far, Some(1));
        // Ending a turn of a goal that is not active changes nothing and charges nothing.
        store.pause(THREAD, None).unwrap();
        let before = store.snapshot(THREAD).unwrap();
        store.end_open_turn(THREAD).unwrap();
        assert_eq!(store.snapshot(THREAD).unwrap(), before);
        store.end_open_turn("thread-without-goal").unwrap();
    });
}
