//! The memory tools: confinement, not-found versus empty, invalid input, reads, search and
//! notes.

use memory_introspect::{BlockOptions, IntrospectConfig, ToolOutcome};
use memory_protocol::introspect::{
    MemoryEntryType, MemoryFailureCode, MemoryListRequest, MemoryMode, MemoryNoteRequest,
    MemoryReadRequest, MemorySearchRequest, MemoryToolFailure,
};
use serde_json::{Value, json};

use super::*;

fn call(introspector: &Introspector, tool: &str, arguments: Value) -> ToolOutcome {
    introspector.call_tool(tool, arguments).unwrap()
}

fn failed(outcome: ToolOutcome) -> MemoryToolFailure {
    match outcome {
        ToolOutcome::Failed(failure) => failure,
        ToolOutcome::Ok(value) => panic!("expected a failure, got {value}"),
    }
}

fn ok(outcome: ToolOutcome) -> Value {
    match outcome {
        ToolOutcome::Ok(value) => value,
        ToolOutcome::Failed(failure) => panic!("expected a result, got {failure:?}"),
    }
}

#[test]
fn paths_that_leave_the_root_are_refused_in_every_tool() {
    let home = Home::new();
    home.consolidated();
    std::fs::write(home.path().join("state.sqlite"), "secret state").unwrap();
    let introspector = home.introspector();
    let escapes = [
        "/etc/passwd",
        "../state.sqlite",
        "rollout_summaries/../../state.sqlite",
        "%2e%2e/state.sqlite",
        "..%2fstate.sqlite",
        "rollout_summaries%2F..%2F..%2Fstate.sqlite",
        "..\\state.sqlite",
        "~/state.sqlite",
        "C:/state.sqlite",
    ];
    for path in escapes {
        for (tool, arguments) in [
            ("memory_read", json!({ "path": path })),
            ("memory_list", json!({ "path": path })),
            ("memory_search", json!({ "query": "secret", "path": path })),
        ] {
            let failure = failed(call(&introspector, tool, arguments));
            assert_eq!(
                failure.code,
                MemoryFailureCode::PathRefused,
                "{tool} {path}"
            );
            assert!(failure.error.unwrap().contains(path), "{tool} {path}");
        }
    }
}

