//! One test per state, with the exact text the model is given, and the same state in
//! `memory_status` and in what `memory_search` answers.

use memory_introspect::{BlockOptions, IntrospectConfig, Placement, ToolOutcome};
use memory_prompts::memories::{ReadPathContext, read_path};
use memory_protocol::introspect::{
    MemoryFailureCode, MemoryIndexState, MemorySearchRequest, MemoryState,
};
use serde_json::json;

use super::*;

fn search(introspector: &Introspector, query: &str) -> ToolOutcome {
    introspector
        .call_tool("memory_search", json!({ "query": query }))
        .unwrap()
}

fn guidance() -> String {
    read_path(&ReadPathContext {
        summary_token_cap: 2_500,
        tools: true,
        writable: true,
    })
    .unwrap()
}

#[test]
fn disabled_injects_nothing_by_default_and_one_neutral_line_when_configured() {
    let home = Home::new();
    home.consolidated();
    let off = IntrospectConfig {
        enabled: false,
        ..IntrospectConfig::default()
    };
    let block = home
        .with_config(off.clone())
        .render_block(&BlockOptions::default())
        .unwrap();
    assert_eq!(block.text, "");
    assert_eq!(block.state, MemoryState::Disabled);
    assert_eq!(block.tokens, 0);

    let with_line = home.with_config(IntrospectConfig {
        disabled_line: true,
        ..off.clone()
    });
    assert_eq!(
        with_line
            .render_block(&BlockOptions::default())
            .unwrap()
            .text,
        "<memory source=\"agent-memory\">\n[memory: off] Long-term memory is turned off by the \
         user's choice; nothing from past sessions is shown.\n</memory>\n"
    );
    let introspector = home.with_config(off);
    assert_eq!(introspector.status().state, MemoryState::Disabled);
    let ToolOutcome::Failed(failure) = search(&introspector, "ledger") else {
        panic!("a disabled search must fail");
    };
    assert_eq!(failure.code, MemoryFailureCode::Disabled);
    assert!(failure.disabled && !failure.unavailable);
    assert!(failure.warning.unwrap().starts_with("Tell the user"));
    assert!(
        !home.path().join("memory_index.sqlite").exists(),
        "disabled memory is not touched"
    );
}

#[test]
fn empty_says_nothing_is_recorded_yet_and_that_this_is_normal() {
    let home = Home::new();
    let introspector = home.introspector();
    let block = introspector.render_block(&BlockOptions::default()).unwrap();
    let root = home.root().display().to_string();
    assert_eq!(
        block.text,
        format!(
            "<memory source=\"agent-memory\">\n\
             Memory summary (0% - 0/2500 tokens), written in the background by the memory \
             system, not the user.\n\
             Root: {root} (this machine, global). Writable (memory_note).\n\
             More: memory_search, memory_read, memory_list, memory_status. Nothing written \
             yet.\n\
             [memory: empty] Memory is on but nothing is recorded yet. That is normal: it fills \
             in as sessions finish.\n\
             </memory>\n"
        )
    );
    assert_eq!(block.state, MemoryState::Empty);
    assert_eq!(block.placement, Placement::System);
    let status = introspector.status();
    assert_eq!(status.state, MemoryState::Empty);
    assert_eq!(status.problem, None);
    let result = introspector
        .search(&MemorySearchRequest {
            query: "ledger".to_owned(),
            ..MemorySearchRequest::default()
        })
        .unwrap();
    assert!(result.hits.is_empty());
    assert_eq!(
        result.state,
        MemoryState::Empty,
        "empty is said, not implied"
    );
}

#[test]
fn ready_shows_the_guidance_then_the_header_and_the_labelled_summary() {
    let home = Home::new();
    home.consolidated();
    let introspector = home.introspector();
    let block = introspector.render_block(&BlockOptions::default()).unwrap();
    let root = home.root().display().to_string();
    assert_eq!(
        block.text,
        format!(
            "{}\n<memory source=\"agent-memory\">\n\
             Memory summary (0% - 15/2500 tokens), written in the background by the memory \
             system, not the user.\n\
             Root: {root} (this machine, global). Writable (memory_note).\n\
             More: memory_search, memory_read, memory_list, memory_status. Last written 14 Mar 2026 \
             09:40 UTC.\n\n\
             [memory summary: memory_summary.md; written by the memory system from past \
             sessions; scope: all projects on this machine]\n\
             ## User\nKeeps a ledger in Rust; prefers strict parsers.\n\
             </memory>\n",
            guidance()
        )
    );
    assert_eq!(block.state, MemoryState::Ready);
    let status = introspector.status();
    assert_eq!(status.state, MemoryState::Ready);
    assert_eq!(status.summary.unwrap().tokens, 15);
    assert_eq!(block.snapshot.summary, status.summary);
    assert_eq!(block.snapshot.revision, status.revision);
}

