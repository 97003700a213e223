//! Phase 2 in the state store: the global lease (two claimers, expiry takeover, heartbeat,
//! cooldown, backoff, forced passes), selection, pruning and usage.

// Test helpers outside #[test] functions may unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memory_write::StateStore;
use memory_write::store::{
    BaselineEntry, PhaseTwoClaim, PhaseTwoClaimParams, PhaseTwoLease, PhaseTwoSuccess, WriteStore,
};
use rusqlite::{Connection, params};

use super::conformance::{beat, output_ids, pass_failure, selected_ids, window};

const DAY: i64 = 24 * 3600;
const NOW: i64 = 1_760_000_000;

struct Db {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
}

impl Db {
    fn new() -> Db {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        StateStore::open(&path).unwrap();
        Db { _dir: dir, path }
    }

    fn store(&self) -> StateStore {
        StateStore::open(&self.path).unwrap()
    }

    fn sql(&self) -> Connection {
        Connection::open(&self.path).unwrap()
    }

    /// A thread with memory `mode` and its stage-one output.
    fn output(
        &self,
        id: &str,
        mode: &str,
        source_updated_at: i64,
        usage: i64,
        last_used: Option<i64>,
    ) {
        let sql = self.sql();
        sql.execute(
            "INSERT INTO threads (id, rollout_path, cwd, created_at, updated_at, last_activity_at,
                 memory_mode, source_watermark, source_fingerprint, file_size, file_mtime_ns)
             VALUES (?1, ?2, '/repo', 0, 0, 0, ?3, 0, '', 0, 0)",
            params![id, format!("/rollouts/{id}.jsonl"), mode],
        )
        .unwrap();
        sql.execute(
            "INSERT INTO stage1_outputs (thread_id, raw_memory, rollout_summary, rollout_slug,
                 source_updated_at, generated_at, usage_count, last_used_at)
             VALUES (?1, ?2, 'summary', NULL, ?3, ?3, ?4, ?5)",
            params![
                id,
                format!("memory of {id}"),
                source_updated_at,
                usage,
                last_used
            ],
        )
        .unwrap();
    }
}

fn params_at(now: i64) -> PhaseTwoClaimParams {
    PhaseTwoClaimParams {
        now,
        lease_seconds: 600,
        cooldown_seconds: 6 * 3600,
        force: false,
    }
}

fn claimed(claim: PhaseTwoClaim) -> PhaseTwoLease {
    match claim {
        PhaseTwoClaim::Claimed(lease) => lease,
        other => panic!("expected a claim, got {other:?}"),
    }
}

async fn succeed(store: &StateStore, lease: &PhaseTwoLease, now: i64, selected: &[(String, i64)]) {
    let selected: Vec<BaselineEntry> = selected
        .iter()
        .map(|(thread_id, source_updated_at)| BaselineEntry {
            thread_id: thread_id.clone(),
            source_updated_at: *source_updated_at,
            material: format!("material of {thread_id}"),
        })
        .collect();
    let success = PhaseTwoSuccess {
        now,
        input_hash: "hash",
        selected: &selected,
        root: &[],
    };
    assert!(store.complete_phase_two(lease, &success).await.unwrap());
}

#[tokio::test]
async fn only_one_of_two_claimers_gets_the_lease() {
    let db = Db::new();
    let (first, second) = (db.store(), db.store());
    let lease = claimed(first.claim_phase_two(params_at(NOW)).await.unwrap());
    let other = second.claim_phase_two(params_at(NOW + 1)).await.unwrap();
    assert_eq!(
        other,
        PhaseTwoClaim::SkippedRunning {
            lease_expires_at: lease.lease_expires_at
        }
    );
    // Forcing does not break a live lease either.
    let forced = PhaseTwoClaimParams {
        force: true,
        ..params_at(NOW + 2)
    };
    assert!(matches!(
        second.claim_phase_two(forced).await.unwrap(),
        PhaseTwoClaim::SkippedRunning { .. }
    ));
}

