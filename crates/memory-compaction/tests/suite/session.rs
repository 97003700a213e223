//! Session files: reading, validation, the live view and continuing an earlier copy.

use memory_compaction::compaction::{CompactionError, Session};
use memory_protocol::compaction::{CompactionEntry, ConversationEntry, SessionEntry};

use super::support::{chat, extend, session, user};

fn entry(id: &str, first_kept: Option<&str>, pinned: Option<&str>) -> CompactionEntry {
    CompactionEntry {
        id: id.to_owned(),
        summary: "## Goal\n- x".to_owned(),
        short_summary: None,
        first_kept_entry_id: first_kept.map(str::to_owned),
        pinned_entry_id: pinned.map(str::to_owned),
        tokens_before: 100,
        tokens_after: 10,
        messages_summarized: 1,
        engine: "test".to_owned(),
        details: Default::default(),
    }
}

#[test]
fn bad_lines_are_errors_with_their_line_number() {
    let good = session(chat(1, 10)).to_jsonl().unwrap();
    let text = format!("{good}\n{{\"type\": \"message\", \"id\": \"x\"}}\n");
    let err = Session::from_jsonl(&text).unwrap_err();
    assert!(
        matches!(err, CompactionError::SessionLine { line: 4, .. }),
        "{err}"
    );
    assert!(err.to_string().starts_with("session line 4: "), "{err}");
}

#[test]
fn duplicate_ids_and_dangling_references_are_refused() {
    let mut s = session(chat(2, 10));
    let err = s
        .push_message(ConversationEntry {
            id: "m1".to_owned(),
            message: user("again"),
        })
        .unwrap_err();
    assert_eq!(err.to_string(), "invalid session: duplicate entry id `m1`");
    let err = s
        .push_compaction(entry("c1", Some("m9"), None))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("its first kept entry `m9` is not a message before it"),
        "{err}"
    );
    let err = s
        .push_compaction(entry("c1", Some("m1"), Some("zz")))
        .unwrap_err();
    assert!(err.to_string().contains("pinned entry `zz`"), "{err}");
    s.push_compaction(entry("c1", Some("m3"), Some("m1")))
        .unwrap();
}

#[test]
fn the_live_view_is_the_pinned_message_then_everything_from_the_first_kept_entry() {
    let mut s = session(chat(3, 10));
    s.push_compaction(entry("c1", Some("m5"), Some("m3")))
        .unwrap();
    extend(&mut s, vec![user("after")]);
    let live = s.live();
    assert_eq!(live.previous.unwrap().id, "c1");
    let ids: Vec<&str> = live.messages.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["m3", "m5", "m6", "m8"]);
    // A second compaction whose kept span reaches back over the first entry skips it.
    s.push_compaction(entry("c2", Some("m5"), None)).unwrap();
    let ids: Vec<String> = s.live().messages.iter().map(|e| e.id.clone()).collect();
    assert_eq!(ids, ["m5", "m6", "m8"]);
}

#[test]
fn an_earlier_copy_continues_with_the_newer_messages() {
    let mut previous = session(chat(3, 10));
    previous
        .push_compaction(entry("c1", Some("m5"), None))
        .unwrap();
    let grown = session(chat(5, 10));
    assert!(grown.latest_compaction().is_none());
    let merged = grown.continue_from(previous.clone()).unwrap();
    let ids: Vec<&str> = merged.entries().iter().map(SessionEntry::id).collect();
    assert_eq!(
        ids,
        [
            "m1", "m2", "m3", "m4", "m5", "m6", "c1", "m7", "m8", "m9", "m10"
        ]
    );
    // A conversation missing the previous copy's messages is not the same conversation.
    let other = session(chat(2, 10));
    let err = other.continue_from(previous).unwrap_err();
    assert!(matches!(err, CompactionError::PreviousMismatch(_)), "{err}");
    assert!(
        err.to_string()
            .contains("message `m5` of the previous session is not in the conversation"),
        "{err}"
    );
}
