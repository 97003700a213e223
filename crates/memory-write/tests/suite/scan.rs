//! Scanning rollout folders into the threads table.

use std::io::Write;
use std::path::{Path, PathBuf};

use memory_write::scan::{ScanOptions, parse_timestamp, scan_rollouts};
use memory_write::store::{Exclusion, MemoryMode, StateStore, WriteStore};

const NOW: i64 = 1_800_000_000;

pub(crate) fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rollouts")
}

/// Copies a folder tree (the examples) so a test can change it.
pub(crate) fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn line(timestamp: &str, kind: &str, payload: &str) -> String {
    format!("{{\"timestamp\":\"{timestamp}\",\"type\":\"{kind}\",\"payload\":{payload}}}\n")
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test]
async fn the_examples_register_with_ids_sources_and_activity_from_the_file() {
    let home = tempfile::tempdir().unwrap();
    let store = StateStore::open_home(home.path()).unwrap();
    let report = scan_rollouts(&store, &examples_dir(), &ScanOptions::default(), NOW)
        .await
        .unwrap();
    assert_eq!(report.files, 6);
    assert_eq!(report.new, 6);
    assert!(report.unreadable.is_empty(), "{:?}", report.unreadable);
    assert_eq!(
        report
            .skipped_sources
            .get(&Exclusion::NonInteractive("exec".to_owned())),
        Some(&1),
        "{report:?}"
    );
    let thread = store
        .thread("019a4c1e-7d2a-7b31-9f0e-3c5a8e21b001")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        thread.session.cwd.as_deref(),
        Some("/home/dana/src/tidewater")
    );
    assert_eq!(thread.session.source.as_deref(), Some("cli"));
    assert_eq!(thread.session.exclusion, None);
    assert_eq!(
        thread.session.created_at,
        parse_timestamp("2025-11-03T09:12:40Z").unwrap()
    );
    // Last activity is the last line's timestamp, not the file's (fresh) mtime.
    let text = std::fs::read_to_string(&thread.session.rollout_path).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(
        Some(thread.last_activity_at),
        parse_timestamp(last["timestamp"].as_str().unwrap())
    );
    assert_eq!(thread.source_watermark, thread.last_activity_at);
    assert!(
        thread.session.rollout_path.starts_with('/'),
        "absolute path"
    );

    let again = scan_rollouts(&store, &examples_dir(), &ScanOptions::default(), NOW)
        .await
        .unwrap();
    assert_eq!((again.new, again.changed, again.unchanged), (0, 0, 6));
    assert_eq!(
        again.skipped_sources, report.skipped_sources,
        "known files keep their reason"
    );
}

#[tokio::test]
async fn an_appended_rollout_is_changed_and_a_touched_one_is_not() {
    let home = tempfile::tempdir().unwrap();
    let rollouts = tempfile::tempdir().unwrap();
    copy_tree(&examples_dir(), rollouts.path());
    let store = StateStore::open_home(home.path()).unwrap();
    scan_rollouts(&store, rollouts.path(), &ScanOptions::default(), NOW)
        .await
        .unwrap();
    let id = "019a5733-0b9e-7f52-8c66-1d2e3f4a5003";
    let before = store.thread(id).await.unwrap().unwrap();

    // Same bytes, new mtime: read again, but the content is unchanged.
    let file = std::fs::File::options()
        .append(true)
        .open(&before.session.rollout_path)
        .unwrap();
    file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    let touched = scan_rollouts(&store, rollouts.path(), &ScanOptions::default(), NOW)
        .await
        .unwrap();
    assert_eq!((touched.changed, touched.unchanged), (0, 6));
    assert_eq!(
        store.thread(id).await.unwrap().unwrap().source_watermark,
        before.source_watermark
    );

    let mut file = file;
    file.write_all(
        line(
            "2025-11-05T10:00:00.000Z",
            "response_item",
            r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"one more thing"}]}"#,
        )
        .as_bytes(),
    )
    .unwrap();
    drop(file);
    let appended = scan_rollouts(&store, rollouts.path(), &ScanOptions::default(), NOW)
        .await
        .unwrap();
    assert_eq!(appended.changed, 1);
    let after = store.thread(id).await.unwrap().unwrap();
    assert_eq!(
        after.last_activity_at,
        parse_timestamp("2025-11-05T10:00:00Z").unwrap()
    );
    assert!(after.source_watermark > before.source_watermark);
}