#[test]
fn concurrent_claims_from_threads_yield_exactly_one_owner() {
    let db = Db::new();
    let path = &db.path;
    // Collected so that all eight claimers start before any is joined.
    #[allow(clippy::needless_collect)]
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || {
                let store = StateStore::open(&path).unwrap();
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                matches!(
                    runtime
                        .block_on(store.claim_phase_two(params_at(NOW)))
                        .unwrap(),
                    PhaseTwoClaim::Claimed(_)
                )
            })
        })
        .collect();
    let winners = handles
        .into_iter()
        .map(|h| h.join().unwrap())
        .filter(|won| *won)
        .count();
    assert_eq!(winners, 1);
}

#[tokio::test]
async fn an_expired_lease_is_taken_over_and_the_old_owner_is_locked_out() {
    let db = Db::new();
    let store = db.store();
    let stale = claimed(store.claim_phase_two(params_at(NOW)).await.unwrap());
    let fresh = claimed(store.claim_phase_two(params_at(NOW + 601)).await.unwrap());
    assert_ne!(stale.owner_token, fresh.owner_token);
    assert!(
        !store
            .heartbeat_phase_two(&stale.owner_token, beat(NOW + 602, 600))
            .await
            .unwrap()
    );
    assert!(
        !store
            .fail_phase_two(&stale.owner_token, &pass_failure(NOW + 602, "late", 3600))
            .await
            .unwrap()
    );
    let success = PhaseTwoSuccess {
        now: NOW + 602,
        input_hash: "stale",
        selected: &[],
        root: &[],
    };
    assert!(!store.complete_phase_two(&stale, &success).await.unwrap());
    let state = store.phase_two_state().await.unwrap();
    assert_eq!(
        state.owner_token.as_deref(),
        Some(fresh.owner_token.as_str())
    );
    assert_eq!(state.last_input_hash, None);
}

#[tokio::test]
async fn heartbeats_keep_the_lease_alive() {
    let db = Db::new();
    let store = db.store();
    let lease = claimed(store.claim_phase_two(params_at(NOW)).await.unwrap());
    // Without the heartbeat this claim would take over at NOW + 700.
    assert!(
        store
            .heartbeat_phase_two(&lease.owner_token, beat(NOW + 500, 600))
            .await
            .unwrap()
    );
    let other = store.claim_phase_two(params_at(NOW + 700)).await.unwrap();
    assert_eq!(
        other,
        PhaseTwoClaim::SkippedRunning {
            lease_expires_at: NOW + 1100
        }
    );
    let state = store.phase_two_state().await.unwrap();
    assert_eq!(state.heartbeat_at, Some(NOW + 500));
}

#[tokio::test]
async fn success_starts_a_cooldown_that_a_forced_pass_skips_only_with_new_input() {
    let db = Db::new();
    let store = db.store();
    let lease = claimed(store.claim_phase_two(params_at(NOW)).await.unwrap());
    succeed(&store, &lease, NOW + 10, &[]).await;
    assert_eq!(
        store.claim_phase_two(params_at(NOW + 20)).await.unwrap(),
        PhaseTwoClaim::SkippedCooldown {
            until: NOW + 10 + 6 * 3600
        }
    );
    let forced = PhaseTwoClaimParams {
        force: true,
        ..params_at(NOW + 20)
    };
    assert!(
        matches!(
            store.claim_phase_two(forced).await.unwrap(),
            PhaseTwoClaim::SkippedCooldown { .. }
        ),
        "nothing new: the cooldown holds even when forced"
    );
    store.enqueue_phase_two(NOW + 30).await.unwrap();
    assert!(matches!(
        store.claim_phase_two(params_at(NOW + 40)).await.unwrap(),
        PhaseTwoClaim::SkippedCooldown { .. }
    ));
    claimed(store.claim_phase_two(forced).await.unwrap());
}

