//! The memory root: layout, stable output, pruning of unselected summaries, path safety and
//! atomic writes under a simulated crash.

// Test helpers outside #[test] functions may unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io;
use std::path::Path;
use std::sync::Arc;

use memory_protocol::names::memory_root as names;
use memory_protocol::stage_one::StageOneOutputRecord;
use memory_write::memory_root::{MemoryRoot, rollout_summary_stem};

use super::fake_model::all_files;

fn record(thread_id: &str, slug: Option<&str>, raw: &str) -> StageOneOutputRecord {
    StageOneOutputRecord {
        thread_id: thread_id.to_owned(),
        cwd: Some("/work/project".to_owned()),
        rollout_path: format!("/sessions/rollout-{thread_id}.jsonl"),
        git_branch: None,
        raw_memory: raw.to_owned(),
        rollout_summary: format!("# summary of {thread_id}"),
        rollout_slug: slug.map(str::to_owned),
        source_updated_at: 1_750_000_000,
        generated_at: 1_750_000_100,
        usage_count: 0,
        last_used_at: None,
        selected: false,
    }
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn sync_writes_summaries_and_raw_memories_in_thread_order() {
    let home = tempfile::tempdir().unwrap();
    let root = MemoryRoot::under_home(home.path());
    let selected = vec![
        record("thread-b", Some("second task"), "memory b"),
        record("thread-a", Some("first task"), "memory a"),
    ];
    let report = root.sync_inputs(&selected).unwrap();
    assert_eq!(report.files_written, 3);
    assert_eq!(report.files_removed, 0);
    assert_eq!(root.dir(), home.path().join("memories"));

    let raw = root.read(names::RAW_MEMORIES_FILE).unwrap().unwrap();
    let a = raw.find("## Thread `thread-a`").unwrap();
    let b = raw.find("## Thread `thread-b`").unwrap();
    assert!(a < b, "{raw}");
    // Codex's layout: title, then per thread its update time, cwd, rollout and summary file.
    assert!(raw.starts_with("# Raw Memories\n"), "{raw}");
    let stem_a = &report.stems["thread-a"];
    assert!(
        raw.contains(&format!(
            "## Thread `thread-a`\nupdated_at: 2025-06-15T15:06:40Z\ncwd: /work/project\n\
             rollout_path: /sessions/rollout-thread-a.jsonl\nrollout_summary_file: {stem_a}.md\n\nmemory a\n"
        )),
        "{raw}"
    );
    assert!(raw.contains("memory a") && raw.contains("memory b"));

    let summaries = files_in(&root.rollout_summaries_dir());
    assert_eq!(summaries.len(), 2, "{summaries:?}");
    let stem_a = &report.stems["thread-a"];
    assert!(stem_a.ends_with("-first_task"), "{stem_a}");
    let text =
        std::fs::read_to_string(root.rollout_summaries_dir().join(format!("{stem_a}.md"))).unwrap();
    assert!(text.starts_with("thread_id: thread-a\n"), "{text}");
    assert!(text.ends_with("# summary of thread-a\n"), "{text}");
    assert!(!text.contains("git_branch"), "no branch recorded: {text}");

    // Same selection again: nothing to write.
    let again = root.sync_inputs(&selected).unwrap();
    assert_eq!((again.files_written, again.files_removed), (0, 0));
}

#[test]
fn the_summary_header_names_the_branch_when_the_session_recorded_one() {
    let home = tempfile::tempdir().unwrap();
    let root = MemoryRoot::under_home(home.path());
    let mut branched = record("thread-c", Some("branch"), "memory c");
    branched.git_branch = Some("feature/ci\nforged: line".to_owned());
    let report = root.sync_inputs(&[branched]).unwrap();
    let stem = &report.stems["thread-c"];
    let text =
        std::fs::read_to_string(root.rollout_summaries_dir().join(format!("{stem}.md"))).unwrap();
    assert!(
        text.starts_with(
            "thread_id: thread-c\nupdated_at: 2025-06-15T15:06:40Z\nrollout_path: \
             /sessions/rollout-thread-c.jsonl\ncwd: /work/project\ngit_branch: feature/ci forged: line\n\n"
        ),
        "{text}"
    );
}

#[test]
fn clearing_the_root_keeps_the_folder_and_refuses_a_symlink() {
    let home = tempfile::tempdir().unwrap();
    let root = MemoryRoot::under_home(home.path());
    root.sync_inputs(&[record("t1", None, "m")]).unwrap();
    root.write_memory("# Task Group: x\n").unwrap();
    assert_eq!(root.clear().unwrap(), 3);
    assert!(root.dir().is_dir());
    assert_eq!(std::fs::read_dir(root.dir()).unwrap().count(), 0);
    #[cfg(unix)]
    {
        let target = tempfile::tempdir().unwrap();
        std::fs::write(target.path().join("keep.md"), "keep").unwrap();
        let link = home.path().join("linked");
        std::os::unix::fs::symlink(target.path(), &link).unwrap();
        assert!(MemoryRoot::at(&link).clear().is_err());
        assert!(target.path().join("keep.md").exists());
    }
}

#[test]
fn empty_selection_says_so_and_removes_every_summary() {
    let home = tempfile::tempdir().unwrap();
    let root = MemoryRoot::under_home(home.path());
    root.sync_inputs(&[record("t1", None, "m")]).unwrap();
    std::fs::write(root.rollout_summaries_dir().join("keep.txt"), "not ours").unwrap();
    let report = root.sync_inputs(&[]).unwrap();
    assert_eq!(report.files_removed, 1);
    assert_eq!(files_in(&root.rollout_summaries_dir()), vec!["keep.txt"]);
    let raw = root.read(names::RAW_MEMORIES_FILE).unwrap().unwrap();
    assert!(raw.contains("No raw memories yet."), "{raw}");
}

#[test]
fn unselected_summaries_are_removed_and_selected_ones_kept() {
    let home = tempfile::tempdir().unwrap();
    let root = MemoryRoot::under_home(home.path());
    let first = root
        .sync_inputs(&[
            record("t1", Some("one"), "m1"),
            record("t2", Some("two"), "m2"),
        ])
        .unwrap();
    let second = root
        .sync_inputs(&[record("t2", Some("two"), "m2")])
        .unwrap();
    assert_eq!(second.files_removed, 1);
    assert_eq!(second.files_written, 1, "only raw_memories.md changes");
    assert_eq!(
        files_in(&root.rollout_summaries_dir()),
        vec![format!("{}.md", first.stems["t2"])]
    );
}

#[test]
fn hostile_slugs_and_ids_stay_inside_the_root() {
    let home = tempfile::tempdir().unwrap();
    let root = MemoryRoot::under_home(home.path());
    let hostile = [
        record("../../escape", Some("../../x"), "a"),
        record("/etc/passwd", Some("/etc/passwd"), "b"),
        record("t3", Some("..\\..\\windows"), "c"),
        record("t4", Some("a/../../b\0c"), "d"),
        record("t5", Some("."), "e"),
        record("t6", Some("..."), "f"),
    ];
    let report = root.sync_inputs(&hostile).unwrap();
    assert_eq!(report.stems.len(), hostile.len());
    let summaries = root.rollout_summaries_dir();
    for path in all_files(home.path()) {
        assert!(path.starts_with(root.dir()), "{} escaped", path.display());
    }
    let written = files_in(&summaries);
    assert_eq!(written.len(), hostile.len(), "{written:?}");
    for name in written {
        let stem = name.strip_suffix(".md").unwrap();
        assert!(
            stem.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "{name}"
        );
    }
}

#[test]
fn colliding_stems_get_distinct_stable_names() {
    // Two UUIDv7 ids with the same time and the same low 32 bits: the same base stem.
    let first = "0194f5a6-89ab-7cde-8123-456789abcdef";
    let second = "0194f5a6-89ab-7cde-9123-456789abcdef";
    assert_eq!(
        rollout_summary_stem(first, 0, Some("fix")),
        rollout_summary_stem(second, 0, Some("fix"))
    );
    let home = tempfile::tempdir().unwrap();
    let root = MemoryRoot::under_home(home.path());
    let report = root
        .sync_inputs(&[
            record(second, Some("fix"), "2"),
            record(first, Some("fix"), "1"),
        ])
        .unwrap();
    assert_eq!(report.stems[first], "2025-02-11T15-35-19-jqmb-fix");
    assert_eq!(report.stems[second], "2025-02-11T15-35-19-jqmb-fix-2");
    assert_eq!(files_in(&root.rollout_summaries_dir()).len(), 2);
}

#[cfg(unix)]
#[test]
fn a_symlinked_summaries_folder_is_refused_and_its_target_untouched() {
    let home = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("precious.md"), "keep me").unwrap();
    let root = MemoryRoot::under_home(home.path());
    std::fs::create_dir_all(root.dir()).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), root.rollout_summaries_dir()).unwrap();
    let error = root.sync_inputs(&[record("t1", None, "m")]).unwrap_err();
    assert!(error.to_string().contains("symlink"), "{error}");
    assert_eq!(files_in(elsewhere.path()), vec!["precious.md"]);
}

