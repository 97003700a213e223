//! A store shared by several machines (PostgreSQL only): a machine registers its sessions with
//! their filtered, redacted items and a worker on any machine extracts from those; a
//! consolidation publishes the memory root it wrote and every machine materializes it.

use std::sync::Arc;

use memory_protocol::names::memory_root as names;
use memory_write::memory_root::MemoryRoot;
use memory_write::phase_one::PhaseOneHooks;
use memory_write::phase_two::{PhaseTwoOptions, run_phase_two};
use memory_write::shared_root::{RootFile, sync_shared_root};
use memory_write::stage_one_request::{Loaded, load_job_rollout};
use memory_write::store::{
    ClaimParams, PhaseTwoClaim, PhaseTwoClaimParams, PhaseTwoSuccess, StoredRollout,
};
use memory_write::{PhaseOneOptions, ScanOptions, run_phase_one, scan_rollouts};

use super::{
    Backend, HOUR, NOW, backends, candidates, claim, idle, items_of, other_machine, params, thread,
};
use crate::suite::fake_model::{Answer, FakeModel, all_files, write_rollouts};

fn shared_backends(test: &str) -> Vec<Backend> {
    backends(test)
        .into_iter()
        .filter(|backend| matches!(backend, Backend::Postgres { .. }))
        .collect()
}

