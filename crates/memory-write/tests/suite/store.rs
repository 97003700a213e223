//! The state store: schema, claims, leases, ownership, back-off and outputs.

use std::time::Duration;

use memory_protocol::stage_one::JobStatus;
use memory_write::store::{
    ClaimParams, ClaimedJob, Exclusion, MemoryMode, StateStore, ThreadRegistration, UpsertCounts,
    WriteStore,
};

use super::conformance::{
    claim as claim_with, claim_until_empty, fail, job_failure, params, succeed, succeeded, thread,
};

const NOW: i64 = 1_800_000_000;
const HOUR: i64 = 3600;

fn store() -> (tempfile::TempDir, StateStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = StateStore::open_home(dir.path()).unwrap();
    (dir, store)
}

/// A new store with `rows` registered at `NOW`.
async fn store_with(rows: &[ThreadRegistration]) -> (tempfile::TempDir, StateStore) {
    let (dir, store) = store();
    upsert(&store, rows, NOW).await;
    (dir, store)
}

/// Registers `rows` at `now`.
async fn upsert(store: &StateStore, rows: &[ThreadRegistration], now: i64) -> UpsertCounts {
    store.upsert_threads(rows, now).await.unwrap()
}

async fn claim(store: &StateStore, now: i64) -> Option<ClaimedJob> {
    super::conformance::claim(store, &params(), now).await
}

#[tokio::test]
async fn schema_is_created_once_in_wal_mode_and_newer_schemas_are_refused() {
    let (dir, store) = store();
    assert_eq!(store.schema_version().await.unwrap(), 3);
    drop(store);
    let store = StateStore::open_home(dir.path()).unwrap();
    assert_eq!(store.schema_version().await.unwrap(), 3);
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        tables,
        [
            "phase2_baseline",
            "phase2_lease",
            "schema_versions",
            "stage1_jobs",
            "stage1_outputs",
            "threads"
        ]
    );
    conn.execute(
        "UPDATE schema_versions SET version = 99 WHERE owner = 'memory-write'",
        [],
    )
    .unwrap();
    drop(conn);
    drop(store);
    let err = StateStore::open_home(dir.path()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "state store: schema version 99 of the memory-write tables is newer than this build \
         supports (3)"
    );
}

#[tokio::test]
async fn claims_pick_newest_activity_first_and_skip_up_to_date_threads() {
    let (_dir, store) = store_with(&[
        thread("old", NOW - 30 * HOUR, "a"),
        thread("new", NOW - 7 * HOUR, "b"),
    ])
    .await;
    let first = claim(&store, NOW).await.unwrap();
    assert_eq!(first.thread_id, "new");
    assert_eq!(first.input_watermark, NOW - 7 * HOUR);
    let second = claim(&store, NOW).await.unwrap();
    assert_eq!(second.thread_id, "old");
    assert_eq!(claim(&store, NOW).await, None, "both are running");

    assert!(succeed(&store, &first, "new", NOW).await);
    assert!(store.mark_stage_one_no_output(&second, NOW).await.unwrap());
    // Leases are gone, but both threads are up to date.
    assert_eq!(claim(&store, NOW + 10 * HOUR).await, None);
    let job = store.stage_one_job("new").await.unwrap().unwrap();
    assert_eq!(job.status, JobStatus::Done);
    assert_eq!(job.last_success_watermark, Some(NOW - 7 * HOUR));
    assert_eq!(job.owner_token, None);
    let stored = store.stage_one_output("new").await.unwrap().unwrap();
    assert_eq!(stored.raw_memory, "memory new");
    assert_eq!(stored.rollout_path, "/sessions/new.jsonl");
    assert_eq!(stored.cwd.as_deref(), Some("/work"));
    assert_eq!(stored.source_updated_at, NOW - 7 * HOUR);
    assert_eq!(store.stage_one_output("old").await.unwrap(), None);
}

#[tokio::test]
async fn a_changed_rollout_is_queued_again_with_a_larger_watermark() {
    let activity = NOW - 7 * HOUR;
    let (_dir, store) = store_with(&[thread("t", activity, "v1")]).await;
    let job = claim(&store, NOW).await.unwrap();
    assert!(succeed(&store, &job, "v1", NOW).await);

    // Same fingerprint: unchanged, not claimable.
    let counts = upsert(&store, &[thread("t", activity, "v1")], NOW).await;
    assert_eq!(
        (counts.inserted, counts.changed, counts.unchanged),
        (0, 0, 1)
    );
    assert_eq!(claim(&store, NOW).await, None);

    // New content with the same activity second still advances the watermark.
    let counts = upsert(&store, &[thread("t", activity, "v2")], NOW).await;
    assert_eq!(counts.changed, 1);
    let again = claim(&store, NOW).await.unwrap();
    assert_eq!(again.input_watermark, activity + 1);
    assert!(succeed(&store, &again, "v2", NOW + 1).await);
    let stored = store.stage_one_output("t").await.unwrap().unwrap();
    assert_eq!(stored.raw_memory, "memory v2");
    assert_eq!(stored.source_updated_at, activity + 1);
}

