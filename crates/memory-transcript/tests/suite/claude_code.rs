//! Claude Code transcripts: reading, merging, exclusion of injected context, the rollout form.

use std::path::{Path, PathBuf};

use memory_protocol::RolloutItem;
use memory_protocol::rollout::{ContentItem, ResponseItem, SessionSource};
use memory_transcript::claude_code::{
    AnswerBlock, Entry, Transcript, TranscriptFormat, UserOrigin, detect_format, parse_transcript,
    subagent_files,
};
use memory_transcript::{filter_for_memory, serialize_for_memory};
use proptest::prelude::*;

const SESSION: &str = "7c3e0a52-1f4b-4d1e-9a60-2b8f5d0c9e11";

/// Markers on every text Claude Code or a hook injected into the fixture (see its README).
const INJECTED_MARKERS: [&str; 5] = [
    "INJECTED-",
    "RECALLED-",
    "SUMMARY-TEXT",
    "agent_memory_internal_context",
    "system-reminder",
];

fn session_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/claude-code/projects/-home-dev-tidewater")
        .join(format!("{SESSION}.jsonl"))
}

fn read(path: &Path) -> Transcript {
    parse_transcript(&std::fs::read_to_string(path).unwrap())
}

/// The fixture session with its subagent attached, as the write path reads it.
fn session() -> Transcript {
    let path = session_file();
    let mut transcript = read(&path);
    for sidechain in subagent_files(&path) {
        transcript.attach_sidechain(read(&sidechain));
    }
    transcript
}

#[test]
fn the_format_is_told_from_the_first_line() {
    let claude = std::fs::read_to_string(session_file()).unwrap();
    assert_eq!(detect_format(&claude), TranscriptFormat::ClaudeCode);
    let codex = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/rollouts/codex-reference-example.jsonl"),
    )
    .unwrap();
    assert_eq!(detect_format(&codex), TranscriptFormat::CodexRollout);
    assert_eq!(detect_format(""), TranscriptFormat::CodexRollout);
    assert_eq!(
        detect_format("not json\n{\"type\":\"summary\",\"summary\":\"x\",\"leafUuid\":\"u\"}"),
        TranscriptFormat::ClaudeCode
    );
}

#[test]
fn the_session_header_comes_from_the_lines() {
    let transcript = session();
    assert_eq!(transcript.session_id.as_deref(), Some(SESSION));
    assert_eq!(transcript.cwd.as_deref(), Some("/home/dev/tidewater"));
    assert_eq!(transcript.git_branch.as_deref(), Some("main"));
    assert!(!transcript.is_sidechain());
    assert!(
        transcript.diagnostics.is_empty(),
        "{:?}",
        transcript.diagnostics
    );
    let meta = transcript.session_meta();
    assert_eq!(meta.thread_id(), Some(SESSION));
    assert_eq!(meta.source, Some(SessionSource::Named("cli".to_owned())));
    let sidechain = &transcript.sidechains[0];
    assert_eq!(sidechain.agent_id.as_deref(), Some("a1b2c3d4"));
    let meta = sidechain.session_meta();
    assert_eq!(
        meta.thread_id(),
        Some(&*format!("{SESSION}/agent-a1b2c3d4"))
    );
    assert!(meta.source.is_some_and(|source| source.is_subagent()));
}

#[test]
fn an_answer_is_one_entry_per_message_id_with_its_usage_counted_once() {
    let transcript = session();
    let answers: Vec<_> = transcript
        .entries
        .iter()
        .filter_map(|entry| match entry {
            Entry::Answer(answer) => Some(answer),
            _ => None,
        })
        .collect();
    let ids: Vec<_> = answers
        .iter()
        .map(|answer| answer.message_id.as_deref().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["msg_01", "msg_02", "msg_03", "msg_04", "msg_05", "msg_06"]
    );
    // msg_01 is three lines: thinking (left out), text, tool call.
    assert!(matches!(
        answers[0].blocks.as_slice(),
        [AnswerBlock::Text(text), AnswerBlock::ToolUse(call)]
            if text.starts_with("I'll reproduce") && call.name == "Bash"
    ));
    let usage = transcript.total_usage();
    // Six answers of the session and two of its subagent; each line repeats the usage.
    assert_eq!(usage.output_tokens, 50 + 60 + 20 + 30 + 40 + 10 + 5 + 6);
    assert_eq!(usage.input_tokens, 10 + 20 + 30 + 40 + 50 + 60 + 5 + 6);
    assert_eq!(usage.cache_read_input_tokens, 8 * 2000);
    assert_eq!(usage.total_input(), usage.input_tokens + 8 * 2100);
}