#[tokio::test]
async fn the_cooldown_ends_and_is_configurable() {
    let db = Db::new();
    let store = db.store();
    let lease = claimed(store.claim_phase_two(params_at(NOW)).await.unwrap());
    succeed(&store, &lease, NOW, &[]).await;
    claimed(
        store
            .claim_phase_two(params_at(NOW + 6 * 3600))
            .await
            .unwrap(),
    );
    let db = Db::new();
    let store = db.store();
    let lease = claimed(store.claim_phase_two(params_at(NOW)).await.unwrap());
    succeed(&store, &lease, NOW, &[]).await;
    let short = PhaseTwoClaimParams {
        cooldown_seconds: 60,
        ..params_at(NOW + 61)
    };
    claimed(store.claim_phase_two(short).await.unwrap());
}

#[tokio::test]
async fn failures_back_off_doubling_and_success_resets() {
    let db = Db::new();
    let store = db.store();
    let lease = claimed(store.claim_phase_two(params_at(NOW)).await.unwrap());
    assert!(
        store
            .fail_phase_two(&lease.owner_token, &pass_failure(NOW, "model down", 100))
            .await
            .unwrap()
    );
    let state = store.phase_two_state().await.unwrap();
    assert_eq!((state.attempts, state.retry_after_at), (1, Some(NOW + 100)));
    assert_eq!(state.last_error.as_deref(), Some("model down"));
    assert_eq!(
        store.claim_phase_two(params_at(NOW + 50)).await.unwrap(),
        PhaseTwoClaim::SkippedBackoff { until: NOW + 100 }
    );
    let lease = claimed(store.claim_phase_two(params_at(NOW + 100)).await.unwrap());
    assert!(
        store
            .fail_phase_two(&lease.owner_token, &pass_failure(NOW + 100, "again", 100))
            .await
            .unwrap()
    );
    assert_eq!(
        store.phase_two_state().await.unwrap().retry_after_at,
        Some(NOW + 300)
    );
    // No cooldown after a failure: once the backoff is over the next pass may run.
    let lease = claimed(store.claim_phase_two(params_at(NOW + 300)).await.unwrap());
    succeed(&store, &lease, NOW + 301, &[]).await;
    let state = store.phase_two_state().await.unwrap();
    assert_eq!(
        (state.attempts, state.last_error, state.retry_after_at),
        (0, None, None)
    );
    assert_eq!(state.last_input_hash.as_deref(), Some("hash"));
}

#[tokio::test]
async fn success_marks_exactly_the_consumed_snapshots_selected() {
    let db = Db::new();
    db.output("a", "enabled", NOW, 0, None);
    db.output("b", "enabled", NOW, 0, None);
    db.output("c", "enabled", NOW, 0, None);
    let store = db.store();
    let lease = claimed(store.claim_phase_two(params_at(NOW)).await.unwrap());
    succeed(
        &store,
        &lease,
        NOW,
        &[("a".into(), NOW), ("b".into(), NOW - 1)],
    )
    .await;
    let outputs = store.stage_one_outputs().await.unwrap();
    let selected: Vec<(String, bool)> = outputs
        .into_iter()
        .map(|record| (record.thread_id, record.selected))
        .collect();
    // `b` was consumed at an older snapshot than the one stored: not marked.
    assert_eq!(
        selected,
        vec![("a".into(), true), ("b".into(), false), ("c".into(), false)]
    );
}

