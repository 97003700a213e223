//! Messages as the model sees them: redacted, tool output truncated, one labelled block per
//! message part.
//!
//! `[User]: text`, `[Assistant]: text`, `[Tool Call]: name({"arg": ...})`,
//! `[Tool Result: name]: output` (`(error)` when the tool failed), `[Shell]: $ command
//! (exit N)` followed by the output. Reasoning is left out. A part with no text shows
//! `(no content)` or `(no output)`; a call whose result is not among the messages shows
//! `(no result yet)`, or `(no answer: the conversation went on without its result)` when it
//! was abandoned ([`abandoned_calls`](super::window::abandoned_calls)). Blocks are separated by blank lines.

use std::collections::HashSet;

use memory_protocol::compaction::{AssistantBlock, ConversationEntry, ConversationMessage};

use super::window::abandoned_calls;
use memory_sanitize::{
    CjkEstimate, DEFAULT_TOOL_RESULT_CHARS, TokenCounter, redact_json_strings, redact_secrets,
    truncate_tool_result,
};

/// A message with every text redacted and tool output truncated, ready for a model.
pub fn sanitized(entry: &ConversationEntry) -> ConversationEntry {
    let clean = |text: &str| redact_secrets(text).into_owned();
    let output = |text: &str| {
        truncate_tool_result(&redact_secrets(text), DEFAULT_TOOL_RESULT_CHARS).into_owned()
    };
    let message = match &entry.message {
        ConversationMessage::User { text } => ConversationMessage::User { text: clean(text) },
        ConversationMessage::Assistant { content } => ConversationMessage::Assistant {
            content: content
                .iter()
                .map(|block| match block {
                    AssistantBlock::Text { text } => AssistantBlock::Text { text: clean(text) },
                    AssistantBlock::Thinking { thinking } => AssistantBlock::Thinking {
                        thinking: clean(thinking),
                    },
                    AssistantBlock::ToolCall {
                        id,
                        name,
                        arguments,
                    } => {
                        let mut arguments = arguments.clone();
                        redact_json_strings(&mut arguments);
                        AssistantBlock::ToolCall {
                            id: id.clone(),
                            name: clean(name),
                            arguments,
                        }
                    }
                })
                .collect(),
        },
        ConversationMessage::ToolResult {
            tool_call_id,
            tool_name,
            text,
            is_error,
            useless,
        } => ConversationMessage::ToolResult {
            tool_call_id: tool_call_id.clone(),
            tool_name: clean(tool_name),
            text: output(text),
            is_error: *is_error,
            useless: *useless,
        },
        ConversationMessage::ShellExecution {
            command,
            output: out,
            exit_code,
        } => ConversationMessage::ShellExecution {
            command: clean(command),
            output: output(out),
            exit_code: *exit_code,
        },
    };
    ConversationEntry {
        id: entry.id.clone(),
        message,
    }
}

/// What became of the tool calls of a list of messages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallOutcomes<'a> {
    /// Calls whose result is among the messages.
    pub answered: HashSet<&'a str>,
    /// Calls with no result that the conversation went on without.
    pub abandoned: HashSet<&'a str>,
}

impl<'a> CallOutcomes<'a> {
    /// The outcomes of the calls among `messages`.
    pub fn of(messages: &'a [ConversationEntry]) -> Self {
        Self {
            answered: answered_calls(messages),
            abandoned: abandoned_calls(messages),
        }
    }
}

/// The text of one message's parts, in the labelled format, given what became of the calls.
pub fn format_message(entry: &ConversationEntry, calls: &CallOutcomes<'_>) -> String {
    let mut parts: Vec<String> = Vec::new();
    match &entry.message {
        ConversationMessage::User { text } => parts.push(labelled("User", text, "(no content)")),
        ConversationMessage::Assistant { content } => {
            for block in content {
                match block {
                    AssistantBlock::Text { text } if !text.trim().is_empty() => {
                        parts.push(format!("[Assistant]: {}", text.trim()));
                    }
                    AssistantBlock::ToolCall {
                        id,
                        name,
                        arguments,
                    } => {
                        let pending = if calls.answered.contains(id.as_str()) {
                            ""
                        } else if calls.abandoned.contains(id.as_str()) {
                            " (no answer: the conversation went on without its result)"
                        } else {
                            " (no result yet)"
                        };
                        parts.push(format!("[Tool Call]: {name}({arguments}){pending}"));
                    }
                    _ => {}
                }
            }
            if parts.is_empty() {
                parts.push("[Assistant]: (no content)".to_owned());
            }
        }
        ConversationMessage::ToolResult {
            tool_name,
            text,
            is_error,
            ..
        } => {
            let label = if *is_error {
                format!("Tool Result: {tool_name} (error)")
            } else {
                format!("Tool Result: {tool_name}")
            };
            parts.push(labelled(&label, text, "(no output)"));
        }
        ConversationMessage::ShellExecution {
            command,
            output,
            exit_code,
        } => {
            let exit =
                exit_code.map_or_else(|| "exit unknown".to_owned(), |code| format!("exit {code}"));
            let output = if output.trim().is_empty() {
                "(no output)"
            } else {
                output.trim_end()
            };
            parts.push(format!("[Shell]: $ {command} ({exit})\n{output}"));
        }
    }
    parts.join("\n")
}

fn labelled(label: &str, text: &str, empty: &str) -> String {
    let text = text.trim();
    format!("[{label}]: {}", if text.is_empty() { empty } else { text })
}

/// The ids of the calls answered among `messages`.
pub(crate) fn answered_calls(messages: &[ConversationEntry]) -> HashSet<&str> {
    messages
        .iter()
        .filter_map(|entry| match &entry.message {
            ConversationMessage::ToolResult { tool_call_id, .. } => Some(tool_call_id.as_str()),
            _ => None,
        })
        .collect()
}

/// All `messages` in the labelled format, blank lines between them.
pub fn format_messages(messages: &[ConversationEntry]) -> String {
    let calls = CallOutcomes::of(messages);
    messages
        .iter()
        .map(|entry| format_message(entry, &calls))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Estimated tokens of a stored message: every text it carries (tool arguments as JSON),
/// script-aware (see [`CjkEstimate`]).
pub fn estimate_message(entry: &ConversationEntry) -> u64 {
    let count = |text: &str| CjkEstimate.count(text) as u64;
    match &entry.message {
        ConversationMessage::User { text } => count(text),
        ConversationMessage::Assistant { content } => content
            .iter()
            .map(|block| match block {
                AssistantBlock::Text { text } => count(text),
                AssistantBlock::Thinking { thinking } => count(thinking),
                AssistantBlock::ToolCall {
                    id,
                    name,
                    arguments,
                } => count(id) + count(name) + count(&arguments.to_string()),
            })
            .sum(),
        ConversationMessage::ToolResult {
            tool_call_id,
            tool_name,
            text,
            ..
        } => count(tool_call_id) + count(tool_name) + count(text),
        ConversationMessage::ShellExecution {
            command, output, ..
        } => count(command) + count(output),
    }
}