#[tokio::test]
async fn a_fresh_lease_is_skipped_and_a_stale_one_is_stolen_from_its_owner() {
    let (_dir, store) = store_with(&[thread("t", NOW - 7 * HOUR, "a")]).await;
    let first = claim(&store, NOW).await.unwrap();
    assert_eq!(
        claim(&store, NOW + HOUR - 1).await,
        None,
        "lease still live"
    );
    let thief = claim(&store, NOW + HOUR).await.unwrap();
    assert_ne!(thief.owner_token, first.owner_token);

    // The old owner can no longer finish, fail or clear the job.
    assert!(!succeed(&store, &first, "x", NOW + HOUR).await);
    assert!(
        !store
            .mark_stage_one_no_output(&first, NOW + HOUR)
            .await
            .unwrap()
    );
    let late = job_failure("late", Duration::from_secs(60), NOW + HOUR);
    assert!(!fail(&store, &first, &late).await);
    assert_eq!(store.stage_one_output("t").await.unwrap(), None);
    let job = store.stage_one_job("t").await.unwrap().unwrap();
    assert_eq!(job.status, JobStatus::Running);
    assert_eq!(job.owner_token.as_deref(), Some(thief.owner_token.as_str()));
    assert!(succeed(&store, &thief, "y", NOW + HOUR).await);
}

#[tokio::test]
async fn failures_back_off_and_stop_after_three_attempts_until_the_rollout_changes() {
    let activity = NOW - 7 * HOUR;
    let (_dir, store) = store_with(&[thread("t", activity, "a")]).await;
    let delay = Duration::from_secs(3600);
    let mut now = NOW;
    for attempt in 1..=3u32 {
        let job = claim(&store, now).await.unwrap();
        let failure = job_failure(&format!("boom {attempt}"), delay, now);
        assert!(fail(&store, &job, &failure).await);
        let record = store.stage_one_job("t").await.unwrap().unwrap();
        assert_eq!(record.status, JobStatus::Error);
        assert_eq!(record.attempts, attempt);
        assert_eq!(
            record.last_error.as_deref(),
            Some(format!("boom {attempt}").as_str())
        );
        assert_eq!(record.retry_after_at, Some(now + HOUR));
        assert_eq!(claim(&store, now + HOUR - 1).await, None, "backing off");
        now += HOUR;
    }
    assert_eq!(
        claim(&store, now + 100 * HOUR).await,
        None,
        "retries exhausted"
    );
    assert_eq!(
        store
            .count_stage_one_candidates(&params(), now)
            .await
            .unwrap(),
        0
    );

    upsert(&store, &[thread("t", activity, "b")], now).await;
    let job = claim(&store, now).await.unwrap();
    assert_eq!(store.stage_one_job("t").await.unwrap().unwrap().attempts, 0);
    assert!(succeed(&store, &job, "ok", now).await);
}

