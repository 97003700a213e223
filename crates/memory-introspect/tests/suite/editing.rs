//! Editing what is wrong: a note is replaced or deleted by id, only with the version the
//! caller read (basic-memory #625: an agent's write wiped a day of notes, so the overwrite
//! guard is the default).

use memory_protocol::introspect::{
    MemoryFailureCode, MemoryNoteRequest, MemoryReadRequest, MemorySearchRequest,
};
use serde_json::json;

use super::Home;

fn add(home: &Home, text: &str) -> String {
    home.introspector()
        .note(&MemoryNoteRequest {
            text: text.to_owned(),
            ..MemoryNoteRequest::default()
        })
        .unwrap()
        .path
}

fn version(home: &Home, path: &str) -> String {
    home.introspector()
        .read(&MemoryReadRequest {
            path: path.to_owned(),
            ..MemoryReadRequest::default()
        })
        .unwrap()
        .version
}

fn hits(home: &Home, query: &str) -> Vec<String> {
    home.introspector()
        .search(&MemorySearchRequest {
            query: query.to_owned(),
            ..MemorySearchRequest::default()
        })
        .unwrap()
        .hits
        .into_iter()
        .map(|hit| hit.snippet)
        .collect()
}

#[test]
fn a_note_is_replaced_by_id_with_the_version_read_and_searchable_at_once() {
    let home = Home::new();
    let path = add(&home, "The staging database is on port 5433");
    let read = version(&home, &path);
    let memory = home.introspector();
    let replaced = memory
        .note(&MemoryNoteRequest {
            text: "The staging database moved to port 6543".to_owned(),
            id: Some(path.clone()),
            version: Some(read.clone()),
            ..MemoryNoteRequest::default()
        })
        .unwrap();
    assert_eq!(replaced.path, path);
    assert!(!replaced.deleted);
    let now = version(&home, &path);
    assert_eq!(replaced.version.as_deref(), Some(now.as_str()));
    assert_ne!(now, read);
    let text = std::fs::read_to_string(home.root().join(&path)).unwrap();
    assert!(
        text.contains("port 6543") && !text.contains("5433"),
        "{text}"
    );
    assert!(hits(&home, "6543").iter().any(|hit| hit.contains("6543")));
    assert!(hits(&home, "5433").is_empty());
    // One file still: a replace is not a new note.
    assert_eq!(memory.status().notes.files, 1);
}

#[test]
fn an_edit_without_the_version_read_or_with_an_older_one_is_refused_and_changes_nothing() {
    let home = Home::new();
    let path = add(&home, "Deploys happen on Tuesdays");
    let first = version(&home, &path);
    let memory = home.introspector();
    let without = memory
        .note(&MemoryNoteRequest {
            text: "Deploys happen on Fridays".to_owned(),
            id: Some(path.clone()),
            ..MemoryNoteRequest::default()
        })
        .unwrap_err();
    assert_eq!(without.code, MemoryFailureCode::Conflict);
    assert!(without.action.unwrap().contains("memory_read"));

    // Someone else changes the note after it was read.
    memory
        .note(&MemoryNoteRequest {
            text: "Deploys happen on Wednesdays".to_owned(),
            id: Some(path.clone()),
            version: Some(first.clone()),
            ..MemoryNoteRequest::default()
        })
        .unwrap();
    let stale = memory
        .note(&MemoryNoteRequest {
            id: Some(path.clone()),
            version: Some(first.clone()),
            delete: true,
            ..MemoryNoteRequest::default()
        })
        .unwrap_err();
    assert_eq!(stale.code, MemoryFailureCode::Conflict);
    assert!(stale.error.unwrap().contains(&first));
    let text = std::fs::read_to_string(home.root().join(&path)).unwrap();
    assert!(text.contains("Wednesdays"), "{text}");
}

#[test]
fn a_note_is_deleted_by_id_and_leaves_search_and_the_block() {
    let home = Home::new();
    let keep = add(&home, "The user writes commit messages in English");
    let path = add(&home, "The build needs the nightly toolchain");
    let memory = home.introspector();
    let deleted = memory
        .note(&MemoryNoteRequest {
            id: Some(path.clone()),
            version: Some(version(&home, &path)),
            delete: true,
            ..MemoryNoteRequest::default()
        })
        .unwrap();
    assert!(deleted.deleted && deleted.version.is_none());
    assert!(!home.root().join(&path).exists());
    assert!(home.root().join(&keep).exists());
    assert!(hits(&home, "nightly toolchain").is_empty());
    let block = memory
        .render_block(&memory_introspect::BlockOptions::default())
        .unwrap()
        .text;
    assert!(!block.contains("nightly"), "{block}");
    assert!(block.contains("commit messages in English"), "{block}");
}

#[test]
fn only_notes_can_be_edited_and_the_arguments_must_fit_together() {
    let home = Home::new();
    super::Home::consolidated(&home);
    let memory = home.introspector();
    let handbook = version(&home, "MEMORY.md");
    for (id, code) in [
        ("MEMORY.md", MemoryFailureCode::InvalidInput),
        ("memory_summary.md", MemoryFailureCode::InvalidInput),
        ("notes/../MEMORY.md", MemoryFailureCode::PathRefused),
        ("notes/missing.md", MemoryFailureCode::NotFound),
    ] {
        let refused = memory
            .note(&MemoryNoteRequest {
                id: Some(id.to_owned()),
                version: Some(handbook.clone()),
                delete: true,
                ..MemoryNoteRequest::default()
            })
            .unwrap_err();
        assert_eq!(refused.code, code, "{id}: {refused:?}");
    }
    assert!(home.root().join("MEMORY.md").exists());
    let stray = memory
        .note(&MemoryNoteRequest {
            text: "x".to_owned(),
            delete: true,
            ..MemoryNoteRequest::default()
        })
        .unwrap_err();
    assert_eq!(stray.code, MemoryFailureCode::InvalidInput);
    // Through the tool call, as a host or the MCP server makes it.
    let path = add(&home, "Use tabs in Makefiles");
    let outcome = memory.call_tool(
        "memory_note",
        json!({"id": path, "version": version(&home, &path), "text": "Use tabs in every Makefile"}),
    );
    assert!(
        matches!(outcome, Some(memory_introspect::ToolOutcome::Ok(ref value)) if value["path"] == path),
        "{outcome:?}"
    );
    // Strict function calling sends null for every argument left out.
    let outcome = memory.call_tool(
        "memory_note",
        json!({"id": path, "version": version(&home, &path), "text": null, "topic": null, "delete": true}),
    );
    assert!(
        matches!(outcome, Some(memory_introspect::ToolOutcome::Ok(ref value)) if value["deleted"] == true),
        "{outcome:?}"
    );
}
