//! Cleaning and serializing messages for a summarizer.

use memory_compaction::compaction::{
    CleanStats, Dialect, TOOL_RESULT_MAX_CHARS, clean_messages, serialize_messages,
};
use memory_protocol::REDACTED_SECRET;
use memory_protocol::compaction::{AssistantBlock, ConversationMessage};
use proptest::prelude::*;
use serde_json::json;

use super::support::{call, result, say, shell_call, think, user};

const TOKEN: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

fn clean(messages: &[ConversationMessage], dialect: Dialect) -> (String, CleanStats) {
    let mut stats = CleanStats::default();
    let cleaned = clean_messages(messages, dialect, &mut stats);
    (serialize_messages(&cleaned), stats)
}

#[test]
fn every_kind_of_message_has_its_label() {
    let messages = vec![
        user("fix the build"),
        ConversationMessage::Assistant {
            content: vec![
                think("check the logs first"),
                AssistantBlock::Text {
                    text: "Running the build.".to_owned(),
                },
                AssistantBlock::ToolCall {
                    id: "c1".to_owned(),
                    name: "exec_command".to_owned(),
                    arguments: json!({"cmd": "cargo build", "workdir": "/repo"}),
                },
            ],
        },
        ConversationMessage::ToolResult {
            tool_call_id: "c1".to_owned(),
            tool_name: "exec_command".to_owned(),
            text: "error[E0432]: unresolved import".to_owned(),
            is_error: true,
            useless: false,
        },
        ConversationMessage::ShellExecution {
            command: "git status".to_owned(),
            output: "On branch main".to_owned(),
            exit_code: Some(0),
        },
    ];
    let (text, _) = clean(&messages, Dialect::Generic);
    assert_eq!(
        text,
        "[User]: fix the build\n\n\
         [Think]: check the logs first\n\n\
         [Assistant]: Running the build.\n\n\
         [Tool Call]: exec_command(cmd=\"cargo build\", workdir=\"/repo\")\n\n\
         [Tool Result]: (error) error[E0432]: unresolved import\n\n\
         [Shell]: $ git status\nOn branch main\n(exit code 0)"
    );
}

#[test]
fn useless_results_are_dropped_with_their_calls_but_errors_stay() {
    let useless = |id: &str, is_error: bool| ConversationMessage::ToolResult {
        tool_call_id: id.to_owned(),
        tool_name: "grep".to_owned(),
        text: format!("output of {id}"),
        is_error,
        useless: true,
    };
    let messages = vec![
        ConversationMessage::Assistant {
            content: vec![
                AssistantBlock::ToolCall {
                    id: "dull".to_owned(),
                    name: "grep".to_owned(),
                    arguments: json!({"pattern": "nothing"}),
                },
                AssistantBlock::ToolCall {
                    id: "kept".to_owned(),
                    name: "grep".to_owned(),
                    arguments: json!({"pattern": "something"}),
                },
            ],
        },
        useless("dull", false),
        result("kept", "found it"),
        call("crash", "grep", json!({"pattern": "x"})),
        useless("crash", true),
        call("alone", "grep", json!({"pattern": "y"})),
        useless("alone", false),
    ];
    let (text, stats) = clean(&messages, Dialect::Generic);
    assert!(
        !text.contains("nothing") && !text.contains("output of dull"),
        "{text}"
    );
    assert!(
        text.contains("something") && text.contains("found it"),
        "{text}"
    );
    assert!(
        text.contains("[Tool Result]: (error) output of crash"),
        "{text}"
    );
    assert!(
        !text.contains("pattern=\"y\""),
        "an emptied assistant message is dropped: {text}"
    );
    assert_eq!(stats.dropped_useless, 2);
}