#[tokio::test]
async fn selection_ranks_by_usage_then_recency_within_the_window() {
    let db = Db::new();
    db.output("fresh-unused", "enabled", NOW - DAY, 0, None);
    db.output(
        "used-twice",
        "enabled",
        NOW - 20 * DAY,
        2,
        Some(NOW - 2 * DAY),
    );
    db.output(
        "used-once-recent",
        "enabled",
        NOW - 25 * DAY,
        1,
        Some(NOW - DAY),
    );
    db.output(
        "used-once-older",
        "enabled",
        NOW - 25 * DAY,
        1,
        Some(NOW - 3 * DAY),
    );
    db.output("stale", "enabled", NOW - 40 * DAY, 5, Some(NOW - 31 * DAY));
    db.output("polluted", "polluted", NOW, 9, Some(NOW));
    db.output("disabled", "disabled", NOW, 9, Some(NOW));
    let store = db.store();
    // The three best, returned in thread-id order.
    assert_eq!(
        selected_ids(&store, window(NOW, 30), 3).await,
        vec!["used-once-older", "used-once-recent", "used-twice"]
    );
    assert_eq!(
        selected_ids(&store, window(NOW, 30), 256).await,
        vec![
            "fresh-unused",
            "used-once-older",
            "used-once-recent",
            "used-twice"
        ]
    );
    let record = &store
        .select_phase_two_inputs(window(NOW, 30), 1)
        .await
        .unwrap()[0];
    assert_eq!(
        (record.cwd.as_deref(), record.rollout_path.as_str()),
        (Some("/repo"), "/rollouts/used-twice.jsonl")
    );
}

