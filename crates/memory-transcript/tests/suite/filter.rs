use std::path::PathBuf;

use memory_protocol::{ContentItem, ResponseItem, RolloutItem, RolloutLine};
use memory_transcript::{
    ReaderOptions, filter_for_memory, read_rollout_path, serialize_for_memory,
};
use proptest::prelude::*;
use serde_json::Value;

fn fixture_items(name: &str) -> Vec<RolloutItem> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/rollouts")
        .join(name);
    read_rollout_path(&path, &ReaderOptions::default())
        .unwrap()
        .items()
        .collect()
}

fn types(items: &[ResponseItem]) -> Vec<&str> {
    items.iter().map(ResponseItem::item_type).collect()
}

fn line(json: &str) -> RolloutItem {
    RolloutLine::parse(json).unwrap().item
}

#[test]
fn reference_rollout_keeps_conversation_and_tools_only() {
    let kept = filter_for_memory(fixture_items("codex-reference-example.jsonl"));
    let kept_types = types(&kept);
    assert!(!kept_types.contains(&"reasoning"));
    for expected in [
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "web_search_call",
        "local_shell_call",
    ] {
        assert!(
            kept_types.contains(&expected),
            "{expected} missing: {kept_types:?}"
        );
    }
    for item in &kept {
        if let ResponseItem::Message(message) = item {
            assert_ne!(message.role, "developer");
            for part in &message.content {
                let text = part.text().unwrap_or_default();
                assert!(!text.contains("# AGENTS.md instructions"), "{text}");
            }
        }
    }
    // The environment context shares its message with the AGENTS.md block and stays.
    let serialized = serialize_for_memory(&kept);
    assert!(serialized.contains("<environment_context>"));
    assert!(serialized.contains("<codex_internal_context source=\\\"goal\\\">"));
}

#[test]
fn other_item_types_follow_the_allow_list() {
    let kept = filter_for_memory(fixture_items("codex-version-variants.jsonl"));
    let kept_types = types(&kept);
    for kept_type in ["agent_message", "tool_search_call", "tool_search_output"] {
        assert!(
            kept_types.contains(&kept_type),
            "{kept_type}: {kept_types:?}"
        );
    }
    for dropped in [
        "ghost_snapshot",
        "image_generation_call",
        "some_future_item",
        "reasoning",
    ] {
        assert!(!kept_types.contains(&dropped), "{dropped}: {kept_types:?}");
    }
}

#[test]
fn user_messages_lose_injected_blocks_and_empty_ones_are_dropped() {
    let only_injected = line(
        r##"{"type":"response_item","payload":{"type":"message","role":"user","content":[
            {"type":"input_text","text":"# AGENTS.md instructions\n<INSTRUCTIONS>x</INSTRUCTIONS>"},
            {"type":"input_text","text":"  <SKILL>\nname: deploy\n</skill>\n"}]}}"##,
    );
    let mixed = line(
        r##"{"type":"response_item","payload":{"type":"message","role":"user","content":[
            {"type":"input_text","text":"<skill>s</skill>"},
            {"type":"input_text","text":"<subagent_notification>done</subagent_notification>"},
            {"type":"input_text","text":"please fix it"}]}}"##,
    );
    let developer = line(
        r#"{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]}}"#,
    );
    let event =
        line(r#"{"type":"event_msg","payload":{"type":"user_message","message":"please fix it"}}"#);
    let kept = filter_for_memory([only_injected, mixed, developer, event]);
    assert_eq!(kept.len(), 1);
    let ResponseItem::Message(message) = &kept[0] else {
        panic!("expected a message: {kept:?}");
    };
    let texts: Vec<&str> = message
        .content
        .iter()
        .filter_map(ContentItem::text)
        .collect();
    assert_eq!(
        texts,
        [
            "<subagent_notification>done</subagent_notification>",
            "please fix it"
        ]
    );
}

#[test]
fn messages_between_agents_are_kept() {
    let from_parent = line(
        r#"{"timestamp":"2026-05-01T10:00:00Z","type":"inter_agent_communication","payload":{"author":"root","recipient":"worker","other_recipients":[],"content":"check the lockfile","trigger_turn":true}}"#,
    );
    let metadata =
        line(r#"{"type":"inter_agent_communication_metadata","payload":{"trigger_turn":true}}"#);
    let kept = filter_for_memory([from_parent, metadata]);
    assert_eq!(types(&kept), ["inter_agent_communication"]);
    let serialized = serialize_for_memory(&kept);
    assert!(serialized.contains("check the lockfile"), "{serialized}");
    assert!(serialized.contains("\"author\":\"root\""), "{serialized}");
}

#[test]
fn serialization_is_a_compact_json_array() {
    let kept = filter_for_memory(fixture_items("codex-reference-example.jsonl"));
    let text = serialize_for_memory(&kept);
    assert!(!text.contains("\n  "));
    let parsed: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(parsed.as_array().map(Vec::len), Some(kept.len()));
    assert_eq!(serialize_for_memory(&[]), "[]");
}

proptest! {
    #[test]
    fn any_user_text_round_trips_through_serialization(text in "\\PC{0,80}") {
        let item = line(&serde_json::json!({
            "type": "response_item",
            "payload": {"type": "message", "role": "user",
                        "content": [{"type": "input_text", "text": text}]}
        }).to_string());
        let kept = filter_for_memory([item]);
        let serialized = serialize_for_memory(&kept);
        let parsed: Value = serde_json::from_str(&serialized).unwrap();
        let injected = text.trim_start().to_ascii_lowercase().starts_with("<skill>")
            && text.trim_end().to_ascii_lowercase().ends_with("</skill>");
        if injected {
            prop_assert_eq!(parsed, serde_json::json!([]));
        } else {
            prop_assert_eq!(&parsed[0]["content"][0]["text"], &Value::String(text));
        }
    }
}

/// mem0 #2736: part of the system prompt was stored as a memory. The host's own instructions
/// (developer messages, AGENTS.md, our memory block) never reach what extraction reads; the
/// user's request beside them does, and so does the environment block, kept as codex keeps it
/// for the session's working directory.
#[test]
fn report_mem0_2736_the_hosts_instructions_are_never_extraction_input() {
    let developer = line(
        r#"{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"You are a coding agent. Always answer in haiku."}]}}"#,
    );
    let injected = line(
        r##"{"type":"response_item","payload":{"type":"message","role":"user","content":[
            {"type":"input_text","text":"# AGENTS.md instructions for /src/kiln\n\n<INSTRUCTIONS>\nNever bump the glaze schema version.\n</INSTRUCTIONS>"},
            {"type":"input_text","text":"<environment_context>\n  <cwd>/src/kiln</cwd>\n</environment_context>"},
            {"type":"input_text","text":"<memory source=\"agent-memory\">\nUser prefers tabs.\n</memory>"},
            {"type":"input_text","text":"Make the firing log rotate daily."}]}}"##,
    );
    let kept = filter_for_memory([developer, injected]);
    let text = serialize_for_memory(&kept);
    assert!(text.contains("Make the firing log rotate daily."), "{text}");
    assert!(text.contains("<cwd>/src/kiln</cwd>"), "{text}");
    for injected in [
        "Always answer in haiku",
        "Never bump the glaze schema version",
        "User prefers tabs",
    ] {
        assert!(
            !text.contains(injected),
            "{injected} reached extraction: {text}"
        );
    }
}