#[test]
fn summary_gets_the_version_line() {
    let home = tempfile::tempdir().unwrap();
    let root = MemoryRoot::under_home(home.path());
    root.prepare().unwrap();
    assert_eq!(root.read(names::MEMORY_SUMMARY_FILE).unwrap(), None);
    assert!(root.write_summary("## User profile\nlikes tests").unwrap());
    let text = root.read(names::MEMORY_SUMMARY_FILE).unwrap().unwrap();
    assert_eq!(text.lines().next(), Some("v1"));
    assert!(
        !root
            .write_summary("v1\n## User profile\nlikes tests\n")
            .unwrap()
    );
}

#[test]
fn a_crash_before_rename_leaves_the_old_files_intact() {
    let home = tempfile::tempdir().unwrap();
    let root = MemoryRoot::under_home(home.path());
    root.sync_inputs(&[record("t1", Some("old"), "old memory")])
        .unwrap();
    root.write_memory("old handbook\n").unwrap();
    let before: Vec<(std::path::PathBuf, Vec<u8>)> = all_files(root.dir())
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();

    let crashing = root.clone().with_crash_before_rename(Arc::new(|_: &Path| {
        Err(io::Error::other("simulated crash"))
    }));
    assert!(crashing.write_memory("new handbook\n").is_err());
    assert!(
        crashing
            .sync_inputs(&[record("t2", Some("new"), "new memory")])
            .is_err()
    );
    for (path, bytes) in &before {
        assert_eq!(
            &std::fs::read(path).unwrap(),
            bytes,
            "{} changed",
            path.display()
        );
    }
    // The crash left temp files behind, as a real one would; the next prepare removes them.
    let leftovers = all_files(root.dir())
        .iter()
        .filter(|path| path.to_string_lossy().contains(".tmp-"))
        .count();
    assert!(leftovers >= 1);
    root.prepare().unwrap();
    for path in all_files(root.dir()) {
        assert!(
            !path.to_string_lossy().contains(".tmp-"),
            "{}",
            path.display()
        );
    }
    assert_eq!(
        root.read(names::MEMORY_FILE).unwrap().unwrap(),
        "old handbook\n"
    );
}