#[test]
fn degraded_keeps_what_works_and_says_what_does_not() {
    let home = Home::new();
    home.consolidated();
    home.write(
        "rollout_summaries/2026-03-15T10-00-00-abcd-april.md",
        b"thread_id: t-2\n\xff\xfe April import\n",
    );
    let introspector = home.introspector();
    let block = introspector.render_block(&BlockOptions::default()).unwrap();
    let root = home.root().display().to_string();
    assert_eq!(
        block.text,
        format!(
            "{}\n<memory source=\"agent-memory\">\n\
             Memory summary (0% - 15/2500 tokens), written in the background by the memory \
             system, not the user.\n\
             Root: {root} (this machine, global). Writable (memory_note).\n\
             More: memory_search, memory_read, memory_list, memory_status. Last written 14 Mar 2026 \
             09:40 UTC.\n\
             [memory: degraded] Part of memory could not be read (1 file unreadable); what is \
             shown may be incomplete.\n\n\
             [memory summary: memory_summary.md; written by the memory system from past \
             sessions; scope: all projects on this machine]\n\
             ## User\nKeeps a ledger in Rust; prefers strict parsers.\n\
             </memory>\n",
            guidance()
        )
    );
    let status = introspector.status();
    assert_eq!(status.state, MemoryState::Degraded);
    assert_eq!(
        status.problem.as_deref(),
        Some("rollout_summaries/2026-03-15T10-00-00-abcd-april.md: not valid UTF-8")
    );
    // What works still answers, and the answer says what it could not search.
    let ToolOutcome::Ok(result) = search(&introspector, "midnight") else {
        panic!("a degraded search still answers");
    };
    assert_eq!(result["state"], "degraded");
    assert_eq!(result["hits"][0]["path"], "MEMORY.md");
    let warning = result["warning"].as_str().unwrap();
    assert!(
        warning.contains("rollout_summaries/2026-03-15T10-00-00-abcd-april.md (not valid UTF-8)"),
        "{warning}"
    );
}

#[test]
fn an_unreadable_summary_is_unavailable_never_empty() {
    let home = Home::new();
    home.consolidated();
    home.write("memory_summary.md", b"v1\n## User\n\xff\xfe broken\n");
    let introspector = home.introspector();
    let block = introspector.render_block(&BlockOptions::default()).unwrap();
    assert_eq!(
        block.text,
        "<memory source=\"agent-memory\">\n[memory: unavailable] Memory could not be read this \
         turn (memory_summary.md: not valid UTF-8). Do not conclude the user never said \
         something.\n</memory>\n"
    );
    assert_eq!(block.state, MemoryState::Unavailable);
    let status = introspector.status();
    assert_eq!(status.state, MemoryState::Unavailable);
    assert_eq!(
        status.problem.as_deref(),
        Some("memory_summary.md: not valid UTF-8")
    );
    assert_eq!(status.summary, None);
    assert_eq!(
        status.index.state,
        MemoryIndexState::Fresh,
        "the index itself is fine"
    );
    // The search does not answer "no results": it fails, saying memory is unavailable.
    let ToolOutcome::Failed(failure) = search(&introspector, "midnight") else {
        panic!("search over unavailable memory must fail");
    };
    assert_eq!(failure.code, MemoryFailureCode::Unavailable);
    assert!(failure.unavailable && !failure.disabled);
    assert_eq!(
        failure.error.as_deref(),
        Some("memory_summary.md: not valid UTF-8")
    );
    assert!(failure.warning.unwrap().contains("Tell the user"));
    assert!(
        failure
            .action
            .unwrap()
            .contains(&home.root().display().to_string())
    );
}

#[test]
fn a_summary_that_is_a_folder_or_a_symlink_is_unavailable() {
    for make in ["folder", "symlink"] {
        let home = Home::new();
        home.consolidated();
        let summary = home.root().join("memory_summary.md");
        std::fs::remove_file(&summary).unwrap();
        if make == "folder" {
            std::fs::create_dir(&summary).unwrap();
        } else {
            let elsewhere = home.path().join("elsewhere.md");
            std::fs::write(&elsewhere, "v1\nplanted").unwrap();
            std::os::unix::fs::symlink(&elsewhere, &summary).unwrap();
        }
        let introspector = home.introspector();
        let status = introspector.status();
        assert_eq!(status.state, MemoryState::Unavailable, "{make}");
        let problem = status.problem.unwrap();
        assert!(
            problem.starts_with("memory_summary.md: "),
            "{make}: {problem}"
        );
        let block = introspector.render_block(&BlockOptions::default()).unwrap();
        assert!(block.text.contains("[memory: unavailable]"), "{make}");
        assert!(
            !block.text.contains("planted"),
            "{make}: a symlink is not followed"
        );
        assert!(
            matches!(search(&introspector, "ledger"), ToolOutcome::Failed(_)),
            "{make}"
        );
    }
}

#[test]
fn a_state_change_since_the_last_turn_gets_its_own_line() {
    let home = Home::new();
    home.consolidated();
    home.write("memory_summary.md", b"v1\n\xff");
    let introspector = home.introspector();
    let broken = introspector.render_block(&BlockOptions::default()).unwrap();
    assert!(
        !broken.text.contains("changed since"),
        "no previous turn yet"
    );
    introspector.record_injection(&broken.snapshot).unwrap();
    assert_eq!(
        introspector
            .status()
            .last_injected
            .map(|snapshot| snapshot.state),
        Some(MemoryState::Unavailable)
    );

    home.write(
        "memory_summary.md",
        "v1\n## User\nKeeps a ledger in Rust.\n",
    );
    let fixed = introspector.render_block(&BlockOptions::default()).unwrap();
    assert_eq!(fixed.state, MemoryState::Ready);
    assert!(
        fixed.text.contains(
            "Last written 14 Mar 2026 09:40 UTC.\n[memory: changed since the last turn, from unavailable to ready]\n\n[memory summary:"
        ),
        "{}",
        fixed.text
    );
    introspector.record_injection(&fixed.snapshot).unwrap();
    let again = introspector.render_block(&BlockOptions::default()).unwrap();
    assert!(!again.text.contains("changed since"), "same state, no line");
    // A host that tracks the previous state itself passes it in.
    let told = introspector
        .render_block(&BlockOptions {
            previous_state: Some(MemoryState::Empty),
            ..BlockOptions::default()
        })
        .unwrap();
    assert!(told.text.contains("from empty to ready"), "{}", told.text);
}
