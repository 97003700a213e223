//! Codex rollouts as sessions.

use std::path::PathBuf;

use memory_compaction::compaction::{CODEX_ENGINE, Session, session_from_rollout};
use memory_protocol::RolloutLine;
use memory_protocol::compaction::{AssistantBlock, ConversationMessage, SessionEntry};
use memory_sanitize::ByteEstimate;
use memory_transcript::{ReaderOptions, read_rollout_path};
use serde_json::json;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn lines(path: &str) -> Vec<RolloutLine> {
    let read = read_rollout_path(&root().join(path), &ReaderOptions::default()).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    read.lines
}

fn convert(lines: &[RolloutLine]) -> Session {
    session_from_rollout(lines, &ByteEstimate).unwrap()
}

fn message<'s>(session: &'s Session, id: &str) -> &'s ConversationMessage {
    session
        .entries()
        .iter()
        .find_map(|e| match e {
            SessionEntry::Message(m) if m.id == id => Some(&m.message),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no message {id}"))
}

#[test]
fn every_item_kind_of_the_reference_rollout_converts() {
    let session = convert(&lines("fixtures/rollouts/codex-reference-example.jsonl"));
    let ids: Vec<&str> = session.entries().iter().map(SessionEntry::id).collect();
    // Injected context (AGENTS.md, environment, codex's internal context), metadata and events
    // are left out; consecutive assistant-side items form one message.
    assert_eq!(ids, ["r5", "r7", "r9", "r10", "r11", "r12", "r15"]);
    assert_eq!(
        message(&session, "r5"),
        &ConversationMessage::User {
            text: "Fix the failing parser test. My key is sk-abcdefghijklmnopqrstuvwxyz123456"
                .to_owned()
        }
    );
    assert_eq!(
        message(&session, "r7"),
        &ConversationMessage::Assistant {
            content: vec![
                AssistantBlock::Thinking {
                    thinking: "**Inspecting tests**".to_owned()
                },
                AssistantBlock::ToolCall {
                    id: "call_1".to_owned(),
                    name: "exec_command".to_owned(),
                    arguments: json!({"cmd": "cargo test -p parser"}),
                },
            ]
        }
    );
    assert!(matches!(
        message(&session, "r9"),
        ConversationMessage::ToolResult { tool_name, is_error: true, .. } if tool_name == "exec_command"
    ));
    assert!(matches!(
        message(&session, "r10"),
        ConversationMessage::Assistant { content } if matches!(&content[0],
            AssistantBlock::ToolCall { name, arguments, .. }
                if name == "apply_patch" && arguments["input"].as_str().unwrap().contains("src/parser.rs"))
    ));
    assert!(matches!(
        message(&session, "r11"),
        ConversationMessage::ToolResult { tool_name, is_error: false, .. } if tool_name == "apply_patch"
    ));
    let ConversationMessage::Assistant { content } = message(&session, "r12") else {
        panic!("r12 is an assistant message");
    };
    assert!(
        matches!(&content[0], AssistantBlock::ToolCall { name, arguments, .. }
        if name == "web_search" && arguments["query"] == "nom parser empty input")
    );
    assert!(
        matches!(&content[1], AssistantBlock::ToolCall { id, name, arguments }
        if id == "call_3" && name == "local_shell" && arguments["command"] == json!(["bash", "-lc", "ls"]))
    );
    assert!(
        matches!(&content[2], AssistantBlock::Text { text } if text == "Fixed parse_empty; tests pass.")
    );

    let (_, compacted) = session.latest_compaction().unwrap();
    assert_eq!(compacted.id, "r15");
    assert_eq!(compacted.engine, CODEX_ENGINE);
    assert_eq!(compacted.summary, "Summary of earlier turns...");
    assert_eq!(compacted.first_kept_entry_id, None);
    assert_eq!(compacted.messages_summarized, 6);
    assert!(compacted.tokens_before > compacted.tokens_after);
    assert!(
        session.live().messages.is_empty(),
        "codex's compaction keeps nothing before it"
    );
}

#[test]
fn ids_stay_the_same_when_the_rollout_grows() {
    let all = lines(
        "examples/rollouts/2025/11/03/rollout-2025-11-03T09-12-40-019a4c1e-7d2a-7b31-9f0e-3c5a8e21b001.jsonl",
    );
    let whole = convert(&all);
    let early = convert(&all[..all.len() / 2]);
    let early_ids: Vec<&str> = early.entries().iter().map(SessionEntry::id).collect();
    let whole_ids: Vec<&str> = whole.entries().iter().map(SessionEntry::id).collect();
    assert!(early_ids.len() > 3);
    assert_eq!(&whole_ids[..early_ids.len()], early_ids.as_slice());
    assert!(whole.entries().len() > early.entries().len());
}

#[test]
fn every_example_rollout_converts_to_a_valid_session() {
    let mut converted = 0;
    for entry in walk(&root().join("examples/rollouts")) {
        let read = read_rollout_path(&entry, &ReaderOptions::default()).unwrap();
        let session = session_from_rollout(&read.lines, &ByteEstimate).unwrap();
        assert!(!session.entries().is_empty(), "{}", entry.display());
        let text = session.to_jsonl().unwrap();
        assert_eq!(Session::from_jsonl(&text).unwrap(), session);
        converted += 1;
    }
    assert_eq!(converted, 6);
}

fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
    out
}