#[test]
fn a_symlink_anywhere_in_the_path_is_refused_and_never_followed() {
    let home = Home::new();
    home.consolidated();
    let outside = home.path().join("outside");
    std::fs::create_dir_all(outside.join("deep")).unwrap();
    std::fs::write(outside.join("secret.md"), "the launch code is swordfish\n").unwrap();
    std::fs::write(outside.join("deep/inner.md"), "swordfish again\n").unwrap();
    std::os::unix::fs::symlink(&outside, home.root().join("linked")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.md"), home.root().join("file_link.md"))
        .unwrap();
    let introspector = home.introspector();
    for path in [
        "linked/secret.md",
        "linked/deep/inner.md",
        "file_link.md",
        "linked",
    ] {
        let failure = failed(call(&introspector, "memory_read", json!({ "path": path })));
        assert_eq!(failure.code, MemoryFailureCode::PathRefused, "{path}");
        assert!(failure.error.unwrap().contains("is a symlink"), "{path}");
    }
    let failure = failed(call(
        &introspector,
        "memory_list",
        json!({ "path": "linked/deep" }),
    ));
    assert_eq!(failure.code, MemoryFailureCode::PathRefused);
    // The listing shows the links as links, the search never reads through them, and the
    // state says part of memory is not followed.
    let listing = introspector.list(&MemoryListRequest::default()).unwrap();
    let linked = listing
        .entries
        .iter()
        .find(|entry| entry.path == "linked")
        .unwrap();
    assert_eq!(linked.entry_type, MemoryEntryType::Symlink);
    assert!(
        !listing
            .entries
            .iter()
            .any(|entry| entry.path.starts_with("linked/"))
    );
    let result = ok(call(
        &introspector,
        "memory_search",
        json!({ "query": "swordfish" }),
    ));
    assert_eq!(result["hits"], json!([]));
    let status = introspector.status();
    assert!(
        status
            .problem
            .unwrap()
            .contains("linked is a symlink, not followed"),
        "the state says what is not followed"
    );
}

#[test]
fn not_found_is_distinct_from_empty() {
    let home = Home::new();
    home.consolidated();
    home.write("notes/empty.md", "");
    std::fs::create_dir_all(home.root().join("empty_folder")).unwrap();
    let introspector = home.introspector();

    let missing = failed(call(
        &introspector,
        "memory_read",
        json!({ "path": "nope.md" }),
    ));
    assert_eq!(missing.code, MemoryFailureCode::NotFound);
    assert!(!missing.disabled && !missing.unavailable);
    let empty = ok(call(
        &introspector,
        "memory_read",
        json!({ "path": "notes/empty.md" }),
    ));
    assert_eq!(empty["content"], "");
    assert_eq!(empty["total_lines"], 0);

    let missing = failed(call(
        &introspector,
        "memory_list",
        json!({ "path": "nope" }),
    ));
    assert_eq!(missing.code, MemoryFailureCode::NotFound);
    let empty = ok(call(
        &introspector,
        "memory_list",
        json!({ "path": "empty_folder" }),
    ));
    assert_eq!(empty["entries"], json!([]));

    let missing = failed(call(
        &introspector,
        "memory_read",
        json!({ "path": "MEMORY.md", "heading": "Deployment" }),
    ));
    assert_eq!(missing.code, MemoryFailureCode::NotFound);
    assert!(
        missing
            .error
            .unwrap()
            .contains("its headings: Memory, Project `/src/ledger`"),
        "a missing heading names the ones that exist"
    );
    let missing = failed(call(
        &introspector,
        "memory_search",
        json!({ "query": "ledger", "path": "nope" }),
    ));
    assert_eq!(missing.code, MemoryFailureCode::NotFound);
}

#[test]
fn invalid_input_is_an_error_never_an_empty_result() {
    let home = Home::new();
    home.consolidated();
    let introspector = home.introspector();
    for (tool, arguments) in [
        ("memory_search", json!({ "query": "   " })),
        ("memory_search", json!({ "query": "-- :: **" })),
        (
            "memory_search",
            json!({ "query": "ledger", "max_results": 0 }),
        ),
        (
            "memory_search",
            json!({ "query": "ledger", "max_results": 51 }),
        ),
        ("memory_search", json!({ "query": 7 })),
        (
            "memory_search",
            json!({ "query": "ledger", "colour": "red" }),
        ),
        ("memory_search", json!({})),
        ("memory_list", json!({ "depth": 0 })),
        ("memory_list", json!({ "depth": 7 })),
        ("memory_list", json!({ "path": "MEMORY.md" })),
        ("memory_read", json!({ "path": "" })),
        ("memory_read", json!({ "path": "rollout_summaries" })),
        (
            "memory_read",
            json!({ "path": "MEMORY.md", "start_line": 0 }),
        ),
        (
            "memory_read",
            json!({ "path": "MEMORY.md", "start_line": 5, "end_line": 4 }),
        ),
        (
            "memory_read",
            json!({ "path": "MEMORY.md", "start_line": 500 }),
        ),
        (
            "memory_read",
            json!({ "path": "MEMORY.md", "heading": "Memory", "start_line": 1 }),
        ),
        (
            "memory_read",
            json!({ "path": "MEMORY.md", "heading": " " }),
        ),
        ("memory_note", json!({ "text": " \n\t " })),
        ("memory_status", json!({ "verbose": true })),
    ] {
        let failure = failed(call(&introspector, tool, arguments.clone()));
        assert_eq!(
            failure.code,
            MemoryFailureCode::InvalidInput,
            "{tool} {arguments}: {failure:?}"
        );
        assert!(failure.error.is_some());
    }
    // Null for an optional argument is what a strict schema sends: accepted.
    let result = ok(call(
        &introspector,
        "memory_search",
        json!({ "query": "ledger", "path": null, "max_results": null }),
    ));
    assert!(!result["hits"].as_array().unwrap().is_empty());
    assert!(introspector.call_tool("memory_delete", json!({})).is_none());
}

#[test]
fn read_returns_a_range_or_a_section_and_records_the_threads_it_used() {
    let home = Home::new();
    home.consolidated();
    let introspector = home.introspector();
    let range = introspector
        .read(&MemoryReadRequest {
            path: "MEMORY.md".to_owned(),
            start_line: Some(5),
            end_line: Some(6),
            heading: None,
        })
        .unwrap();
    assert_eq!(range.start_line, 5);
    assert_eq!(range.end_line, 6);
    assert_eq!(range.total_lines, 8);
    assert_eq!(
        range.content,
        "### 2026-03-14 · March import · thread `t-1`\n"
    );
    let section = introspector
        .read(&MemoryReadRequest {
            path: "MEMORY.md".to_owned(),
            heading: Some("project `/src/ledger`".to_owned()),
            ..MemoryReadRequest::default()
        })
        .unwrap();
    assert_eq!(section.start_line, 3);
    assert_eq!(section.end_line, 8);
    assert!(
        section
            .content
            .ends_with("- run `cargo test -p ledger-import`")
    );
    let whole = introspector
        .read(&MemoryReadRequest {
            path: "rollout_summaries/2026-03-14T09-12-44-jqmb-march.md".to_owned(),
            ..MemoryReadRequest::default()
        })
        .unwrap();
    assert!(whole.content.starts_with("thread_id: t-1\n") && !whole.truncated);

    let reads = introspector.reads_since(0).unwrap();
    assert_eq!(reads.len(), 3);
    assert_eq!(reads[0].path, "MEMORY.md");
    assert_eq!(reads[0].thread_ids, vec!["t-1"]);
    assert_eq!(reads[0].read_at, NOW);
    assert_eq!(reads[2].thread_ids, vec!["t-1"]);
    assert!(introspector.reads_since(NOW + 1).unwrap().is_empty());
}

#[test]
fn list_shows_the_tree_with_sizes_to_the_asked_depth() {
    let home = Home::new();
    home.consolidated();
    home.write("rollout_summaries/2026/deep.md", "deep\n");
    let introspector = home.introspector();
    let one = introspector
        .list(&MemoryListRequest {
            path: None,
            depth: Some(1),
        })
        .unwrap();
    let paths: Vec<(&str, u64, u32)> = one
        .entries
        .iter()
        .map(|entry| (entry.path.as_str(), entry.bytes, entry.depth))
        .collect();
    let size = |rel: &str| std::fs::metadata(home.root().join(rel)).unwrap().len();
    assert_eq!(
        paths,
        vec![
            ("MEMORY.md", size("MEMORY.md"), 1),
            ("memory_summary.md", size("memory_summary.md"), 1),
            ("raw_memories.md", size("raw_memories.md"), 1),
            (
                "rollout_summaries",
                size("rollout_summaries/2026-03-14T09-12-44-jqmb-march.md") + 5,
                1
            ),
        ]
    );
    let deep = introspector
        .list(&MemoryListRequest {
            path: Some("rollout_summaries".to_owned()),
            depth: Some(3),
        })
        .unwrap();
    assert_eq!(deep.path, "rollout_summaries");
    let names: Vec<&str> = deep.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "rollout_summaries/2026",
            "rollout_summaries/2026/deep.md",
            "rollout_summaries/2026-03-14T09-12-44-jqmb-march.md"
        ]
    );
    assert_eq!(deep.entries[1].depth, 2);
    assert!(!deep.truncated && deep.warning.is_none());
}

