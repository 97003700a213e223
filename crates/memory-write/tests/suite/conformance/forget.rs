//! Forgetting on every backend: resolving a reference, forgetting one thread, resetting all.

use memory_write::shared_root::RootFile;
use memory_write::store::{MemoryMode, ThreadMatch};

use super::{
    HOUR, NOW, backends, claim, claim_until_empty, extract_all, idle, params, register, succeed,
    succeeded, thread,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reference_names_a_thread_by_id_path_or_unique_prefix() {
    for backend in backends("resolve") {
        let name = backend.name();
        let store = backend
            .registered(&[
                idle("abcd-1111", 10),
                idle("abcd-2222", 10),
                idle("efgh-3333", 10),
            ])
            .await;
        let resolve = |reference: &'static str| {
            let store = store.clone();
            async move { store.resolve_thread(reference).await.unwrap() }
        };
        let one = |id: &str| ThreadMatch::One(id.to_owned());
        assert_eq!(resolve("abcd-1111").await, one("abcd-1111"), "{name}");
        assert_eq!(resolve("  efgh-3333 ").await, one("efgh-3333"), "{name}");
        assert_eq!(
            resolve("/sessions/efgh-3333.jsonl").await,
            one("efgh-3333"),
            "{name}"
        );
        assert_eq!(resolve("efgh").await, one("efgh-3333"), "{name}");
        assert_eq!(
            resolve("abcd").await,
            ThreadMatch::Ambiguous(vec!["abcd-1111".to_owned(), "abcd-2222".to_owned()]),
            "{name}"
        );
        // Too short to be a prefix, unknown, or a pattern that is not text of any id.
        for reference in ["ab", "zzzz", "abc%", "abc_"] {
            assert_eq!(
                resolve(reference).await,
                ThreadMatch::None,
                "{name} {reference}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forgetting_a_thread_deletes_its_memory_and_it_is_never_extracted_again() {
    for backend in backends("forget") {
        let name = backend.name();
        let store = backend
            .registered(&[idle("kept", 9), idle("gone", 8)])
            .await;
        let extracted = extract_all(&*store, &params(), NOW).await;
        assert_eq!(extracted, ["gone", "kept"], "{name}");
        let watermark = store.phase_two_state().await.unwrap().input_watermark;

        let report = store.forget_thread("gone", NOW + 1).await.unwrap();
        assert!(report.output_deleted, "{name}");
        assert!(!report.was_consolidated, "{name}");
        assert!(
            store.stage_one_output("gone").await.unwrap().is_none(),
            "{name}"
        );
        assert!(
            store.stage_one_output("kept").await.unwrap().is_some(),
            "{name}"
        );
        assert!(
            store.stage_one_job("gone").await.unwrap().is_none(),
            "{name}"
        );
        let gone = store.thread("gone").await.unwrap().unwrap();
        assert_eq!(gone.memory_mode, MemoryMode::Disabled, "{name}");
        // Phase 2 has new input: the next pass removes the memory from the files.
        assert!(
            store.phase_two_state().await.unwrap().input_watermark > watermark,
            "{name}"
        );
        // A newer rollout of the forgotten thread is not extracted.
        register(&*store, &[thread("gone", NOW - 7 * HOUR, "g")], NOW + 2).await;
        assert!(claim(&*store, &params(), NOW + 2).await.is_none(), "{name}");
        // Forgetting it again finds nothing to delete.
        let again = store.forget_thread("gone", NOW + 3).await.unwrap();
        assert!(!again.output_deleted, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_forgets_every_memory_and_the_threads_are_extracted_again() {
    for backend in backends("reset") {
        let name = backend.name();
        let store = backend.registered(&[idle("a", 9), idle("b", 8)]).await;
        let job = claim(&*store, &params(), NOW).await.unwrap();
        assert!(succeed(&*store, &job, "x", NOW).await);
        // The second job is still running when the reset comes.
        let running = claim(&*store, &params(), NOW).await.unwrap();
        if store.is_shared() {
            let note = RootFile {
                path: "notes/n.md".to_owned(),
                text: "a note".to_owned(),
            };
            store.share_notes(&[note], NOW).await.unwrap();
        }

        let reset = store.reset_memories().await.unwrap();
        assert_eq!((reset.outputs, reset.jobs), (1, 2), "{name}");
        assert!(
            store.stage_one_outputs().await.unwrap().is_empty(),
            "{name}"
        );
        assert!(store.stage_one_jobs().await.unwrap().is_empty(), "{name}");
        assert_eq!(
            store.phase_two_state().await.unwrap().input_watermark,
            0,
            "{name}"
        );
        assert!(
            store.latest_memory_root(None).await.unwrap().is_none(),
            "{name}"
        );
        assert!(store.shared_notes().await.unwrap().is_empty(), "{name}");
        // The job that was running cannot record a memory of the old state.
        assert!(!succeed(&*store, &running, "late", NOW).await, "{name}");
        // Both threads are extracted again.
        let mut again = claim_until_empty(&*store, &params(), &succeeded("y", NOW + 1)).await;
        again.sort();
        assert_eq!(again, ["a", "b"], "{name}");
    }
}
