//! Issue 29, honest states: a home that does not exist (a mistyped `--home`,
//! `$AGENT_MEMORY_HOME` or config path) is unavailable with the path named, never empty.

use memory_introspect::{BlockOptions, IntrospectConfig};
use memory_protocol::introspect::{
    MemoryFailureCode, MemoryListRequest, MemoryReadRequest, MemoryState,
};

use super::*;

#[test]
fn a_missing_home_is_unavailable_with_its_path_never_empty() {
    let parent = Home::new();
    let mistyped = parent.path().join("agnet-memory");
    let introspector = Introspector::open(&mistyped, IntrospectConfig::default())
        .unwrap()
        .with_clock(|| NOW);
    let block = introspector.render_block(&BlockOptions::default()).unwrap();
    assert_eq!(block.state, MemoryState::Unavailable);
    let named = format!("the home {} does not exist", mistyped.display());
    assert!(
        block.text.contains("[memory: unavailable]"),
        "{}",
        block.text
    );
    assert!(!block.text.contains("That is normal"), "{}", block.text);
    assert!(block.text.contains(&named), "{}", block.text);
    let status = introspector.status();
    assert_eq!(status.state, MemoryState::Unavailable);
    assert_eq!(status.problem.as_deref(), Some(named.as_str()));
    // The tools say the same: listing or reading is no empty answer either.
    let listed = introspector
        .list(&MemoryListRequest::default())
        .unwrap_err();
    assert_eq!(listed.code, MemoryFailureCode::Unavailable, "{listed:?}");
    assert_eq!(listed.error.as_deref(), Some(named.as_str()));
    let read = introspector
        .read(&MemoryReadRequest {
            path: "MEMORY.md".to_owned(),
            ..MemoryReadRequest::default()
        })
        .unwrap_err();
    assert_eq!(read.code, MemoryFailureCode::Unavailable, "{read:?}");
    assert_eq!(read.error.as_deref(), Some(named.as_str()));
    assert!(!mistyped.exists(), "probing must not create the home");

    // A home that is a file is named too.
    std::fs::write(&mistyped, "").unwrap();
    let status = introspector.status();
    assert_eq!(status.state, MemoryState::Unavailable);
    assert_eq!(
        status.problem,
        Some(format!(
            "the home {} is a file, not a folder",
            mistyped.display()
        ))
    );
}

#[test]
fn an_existing_home_without_memories_yet_is_empty() {
    let home = Home::new();
    let status = home.introspector().status();
    assert_eq!(status.state, MemoryState::Empty);
    assert_eq!(status.problem, None);
    let listed = home
        .introspector()
        .list(&MemoryListRequest::default())
        .unwrap();
    assert!(listed.entries.is_empty());
}