#[test]
fn injected_context_is_recognised_and_unknown_kinds_are_kept() {
    let transcript = session();
    let kinds = |wanted: fn(&Entry) -> Option<String>| -> Vec<String> {
        transcript.entries.iter().filter_map(wanted).collect()
    };
    assert_eq!(
        kinds(|entry| match entry {
            Entry::Attachment { attachment_type } => Some(attachment_type.clone()),
            _ => None,
        }),
        [
            "instructions",
            "hook_success",
            "hook_additional_context",
            "hook_additional_context",
            "hook_blocking_error"
        ]
    );
    let users: Vec<(UserOrigin, &str)> = transcript
        .entries
        .iter()
        .filter_map(|entry| match entry {
            Entry::User(user) => Some((user.origin, user.text.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(users.len(), 5);
    assert_eq!(users[0].0, UserOrigin::Typed);
    assert_eq!(
        users[0].1.trim(),
        "The parser in src/ledger.rs panics on an empty ledger file. Fix it and add a test."
    );
    assert_eq!(users[2].0, UserOrigin::Meta);
    assert!(users[2].1.starts_with("Stop hook feedback:"));
    assert_eq!(users[3].0, UserOrigin::SlashCommand);
    assert_eq!(users[4].0, UserOrigin::SlashCommand);
    assert!(transcript.entries.iter().any(|entry| matches!(entry,
        Entry::CompactSummary { text, .. } if text.contains("SUMMARY-TEXT"))));
    assert!(transcript.entries.iter().any(|entry| matches!(entry,
        Entry::CompactBoundary { trigger } if trigger.as_deref() == Some("manual"))));
    assert!(transcript.entries.iter().any(|entry| matches!(entry,
        Entry::Unknown { kind } if kind == "brand-new-kind")));
    assert!(transcript.entries.iter().any(|entry| matches!(entry,
        Entry::Bookkeeping { kind } if kind == "cost-state")));
    // The tool result keeps its structured form, without the reminder appended to its text.
    let edit = transcript.entries.iter().find_map(|entry| match entry {
        Entry::ToolResult(result) if result.tool_use_id == "toolu_02" => Some(result),
        _ => None,
    });
    let edit = edit.unwrap();
    assert!(!edit.content.contains("INJECTED"), "{}", edit.content);
    assert!(edit.structured.as_ref().unwrap().get("filePath").is_some());
}

#[test]
fn what_extraction_sees_holds_the_work_and_none_of_the_injected_text() {
    let rollout = session().to_rollout();
    assert!(matches!(rollout.lines[0].item, RolloutItem::SessionMeta(_)));
    let items = filter_for_memory(rollout.items());
    let text = serialize_for_memory(&items);
    for marker in INJECTED_MARKERS {
        assert!(
            !text.contains(marker),
            "{marker} reached extraction: {text}"
        );
    }
    let user_texts: Vec<&str> = items
        .iter()
        .filter_map(|item| match item {
            ResponseItem::Message(message) if message.role == "user" => {
                message.content.iter().find_map(ContentItem::text)
            }
            _ => None,
        })
        .collect();
    assert_eq!(user_texts.len(), 2, "{user_texts:?}");
    assert!(user_texts[1].starts_with("Prefer returning an error"));
    // The work: the failing run, the edit, the passing run, the subagent's prompt and answer
    // right after the Agent call's result.
    for expected in [
        "index out of bounds",
        "ParseError::Empty",
        "12 passed; 0 failed",
        "\"success\":false",
    ] {
        assert!(text.contains(expected), "{expected} missing: {text}");
    }
    let agent_result = text.find("\"call_id\":\"toolu_04\"").unwrap();
    let subagent_prompt = text.find("Find every caller of parse_ledger").unwrap();
    let subagent_grep = text.find("toolu_s1").unwrap();
    assert!(agent_result < subagent_grep && subagent_prompt < subagent_grep);
    assert!(text.contains("inter_agent_communication"));
}

#[test]
fn recalled_memory_in_a_prompt_is_not_read_back_as_the_users_words() {
    // mem0 #4573: a recall fence that reached the prompt text is not extracted again.
    let line = serde_json::json!({
        "type": "user", "sessionId": "s", "uuid": "u1",
        "message": {"role": "user", "content":
            "<memory-recall>\n--- MEMORY.md:3\nuses tabs\n</memory-recall>\nRename the module.\n\
             <memory source=\"agent-memory\">\nlikes tabs\n</memory>"}
    });
    let transcript = parse_transcript(&line.to_string());
    let text = serialize_for_memory(&filter_for_memory(transcript.to_rollout().items()));
    assert!(text.contains("Rename the module."), "{text}");
    assert!(!text.contains("tabs"), "{text}");
}

#[test]
fn the_last_turn_opens_at_the_last_user_text() {
    let transcript = session();
    let turn = transcript.last_turn().unwrap();
    // The last user text lines are the compaction's; no answer follows them.
    assert!(turn.answers.is_empty());
    let text = "{\"type\":\"user\",\"uuid\":\"a\",\"message\":{\"content\":\"go\"}}\n\
                {\"type\":\"assistant\",\"message\":{\"id\":\"m1\",\"content\":[],\"usage\":{\"output_tokens\":3}}}\n\
                {\"type\":\"assistant\",\"message\":{\"id\":\"m1\",\"content\":[],\"usage\":{\"output_tokens\":3}}}";
    let transcript = parse_transcript(text);
    let turn = transcript.last_turn().unwrap();
    assert_eq!(turn.opening_uuid, Some("a"));
    assert_eq!(turn.answers.len(), 1);
    assert_eq!(turn.answers[0].usage.output_tokens, 3);
}

#[test]
fn bad_lines_are_diagnostics_and_the_rest_is_read() {
    let text =
        "[1,2]\n{\"type\":\"user\",\"sessionId\":\"s\",\"message\":{\"content\":\"hi\"}}\n{bad";
    let transcript = parse_transcript(text);
    assert_eq!(transcript.diagnostics.len(), 2);
    assert_eq!(transcript.diagnostics[0].line_number, 1);
    assert_eq!(transcript.diagnostics[1].line_number, 3);
    assert!(transcript.has_user_prompt());
}

fn json_line() -> impl Strategy<Value = String> {
    let scalar = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("1".to_owned()),
        "\"[a-z<>/ -]{0,12}\"",
    ];
    let kind = prop_oneof![
        Just("user"),
        Just("assistant"),
        Just("attachment"),
        Just("system"),
        Just("queue-operation"),
        Just("other"),
    ];
    let content = prop_oneof![
        scalar.clone(),
        scalar.clone().prop_map(|value| format!(
            "[{{\"type\":\"tool_result\",\"tool_use_id\":{value},\"content\":{value}}}]"
        )),
        scalar.clone().prop_map(|value| format!(
            "[{{\"type\":\"tool_use\",\"id\":{value},\"name\":{value},\"input\":{value}}},{{\"type\":\"text\",\"text\":{value}}}]"
        )),
    ];
    (kind, scalar.clone(), content, scalar.clone(), any::<bool>()).prop_map(
        |(kind, id, content, flag, sidechain)| {
            format!(
                "{{\"type\":\"{kind}\",\"sessionId\":{id},\"isMeta\":{flag},\"isSidechain\":{sidechain},\
                 \"isCompactSummary\":{flag},\"message\":{{\"id\":{id},\"content\":{content},\
                 \"usage\":{{\"output_tokens\":{flag}}}}},\"toolUseResult\":{flag},\"attachment\":{flag}}}"
            )
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_text_is_read_without_panicking(text in "\\PC{0,200}") {
        let transcript = parse_transcript(&text);
        let _ = transcript.to_rollout();
        let _ = detect_format(&text);
    }

    #[test]
    fn any_jsonl_of_claude_shapes_is_read_without_panicking(lines in proptest::collection::vec(json_line(), 0..12)) {
        let text = lines.join("\n");
        let transcript = parse_transcript(&text);
        prop_assert!(transcript.diagnostics.is_empty(), "{:?}", transcript.diagnostics);
        let rollout = transcript.to_rollout();
        let _ = serialize_for_memory(&filter_for_memory(rollout.items()));
        let _ = transcript.last_turn();
        let _ = transcript.total_usage();
    }
}