#[tokio::test]
async fn blank_outputs_are_not_selected() {
    let db = Db::new();
    db.output("blank", "enabled", NOW, 0, None);
    db.sql()
        .execute(
            "UPDATE stage1_outputs SET raw_memory = '  ', rollout_summary = '\n'",
            [],
        )
        .unwrap();
    assert!(
        db.store()
            .select_phase_two_inputs(window(NOW, 30), 10)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn pruning_removes_stale_unselected_outputs_only_and_respects_the_limit() {
    let db = Db::new();
    for index in 0..5 {
        db.output(
            &format!("stale-{index}"),
            "enabled",
            NOW - (40 + index) * DAY,
            0,
            None,
        );
    }
    db.output("stale-but-selected", "enabled", NOW - 50 * DAY, 0, None);
    db.output(
        "stale-but-used",
        "enabled",
        NOW - 50 * DAY,
        1,
        Some(NOW - DAY),
    );
    db.output("fresh", "enabled", NOW - DAY, 0, None);
    db.sql()
        .execute(
            "UPDATE stage1_outputs SET selected = 1 WHERE thread_id = 'stale-but-selected'",
            [],
        )
        .unwrap();
    let store = db.store();
    assert_eq!(
        store
            .prune_phase_two_outputs(window(NOW, 30), 2)
            .await
            .unwrap(),
        2
    );
    let left = output_ids(&store).await;
    // Stalest first: stale-4 and stale-3 went.
    assert!(
        !left.contains(&"stale-4".to_owned()) && !left.contains(&"stale-3".to_owned()),
        "{left:?}"
    );
    assert_eq!(
        store
            .prune_phase_two_outputs(window(NOW, 30), 200)
            .await
            .unwrap(),
        3
    );
    let mut left = output_ids(&store).await;
    left.sort();
    assert_eq!(left, vec!["fresh", "stale-but-selected", "stale-but-used"]);
}

#[tokio::test]
async fn usage_is_counted_and_feeds_selection() {
    let db = Db::new();
    db.output("a", "enabled", NOW - 2 * DAY, 0, None);
    db.output("b", "enabled", NOW - DAY, 0, None);
    let store = db.store();
    assert_eq!(selected_ids(&store, window(NOW, 30), 1).await, ["b"]);
    let used = store
        .record_memory_usage(&["a".to_owned(), "a".to_owned(), "unknown".to_owned()], NOW)
        .await
        .unwrap();
    assert_eq!(used, 2);
    let a = store.stage_one_output("a").await.unwrap().unwrap();
    assert_eq!((a.usage_count, a.last_used_at), (2, Some(NOW)));
    assert_eq!(selected_ids(&store, window(NOW, 30), 1).await, ["a"]);
}

#[tokio::test]
async fn extraction_time_is_not_activity_and_idle_days_count_on_the_memory_clock() {
    let db = Db::new();
    // Extracted today, but from a session 40 days old: idle, however fresh the extraction.
    db.output("old-session", "enabled", NOW - 40 * DAY, 0, None);
    db.sql()
        .execute(
            "UPDATE stage1_outputs SET generated_at = ?1 WHERE thread_id = 'old-session'",
            [NOW],
        )
        .unwrap();
    db.output("recent", "enabled", NOW - DAY, 0, None);
    let store = db.store();
    assert_eq!(ids(&store).await, ["recent"]);
    assert_eq!(
        store
            .prune_phase_two_outputs(window(NOW, 30), 10)
            .await
            .unwrap(),
        1
    );

    // Only old sessions (an import, or a long break): the clock is the newest of them, so
    // they are not all idle at once.
    let db = Db::new();
    db.output("a", "enabled", NOW - 400 * DAY, 0, None);
    db.output("b", "enabled", NOW - 390 * DAY, 0, None);
    db.output("c", "enabled", NOW - 450 * DAY, 0, None);
    let store = db.store();
    assert_eq!(store.memory_clock(NOW).await.unwrap(), NOW - 390 * DAY);
    assert_eq!(ids(&store).await, ["a", "b"]);
    assert_eq!(
        store
            .prune_phase_two_outputs(window(NOW, 30), 10)
            .await
            .unwrap(),
        1,
        "c is 60 days older"
    );
    // A use now moves the clock.
    store
        .record_memory_usage(&["a".to_owned()], NOW)
        .await
        .unwrap();
    assert_eq!(store.memory_clock(NOW).await.unwrap(), NOW);
    assert_eq!(ids(&store).await, ["a"]);
}

#[tokio::test]
async fn forgetting_a_thread_removes_its_memory_disables_it_and_signals_phase_two() {
    let db = Db::new();
    db.output(
        "019a5210-33c8-7e10-a4d1-92b7f0c4d002",
        "enabled",
        NOW,
        0,
        None,
    );
    db.output(
        "019a5210-aaaa-7e10-a4d1-92b7f0c4d002",
        "enabled",
        NOW,
        0,
        None,
    );
    db.output(
        "019b0000-0000-7000-8000-000000000000",
        "enabled",
        NOW,
        0,
        None,
    );
    let store = db.store();
    use memory_write::store::ThreadMatch;
    assert_eq!(
        store.resolve_thread("019b").await.unwrap(),
        ThreadMatch::One("019b0000-0000-7000-8000-000000000000".into())
    );
    assert!(
        matches!(store.resolve_thread("019a5210").await.unwrap(), ThreadMatch::Ambiguous(ids) if ids.len() == 2)
    );
    assert_eq!(
        store.resolve_thread("01").await.unwrap(),
        ThreadMatch::None,
        "too short"
    );
    assert_eq!(
        store
            .resolve_thread("/rollouts/019b0000-0000-7000-8000-000000000000.jsonl")
            .await
            .unwrap(),
        ThreadMatch::One("019b0000-0000-7000-8000-000000000000".into())
    );

    let before = store.phase_two_state().await.unwrap().input_watermark;
    let report = store
        .forget_thread("019b0000-0000-7000-8000-000000000000", NOW)
        .await
        .unwrap();
    assert!(report.output_deleted);
    let thread = store
        .thread("019b0000-0000-7000-8000-000000000000")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        thread.memory_mode,
        memory_write::store::MemoryMode::Disabled
    );
    assert!(
        store
            .stage_one_output("019b0000-0000-7000-8000-000000000000")
            .await
            .unwrap()
            .is_none()
    );
    assert!(store.phase_two_state().await.unwrap().input_watermark > before);

    let reset = store.reset_memories().await.unwrap();
    assert_eq!(reset.outputs, 2);
    assert!(store.stage_one_outputs().await.unwrap().is_empty());
    assert!(store.phase_two_baseline().await.unwrap().is_empty());
    assert_eq!(
        store.threads().await.unwrap().len(),
        3,
        "threads stay known"
    );
}

/// The ids phase 2 selects at `NOW` from the last 30 days, at most ten.
async fn ids(store: &StateStore) -> Vec<String> {
    selected_ids(store, window(NOW, 30), 10).await
}
