//! Rollouts shared across machines (PostgreSQL only): a machine registers its sessions with
//! their filtered, redacted items, and a worker on any machine extracts from those.

use memory_write::stage_one_request::{Loaded, load_job_rollout};
use memory_write::store::{ClaimParams, StoredRollout};
use memory_write::{ScanOptions, scan_rollouts_into};

use super::{Backend, HOUR, NOW, backends, items_of, other_machine, params, register, thread};
use crate::suite::fake_model::write_rollouts;

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
        let file = walk(dir.path()).remove(0);
        let text = std::fs::read_to_string(&file)
            .unwrap()
            .replace("make the build green", &format!("use token {secret}"));
        std::fs::write(&file, text).unwrap();

        let a = backend.open_as(other_machine("a")).await;
        let options = ScanOptions::default();
        let report = scan_rollouts_into(&*a, dir.path(), &options, NOW)
            .await
            .unwrap();
        assert_eq!(report.new, 1, "{report:?}");
        drop(dir); // machine b has no such file

        let b = backend.open_as(other_machine("b")).await;
        let record = b.thread(&ids[0]).await.unwrap().unwrap();
        assert_eq!(record.machine_id.as_deref(), Some("machine-a"));
        assert!(
            b.thread_file_states().await.unwrap().is_empty(),
            "machine b scans only its own files"
        );
        let job = b
            .claim_next_stage_one_job(&any_age(), NOW)
            .await
            .unwrap()
            .unwrap();
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
        let store = backend.open().await;
        register(&*store, &[thread("t", NOW - 10 * HOUR, "f1")], NOW).await;
        // The file changed and was registered, but its new items never arrived (the
        // uploading machine died in between): nothing may be extracted from the old ones.
        store
            .upsert_threads(&[thread("t", NOW - 9 * HOUR, "f2")], NOW)
            .await
            .unwrap();
        assert_eq!(
            store
                .count_stage_one_candidates(&params(), NOW)
                .await
                .unwrap(),
            0
        );
        assert!(
            store
                .claim_next_stage_one_job(&params(), NOW)
                .await
                .unwrap()
                .is_none()
        );
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
        let job = store
            .claim_next_stage_one_job(&params(), NOW)
            .await
            .unwrap()
            .unwrap();
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
        store
            .upsert_threads(&[thread("t", NOW - 10 * HOUR, "f")], NOW)
            .await
            .unwrap();
        let job = store
            .claim_next_stage_one_job(&params(), NOW)
            .await
            .unwrap()
            .unwrap();
        let error = load_job_rollout(&job).unwrap_err().to_string();
        assert!(error.contains("stored items are not valid"), "{error}");
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
