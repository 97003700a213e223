//! One test per user report the issue lists, on our own inputs. (The MCP report, an output
//! schema without structured content, is tested end to end in the CLI's MCP test.)

use memory_introspect::{BlockOptions, IntrospectConfig, ToolOutcome};
use memory_prompts::memories::{ReadPathContext, read_path};
use memory_protocol::introspect::{
    MemoryFailureCode, MemoryMode, MemoryNoteRequest, MemoryReadRequest, MemoryScope,
    MemorySearchRequest, MemoryState,
};
use serde_json::json;

use super::*;

/// claude-code #36973, #52772, #83414, #81040: the memory path the model is shown is not where
/// memory is loaded or written, and the model invents the memory's scope.
#[test]
fn report_claude_code_36973_the_root_shown_is_where_memory_is_read_and_written() {
    let home = Home::new();
    home.consolidated();
    let introspector = home.introspector();
    let root = home.root().display().to_string();
    let block = introspector.render_block(&BlockOptions::default()).unwrap();
    assert!(
        block
            .text
            .contains(&format!("Root: {root} (this machine, global)"))
    );
    assert_eq!(introspector.status().root, root);
    assert_eq!(introspector.root(), home.root());

    // What is read comes from that folder...
    home.write("memory_summary.md", "v1\nPrefers tabs over spaces.\n");
    let block = introspector.render_block(&BlockOptions::default()).unwrap();
    assert!(block.text.contains("Prefers tabs over spaces."));
    // ...and what is written goes there.
    let note = introspector
        .note(&MemoryNoteRequest {
            text: "Deploys go through `just release`.".to_owned(),
            topic: None,
            ..MemoryNoteRequest::default()
        })
        .unwrap();
    assert!(std::path::Path::new(&root).join(&note.path).is_file());

    // The scope is stated, never left to guess, and a configured alias is used everywhere.
    let project = home.with_config(IntrospectConfig {
        scope: MemoryScope::Project,
        root_alias: Some("~/.agent-memory/memories".to_owned()),
        ..IntrospectConfig::default()
    });
    let block = project.render_block(&BlockOptions::default()).unwrap();
    assert!(
        block
            .text
            .contains("Root: ~/.agent-memory/memories (this machine, per project)"),
        "{}",
        block.text
    );
    assert!(block.text.contains("scope: this project]"));
    let status = project.status();
    assert_eq!(status.root, "~/.agent-memory/memories");
    assert_eq!(status.scope, MemoryScope::Project);
}

/// codex #19195, #20987: memory is enabled for writing in the config while the prompt says it
/// is read-only (or the reverse).
#[test]
fn report_codex_19195_the_mode_shown_is_the_mode_in_force() {
    let home = Home::new();
    home.consolidated();
    for (mode, tools, expected) in [
        (MemoryMode::Writable, true, MemoryMode::Writable),
        (MemoryMode::ReadOnly, true, MemoryMode::ReadOnly),
        (MemoryMode::Writable, false, MemoryMode::ReadOnly),
    ] {
        let introspector = home.with_config(IntrospectConfig {
            mode,
            tools,
            ..IntrospectConfig::default()
        });
        let block = introspector.render_block(&BlockOptions::default()).unwrap();
        let guidance = read_path(&ReadPathContext {
            summary_token_cap: 2_500,
            tools,
            writable: expected == MemoryMode::Writable,
        })
        .unwrap();
        assert!(block.text.starts_with(&guidance), "{mode:?} tools={tools}");
        let offered = introspector
            .tool_definitions()
            .iter()
            .any(|tool| tool.name == "memory_note");
        let noted = introspector.call_tool("memory_note", json!({ "text": "a fact" }));
        assert_eq!(introspector.status().mode, expected);
        match expected {
            MemoryMode::Writable => {
                assert!(block.text.contains(". Writable (memory_note).\n"));
                assert!(guidance.contains("save it with `memory_note`"));
                assert!(offered);
                assert!(matches!(noted, Some(ToolOutcome::Ok(_))));
            }
            MemoryMode::ReadOnly => {
                assert!(block.text.contains(". Read-only.\n"), "{}", block.text);
                assert!(guidance.contains("Do not edit the memory files"));
                assert!(!guidance.contains("memory_note`:"));
                assert!(!offered);
                let Some(ToolOutcome::Failed(failure)) = noted else {
                    panic!("a read-only note must fail");
                };
                assert_eq!(failure.code, MemoryFailureCode::ReadOnly);
            }
        }
    }
}