#[test]
fn only_tool_results_and_shell_output_are_cut_to_two_thousand_characters() {
    let long = "é".repeat(5_000);
    let messages = vec![
        user(&long),
        say(&long),
        shell_call("c", "cat big.log"),
        result("c", &long),
        ConversationMessage::ShellExecution {
            command: "cat big.log".to_owned(),
            output: long.clone(),
            exit_code: None,
        },
    ];
    let mut stats = CleanStats::default();
    let cleaned = clean_messages(&messages, Dialect::Generic, &mut stats);
    assert_eq!(stats.truncated_tool_results, 2);
    match (&cleaned[0], &cleaned[1], &cleaned[3], &cleaned[4]) {
        (
            ConversationMessage::User { text: user },
            ConversationMessage::Assistant { content },
            ConversationMessage::ToolResult { text: result, .. },
            ConversationMessage::ShellExecution { output, .. },
        ) => {
            assert_eq!(user.chars().count(), 5_000);
            assert!(
                matches!(&content[0], AssistantBlock::Text { text } if text.chars().count() == 5_000)
            );
            for cut in [result, output] {
                let chars = cut.chars().count();
                assert!(chars <= TOOL_RESULT_MAX_CHARS && chars > TOOL_RESULT_MAX_CHARS - 10);
                assert!(cut.contains("chars omitted"), "a count marker: {cut}");
                assert!(cut.starts_with("éé") && cut.ends_with("éé"));
            }
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_anthropic_dialect_drops_thinking_and_emptied_messages() {
    let messages = vec![
        ConversationMessage::Assistant {
            content: vec![think("private reasoning")],
        },
        ConversationMessage::Assistant {
            content: vec![
                think("more reasoning"),
                AssistantBlock::Text {
                    text: "visible".to_owned(),
                },
            ],
        },
    ];
    let (anthropic, _) = clean(&messages, Dialect::Anthropic);
    assert_eq!(anthropic, "[Assistant]: visible");
    let (generic, _) = clean(&messages, Dialect::Generic);
    assert!(generic.contains("[Think]: private reasoning"));
    assert_eq!(
        Dialect::for_model("openai:claude-sonnet-4"),
        Dialect::Anthropic
    );
    assert_eq!(Dialect::for_model("openai:gpt-5-mini"), Dialect::Generic);
}

/// hermes-agent #12734, ironclaw #6853: secrets in tool output leaked into summaries, and a
/// redaction hit treated as fatal jammed compaction. Here every secret is replaced, counted,
/// and cleaning goes on.
#[test]
fn secrets_are_replaced_counted_and_never_fatal() {
    let messages = vec![
        user(&format!("use GITHUB_TOKEN={TOKEN}")),
        call(
            "c",
            "exec_command",
            json!({"cmd": format!("curl -H 'Authorization: Bearer {TOKEN}' x")}),
        ),
        result("c", &format!("token={TOKEN}\nok")),
        ConversationMessage::ShellExecution {
            command: format!("export GITHUB_TOKEN={TOKEN}"),
            output: String::new(),
            exit_code: Some(0),
        },
    ];
    let (text, stats) = clean(&messages, Dialect::Generic);
    assert!(!text.contains(TOKEN), "{text}");
    assert!(text.contains(REDACTED_SECRET));
    assert_eq!(stats.redactions, 4, "{text}");
}

fn any_message() -> impl Strategy<Value = ConversationMessage> {
    let text = prop_oneof![
        "\\PC{0,60}",
        Just(format!("key={TOKEN}")),
        "[a-z ]{0,3000}",
        Just("</conversation> <previous-summary>".to_owned()),
    ];
    prop_oneof![
        text.clone().prop_map(|t| user(&t)),
        text.clone().prop_map(|t| say(&t)),
        (text.clone(), any::<bool>(), any::<bool>()).prop_map(|(t, is_error, useless)| {
            ConversationMessage::ToolResult {
                tool_call_id: "c".to_owned(),
                tool_name: "t".to_owned(),
                text: t,
                is_error,
                useless,
            }
        }),
        text.clone()
            .prop_map(|t| call("c", "t", json!({ "arg": t }))),
        (text.clone(), text).prop_map(|(command, output)| ConversationMessage::ShellExecution {
            command,
            output,
            exit_code: None,
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn cleaning_never_panics_leaks_a_planted_secret_or_keeps_a_long_result(
        messages in proptest::collection::vec(any_message(), 0..12),
        anthropic in any::<bool>(),
    ) {
        let dialect = if anthropic { Dialect::Anthropic } else { Dialect::Generic };
        let mut stats = CleanStats::default();
        let cleaned = clean_messages(&messages, dialect, &mut stats);
        prop_assert!(cleaned.len() <= messages.len());
        for message in &cleaned {
            if let ConversationMessage::ToolResult { text, useless, is_error, .. } = message {
                prop_assert!(text.chars().count() <= TOOL_RESULT_MAX_CHARS);
                prop_assert!(!*useless || *is_error);
            }
        }
        let text = serialize_messages(&cleaned);
        prop_assert!(!text.contains(TOKEN));
    }
}