#[test]
fn a_crash_on_the_nth_write_never_tears_a_file() {
    // Crash after each possible number of completed renames; every file is always either its
    // old or its new content.
    let old_selection = [
        record("t1", Some("a"), "old one"),
        record("t2", Some("b"), "old two"),
    ];
    let new_selection = [
        record("t1", Some("a"), "new one"),
        record("t3", Some("c"), "new three"),
    ];
    for crash_at in 0..4 {
        let home = tempfile::tempdir().unwrap();
        let root = MemoryRoot::under_home(home.path());
        root.sync_inputs(&old_selection).unwrap();
        let old_raw = root.read(names::RAW_MEMORIES_FILE).unwrap().unwrap();
        let counter = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = counter.clone();
        let crashing = root
            .clone()
            .with_crash_before_rename(Arc::new(move |_: &Path| {
                if seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == crash_at {
                    Err(io::Error::other("simulated crash"))
                } else {
                    Ok(())
                }
            }));
        let result = crashing.sync_inputs(&new_selection);
        let raw = root.read(names::RAW_MEMORIES_FILE).unwrap().unwrap();
        if result.is_err() {
            assert_eq!(raw, old_raw, "crash at {crash_at}");
        } else {
            assert!(raw.contains("new three"));
        }
        // A finished sync after the crash converges to the new selection.
        root.sync_inputs(&new_selection).unwrap();
        let raw = root.read(names::RAW_MEMORIES_FILE).unwrap().unwrap();
        assert!(raw.contains("new one") && raw.contains("new three") && !raw.contains("old two"));
        assert_eq!(files_in(&root.rollout_summaries_dir()).len(), 2);
    }
}
