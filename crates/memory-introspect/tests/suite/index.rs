//! The search index: incremental, never stale when searched, and a broken index degrades the
//! answer instead of emptying it.

use memory_introspect::{BlockOptions, ToolOutcome};
use memory_protocol::introspect::{
    MemoryIndexState, MemorySearchRequest, MemorySearchResult, MemoryState,
};
use serde_json::json;

use super::*;

fn search(introspector: &Introspector, query: &str) -> MemorySearchResult {
    introspector
        .search(&MemorySearchRequest {
            query: query.to_owned(),
            ..MemorySearchRequest::default()
        })
        .unwrap()
}

fn paths(result: &MemorySearchResult) -> Vec<&str> {
    result.hits.iter().map(|hit| hit.path.as_str()).collect()
}

#[test]
fn only_new_and_changed_files_are_read_again() {
    let home = Home::new();
    home.consolidated();
    let introspector = home.introspector();
    let first = introspector.status().index;
    assert_eq!(first.state, MemoryIndexState::Fresh);
    assert_eq!((first.files, first.reindexed_files), (4, 4));
    assert!(first.blocks >= 6, "{first:?}");
    assert_eq!(
        introspector.status().index.reindexed_files,
        0,
        "nothing changed"
    );

    home.write("MEMORY.md", "# Memory\n\n- the bank writes noon as 12:00\n");
    let changed = introspector.status().index;
    assert_eq!(changed.reindexed_files, 1);
    std::fs::remove_file(home.root().join("raw_memories.md")).unwrap();
    let removed = introspector.status().index;
    assert_eq!((removed.files, removed.reindexed_files), (3, 0));

    // A new introspector on the same home finds the index current.
    assert_eq!(home.introspector().status().index.reindexed_files, 0);
}

#[test]
fn a_search_after_files_changed_behind_the_index_sees_the_change() {
    let home = Home::new();
    home.consolidated();
    let introspector = home.introspector();
    assert_eq!(paths(&search(&introspector, "midnight")), vec!["MEMORY.md"]);
    // Another process (phase 2) rewrites the handbook; the index does not know yet.
    home.write(
        "MEMORY.md",
        "# Memory\n\n- statements arrive as semicolon CSV\n",
    );
    let after = search(&introspector, "semicolon");
    assert_eq!(paths(&after), vec!["MEMORY.md"]);
    assert_eq!(after.index, MemoryIndexState::Fresh);
    assert_eq!(after.warning, None);
    assert!(
        search(&introspector, "midnight").hits.is_empty(),
        "old text is gone"
    );
}

#[test]
fn an_unusable_index_answers_degraded_with_a_warning_never_empty() {
    let home = Home::new();
    home.consolidated();
    // An index a newer build wrote: this one may not touch it.
    home.introspector().status();
    owner_version(
        &home.path().join("memory_index.sqlite"),
        "memory-introspect",
        Some(99),
    );
    let introspector = home.introspector();
    let result = search(&introspector, "midnight");
    assert_eq!(
        paths(&result),
        vec!["MEMORY.md"],
        "the files were searched directly"
    );
    assert_eq!(result.state, MemoryState::Degraded);
    assert_eq!(result.index, MemoryIndexState::Unavailable);
    let warning = result.warning.unwrap();
    assert!(
        warning.contains("the search index is unavailable"),
        "{warning}"
    );
    assert!(warning.contains("read the files directly"), "{warning}");
    let status = introspector.status();
    assert_eq!(status.state, MemoryState::Degraded);
    assert!(
        status
            .problem
            .unwrap()
            .starts_with("search index: cannot open")
    );
    // Over the tool interface too, the answer is a result with its warning.
    let ToolOutcome::Ok(value) = introspector
        .call_tool("memory_search", json!({ "query": "midnight" }))
        .unwrap()
    else {
        panic!("degraded search answers");
    };
    assert_eq!(value["index"], "unavailable");
}