/// Claims regardless of age and idleness (the rollouts are from 2025).
fn any_age() -> ClaimParams {
    ClaimParams {
        min_idle_hours: 0,
        max_age_days: None,
        ..ClaimParams::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollout_scanned_on_one_machine_is_extracted_on_another_from_redacted_items() {
    for backend in shared_backends("shared_scan") {
        let dir = tempfile::tempdir().unwrap();
        let ids = write_rollouts(dir.path(), 1);
        // A secret in the transcript must not leave machine a.
        let secret = "ghp_EXAMPLEfakeTokenForDocs0123456789abc";
        let file = all_files(dir.path()).remove(0);
        let text = std::fs::read_to_string(&file)
            .unwrap()
            .replace("make the build green", &format!("use token {secret}"));
        std::fs::write(&file, text).unwrap();

        let a = backend.open_as(other_machine("a")).await;
        let options = ScanOptions::default();
        let report = scan_rollouts(&*a, dir.path(), &options, NOW).await.unwrap();
        assert_eq!(report.new, 1, "{report:?}");
        drop(dir); // machine b has no such file

        let b = backend.open_as(other_machine("b")).await;
        let record = b.thread(&ids[0]).await.unwrap().unwrap();
        assert_eq!(record.machine_id.as_deref(), Some("machine-a"));
        assert!(
            b.thread_file_states().await.unwrap().is_empty(),
            "machine b scans only its own files"
        );
        let job = claim(&*b, &any_age(), NOW).await.unwrap();
        let items = job.stored_items.clone().unwrap();
        assert!(!items.contains(secret), "{items}");
        assert!(items.contains("use token"), "{items}");
        let Loaded::Material(_) = load_job_rollout(&job).unwrap() else {
            panic!("the stored items hold a user message and tool activity");
        };
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_is_claimed_only_with_items_of_its_registered_version() {
    for backend in shared_backends("shared_version") {
        let store = backend
            .registered(&[thread("t", NOW - 10 * HOUR, "f1")])
            .await;
        // The file changed and was registered, but its new items never arrived (the
        // uploading machine died in between): nothing may be extracted from the old ones.
        store
            .upsert_threads(&[thread("t", NOW - 9 * HOUR, "f2")], NOW)
            .await
            .unwrap();
        assert_eq!(candidates(&*store, &params(), NOW).await, 0);
        assert!(claim(&*store, &params(), NOW).await.is_none());
        store
            .store_rollouts(
                &[StoredRollout {
                    thread_id: "t".to_owned(),
                    source_fingerprint: "f2".to_owned(),
                    items: items_of("t", "f2"),
                }],
                NOW,
            )
            .await
            .unwrap();
        let job = claim(&*store, &params(), NOW).await.unwrap();
        assert!(job.stored_items.unwrap().contains("thread t at f2"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_items_that_do_not_parse_fail_the_job_with_a_clear_error() {
    for backend in shared_backends("shared_broken") {
        let store = backend.open().await;
        store
            .store_rollouts(
                &[StoredRollout {
                    thread_id: "t".to_owned(),
                    source_fingerprint: "f".to_owned(),
                    items: "{not json".to_owned(),
                }],
                NOW,
            )
            .await
            .unwrap();
        store.upsert_threads(&[idle("t", 10)], NOW).await.unwrap();
        let job = claim(&*store, &params(), NOW).await.unwrap();
        let error = load_job_rollout(&job).unwrap_err().to_string();
        assert!(error.contains("stored items are not valid"), "{error}");
    }
}

fn lease_of(claim: PhaseTwoClaim) -> memory_write::store::PhaseTwoLease {
    match claim {
        PhaseTwoClaim::Claimed(lease) => lease,
        other => panic!("expected a claim, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completed_pass_publishes_its_root_and_a_pass_that_lost_its_lease_publishes_nothing() {
    for backend in shared_backends("shared_root_publish") {
        let a = backend.open_as(other_machine("a")).await;
        let b = backend.open_as(other_machine("b")).await;
        assert_eq!(a.latest_memory_root(None).await.unwrap(), None);
        let claim = |now| PhaseTwoClaimParams {
            now,
            lease_seconds: 600,
            cooldown_seconds: 0,
            force: true,
        };
        let files = [RootFile {
            path: names::MEMORY_FILE.to_owned(),
            text: "# from a\n".to_owned(),
        }];
        let lease = lease_of(a.claim_phase_two(claim(NOW)).await.unwrap());
        let success = |now, root| PhaseTwoSuccess {
            now,
            input_hash: "h",
            selected: &[],
            root,
        };
        assert!(
            a.complete_phase_two(&lease, &success(NOW, &files))
                .await
                .unwrap()
        );
        let first = b.latest_memory_root(None).await.unwrap().unwrap();
        assert_eq!(first.files, files);
        assert_eq!(
            b.latest_memory_root(Some(first.revision)).await.unwrap(),
            None
        );

        // a's next lease expires and b takes over: a's late completion publishes nothing.
        let stale = lease_of(a.claim_phase_two(claim(NOW + 10)).await.unwrap());
        let taken = lease_of(b.claim_phase_two(claim(NOW + 700)).await.unwrap());
        let late = [RootFile {
            path: names::MEMORY_FILE.to_owned(),
            text: "# stale\n".to_owned(),
        }];
        assert!(
            !a.complete_phase_two(&stale, &success(NOW + 701, &late))
                .await
                .unwrap()
        );
        assert_eq!(
            b.latest_memory_root(Some(first.revision)).await.unwrap(),
            None
        );
        let fresh = [RootFile {
            path: names::MEMORY_FILE.to_owned(),
            text: "# from b\n".to_owned(),
        }];
        assert!(
            b.complete_phase_two(&taken, &success(NOW + 702, &fresh))
                .await
                .unwrap()
        );
        let second = a
            .latest_memory_root(Some(first.revision))
            .await
            .unwrap()
            .unwrap();
        assert!(second.revision > first.revision);
        assert_eq!(second.files, fresh);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_machine_reads_the_memory_root_the_first_consolidated() {
    for backend in shared_backends("shared_root_read") {
        let sessions = tempfile::tempdir().unwrap();
        write_rollouts(sessions.path(), 3);
        let (home_a, home_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (root_a, root_b) = (
            MemoryRoot::under_home(home_a.path()),
            MemoryRoot::under_home(home_b.path()),
        );
        let model = Arc::new(FakeModel::new(Answer::Echo));
        let a = backend.open_as(other_machine("a")).await;
        scan_rollouts(&*a, sessions.path(), &ScanOptions::default(), NOW)
            .await
            .unwrap();
        let options = PhaseOneOptions {
            claim: any_age(),
            max_claims: None,
            ..PhaseOneOptions::default()
        };
        let phase_one = run_phase_one(&a, model.clone(), &options, PhaseOneHooks::default())
            .await
            .unwrap();
        assert_eq!(phase_one.succeeded, 3, "{phase_one:?}");
        let phase_two = PhaseTwoOptions::default();
        let first = run_phase_two(&*a, &root_a, model.as_ref(), &phase_two)
            .await
            .unwrap();
        assert!(first.ran, "{first:?}");

        // Machine b never consolidated: within the cooldown it runs no pass, and its root is
        // the one a wrote, byte for byte; it is not taken for a damaged root.
        let b = backend.open_as(other_machine("b")).await;
        let second = run_phase_two(&*b, &root_b, model.as_ref(), &phase_two)
            .await
            .unwrap();
        assert!(!second.ran, "{second:?}");
        assert!(second.repaired.is_empty(), "{second:?}");
        assert!(second.materialized_revision.is_some(), "{second:?}");
        for name in [
            names::MEMORY_FILE,
            names::MEMORY_SUMMARY_FILE,
            names::RAW_MEMORIES_FILE,
        ] {
            let (mine, theirs) = (root_b.read(name).unwrap(), root_a.read(name).unwrap());
            assert!(mine.is_some(), "{name}");
            assert_eq!(mine, theirs, "{name}");
        }
        let summaries = |root: &MemoryRoot| {
            let mut names: Vec<_> = std::fs::read_dir(root.rollout_summaries_dir())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            names.sort();
            names
        };
        assert_eq!(summaries(&root_b), summaries(&root_a));
        assert_eq!(summaries(&root_b).len(), 3);
        // Nothing newer: the next look writes nothing.
        let third = run_phase_two(&*b, &root_b, model.as_ref(), &phase_two)
            .await
            .unwrap();
        assert_eq!(third.materialized_revision, None, "{third:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notes_travel_between_machines_redacted_both_ways() {
    for backend in shared_backends("shared_notes") {
        let (home_a, home_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (root_a, root_b) = (
            MemoryRoot::under_home(home_a.path()),
            MemoryRoot::under_home(home_b.path()),
        );
        let a = backend.open_as(other_machine("a")).await;
        let b = backend.open_as(other_machine("b")).await;
        let secret = "ghp_EXAMPLEfakeTokenForDocs0123456789abc";
        let notes_a = home_a.path().join("memories/notes");
        std::fs::create_dir_all(&notes_a).unwrap();
        // Written by hand, so never redacted on its way in.
        std::fs::write(
            notes_a.join("2026-12-01T06-00-00Z-a1b2.md"),
            format!("# Agent note\n\ndeploys use token {secret}\n"),
        )
        .unwrap();
        std::fs::write(notes_a.join(".hidden.md"), "not a note").unwrap();
        let sent = sync_shared_root(&*a, &root_a).await.unwrap();
        assert_eq!((sent.notes_sent, sent.notes_received), (1, 0));

        let received = sync_shared_root(&*b, &root_b).await.unwrap();
        assert_eq!((received.notes_sent, received.notes_received), (0, 1));
        let text = root_b
            .read("notes/2026-12-01T06-00-00Z-a1b2.md")
            .unwrap()
            .unwrap();
        assert!(text.contains("deploys use token"), "{text}");
        assert!(!text.contains(secret), "{text}");
        assert!(!home_b.path().join("memories/notes/.hidden.md").exists());

        std::fs::write(
            home_b
                .path()
                .join("memories/notes/2026-12-01T07-00-00Z-c3d4.md"),
            "# Agent note\n\nthe staging database is read-only on Fridays\n",
        )
        .unwrap();
        assert_eq!(sync_shared_root(&*b, &root_b).await.unwrap().notes_sent, 1);
        assert_eq!(
            sync_shared_root(&*a, &root_a).await.unwrap().notes_received,
            1
        );
        assert!(
            root_a
                .read("notes/2026-12-01T07-00-00Z-c3d4.md")
                .unwrap()
                .is_some()
        );
        // Nothing new either way: a sync does nothing.
        let idle = sync_shared_root(&*a, &root_a).await.unwrap();
        assert_eq!((idle.notes_sent, idle.notes_received), (0, 0));
    }
}
