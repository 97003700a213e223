//! The phase-2 lease, selection, baseline, pruning and usage on every backend.

use memory_protocol::stage_one::JobStatus;
use memory_write::store::{
    BaselineEntry, PhaseTwoClaim, PhaseTwoClaimParams, PhaseTwoLease, PhaseTwoSuccess, SharedStore,
};

use super::{
    HOUR, NOW, backends, beat, exited_process, extract_all, other_machine, output_ids, params,
    pass_failure, register, register_and_claim, selected_ids, succeed, thread, window,
};

const DAY: i64 = 24 * HOUR;

fn claim_params(now: i64) -> PhaseTwoClaimParams {
    PhaseTwoClaimParams {
        now,
        lease_seconds: 600,
        cooldown_seconds: 6 * HOUR,
        force: false,
    }
}

fn claimed(claim: PhaseTwoClaim) -> PhaseTwoLease {
    match claim {
        PhaseTwoClaim::Claimed(lease) => lease,
        other => panic!("expected a claim, got {other:?}"),
    }
}

/// Registers and extracts `ids` (activity `NOW - 10h - i`), so each has a stored output.
async fn extracted(store: &SharedStore, ids: &[&str]) {
    let rows: Vec<_> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| thread(id, NOW - 10 * HOUR - i64::try_from(i).unwrap(), "f"))
        .collect();
    register(store.as_ref(), &rows, NOW).await;
    extract_all(store.as_ref(), &params(), NOW).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_consolidator_at_a_time_with_heartbeats_takeover_and_fencing() {
    for backend in backends("p2_lease") {
        let name = backend.name();
        let a = backend.open_as(other_machine("a")).await;
        let b = backend.open_as(other_machine("b")).await;
        let lease = claimed(a.claim_phase_two(claim_params(NOW)).await.unwrap());
        assert_eq!(
            b.claim_phase_two(claim_params(NOW + 1)).await.unwrap(),
            PhaseTwoClaim::SkippedRunning {
                lease_expires_at: NOW + 600
            },
            "{name}"
        );
        assert!(
            a.heartbeat_phase_two(&lease.owner_token, beat(NOW + 500, 600))
                .await
                .unwrap()
        );
        let state = b.phase_two_state().await.unwrap();
        assert_eq!(
            (state.status, state.heartbeat_at),
            (JobStatus::Running, Some(NOW + 500))
        );
        assert!(matches!(
            b.claim_phase_two(claim_params(NOW + 1000)).await.unwrap(),
            PhaseTwoClaim::SkippedRunning { .. }
        ));
        // The holder went silent: the lease expires and another machine takes it.
        let taken = claimed(b.claim_phase_two(claim_params(NOW + 1101)).await.unwrap());
        assert_ne!(taken.owner_token, lease.owner_token, "{name}");
        assert!(
            !a.heartbeat_phase_two(&lease.owner_token, beat(NOW + 1102, 600))
                .await
                .unwrap()
        );
        assert!(
            !a.release_phase_two(&lease.owner_token).await.unwrap(),
            "{name}"
        );
        assert!(
            !a.fail_phase_two(&lease.owner_token, &pass_failure(NOW, "late", 60))
                .await
                .unwrap()
        );
        let late = PhaseTwoSuccess {
            now: NOW,
            input_hash: "h",
            selected: &[],
            root: &[],
        };
        assert!(
            !a.complete_phase_two(&lease, &late).await.unwrap(),
            "{name}"
        );
        assert!(
            b.release_phase_two(&taken.owner_token).await.unwrap(),
            "{name}"
        );
        assert_eq!(
            b.phase_two_state().await.unwrap().status,
            JobStatus::Pending
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gone_holder_on_this_host_loses_the_lease_at_once() {
    for backend in backends("p2_gone") {
        let dead = backend.open_as(exited_process()).await;
        claimed(dead.claim_phase_two(claim_params(NOW)).await.unwrap());
        let me = backend.open().await;
        let lease = claimed(me.claim_phase_two(claim_params(NOW + 1)).await.unwrap());
        // And a stopping process gives its own lease back.
        let released = me.release_leases_of_this_process().await.unwrap();
        assert!(released.phase_two, "{}", backend.name());
        assert!(
            !me.heartbeat_phase_two(&lease.owner_token, beat(NOW + 2, 600))
                .await
                .unwrap()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn success_records_the_baseline_and_cooldown_failures_back_off_doubling() {
    for backend in backends("p2_success") {
        let name = backend.name();
        let store = backend.open().await;
        extracted(&store, &["a", "b", "c"]).await;
        let lease = claimed(store.claim_phase_two(claim_params(NOW)).await.unwrap());
        let selected = store
            .select_phase_two_inputs(window(NOW, 30), 2)
            .await
            .unwrap();
        // Ranked by activity (newest first), returned by thread id.
        let ids: Vec<_> = selected.iter().map(|r| r.thread_id.as_str()).collect();
        assert_eq!(ids, ["a", "b"], "{name}");
        let baseline: Vec<BaselineEntry> = selected
            .iter()
            .map(|r| BaselineEntry {
                thread_id: r.thread_id.clone(),
                source_updated_at: r.source_updated_at,
                material: format!("material {}", r.thread_id),
            })
            .collect();
        let success = PhaseTwoSuccess {
            now: NOW + 10,
            input_hash: "hash-1",
            selected: &baseline,
            root: &[],
        };
        assert!(
            store.complete_phase_two(&lease, &success).await.unwrap(),
            "{name}"
        );
        assert_eq!(
            store.phase_two_baseline().await.unwrap(),
            baseline,
            "{name}"
        );
        let outputs = store.stage_one_outputs().await.unwrap();
        let flags: Vec<_> = outputs
            .iter()
            .map(|o| (o.thread_id.as_str(), o.selected))
            .collect();
        assert_eq!(flags, [("a", true), ("b", true), ("c", false)], "{name}");
        let state = store.phase_two_state().await.unwrap();
        assert_eq!(state.status, JobStatus::Done, "{name}");
        assert_eq!(state.last_input_hash.as_deref(), Some("hash-1"), "{name}");
        assert_eq!(
            state.last_success_watermark,
            Some(lease.input_watermark),
            "{name}"
        );

        // Cooldown, unless forced with new input.
        assert_eq!(
            store.claim_phase_two(claim_params(NOW + 20)).await.unwrap(),
            PhaseTwoClaim::SkippedCooldown {
                until: NOW + 10 + 6 * HOUR
            },
            "{name}"
        );
        let forced = PhaseTwoClaimParams {
            force: true,
            ..claim_params(NOW + 20)
        };
        assert!(matches!(
            store.claim_phase_two(forced).await.unwrap(),
            PhaseTwoClaim::SkippedCooldown { .. }
        ));
        store.enqueue_phase_two(NOW + 20).await.unwrap();
        let lease = claimed(store.claim_phase_two(forced).await.unwrap());
        assert_eq!(lease.last_input_hash.as_deref(), Some("hash-1"), "{name}");

        // Failures back off, doubling.
        assert!(
            store
                .fail_phase_two(&lease.owner_token, &pass_failure(NOW + 30, "boom", 100))
                .await
                .unwrap()
        );
        assert_eq!(
            store.claim_phase_two(claim_params(NOW + 31)).await.unwrap(),
            PhaseTwoClaim::SkippedBackoff { until: NOW + 130 },
            "{name}"
        );
        let lease = claimed(
            store
                .claim_phase_two(claim_params(NOW + 130))
                .await
                .unwrap(),
        );
        assert!(
            store
                .fail_phase_two(&lease.owner_token, &pass_failure(NOW + 200, "boom", 100))
                .await
                .unwrap()
        );
        let state = store.phase_two_state().await.unwrap();
        assert_eq!(
            (state.attempts, state.retry_after_at),
            (2, Some(NOW + 400)),
            "{name}"
        );
        assert_eq!(state.last_error.as_deref(), Some("boom"), "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_ranks_selection_and_pruning_spares_what_was_selected() {
    for backend in backends("p2_usage") {
        let name = backend.name();
        let store = backend.open().await;
        extracted(&store, &["a", "b", "c"]).await;
        assert_eq!(
            store.memory_clock(NOW).await.unwrap(),
            NOW - 10 * HOUR,
            "{name}"
        );
        let ids = ["c".to_owned(), "c".to_owned(), "missing".to_owned()];
        assert_eq!(
            store.record_memory_usage(&ids, NOW - HOUR).await.unwrap(),
            2,
            "{name}"
        );
        let c = store.stage_one_output("c").await.unwrap().unwrap();
        assert_eq!(
            (c.usage_count, c.last_used_at),
            (2, Some(NOW - HOUR)),
            "{name}"
        );
        let top = selected_ids(&*store, window(NOW, 30), 1).await;
        assert_eq!(top, ["c"], "{name}");
        // Select "c" in a pass, then let 40 days pass on the memory clock by a new memory.
        let lease = claimed(store.claim_phase_two(claim_params(NOW)).await.unwrap());
        let c = store.stage_one_output("c").await.unwrap().unwrap();
        let entry = BaselineEntry {
            thread_id: "c".to_owned(),
            source_updated_at: c.source_updated_at,
            material: String::new(),
        };
        let success = PhaseTwoSuccess {
            now: NOW,
            input_hash: "h",
            selected: &[entry],
            root: &[],
        };
        assert!(store.complete_phase_two(&lease, &success).await.unwrap());
        let later = NOW + 40 * DAY;
        let rows = [thread("d", later - 7 * HOUR, "f")];
        let job = register_and_claim(&*store, &rows, &params(), later).await;
        assert!(succeed(&*store, &job, "d", later).await);
        assert_eq!(
            store
                .prune_phase_two_outputs(window(later, 30), 10)
                .await
                .unwrap(),
            2,
            "{name}"
        );
        assert_eq!(output_ids(&*store).await, ["c", "d"], "{name}");
    }
}

/// Workers finish jobs while consolidations claim and complete over and over: when the last
/// pass leaves phase 2 with nothing due, that pass saw every output. A finisher that found
/// phase 2 already due skips raising its watermark; this holds it to never doing so in a way
/// a racing claim could miss.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_output_is_missed_by_a_consolidation_racing_the_finishers() {
    const THREADS: usize = 120;
    for backend in backends("race") {
        let store = backend.open().await;
        let name = backend.name();
        let rows: Vec<_> = (0..THREADS)
            .map(|i| thread(&format!("t{i:03}"), NOW - 10 * HOUR - i as i64, "f"))
            .collect();
        register(&*store, &rows, NOW).await;
        let mut finishers = Vec::new();
        for _ in 0..4 {
            let store = backend.open().await;
            finishers.push(tokio::spawn(async move {
                extract_all(&*store, &params(), NOW).await;
            }));
        }
        let done = std::sync::atomic::AtomicBool::new(false);
        let consolidator = async {
            let store = backend.open().await;
            let mut last_seen = 0;
            let mut tick = 0;
            loop {
                let finished = done.load(std::sync::atomic::Ordering::SeqCst);
                let state = store.phase_two_state().await.unwrap();
                if state.input_watermark <= state.last_success_watermark.unwrap_or(-1) {
                    // Nothing due: done once the finishers are, else look again shortly.
                    if finished {
                        return last_seen;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                    continue;
                }
                tick += 1;
                let params = PhaseTwoClaimParams {
                    cooldown_seconds: 0,
                    ..claim_params(NOW + tick)
                };
                let PhaseTwoClaim::Claimed(lease) = store.claim_phase_two(params).await.unwrap()
                else {
                    continue;
                };
                let seen = store.stage_one_outputs().await.unwrap().len();
                let success = PhaseTwoSuccess {
                    now: NOW + tick,
                    input_hash: "h",
                    selected: &[],
                    root: &[],
                };
                assert!(store.complete_phase_two(&lease, &success).await.unwrap());
                last_seen = seen;
            }
        };
        let finishing = async {
            for finisher in finishers {
                finisher.await.unwrap();
            }
            done.store(true, std::sync::atomic::Ordering::SeqCst);
        };
        let ((), last_seen) = tokio::join!(finishing, consolidator);
        // Phase 2 has nothing due (the consolidator stopped there), so the last pass must
        // have consolidated every output.
        assert_eq!(last_seen, THREADS, "{name}: the last pass missed outputs");
    }
}