#[tokio::test]
async fn sources_broken_files_and_memory_modes_are_classified() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let meta = |id: &str, extra: &str| {
        line(
            "2025-10-01T00:00:00.000Z",
            "session_meta",
            &format!(r#"{{"id":"{id}","cwd":"/p"{extra}}}"#),
        ) + &line(
            "2025-10-01T00:00:01.000Z",
            "response_item",
            r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"fix the build"}]}"#,
        )
    };
    // Only injected context (an AGENTS.md block, an editor preamble with no request): the
    // user never wrote anything.
    let silent = line(
        "2025-10-01T00:00:00.000Z",
        "session_meta",
        r#"{"id":"silent","cwd":"/p","source":"cli"}"#,
    ) + &line(
        "2025-10-01T00:00:01.000Z",
        "response_item",
        r##"{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context><cwd>/p</cwd></environment_context>"},{"type":"input_text","text":"# Context from my IDE setup:\n## Active file: a.rs"}]}"##,
    );
    write(dir.path(), "silent.jsonl", &silent);
    write(
        dir.path(),
        "subagent.jsonl",
        &meta("sub", r#","source":{"subagent":{"review":{}}}"#),
    );
    write(dir.path(), "mcp.jsonl", &meta("mcp", r#","source":"mcp""#));
    write(
        dir.path(),
        "eph.jsonl",
        &meta("eph", r#","source":"cli","ephemeral":true"#),
    );
    write(dir.path(), "old.jsonl", &meta("old", ""));
    write(
        dir.path(),
        "vscode.jsonl",
        &meta("vs", r#","source":"vscode","memory_mode":"disabled""#),
    );
    write(dir.path(), "empty.jsonl", "");
    std::fs::create_dir(dir.path().join("nested")).unwrap();
    write(
        &dir.path().join("nested"),
        "rollout-2025-10-01T00-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl",
        "this is not json\n\u{0}\u{1}garbage",
    );
    write(dir.path(), "notes.txt", "not a rollout");
    let store = StateStore::open_home(home.path()).unwrap();
    let options = ScanOptions {
        new_thread_mode: MemoryMode::Enabled,
        disable_on_external_context: false,
    };
    let report = scan_rollouts(&store, dir.path(), &options, NOW)
        .await
        .unwrap();
    assert_eq!(report.files, 8);
    assert_eq!(report.new, 8);
    let threads = store.threads().await.unwrap();
    let reason = |id: &str| {
        let thread = threads
            .iter()
            .find(|thread| thread.session.id == id)
            .unwrap();
        thread.session.exclusion.clone()
    };
    assert_eq!(reason("silent"), Some(Exclusion::NoUserMessage));
    assert_eq!(reason("sub"), Some(Exclusion::Subagent));
    assert_eq!(
        reason("mcp"),
        Some(Exclusion::NonInteractive("mcp".to_owned()))
    );
    assert_eq!(reason("eph"), Some(Exclusion::Ephemeral));
    // Stored as codex-style names, which other tools read from the table.
    let stored: Vec<String> = ["silent", "sub", "mcp", "eph"]
        .iter()
        .filter_map(|id| reason(id).map(|reason| reason.to_string()))
        .collect();
    assert_eq!(
        stored,
        [
            "no_user_message",
            "subagent",
            "non_interactive:mcp",
            "ephemeral"
        ]
    );
    assert_eq!(
        reason("old"),
        None,
        "no source: the oldest interactive files"
    );
    let vscode = store.thread("vs").await.unwrap().unwrap();
    assert_eq!(
        (vscode.session.exclusion, vscode.memory_mode),
        (None, MemoryMode::DisabledBySession),
        "codex's stamp is told apart from our own disabling, so a run can say why"
    );
    let garbage = store
        .thread("0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee")
        .await
        .unwrap()
        .expect("a broken file is registered under its file-name id");
    assert_eq!(garbage.session.exclusion, None);
    let threads = store.threads().await.unwrap();
    assert!(
        threads
            .iter()
            .any(|t| t.session.id.starts_with("file-") && t.file_size == 0)
    );
}

#[tokio::test]
async fn generate_memories_false_registers_new_threads_disabled() {
    let home = tempfile::tempdir().unwrap();
    let store = StateStore::open_home(home.path()).unwrap();
    let options = ScanOptions {
        new_thread_mode: MemoryMode::Disabled,
        disable_on_external_context: false,
    };
    scan_rollouts(&store, &examples_dir(), &options, NOW)
        .await
        .unwrap();
    assert!(
        store
            .threads()
            .await
            .unwrap()
            .iter()
            .all(|t| t.memory_mode == MemoryMode::Disabled)
    );
}

#[tokio::test]
async fn a_missing_folder_is_a_clear_error() {
    let home = tempfile::tempdir().unwrap();
    let store = StateStore::open_home(home.path()).unwrap();
    let missing = home.path().join("nope");
    let err = scan_rollouts(&store, &missing, &ScanOptions::default(), NOW)
        .await
        .unwrap_err();
    assert!(
        err.to_string().starts_with(&missing.display().to_string()),
        "{err}"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

    #[test]
    fn any_file_content_registers_exactly_one_thread(
        bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..2048),
        prefix_meta in proptest::bool::ANY,
    ) {
        let home = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut content = Vec::new();
        if prefix_meta {
            content.extend_from_slice(
                line("2025-10-01T00:00:00.000Z", "session_meta", r#"{"id":"m","source":"cli"}"#)
                    .as_bytes(),
            );
        }
        content.extend_from_slice(&bytes);
        std::fs::write(dir.path().join("r.jsonl"), &content).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let store = StateStore::open_home(home.path()).unwrap();
        let (report, threads) = runtime.block_on(async {
            let report = scan_rollouts(&store, dir.path(), &ScanOptions::default(), NOW).await;
            (report.unwrap(), store.threads().await.unwrap())
        });
        proptest::prop_assert_eq!(report.new, 1);
        proptest::prop_assert_eq!(threads.len(), 1);
        if prefix_meta {
            proptest::prop_assert_eq!(threads[0].session.id.as_str(), "m");
        }
    }
}

#[tokio::test]
async fn external_context_pollutes_only_when_asked_and_branches_are_recorded() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let session = |id: &str, tail: &str| {
        line(
            "2025-10-01T00:00:00.000Z",
            "session_meta",
            &format!(r#"{{"id":"{id}","cwd":"/p","source":"cli","git":{{"branch":"feature/x"}}}}"#),
        ) + &line(
            "2025-10-01T00:00:01.000Z",
            "response_item",
            r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"look up the new API"}]}"#,
        ) + tail
    };
    let search = line(
        "2025-10-01T00:00:02.000Z",
        "response_item",
        r#"{"type":"web_search_call","status":"completed","action":{"type":"search","query":"api"}}"#,
    );
    write(dir.path(), "searched.jsonl", &session("searched", &search));
    write(dir.path(), "plain.jsonl", &session("plain", ""));
    let store = StateStore::open_home(home.path()).unwrap();
    let lenient = ScanOptions::default();
    scan_rollouts(&store, dir.path(), &lenient, NOW)
        .await
        .unwrap();
    assert_eq!(mode(&store, "searched").await, MemoryMode::Enabled);
    assert_eq!(
        store
            .thread("plain")
            .await
            .unwrap()
            .unwrap()
            .session
            .git_branch
            .as_deref(),
        Some("feature/x")
    );

    // With the setting on, a changed rollout that now holds a web search turns polluted.
    let strict = ScanOptions {
        disable_on_external_context: true,
        ..ScanOptions::default()
    };
    let mut file = std::fs::File::options()
        .append(true)
        .open(dir.path().join("searched.jsonl"))
        .unwrap();
    file.write_all(
        line(
            "2025-10-01T00:00:03.000Z",
            "event_msg",
            r#"{"type":"token_count"}"#,
        )
        .as_bytes(),
    )
    .unwrap();
    drop(file);
    scan_rollouts(&store, dir.path(), &strict, NOW)
        .await
        .unwrap();
    assert_eq!(mode(&store, "searched").await, MemoryMode::Polluted);
    assert_eq!(mode(&store, "plain").await, MemoryMode::Enabled);
}

async fn mode(store: &StateStore, id: &str) -> MemoryMode {
    store.thread(id).await.unwrap().unwrap().memory_mode
}

proptest::proptest! {
    /// Any text in the `skip_reason` column reads as an exclusion that writes back as the same
    /// text: a reason another version wrote into a shared store is neither lost nor changed,
    /// and the rollout stays excluded.
    #[test]
    fn any_stored_exclusion_reads_back_as_the_same_text(
        text in "ephemeral|subagent|no_user_message|non_interactive:\\PC{0,12}|\\PC{0,24}"
    ) {
        proptest::prop_assert_eq!(Exclusion::parse(&text).to_string(), text);
    }
}