#[test]
fn search_ranks_whole_words_and_phrases_with_lines_and_paths() {
    let home = Home::new();
    home.consolidated();
    home.write(
        "rollout_summaries/2026-03-20T08-00-00-zzzz-april.md",
        "thread_id: t-2\n\n# April import\n\nThe April statement parser failed on a semicolon.\nThe bank writes midnight differently in April.\n",
    );
    let introspector = home.introspector();
    let search = |query: &str, path: Option<&str>, max: Option<u32>| {
        introspector
            .search(&MemorySearchRequest {
                query: query.to_owned(),
                path: path.map(str::to_owned),
                max_results: max,
            })
            .unwrap()
    };
    let both = search("bank midnight", None, None);
    let all: Vec<_> = both.hits.iter().take_while(|hit| hit.all_terms).collect();
    assert_eq!(all.len(), 2, "{both:#?}");
    assert!(all[0].score >= all[1].score);
    assert!(
        both.hits[2..].iter().all(|hit| !hit.all_terms),
        "blocks with some of the words come after those with all: {both:#?}"
    );
    let april = both
        .hits
        .iter()
        .find(|hit| hit.path.ends_with("april.md"))
        .unwrap();
    assert_eq!(april.line, 6, "the line of the match, not of its block");
    assert_eq!(
        april.snippet,
        "The bank writes midnight differently in April."
    );
    assert_eq!(april.heading.as_deref(), Some("April import"));

    let phrase = search("\"writes midnight as\"", None, None);
    assert_eq!(phrase.hits.len(), 1);
    assert_eq!(phrase.hits[0].path, "MEMORY.md");
    assert_eq!(phrase.hits[0].line, 7);
    assert!(search("\"midnight writes\"", None, None).hits.is_empty());
    assert!(search("\"writes midnight as\"", None, None).hits[0].all_terms);

    let only_summaries = search("midnight", Some("rollout_summaries"), None);
    assert!(
        only_summaries
            .hits
            .iter()
            .all(|hit| hit.path.starts_with("rollout_summaries/"))
    );
    assert_eq!(only_summaries.hits.len(), 1);
    let one = search("midnight", None, Some(1));
    assert_eq!(one.hits.len(), 1);
    assert!(one.truncated);
    // Stemming: "failing" finds "failed".
    let stemmed = search("failing parsers", None, None);
    assert_eq!(stemmed.hits.iter().filter(|hit| hit.all_terms).count(), 1);
}