#[test]
fn an_unusable_index_is_named_once_and_its_error_keeps_the_cause() {
    let home = Home::new();
    home.consolidated();
    let index = home.path().join("memory_index.sqlite");
    home.introspector().status();
    owner_version(&index, "memory-introspect", Some(99));
    let introspector = home.introspector();
    let problem = introspector.status().problem.unwrap();
    let named = index.display().to_string();
    assert_eq!(
        problem.matches(&named).count(),
        1,
        "the file is named once: {problem}"
    );
    assert!(
        problem.starts_with(&format!("search index: cannot open {named}: ")),
        "{problem}"
    );
    // A host recording what it injected gets the error itself, with the store's as its cause.
    let snapshot = introspector
        .render_block(&BlockOptions::default())
        .unwrap()
        .snapshot;
    let error = introspector.record_injection(&snapshot).unwrap_err();
    assert!(
        matches!(
            error,
            memory_introspect::Error::IndexOpen { existed: true, .. }
        ),
        "{error:?}"
    );
    let cause = std::error::Error::source(&error).expect("a cause");
    assert!(cause.is::<memory_store::Error>(), "{cause:?}");

    // An index whose folder is gone is missing, and says which folder.
    let gone = tempfile::tempdir().unwrap();
    let home_path = gone.path().join("home");
    std::fs::create_dir(&home_path).unwrap();
    let introspector = Introspector::open(&home_path, IntrospectConfig::default()).unwrap();
    std::fs::remove_dir(&home_path).unwrap();
    let error = introspector.record_injection(&snapshot).unwrap_err();
    assert!(
        matches!(error, memory_introspect::Error::IndexFolder { .. }),
        "{error:?}"
    );
    assert!(error.to_string().ends_with("does not exist"), "{error}");
}

/// The index is a cache of the files: a damaged one is set aside, byte for byte, and rebuilt,
/// so searches are fast and complete again without the user deleting anything.
#[test]
fn a_damaged_index_is_set_aside_and_rebuilt() {
    for damage in [
        "this is not a database, it was damaged"
            .repeat(200)
            .into_bytes(),
        // A real database header followed by garbage pages.
        [
            b"SQLite format 3\0".as_slice(),
            &[0x10, 0x00, 0x01, 0x01],
            &[0xAB; 8_000],
        ]
        .concat(),
    ] {
        let home = Home::new();
        home.consolidated();
        let index = home.path().join("memory_index.sqlite");
        std::fs::write(&index, &damage).unwrap();
        let introspector = home.introspector();
        let result = search(&introspector, "midnight");
        assert_eq!(paths(&result), vec!["MEMORY.md"]);
        assert_eq!(result.index, MemoryIndexState::Fresh, "{result:?}");
        assert_eq!(result.state, MemoryState::Ready, "{result:?}");
        assert_eq!(result.warning, None);
        assert_eq!(introspector.status().problem, None);
        let aside: Vec<_> = std::fs::read_dir(home.path())
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| {
                path.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("memory_index.sqlite.damaged-")
            })
            .collect();
        assert_eq!(aside.len(), 1, "{aside:?}");
        assert_eq!(std::fs::read(&aside[0]).unwrap(), damage, "kept as it was");
    }
}

#[test]
fn an_index_path_that_cannot_be_opened_degrades_and_searches_still_answer() {
    let home = Home::new();
    home.consolidated();
    std::fs::create_dir(home.path().join("memory_index.sqlite")).unwrap();
    let introspector = home.introspector();
    let result = search(&introspector, "parse_timestamp");
    assert_eq!(paths(&result), vec!["MEMORY.md"]);
    assert_eq!(result.state, MemoryState::Degraded);
    assert!(result.warning.is_some());
}

#[test]
fn the_index_keeps_its_own_file_and_schema_version() {
    let home = Home::new();
    home.consolidated();
    // The write path's database with a schema version of its own.
    let state = home.path().join("state.sqlite");
    assert_eq!(owner_version(&state, "memory-write", Some(3)), 3);
    home.introspector().status();
    assert_eq!(owner_version(&state, "memory-write", None), 3);
    assert_eq!(owner_version(&state, "memory-introspect", None), 0);
    let index = home.path().join("memory_index.sqlite");
    assert_eq!(owner_version(&index, "memory-introspect", None), 2);
    // An index written by a newer build is left alone, and searches still answer.
    owner_version(&index, "memory-introspect", Some(99));
    let result = search(&home.introspector(), "midnight");
    assert_eq!(paths(&result), vec!["MEMORY.md"]);
    assert!(result.warning.unwrap().contains("newer than this build"));
    assert_eq!(owner_version(&index, "memory-introspect", None), 99);
}

