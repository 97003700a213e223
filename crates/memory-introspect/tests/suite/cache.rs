//! Issue 29, cache-stable block: the block's text changes only when memory changes, so a
//! host's cached prompt prefix survives turns; its content hash says when it changed.

use memory_introspect::BlockOptions;
use memory_protocol::introspect::MemoryNoteRequest;

use super::*;

#[test]
fn the_block_changes_only_when_memory_changes() {
    let home = Home::new();
    home.consolidated();
    let at = |seconds: i64| {
        home.introspector()
            .with_clock(move || seconds)
            .render_block(&BlockOptions::default())
            .unwrap()
    };
    let first = at(NOW);
    // An hour later, memory unchanged: the same text and hash (the "as of" clock broke the
    // prompt cache every minute).
    let later = at(NOW + 3_600);
    assert_eq!(later.text, first.text);
    assert_eq!(later.content_hash, first.content_hash);
    assert_eq!(first.content_hash.len(), 64);
    assert!(
        first.text.contains("Last written 14 Mar 2026 09:40 UTC."),
        "{}",
        first.text
    );

    // A note changes memory, so the block and its hash change.
    home.introspector()
        .note(&MemoryNoteRequest {
            text: "The CI runs on Fridays.".to_owned(),
            topic: None,
            ..MemoryNoteRequest::default()
        })
        .unwrap();
    let changed = at(NOW + 3_600);
    assert_ne!(changed.content_hash, first.content_hash);
    assert!(changed.text.contains("The CI runs on Fridays."));
}
