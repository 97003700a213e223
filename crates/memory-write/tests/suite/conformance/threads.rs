//! Threads on every backend: schema, registration, watermarks, redacted paths.

use memory_write::store::{MemoryMode, UpsertCounts};

use super::{HOUR, NOW, backends, candidates, claim, idle, params, register, thread};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_schema_is_migrated_once_and_reopening_keeps_it() {
    for backend in backends("schema") {
        let store = backend.open().await;
        let version = store.schema_version().await.unwrap();
        assert!(version >= 1, "{}", backend.name());
        let again = backend.open().await;
        assert_eq!(again.schema_version().await.unwrap(), version);
        assert_eq!(store.backend(), backend.name());
        assert_eq!(store.phase_two_state().await.unwrap().input_watermark, 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registration_counts_changes_and_advances_watermarks_strictly() {
    for backend in backends("register") {
        let store = backend.open().await;
        let name = backend.name();
        let counts = register(
            &*store,
            &[
                thread("a", NOW - 10 * HOUR, "f1"),
                thread("b", NOW - 9 * HOUR, "f1"),
            ],
            NOW,
        )
        .await;
        assert_eq!(
            counts,
            UpsertCounts {
                inserted: 2,
                changed: 0,
                unchanged: 0
            },
            "{name}"
        );
        let a = store.thread("a").await.unwrap().unwrap();
        assert_eq!(a.source_watermark, NOW - 10 * HOUR, "{name}");
        assert_eq!(a.session.git_branch.as_deref(), Some("main"), "{name}");
        assert_eq!((a.file_size, a.file_mtime_ns), (10, 7), "{name}");

        // A changed fingerprint with the same activity time still moves the watermark forward.
        let counts = register(
            &*store,
            &[
                thread("a", NOW - 10 * HOUR, "f2"),
                thread("b", NOW - 9 * HOUR, "f1"),
            ],
            NOW + 1,
        )
        .await;
        assert_eq!(
            counts,
            UpsertCounts {
                inserted: 0,
                changed: 1,
                unchanged: 1
            },
            "{name}"
        );
        let a2 = store.thread("a").await.unwrap().unwrap();
        assert_eq!(a2.source_watermark, a.source_watermark + 1, "{name}");

        // Newest activity first; file states keyed by the stored path.
        let ids: Vec<String> = store
            .threads()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.session.id)
            .collect();
        assert_eq!(ids, ["b", "a"], "{name}");
        let files = store.thread_file_states().await.unwrap();
        assert_eq!(files["/sessions/a.jsonl"].size, 10, "{name}");

        // Memory modes: polluted sticks to an enabled thread, unknown ids change nothing.
        let mut polluted = thread("b", NOW - 9 * HOUR, "f1");
        polluted.memory_mode = MemoryMode::Polluted;
        register(&*store, &[polluted], NOW + 2).await;
        assert_eq!(
            store.thread("b").await.unwrap().unwrap().memory_mode,
            MemoryMode::Polluted
        );
        assert!(
            store
                .set_thread_memory_mode("a", MemoryMode::Disabled, NOW)
                .await
                .unwrap()
        );
        assert!(
            !store
                .set_thread_memory_mode("zz", MemoryMode::Disabled, NOW)
                .await
                .unwrap()
        );
        assert_eq!(candidates(&*store, &params(), NOW).await, 0, "{name}");
    }
}

/// A rollout path may carry a secret: it is stored redacted. A local store leaves the thread to
/// the process that registered it (only it knows the real path to open); a shared store hands
/// it to any worker with the stored items, so no worker ever needs the path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_files_of_one_thread_leave_the_row_with_the_more_recently_active() {
    for backend in backends("two_files") {
        let name = backend.name();
        let store = backend
            .registered(&[thread("a", NOW - 10 * HOUR, "f1")])
            .await;
        // A copy that was active earlier, under another path: the row stays as it was.
        let mut older = thread("a", NOW - 12 * HOUR, "f0");
        older.session.rollout_path = "/backup/a.jsonl".to_owned();
        let counts = register(&*store, &[older], NOW + 1).await;
        assert_eq!(counts.unchanged, 1, "{name}");
        let a = store.thread("a").await.unwrap().unwrap();
        assert_eq!(a.session.rollout_path, "/sessions/a.jsonl", "{name}");
        assert_eq!(a.source_fingerprint, "f1", "{name}");
        // A copy active later: the row follows it, and its new content advances the watermark.
        let mut newer = thread("a", NOW - 8 * HOUR, "f3");
        newer.session.rollout_path = "/moved/a.jsonl".to_owned();
        let counts = register(&*store, &[newer], NOW + 2).await;
        assert_eq!(counts.changed, 1, "{name}");
        let a = store.thread("a").await.unwrap().unwrap();
        assert_eq!(a.session.rollout_path, "/moved/a.jsonl", "{name}");
        assert_eq!(a.source_watermark, NOW - 8 * HOUR, "{name}");
        // A disabled thread stays disabled when a scan finds it polluted.
        assert!(
            store
                .set_thread_memory_mode("a", MemoryMode::Disabled, NOW + 3)
                .await
                .unwrap()
        );
        let mut polluted = thread("a", NOW - 8 * HOUR, "f3");
        polluted.session.rollout_path = "/moved/a.jsonl".to_owned();
        polluted.memory_mode = MemoryMode::Polluted;
        register(&*store, &[polluted], NOW + 4).await;
        let a = store.thread("a").await.unwrap().unwrap();
        assert_eq!(a.memory_mode, MemoryMode::Disabled, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_in_a_rollout_path_is_stored_redacted_and_never_needed_to_extract() {
    for backend in backends("secret_path") {
        let name = backend.name();
        let scanner = backend.open().await;
        let other = backend.open().await;
        let mut row = idle("s", 10);
        let secret = "ghp_EXAMPLEfakeTokenForDocs0123456789abc";
        row.session.rollout_path = format!("/sessions/{secret}/s.jsonl");
        row.session.cwd = Some(format!("/work/{secret}"));
        register(&*scanner, &[row.clone()], NOW).await;
        let stored = scanner.thread("s").await.unwrap().unwrap();
        assert!(!stored.session.rollout_path.contains(secret), "{name}");
        assert!(!stored.session.cwd.unwrap().contains(secret), "{name}");
        let other_claim = claim(&*other, &params(), NOW).await;
        if scanner.is_shared() {
            let job = other_claim.unwrap();
            assert_eq!(job.rollout_path, stored.session.rollout_path, "{name}");
            assert!(
                job.stored_items.unwrap().contains("thread s at f"),
                "{name}"
            );
            continue;
        }
        // Another handle never scanned it, so it cannot open the file: it leaves it alone.
        assert!(other_claim.is_none(), "{name}");
        let job = claim(&*scanner, &params(), NOW).await.unwrap();
        assert_eq!(
            job.open_path.to_str(),
            Some(row.session.rollout_path.as_str()),
            "{name}"
        );
        assert_eq!(job.rollout_path, stored.session.rollout_path, "{name}");
        assert_eq!(job.stored_items, None, "{name}");
    }
}