#[test]
fn a_note_is_written_redacted_and_found_by_read_and_search_at_once() {
    let home = Home::new();
    home.consolidated();
    let introspector = home.introspector();
    let note = introspector
        .note(&MemoryNoteRequest {
            text: "The April export uses semicolons; the staging key is \
                   sk-proj-EXAMPLEonlyNotARealKey0123456789."
                .to_owned(),
            topic: Some("statements".to_owned()),
            ..MemoryNoteRequest::default()
        })
        .unwrap();
    assert!(note.path.starts_with("notes/2026-03-14T09-40-02Z-") && note.path.ends_with(".md"));
    assert!(note.redacted && note.indexed);
    assert_eq!((note.notes_today, note.daily_limit), (1, 20));
    assert_eq!(note.warning, None);

    let read = introspector
        .read(&MemoryReadRequest {
            path: note.path.clone(),
            ..MemoryReadRequest::default()
        })
        .unwrap();
    assert!(read.content.contains("The April export uses semicolons"));
    assert!(read.content.contains("[REDACTED_SECRET]"));
    assert!(!read.content.contains("sk-proj-EXAMPLE"));
    let found = introspector
        .search(&MemorySearchRequest {
            query: "semicolons".to_owned(),
            ..MemorySearchRequest::default()
        })
        .unwrap();
    assert_eq!(found.hits.len(), 1);
    assert_eq!(found.hits[0].path, note.path);

    // The next block carries it, labelled as an unreviewed agent note.
    let block = introspector.render_block(&BlockOptions::default()).unwrap();
    assert!(
        block.text.contains(&format!(
            "[unreviewed agent note: {}; written by an agent with memory_note at 14 Mar 2026 \
             09:40 UTC, not reviewed or consolidated yet; scope: all projects on this \
             machine]\nThe April export uses semicolons",
            note.path
        )),
        "{}",
        block.text
    );
    let status = introspector.status();
    assert_eq!((status.notes.files, status.notes.today), (1, 1));
    assert_eq!(status.notes.pending, 1);
}