/// Reads (and with `set`, first writes) `owner`'s row of a database file's `schema_versions`
/// (0 without one).
fn owner_version(path: &std::path::Path, owner: &str, set: Option<i64>) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_versions (owner TEXT PRIMARY KEY, version INTEGER NOT NULL)",
    )
    .unwrap();
    if let Some(version) = set {
        conn.execute(
            "INSERT INTO schema_versions VALUES (?1, ?2)
             ON CONFLICT (owner) DO UPDATE SET version = excluded.version",
            rusqlite::params![owner, version],
        )
        .unwrap();
    }
    conn.query_row(
        "SELECT coalesce(max(version), 0) FROM schema_versions WHERE owner = ?1",
        [owner],
        |row| row.get(0),
    )
    .unwrap()
}

/// Ranking keeps the best rowids first and renders snippets for those alone: a small limit
/// must give exactly the head of a larger one, best first, each snippet showing the match.
#[test]
fn a_small_limit_is_the_head_of_a_larger_one() {
    let home = Home::new();
    for file in 0..12 {
        // File `n` says "deploy" n + 1 times among the same filler, so scores differ.
        let mut text = format!("# Session {file}\n\n");
        for _ in 0..=file {
            text.push_str("deploy ");
        }
        text.push_str("the staging cluster after review.\n\nUnrelated paragraph about lunch.\n");
        home.write(&format!("rollout_summaries/s{file:02}.md"), &text);
    }
    let introspector = home.introspector();
    let many = introspector
        .search(&MemorySearchRequest {
            query: "deploy".to_owned(),
            max_results: Some(50),
            ..MemorySearchRequest::default()
        })
        .unwrap();
    assert_eq!(many.hits.len(), 12);
    assert!(!many.truncated);
    let scores: Vec<f64> = many.hits.iter().map(|hit| hit.score).collect();
    assert!(
        scores.windows(2).all(|pair| pair[0] >= pair[1]),
        "best first: {scores:?}"
    );
    assert_eq!(many.hits[0].path, "rollout_summaries/s11.md");
    for hit in &many.hits {
        assert!(hit.snippet.to_lowercase().contains("deploy"), "{hit:?}");
    }
    let few = introspector
        .search(&MemorySearchRequest {
            query: "deploy".to_owned(),
            max_results: Some(3),
            ..MemorySearchRequest::default()
        })
        .unwrap();
    assert!(few.truncated);
    assert_eq!(few.hits, many.hits[..3]);
}

/// Sets folder `dir`'s modification time an hour back, as if nothing had changed in it since.
fn settle(dir: &std::path::Path) {
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::open(dir)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
}

/// Writes `text` to `rel` the way memory-write and `memory_note` do: a temporary file in the
/// same folder, renamed into place.
fn write_by_rename(home: &Home, rel: &str, text: &str) {
    let path = home.root().join(rel);
    let temp = path.with_file_name(".incoming.tmp-1");
    std::fs::write(&temp, text).unwrap();
    std::fs::rename(&temp, &path).unwrap();
}

/// A search does not walk every file (4,501 at the scale `bench search` measures): it trusts a
/// folder below the root while the folder's modification time holds, since what is written
/// there is renamed into place. A file renamed in, a file replaced by rename, a file removed
/// and an in-place edit of the root's own files are each found by the very next search.
#[test]
fn a_file_renamed_into_a_folder_that_was_still_is_found_by_the_next_search() {
    let home = Home::new();
    home.consolidated();
    let summaries = home.root().join("rollout_summaries");
    settle(&summaries);
    let introspector = home.introspector();
    assert!(search(&introspector, "lighthouse").hits.is_empty());

    write_by_rename(
        &home,
        "rollout_summaries/new.md",
        "# Session\n\nlighthouse beacon\n",
    );
    assert_eq!(
        paths(&search(&introspector, "lighthouse")),
        vec!["rollout_summaries/new.md"]
    );
    settle(&summaries);
    assert_eq!(search(&introspector, "lighthouse").hits.len(), 1);
    write_by_rename(&home, "rollout_summaries/new.md", "# Session\n\nfoghorn\n");
    assert!(search(&introspector, "lighthouse").hits.is_empty());
    assert_eq!(search(&introspector, "foghorn").hits.len(), 1);
    settle(&summaries);
    search(&introspector, "foghorn");
    std::fs::remove_file(summaries.join("new.md")).unwrap();
    assert!(search(&introspector, "foghorn").hits.is_empty());

    home.write(
        "MEMORY.md",
        "# Memory\n\n- the buoy drifts at spring tide\n",
    );
    assert_eq!(paths(&search(&introspector, "buoy")), vec!["MEMORY.md"]);
}
