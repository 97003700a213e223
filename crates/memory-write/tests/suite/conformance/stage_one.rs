//! Stage-one leases on every backend: claims, heartbeats, fencing, failures, releases, the
//! dead-owner shortcut, concurrent claimers.

use std::collections::HashSet;
use std::time::Duration;

use memory_protocol::stage_one::JobStatus;
use memory_write::store::{ClaimParams, Exclusion, SharedStore};

use super::{
    HOUR, NOW, backends, beat, candidates, claim, claim_until_empty, exited_process, extract_all,
    fail, idle, job_failure, other_machine, params, register, register_and_claim, succeed,
    succeeded, thread,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_take_the_newest_eligible_thread_and_finished_jobs_are_not_claimed_again() {
    for backend in backends("claims") {
        let name = backend.name();
        let store = backend
            .registered(&[idle("old", 30), idle("new", 8), idle("busy", 1)])
            .await;
        assert_eq!(candidates(&*store, &params(), NOW).await, 2);
        let first = claim(&*store, &params(), NOW).await.unwrap();
        assert_eq!(first.thread_id, "new", "{name}");
        assert!(succeed(&*store, &first, "n", NOW).await);
        // Finishing twice is refused: the token no longer owns the job.
        assert!(!succeed(&*store, &first, "n", NOW).await);
        let second = claim(&*store, &params(), NOW).await.unwrap();
        assert_eq!(second.thread_id, "old", "{name}");
        assert!(store.mark_stage_one_no_output(&second, NOW).await.unwrap());
        assert!(claim(&*store, &params(), NOW).await.is_none());

        let job = store.stage_one_job("new").await.unwrap().unwrap();
        assert_eq!(job.status, JobStatus::Done, "{name}");
        assert_eq!(job.last_success_watermark, Some(NOW - 8 * HOUR), "{name}");
        let stored = store.stage_one_output("new").await.unwrap().unwrap();
        assert_eq!(stored.raw_memory, "memory n", "{name}");
        assert_eq!(stored.cwd.as_deref(), Some("/work"), "{name}");
        assert_eq!(stored.git_branch.as_deref(), Some("main"), "{name}");
        assert!(
            store.stage_one_output("old").await.unwrap().is_none(),
            "{name}"
        );
        assert_eq!(store.stage_one_jobs().await.unwrap().len(), 2, "{name}");
        // A stored output moved phase 2's input watermark.
        assert!(store.phase_two_state().await.unwrap().input_watermark >= NOW - 8 * HOUR);

        // A changed rollout is extracted again.
        let rows = [thread("new", NOW - 7 * HOUR, "g")];
        let again = register_and_claim(&*store, &rows, &params(), NOW).await;
        assert_eq!(
            (again.thread_id.as_str(), again.input_watermark),
            ("new", NOW - 7 * HOUR)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_lease_is_skipped_an_expired_one_is_reclaimed_and_the_old_owner_is_fenced() {
    for backend in backends("leases") {
        let name = backend.name();
        let first = backend.open_as(other_machine("a")).await;
        let second = backend.open_as(other_machine("b")).await;
        register(&*first, &[idle("t", 10)], NOW).await;
        let lease = ClaimParams {
            lease_seconds: 600,
            ..params()
        };
        let job = claim(&*first, &lease, NOW).await.unwrap();
        assert!(claim(&*second, &lease, NOW + 599).await.is_none());
        // A heartbeat keeps it alive past the first expiry.
        assert!(
            first
                .heartbeat_stage_one_job(&job, beat(NOW + 500, 600))
                .await
                .unwrap(),
            "{name}"
        );
        assert!(claim(&*second, &lease, NOW + 1000).await.is_none());
        // Another machine's silent owner is reclaimed only once the lease ran out.
        let stolen = claim(&*second, &lease, NOW + 1101).await.unwrap();
        assert_ne!(stolen.owner_token, job.owner_token, "{name}");
        assert!(
            !first
                .heartbeat_stage_one_job(&job, beat(NOW + 1102, 600))
                .await
                .unwrap(),
            "{name}"
        );
        assert!(!succeed(&*first, &job, "x", NOW).await);
        assert!(!fail(&*first, &job, &job_failure("late", Duration::ZERO, NOW)).await);
        assert!(
            !first.release_stage_one_job(&job, "late").await.unwrap(),
            "{name}"
        );
        assert!(succeed(&*second, &stolen, "y", NOW).await);
        let stored = second.stage_one_output("t").await.unwrap().unwrap();
        assert_eq!(stored.raw_memory, "memory y", "{name}");
    }
}

/// Threads whose job is running with an expired lease and threads with no running job are
/// candidates alike: the newest of either kind is claimed first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_lease_and_a_free_thread_are_claimed_newest_first() {
    for backend in backends("expired_order") {
        let name = backend.name();
        let first = backend.open_as(other_machine("a")).await;
        let second = backend.open_as(other_machine("b")).await;
        register(
            &*first,
            &[idle("newest", 7), idle("middle", 8), idle("oldest", 9)],
            NOW,
        )
        .await;
        let lease = ClaimParams {
            lease_seconds: 600,
            ..params()
        };
        // Machine a takes the newest and the middle thread and goes silent.
        for expected in ["newest", "middle"] {
            let job = claim(&*first, &lease, NOW).await.unwrap();
            assert_eq!(job.thread_id, expected, "{name}");
        }
        // Before the leases run out only the free thread is left.
        let free = claim(&*second, &lease, NOW + 10).await.unwrap();
        assert_eq!(free.thread_id, "oldest", "{name}");
        let retry = job_failure("retry", Duration::ZERO, NOW + 20);
        fail(&*second, &free, &retry).await;
        // After: the expired ones come back newest first, ahead of the older free thread.
        let order = extract_all(&*second, &lease, NOW + 700).await;
        assert_eq!(order, ["newest", "middle", "oldest"], "{name}");
        assert_eq!(candidates(&*second, &lease, NOW + 700).await, 0, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_back_off_and_stop_after_the_attempt_limit_and_releases_spend_nothing() {
    for backend in backends("failures") {
        let name = backend.name();
        let store = backend.registered(&[idle("t", 10)]).await;
        let job = claim(&*store, &params(), NOW).await.unwrap();
        assert!(
            store
                .release_stage_one_job(&job, "model unavailable")
                .await
                .unwrap()
        );
        let row = store.stage_one_job("t").await.unwrap().unwrap();
        assert_eq!(
            (row.status, row.attempts),
            (JobStatus::Pending, 0),
            "{name}"
        );
        assert_eq!(
            row.last_error.as_deref(),
            Some("model unavailable"),
            "{name}"
        );
        let mut now = NOW;
        for attempt in 1..=3 {
            let job = claim(&*store, &params(), now).await.unwrap();
            let delay = Duration::from_secs(60);
            assert!(fail(&*store, &job, &job_failure("boom", delay, now)).await);
            let row = store.stage_one_job("t").await.unwrap().unwrap();
            assert_eq!(
                (row.status, row.attempts),
                (JobStatus::Error, attempt),
                "{name}"
            );
            // Backing off: not claimable until the delay passed.
            assert!(claim(&*store, &params(), now + 59).await.is_none());
            now += 61;
        }
        assert!(claim(&*store, &params(), now).await.is_none());
        // The user fixed the cause (`run --retry-failed`): the failed job is claimable at
        // once, its spent attempts cleared; a job that is not failed is left alone.
        assert_eq!(
            store.retry_failed_stage_one_jobs().await.unwrap(),
            1,
            "{name}"
        );
        let retried = claim(&*store, &params(), now).await.unwrap();
        assert_eq!(
            store.stage_one_job("t").await.unwrap().unwrap().attempts,
            0,
            "{name}"
        );
        assert_eq!(
            store.retry_failed_stage_one_jobs().await.unwrap(),
            0,
            "{name}"
        );
        assert!(
            store
                .release_stage_one_job(&retried, "again")
                .await
                .unwrap()
        );
        // A new version of the rollout starts over.
        let rows = [thread("t", NOW - 9 * HOUR, "g")];
        let job = register_and_claim(&*store, &rows, &params(), now).await;
        assert_eq!(
            store.stage_one_job("t").await.unwrap().unwrap().attempts,
            0,
            "{name}"
        );
        // Giving back every lease of this process closes its claims.
        let released = store.release_leases_of_this_process().await.unwrap();
        assert_eq!((released.jobs, released.phase_two), (1, false), "{name}");
        assert!(claim(&*store, &params(), now).await.is_none());
        assert!(
            !store.mark_stage_one_no_output(&job, now).await.unwrap(),
            "{name}"
        );
        let fresh = backend.open().await;
        assert!(claim(&*fresh, &params(), now).await.is_some());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gone_owner_on_this_host_is_taken_at_once_and_other_hosts_wait_for_expiry() {
    for backend in backends("gone_owner") {
        let name = backend.name();
        let dead = backend.open_as(exited_process()).await;
        let remote = backend.open_as(other_machine("r")).await;
        let rows = [idle("a", 10), idle("b", 11)];
        register_and_claim(&*dead, &rows, &params(), NOW).await;
        claim(&*remote, &params(), NOW).await.unwrap();
        let me = backend.open().await;
        assert_eq!(
            me.reclaim_jobs_of_gone_owners(NOW + 1).await.unwrap(),
            1,
            "{name}"
        );
        let taken = claim(&*me, &params(), NOW + 1).await.unwrap();
        assert_eq!(taken.thread_id, "a", "{name}");
        assert!(claim(&*me, &params(), NOW + 2).await.is_none());
    }
}

/// The claim itself frees a gone owner's job and takes it, even when that job is the only one
/// (on PostgreSQL the dead-owner query and the first pick are sent together, so the pick ran
/// before the job was freed and the claim must look again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_alone_frees_and_takes_the_only_job_of_a_gone_owner() {
    for backend in backends("gone_only") {
        let name = backend.name();
        let dead = backend.open_as(exited_process()).await;
        let rows = [idle("a", 10)];
        register_and_claim(&*dead, &rows, &params(), NOW).await;
        let me = backend.open().await;
        let taken = claim(&*me, &params(), NOW + 1).await;
        assert_eq!(
            taken.map(|job| job.thread_id).as_deref(),
            Some("a"),
            "{name}"
        );
        let job = me.stage_one_job("a").await.unwrap().unwrap();
        assert_eq!(
            (job.status, job.attempts),
            (JobStatus::Running, 0),
            "{name}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_and_the_running_cap_apply() {
    for backend in backends("filters") {
        let name = backend.name();
        let store = backend.open().await;
        let mut skipped = idle("skipped", 10);
        skipped.session.exclusion = Some(Exclusion::Subagent);
        let mut elsewhere = idle("elsewhere", 10);
        elsewhere.session.rollout_path = "/other/elsewhere.jsonl".to_owned();
        register(
            &*store,
            &[
                skipped,
                elsewhere,
                idle("too-old", 20 * 24),
                idle("excluded", 10),
                idle("one", 12),
                idle("two", 13),
            ],
            NOW,
        )
        .await;
        let filtered = ClaimParams {
            rollout_prefix: Some("/sessions/".to_owned()),
            exclude_thread_id: Some("excluded".to_owned()),
            max_running: Some(1),
            ..params()
        };
        assert_eq!(candidates(&*store, &filtered, NOW).await, 2);
        let job = claim(&*store, &filtered, NOW).await.unwrap();
        assert_eq!(job.thread_id, "one", "{name}");
        assert!(claim(&*store, &filtered, NOW).await.is_none());
        assert!(succeed(&*store, &job, "1", NOW).await);
        let next = claim(&*store, &filtered, NOW).await.unwrap();
        assert_eq!(next.thread_id, "two", "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_reported_ended_is_claimed_without_the_idle_wait() {
    for backend in backends("ended") {
        let name = backend.name();
        let store = backend
            .registered(&[
                thread("ended", NOW - 60, "f"),
                thread("running", NOW - 30, "f"),
            ])
            .await;
        assert_eq!(candidates(&*store, &params(), NOW).await, 0, "{name}");
        assert!(claim(&*store, &params(), NOW).await.is_none(), "{name}");
        let ended = ClaimParams {
            ended_thread_ids: vec!["ended".to_owned(), "not-registered".to_owned()],
            ..params()
        };
        assert_eq!(candidates(&*store, &ended, NOW).await, 1, "{name}");
        let job = claim(&*store, &ended, NOW).await.unwrap();
        assert_eq!(job.thread_id, "ended", "{name}");
        // The other rules still hold: an ended thread already claimed is not claimed twice.
        assert!(claim(&*store, &ended, NOW).await.is_none(), "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_claimers_on_separate_handles_never_share_a_job() {
    for backend in backends("concurrent") {
        let name = backend.name();
        let seed = backend.open().await;
        let rows: Vec<_> = (0..48)
            .map(|i| thread(&format!("t{i:02}"), NOW - 10 * HOUR - i, "f"))
            .collect();
        register(&*seed, &rows, NOW).await;
        let mut handles: Vec<SharedStore> = Vec::new();
        for i in 0..4 {
            handles.push(backend.open_as(other_machine(&i.to_string())).await);
        }
        let mut tasks = tokio::task::JoinSet::new();
        for worker in 0..8 {
            let store = handles[worker % handles.len()].clone();
            tasks.spawn(async move {
                claim_until_empty(store.as_ref(), &params(), &succeeded("c", NOW)).await
            });
        }
        let mut all = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            all.extend(joined.unwrap());
        }
        let unique: HashSet<_> = all.iter().cloned().collect();
        assert_eq!(
            (all.len(), unique.len()),
            (48, 48),
            "{name}: claimed {all:?}"
        );
        assert_eq!(seed.stage_one_outputs().await.unwrap().len(), 48, "{name}");
    }
}
