//! Session lines: messages and compaction entries, tagged by `type`, read strictly.

use memory_protocol::compaction::{
    CompactionDetails, CompactionEntry, ConversationMessage, SessionEntry, summary_sections,
};
use serde_json::json;

fn entry() -> CompactionEntry {
    CompactionEntry {
        id: "c1".to_owned(),
        summary: "## Goal\nship it".to_owned(),
        short_summary: Some("I shipped it.".to_owned()),
        first_kept_entry_id: Some("m2".to_owned()),
        pinned_entry_id: None,
        tokens_before: 1_000,
        tokens_after: 200,
        messages_summarized: 2,
        engine: "offline".to_owned(),
        details: CompactionDetails::default(),
    }
}

#[test]
fn session_lines_are_tagged_and_round_trip() {
    let message: SessionEntry = serde_json::from_value(json!({
        "type": "message", "id": "m1", "message": {"role": "user", "text": "hi"}
    }))
    .unwrap();
    assert_eq!(message.id(), "m1");
    let compaction = SessionEntry::Compaction(entry());
    let text = serde_json::to_string(&compaction).unwrap();
    assert!(
        text.starts_with(r#"{"type":"compaction","id":"c1""#),
        "{text}"
    );
    assert_eq!(
        serde_json::from_str::<SessionEntry>(&text).unwrap(),
        compaction
    );
    assert_eq!(compaction.id(), "c1");
}

#[test]
fn unknown_fields_and_types_are_refused() {
    let extra = serde_json::from_value::<SessionEntry>(json!({
        "type": "message", "id": "m1", "message": {"role": "user", "text": "hi"}, "x": 1
    }));
    assert!(extra.is_err());
    let unknown = serde_json::from_value::<SessionEntry>(json!({"type": "label", "id": "x"}));
    assert!(unknown.is_err());
    let mut value = serde_json::to_value(SessionEntry::Compaction(entry())).unwrap();
    value["surprise"] = json!(true);
    assert!(serde_json::from_value::<SessionEntry>(value).is_err());
}

#[test]
fn a_tool_result_is_useful_unless_marked() {
    let result: ConversationMessage = serde_json::from_value(json!({
        "role": "tool_result", "tool_call_id": "c", "tool_name": "read", "text": "x",
        "is_error": false
    }))
    .unwrap();
    assert!(matches!(
        result,
        ConversationMessage::ToolResult { useless: false, .. }
    ));
}

#[test]
fn summary_headers_are_markdown_headings_in_order() {
    for header in summary_sections::SUMMARY
        .iter()
        .chain(&summary_sections::TURN_PREFIX)
    {
        assert!(
            header.starts_with("## ") || header.starts_with("### "),
            "{header}"
        );
    }
    assert_eq!(summary_sections::SUMMARY[0], summary_sections::GOAL);
    assert_eq!(
        summary_sections::SUMMARY[9],
        summary_sections::ADDITIONAL_NOTES
    );
}