/// openclaw #117706, #115397, gsd-2 #5312: empty search results while the index was stale or
/// broken.
#[test]
fn report_openclaw_117706_a_stale_or_broken_index_never_answers_empty() {
    let home = Home::new();
    home.consolidated();
    let introspector = home.introspector();
    let search = |query: &str| {
        introspector
            .search(&MemorySearchRequest {
                query: query.to_owned(),
                ..MemorySearchRequest::default()
            })
            .unwrap()
    };
    assert_eq!(search("ledger").state, MemoryState::Ready);
    // Stale: a session summary appears after the index was built.
    home.write(
        "rollout_summaries/2026-03-21T08-00-00-abcd-vat.md",
        "thread_id: t-9\n\nVAT rates live in config/vat.toml.\n",
    );
    assert_eq!(search("VAT rates").hits.len(), 1);
    // Broken: the index file is damaged between two processes.
    let index = home.path().join("memory_index.sqlite");
    drop(introspector);
    std::fs::write(&index, "garbage".repeat(1_000)).unwrap();
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", index.display()));
    }
    let reopened = home.introspector();
    let result = reopened
        .search(&MemorySearchRequest {
            query: "VAT rates".to_owned(),
            ..MemorySearchRequest::default()
        })
        .unwrap();
    assert_eq!(result.hits.len(), 1, "{result:?}");
    // The damaged cache was set aside and rebuilt from the files.
    assert_eq!(result.state, MemoryState::Ready, "{result:?}");
    assert!(
        std::fs::read_dir(home.path()).unwrap().any(|entry| entry
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("memory_index.sqlite.damaged-")),
        "the damaged file is kept"
    );
}

/// graphiti #1707: an add reported success and was dropped later.
#[test]
fn report_graphiti_1707_a_note_reported_saved_stays_saved() {
    let home = Home::new();
    home.consolidated();
    let saved = home
        .introspector()
        .note(&MemoryNoteRequest {
            text: "The user's timezone is Europe/Lisbon.".to_owned(),
            topic: Some("user".to_owned()),
            ..MemoryNoteRequest::default()
        })
        .unwrap();
    assert!(saved.indexed);
    // A new process (the next session) finds it by every route.
    let next = home.introspector();
    let read = next
        .read(&MemoryReadRequest {
            path: saved.path.clone(),
            ..MemoryReadRequest::default()
        })
        .unwrap();
    assert!(read.content.contains("Europe/Lisbon"));
    let found = next
        .search(&MemorySearchRequest {
            query: "timezone Lisbon".to_owned(),
            ..MemorySearchRequest::default()
        })
        .unwrap();
    assert_eq!(found.hits[0].path, saved.path);
    assert!(
        next.render_block(&BlockOptions::default())
            .unwrap()
            .text
            .contains("Europe/Lisbon")
    );
    // After a consolidation rewrote the summary, the note file is still there and searchable.
    let summary = home.write(
        "memory_summary.md",
        "v1\n## User\nTimezone: Europe/Lisbon.\n",
    );
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(summary)
        .unwrap()
        .set_modified(later)
        .unwrap();
    assert_eq!(next.status().notes.pending, 0);
    let found = next
        .search(&MemorySearchRequest {
            query: "timezone".to_owned(),
            path: Some("notes".to_owned()),
            max_results: None,
        })
        .unwrap();
    assert_eq!(found.hits.len(), 1);
}