/// Adds a note without a topic.
fn note_text(
    introspector: &Introspector,
    text: &str,
) -> Result<memory_protocol::introspect::MemoryNoteResult, MemoryToolFailure> {
    introspector.note(&MemoryNoteRequest {
        text: text.to_owned(),
        topic: None,
        ..MemoryNoteRequest::default()
    })
}

#[test]
fn notes_stay_within_their_size_and_daily_budgets() {
    let home = Home::new();
    let introspector = home.with_config(IntrospectConfig {
        note_max_bytes: 40,
        notes_per_day: 2,
        ..IntrospectConfig::default()
    });
    let note = |text: &str| note_text(&introspector, text);
    let too_big = note(&"x".repeat(41)).unwrap_err();
    assert_eq!(too_big.code, MemoryFailureCode::BudgetExceeded);
    assert!(too_big.error.unwrap().contains("41 bytes"));
    note("first note").unwrap();
    note("second note").unwrap();
    let over = note("third note").unwrap_err();
    assert_eq!(over.code, MemoryFailureCode::BudgetExceeded);
    assert!(over.error.unwrap().contains("limit is 2 a day"));
    assert!(over.warning.unwrap().contains("not saved"));
    let listed = introspector
        .list(&MemoryListRequest {
            path: Some("notes".to_owned()),
            depth: None,
        })
        .unwrap();
    assert_eq!(listed.entries.len(), 2, "refused notes leave no file");
    // Tomorrow the budget is back.
    let tomorrow = home
        .with_config(IntrospectConfig {
            notes_per_day: 2,
            ..IntrospectConfig::default()
        })
        .with_clock(|| NOW + 86_400);
    assert!(
        tomorrow
            .note(&MemoryNoteRequest {
                text: "fourth".to_owned(),
                topic: None,
                ..MemoryNoteRequest::default()
            })
            .is_ok()
    );
}

/// On a shared store, notes of other machines are written into `notes/` and listed in
/// `notes/.received`: they are read and counted as files, but spend none of this machine's
/// daily budget.
#[test]
fn notes_from_other_machines_spend_none_of_the_daily_budget() {
    let home = Home::new();
    let introspector = home.with_config(IntrospectConfig {
        notes_per_day: 2,
        ..IntrospectConfig::default()
    });
    let note = |text: &str| note_text(&introspector, text);
    let mine = note("written here").unwrap();
    let notes = home.path().join("memories/notes");
    let theirs = [
        "2026-03-14T08-00-00Z-aaaa.md",
        "2026-03-14T08-00-01Z-bbbb.md",
    ];
    for name in theirs {
        std::fs::write(notes.join(name), "# Agent note\n\nwritten elsewhere\n").unwrap();
    }
    std::fs::write(notes.join(".received"), theirs.join("\n")).unwrap();
    let status = introspector.status();
    assert_eq!(
        (status.notes.files, status.notes.today),
        (3, 1),
        "{status:?} ({mine:?})"
    );
    note("second here").unwrap();
    let over = note("third here").unwrap_err();
    assert_eq!(over.code, MemoryFailureCode::BudgetExceeded);
    assert!(
        over.error
            .unwrap()
            .contains("2 notes were already added today")
    );
    // Without the list, the same files count as this machine's.
    std::fs::remove_file(notes.join(".received")).unwrap();
    assert_eq!(introspector.status().notes.today, 4);
}

#[test]
fn read_only_mode_offers_no_note_tool_and_refuses_notes() {
    let home = Home::new();
    home.consolidated();
    let read_only = home.with_config(IntrospectConfig {
        mode: MemoryMode::ReadOnly,
        ..IntrospectConfig::default()
    });
    let names: Vec<&str> = read_only
        .tool_definitions()
        .iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(
        names,
        vec![
            "memory_status",
            "memory_list",
            "memory_read",
            "memory_search"
        ]
    );
    let failure = failed(call(
        &read_only,
        "memory_note",
        json!({ "text": "remember me" }),
    ));
    assert_eq!(failure.code, MemoryFailureCode::ReadOnly);
    assert!(!home.root().join("notes").exists());
    let writable = home.introspector();
    assert_eq!(writable.tool_definitions().len(), 5);
}
