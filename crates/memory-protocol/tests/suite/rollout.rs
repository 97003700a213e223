//! Parsing rollout lines of every codex format.

use std::path::PathBuf;

use memory_protocol::Error;
use memory_protocol::rollout::{
    BaseInstructions, ContentItem, ResponseItem, RolloutItem, RolloutLine, SessionSource,
    ToolOutput,
};

fn fixture(name: &str) -> Vec<RolloutLine> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/rollouts")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            RolloutLine::parse(line).unwrap_or_else(|e| panic!("{name}:{}: {e}", i + 1))
        })
        .collect()
}

fn response_item(line: &RolloutLine) -> &ResponseItem {
    match &line.item {
        RolloutItem::ResponseItem(item) => item,
        other => panic!("expected a response item, found {other:?}"),
    }
}

#[test]
fn codex_reference_example_lines_parse_to_the_right_variants() {
    let lines = fixture("codex-reference-example.jsonl");
    let kinds: Vec<&str> = lines
        .iter()
        .map(|line| match &line.item {
            RolloutItem::ResponseItem(item) => item.item_type(),
            item => item.item_type(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "session_meta",
            "turn_context",
            "message",
            "message",
            "message",
            "event_msg",
            "reasoning",
            "function_call",
            "function_call_output",
            "custom_tool_call",
            "custom_tool_call_output",
            "web_search_call",
            "local_shell_call",
            "message",
            "compacted",
            "message",
            "event_msg",
        ]
    );
    assert!(lines.iter().all(|line| line.timestamp.is_some()));

    let RolloutItem::SessionMeta(meta) = &lines[0].item else {
        panic!()
    };
    assert_eq!(
        meta.thread_id(),
        Some("0196a1b2-0000-7000-8000-000000000001")
    );
    assert_eq!(meta.cwd.as_deref(), Some("/home/alice/proj"));
    assert_eq!(meta.source, Some(SessionSource::Named("cli".to_owned())));
    assert!(
        meta.source
            .as_ref()
            .is_some_and(SessionSource::is_interactive)
    );
    assert_eq!(
        meta.git.as_ref().and_then(|g| g.branch.as_deref()),
        Some("main")
    );
    assert_eq!(
        meta.extra.get("history_mode"),
        Some(&serde_json::json!("legacy"))
    );

    let ResponseItem::Message(developer) = response_item(&lines[2]) else {
        panic!()
    };
    assert_eq!(developer.role, "developer");
    let ResponseItem::Message(agents) = response_item(&lines[3]) else {
        panic!()
    };
    assert_eq!(agents.content.len(), 2);
    assert!(
        agents.content[0]
            .text()
            .unwrap()
            .starts_with("# AGENTS.md instructions")
    );

    let ResponseItem::FunctionCall(call) = response_item(&lines[7]) else {
        panic!()
    };
    assert_eq!(
        (call.name.as_str(), call.call_id.as_str()),
        ("exec_command", "call_1")
    );
    assert_eq!(call.arguments, r#"{"cmd":"cargo test -p parser"}"#);
    let ResponseItem::FunctionCallOutput(output) = response_item(&lines[8]) else {
        panic!()
    };
    assert!(
        output
            .output
            .text()
            .contains("Process exited with code 101")
    );
    let ResponseItem::CustomToolCall(patch) = response_item(&lines[9]) else {
        panic!()
    };
    assert!(patch.input.contains("*** Update File: src/parser.rs"));
    let ResponseItem::LocalShellCall(shell) = response_item(&lines[12]) else {
        panic!()
    };
    assert_eq!(shell.action.command, ["bash", "-lc", "ls"]);
    let ResponseItem::Message(answer) = response_item(&lines[13]) else {
        panic!()
    };
    assert_eq!(answer.phase.as_deref(), Some("final_answer"));
    let RolloutItem::EventMsg(goal_event) = &lines[16].item else {
        panic!()
    };
    assert_eq!(goal_event.event_type, "thread_goal_updated");
}

#[test]
fn every_codex_version_variant_reads_without_error() {
    let lines = fixture("codex-version-variants.jsonl");
    assert_eq!(lines.len(), 20);
    assert!(lines[..19].iter().all(|l| l.ordinal.is_some()));
    assert_eq!(
        lines[0].timestamp.as_deref(),
        Some("2026-03-02T08:15:00.123456789Z")
    );

    let RolloutItem::SessionMeta(subagent) = &lines[0].item else {
        panic!()
    };
    assert!(
        subagent
            .source
            .as_ref()
            .is_some_and(SessionSource::is_subagent)
    );
    assert!(subagent.model_provider.is_none());
    assert_eq!(
        subagent.base_instructions,
        Some(BaseInstructions::Object {
            text: "You are a coding agent.".to_owned()
        })
    );
    let RolloutItem::SessionMeta(old) = &lines[1].item else {
        panic!()
    };
    assert!(old.source.is_none());
    assert_eq!(old.instructions.as_deref(), Some("Be brief."));
    assert_eq!(
        old.base_instructions,
        Some(BaseInstructions::Text("You are a coding agent.".to_owned()))
    );

    for (index, expected) in [
        (2, "world_state"),
        (3, "token_usage_record"),
        (4, "inter_agent_communication"),
        (16, "some_future_line_type"),
    ] {
        let RolloutItem::Other(other) = &lines[index].item else {
            panic!("line {index}")
        };
        assert_eq!(other.item_type, expected);
    }
    assert_eq!(
        lines[5].metadata,
        Some(serde_json::json!({"turn_id": "t1", "harness": "codex"}))
    );
    for (index, expected) in [
        (6, "ghost_snapshot"),
        (7, "tool_search_call"),
        (8, "tool_search_output"),
        (9, "agent_message"),
        (10, "image_generation_call"),
        (17, "some_future_item"),
    ] {
        let ResponseItem::Other(other) = response_item(&lines[index]) else {
            panic!("line {index}")
        };
        assert_eq!(other.item_type, expected);
        assert!(!other.fields.is_empty(), "fields of {expected} are kept");
    }
    let outputs: Vec<&ToolOutput> = (11..=13)
        .map(|i| match response_item(&lines[i]) {
            ResponseItem::FunctionCallOutput(o) => &o.output,
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(matches!(outputs[0], ToolOutput::Text(t) if t == "plain text output"));
    assert!(matches!(outputs[1], ToolOutput::Parts(p) if p.len() == 2));
    assert!(matches!(outputs[2], ToolOutput::Object(_)));
    assert_eq!(outputs[2].text(), "object output");

    let ResponseItem::Message(empty) = response_item(&lines[14]) else {
        panic!()
    };
    assert!(empty.content.is_empty());
    let ResponseItem::Reasoning(reasoning) = response_item(&lines[15]) else {
        panic!()
    };
    assert!(reasoning.summary.is_empty());
    let ResponseItem::Message(audio) = response_item(&lines[18]) else {
        panic!()
    };
    assert!(matches!(&audio.content[0], ContentItem::Other(o) if o.item_type == "input_audio"));
    let RolloutItem::SessionMeta(new) = &lines[19].item else {
        panic!()
    };
    assert_eq!(
        new.thread_id(),
        Some("0195f0a1-1111-7000-8000-00000000000c")
    );
}

#[test]
fn oldest_format_reads_header_state_records_and_bare_items() {
    let lines = fixture("codex-legacy-format.jsonl");
    let RolloutItem::SessionMeta(header) = &lines[0].item else {
        panic!()
    };
    assert_eq!(
        header.thread_id(),
        Some("5973b6c0-94b8-487b-a530-2aeb6098ae0e")
    );
    assert_eq!(
        header.timestamp.as_deref(),
        Some("2025-07-14T09:12:03.412Z")
    );
    assert_eq!(
        header.instructions.as_deref(),
        Some("Prefer small commits.")
    );
    assert_eq!(
        header.git.as_ref().and_then(|g| g.commit_hash.as_deref()),
        Some("9c1f2e7")
    );
    assert!(
        matches!(&lines[1].item, RolloutItem::StateRecord(map) if map["record_type"] == "state")
    );
    assert!(matches!(&lines[6].item, RolloutItem::StateRecord(map) if map["last_turn"] == 1));
    let types: Vec<&str> = [2, 3, 4, 5, 7]
        .iter()
        .map(|&i| response_item(&lines[i]).item_type())
        .collect();
    assert_eq!(
        types,
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output",
            "message"
        ]
    );
    let ResponseItem::FunctionCallOutput(output) = response_item(&lines[5]) else {
        panic!()
    };
    assert_eq!(output.output.text(), "src/cli.rs:12: --old-flag");
}

#[test]
fn timestamps_keep_their_precision() {
    for digits in 3..=9 {
        let ts = format!("2026-01-02T03:04:05.{}Z", "1".repeat(digits));
        let line = format!(r#"{{"timestamp":"{ts}","type":"event_msg","payload":{{"type":"x"}}}}"#);
        assert_eq!(
            RolloutLine::parse(&line).unwrap().timestamp.as_deref(),
            Some(ts.as_str())
        );
    }
}

#[test]
fn malformed_lines_are_errors_with_a_reason() {
    let not_json = RolloutLine::parse("{not json").unwrap_err();
    assert!(matches!(not_json, Error::Json(_)));
    // The parser's own error is kept as the source, and its words are in the message.
    let source = std::error::Error::source(&not_json).expect("a source");
    assert!(source.is::<serde_json::Error>());
    assert!(
        not_json
            .to_string()
            .starts_with("invalid json: key must be a string"),
        "{not_json}"
    );
    assert!(matches!(
        RolloutLine::parse("42"),
        Err(Error::NotAnObject("a number"))
    ));
    let bad_role = r#"{"type":"response_item","payload":{"type":"message","role":5,"content":[]}}"#;
    let err = RolloutLine::parse(bad_role).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidItem { item_type, .. } if item_type == "message"),
        "{err}"
    );
    assert!(err.to_string().starts_with("invalid `message` item: "));
    let bad_payload = r#"{"type":"response_item","payload":"text"}"#;
    assert!(matches!(
        RolloutLine::parse(bad_payload),
        Err(Error::InvalidItem { .. })
    ));
}

#[test]
fn a_line_without_any_type_is_kept_not_rejected() {
    let line = RolloutLine::parse("{}").unwrap();
    assert!(matches!(&line.item, RolloutItem::Other(o) if o.item_type.is_empty()));
}