/// codex #21010: a symlinked parent folder escapes the memory root.
#[test]
fn report_codex_21010_a_symlinked_parent_folder_cannot_escape_the_root() {
    let home = Home::new();
    home.consolidated();
    let outside = home.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("id_rsa.md"), "PRIVATE KEY\n").unwrap();
    // `notes/` is a link to a folder outside the root.
    std::os::unix::fs::symlink(&outside, home.root().join("notes")).unwrap();
    let introspector = home.introspector();
    let read = introspector
        .read(&MemoryReadRequest {
            path: "notes/id_rsa.md".to_owned(),
            ..MemoryReadRequest::default()
        })
        .unwrap_err();
    assert_eq!(read.code, MemoryFailureCode::PathRefused);
    let write = introspector
        .note(&MemoryNoteRequest {
            text: "written through a link?".to_owned(),
            topic: None,
            ..MemoryNoteRequest::default()
        })
        .unwrap_err();
    assert_eq!(write.code, MemoryFailureCode::PathRefused);
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        1,
        "nothing was written outside the root"
    );
    assert!(
        introspector
            .search(&MemorySearchRequest {
                query: "PRIVATE".to_owned(),
                ..MemorySearchRequest::default()
            })
            .unwrap()
            .hits
            .is_empty()
    );
}

/// codex #29033: memories were generated but never reached the model. What consolidation wrote
/// is in the next block, and the block says where it came from.
#[test]
fn report_codex_29033_a_consolidated_summary_reaches_the_next_block() {
    let home = Home::new();
    home.consolidated();
    let block = home
        .introspector()
        .render_block(&BlockOptions::default())
        .unwrap();
    assert_eq!(block.state, MemoryState::Ready);
    assert!(
        block.text.contains("prefers strict parsers"),
        "{}",
        block.text
    );
    assert!(block.text.contains("memory_summary.md"), "{}", block.text);
}

/// codex #31406: memory was injected while the user had turned it off. Off means nothing from
/// past sessions in the block, in recall or in search, whatever the memory folder holds.
#[test]
fn report_codex_31406_memory_turned_off_reaches_the_model_nowhere() {
    let home = Home::new();
    home.consolidated();
    let off = home.with_config(IntrospectConfig {
        enabled: false,
        ..IntrospectConfig::default()
    });
    let block = off.render_block(&BlockOptions::default()).unwrap();
    assert_eq!(
        (block.text.as_str(), block.state),
        ("", MemoryState::Disabled)
    );
    let recall = off
        .recall("why do March timestamps read 24:00?", 3)
        .unwrap();
    assert_eq!(recall.hits, 0, "{recall:#?}");
    assert!(!recall.text.contains("24:00"), "{recall:#?}");
    let searched = off.search(&MemorySearchRequest {
        query: "timestamps".to_owned(),
        ..MemorySearchRequest::default()
    });
    assert_eq!(
        searched.map_err(|failure| failure.code),
        Err(MemoryFailureCode::Disabled)
    );
}

/// OpenMemory (PR #5050): a listing was cut to 20 entries without a word. Ours lists every entry
/// up to its cap, and past the cap it says so, in the flag and in words.
#[test]
fn report_openmemory_5050_a_list_is_never_cut_silently() {
    let home = Home::new();
    home.consolidated();
    for n in 0..30 {
        home.write(&format!("notes/n{n:03}.md"), format!("note {n}\n"));
    }
    let introspector = home.introspector();
    let listed = introspector
        .list(&memory_protocol::introspect::MemoryListRequest {
            path: Some("notes".to_owned()),
            depth: None,
        })
        .unwrap();
    assert_eq!(listed.entries.len(), 30, "{listed:#?}");
    assert!(!listed.truncated);
    for n in 30..520 {
        home.write(&format!("notes/n{n:03}.md"), format!("note {n}\n"));
    }
    let listed = introspector
        .list(&memory_protocol::introspect::MemoryListRequest {
            path: Some("notes".to_owned()),
            depth: None,
        })
        .unwrap();
    assert!(listed.truncated, "{listed:#?}");
    let warning = listed.warning.unwrap_or_default();
    assert!(
        warning.contains("only the first 500 entries are listed and there are more"),
        "the cut is said in words: {warning}"
    );
}