#[tokio::test]
async fn no_output_deletes_an_earlier_output_and_signals_phase_two() {
    let (_dir, store) = store_with(&[thread("t", NOW - 7 * HOUR, "a")]).await;
    let watermark = |store: &StateStore| -> i64 {
        rusqlite::Connection::open(store.path())
            .unwrap()
            .query_row("SELECT input_watermark FROM phase2_lease", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(watermark(&store), 0);
    let job = claim(&store, NOW).await.unwrap();
    assert!(succeed(&store, &job, "a", NOW).await);
    let after_success = watermark(&store);
    assert_eq!(after_success, NOW - 7 * HOUR);

    upsert(&store, &[thread("t", NOW - 7 * HOUR, "b")], NOW).await;
    let job = claim(&store, NOW).await.unwrap();
    assert!(store.mark_stage_one_no_output(&job, NOW).await.unwrap());
    assert_eq!(store.stage_one_output("t").await.unwrap(), None);
    assert!(watermark(&store) > after_success);
    assert_eq!(
        store.stage_one_job("t").await.unwrap().unwrap().status,
        JobStatus::Done
    );
}

#[tokio::test]
async fn filters_apply_idle_age_prefix_exclusion_memory_mode_and_excluded_sources() {
    let (_dir, store) = store();
    let mut skipped = thread("skipped", NOW - 7 * HOUR, "a");
    skipped.session.exclusion = Some(Exclusion::Subagent);
    let mut disabled = thread("disabled", NOW - 7 * HOUR, "a");
    disabled.memory_mode = MemoryMode::Disabled;
    let mut elsewhere = thread("elsewhere", NOW - 7 * HOUR, "a");
    elsewhere.session.rollout_path = "/sessions-other/elsewhere.jsonl".to_owned();
    let rows = [
        thread("busy", NOW - 5 * HOUR, "a"),
        thread("ancient", NOW - 11 * 24 * HOUR, "a"),
        thread("current", NOW - 8 * HOUR, "a"),
        thread("eligible", NOW - 9 * HOUR, "a"),
        skipped,
        disabled,
        elsewhere,
    ];
    upsert(&store, &rows, NOW).await;
    let params = ClaimParams {
        rollout_prefix: Some("/sessions/".to_owned()),
        exclude_thread_id: Some("current".to_owned()),
        ..params()
    };
    assert_eq!(
        store
            .count_stage_one_candidates(&params, NOW)
            .await
            .unwrap(),
        1
    );
    let job = claim_with(&store, &params, NOW).await.unwrap();
    assert_eq!(job.thread_id, "eligible");
    assert_eq!(claim_with(&store, &params, NOW).await, None);

    let unlimited_age = ClaimParams {
        max_age_days: None,
        ..params.clone()
    };
    let job = claim_with(&store, &unlimited_age, NOW).await.unwrap();
    assert_eq!(job.thread_id, "ancient");
    assert!(
        store
            .set_thread_memory_mode("disabled", MemoryMode::Enabled, NOW)
            .await
            .unwrap()
    );
    let job = claim_with(&store, &unlimited_age, NOW).await.unwrap();
    assert_eq!(job.thread_id, "disabled");
}

#[tokio::test]
async fn the_running_cap_counts_live_leases_only() {
    let rows: Vec<_> = (0..4)
        .map(|i| thread(&format!("t{i}"), NOW - 7 * HOUR - i, "a"))
        .collect();
    let (_dir, store) = store_with(&rows).await;
    let capped = ClaimParams {
        max_running: Some(2),
        ..params()
    };
    // Two claims fill the cap; once those leases expire they no longer count (and can be
    // stolen).
    for (step, (now, claimed)) in [(NOW, true), (NOW, true), (NOW, false), (NOW + HOUR, true)]
        .into_iter()
        .enumerate()
    {
        let job = claim_with(&store, &capped, now).await;
        assert_eq!(job.is_some(), claimed, "claim {step}");
    }
}

#[tokio::test]
async fn concurrent_claimers_on_separate_connections_never_share_a_job() {
    let rows: Vec<_> = (0..200)
        .map(|i| thread(&format!("t{i:03}"), NOW - 7 * HOUR - i, "a"))
        .collect();
    let (dir, store) = store_with(&rows).await;
    // Collected so every thread starts before any is joined.
    #[allow(clippy::needless_collect)]
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let home = dir.path().to_owned();
            std::thread::spawn(move || {
                let store = StateStore::open_home(&home).unwrap();
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                runtime.block_on(claim_until_empty(&store, &params(), &succeeded("x", NOW)))
            })
        })
        .collect();
    let mut all: Vec<String> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    all.sort();
    let expected: Vec<String> = (0..200).map(|i| format!("t{i:03}")).collect();
    assert_eq!(all, expected);
    assert_eq!(store.stage_one_outputs().await.unwrap().len(), 200);
}

#[tokio::test]
async fn duplicate_thread_ids_follow_the_most_recently_active_file() {
    let (_dir, store) = store();
    let mut a = thread("dup", NOW - 9 * HOUR, "a");
    a.session.rollout_path = "/sessions/a.jsonl".to_owned();
    let mut b = thread("dup", NOW - 8 * HOUR, "b");
    b.session.rollout_path = "/sessions/b.jsonl".to_owned();
    upsert(&store, &[a.clone(), b], NOW).await;
    let record = store.thread("dup").await.unwrap().unwrap();
    assert_eq!(record.session.rollout_path, "/sessions/b.jsonl");
    // Re-scanning the older file does not flip the row back (and so does not re-queue it).
    let watermark = record.source_watermark;
    upsert(&store, &[a], NOW).await;
    let record = store.thread("dup").await.unwrap().unwrap();
    assert_eq!(record.session.rollout_path, "/sessions/b.jsonl");
    assert_eq!(record.source_watermark, watermark);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clones_of_the_store_share_one_connection_across_tasks() {
    let (_dir, store) = store_with(&[thread("t", NOW - 7 * HOUR, "a")]).await;
    let handle = store.clone();
    let job = tokio::spawn(async move { claim(&handle, NOW).await })
        .await
        .unwrap()
        .unwrap();
    assert!(succeed(&store, &job, "t", NOW).await);
    let outputs = store.stage_one_outputs().await.unwrap();
    assert_eq!(outputs.len(), 1);
}
