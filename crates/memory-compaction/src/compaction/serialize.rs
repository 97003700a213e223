//! What a summarizer sees of a conversation: messages cleaned (secrets redacted, useless
//! results dropped with their calls, long results cut), then serialized as labelled blocks.
//!
//! ```text
//! [User]: ...
//! [Think]: ...            (left out in the Anthropic dialect)
//! [Assistant]: ...
//! [Tool Call]: name(key=<json>, ...)
//! [Tool Result]: ...      (`(error) ...` when the tool failed; at most 2,000 characters)
//! [Shell]: $ command      (a command the user ran, with its output and exit code)
//! ```
//!
//! Blocks are separated by a blank line. Boundary tags in the text are escaped later, when the
//! text is rendered into a prompt slot.

use std::collections::HashSet;

use memory_protocol::REDACTED_SECRET;
use memory_protocol::compaction::{AssistantBlock, ConversationMessage};
use memory_sanitize::{redact_json_strings, redact_secrets, truncate_tool_result};
use serde_json::Value;

/// Longest tool result or shell output sent to a summarizer, in characters (marker included).
pub const TOOL_RESULT_MAX_CHARS: usize = 2_000;
/// Longest tool name kept, in characters.
const MAX_NAME_CHARS: usize = 200;

/// How the conversation is written for a summarizer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Dialect {
    /// Every block, thinking included.
    #[default]
    Generic,
    /// For Claude models, which refuse input that replays reasoning: thinking is left out.
    Anthropic,
}

impl Dialect {
    /// The dialect for a model name: [`Dialect::Anthropic`] for Claude models.
    pub fn for_model(name: &str) -> Dialect {
        let lower = name.to_ascii_lowercase();
        if lower.contains("claude") || lower.contains("anthropic") {
            Dialect::Anthropic
        } else {
            Dialect::Generic
        }
    }
}

/// What cleaning did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CleanStats {
    /// Useless results dropped (each with its call).
    pub dropped_useless: u64,
    /// Tool results and shell outputs cut to [`TOOL_RESULT_MAX_CHARS`].
    pub truncated_tool_results: u64,
    /// Secrets replaced.
    pub redactions: u64,
}

impl CleanStats {
    /// Adds another pass's counts.
    pub fn add(&mut self, other: CleanStats) {
        self.dropped_useless += other.dropped_useless;
        self.truncated_tool_results += other.truncated_tool_results;
        self.redactions += other.redactions;
    }
}

/// Cleans messages for a summarizer: redacts every text (replacing secrets and going on),
/// drops non-error results marked useless together with their calls, cuts results and shell
/// outputs to [`TOOL_RESULT_MAX_CHARS`], drops thinking in the Anthropic dialect, and drops
/// messages left empty.
pub fn clean_messages(
    messages: &[ConversationMessage],
    dialect: Dialect,
    stats: &mut CleanStats,
) -> Vec<ConversationMessage> {
    let useless: HashSet<&str> = messages
        .iter()
        .filter_map(|message| match message {
            ConversationMessage::ToolResult {
                tool_call_id,
                useless: true,
                is_error: false,
                ..
            } => Some(tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    let mut out = Vec::with_capacity(messages.len());
    for message in messages {
        let cleaned = match message {
            ConversationMessage::User { text } => {
                let text = redact(text, stats);
                (!text.trim().is_empty()).then_some(ConversationMessage::User { text })
            }
            ConversationMessage::Assistant { content } => {
                let content: Vec<AssistantBlock> = content
                    .iter()
                    .filter_map(|block| clean_block(block, dialect, &useless, stats))
                    .collect();
                (!content.is_empty()).then_some(ConversationMessage::Assistant { content })
            }
            ConversationMessage::ToolResult {
                tool_call_id,
                tool_name,
                text,
                is_error,
                useless: marked,
            } => {
                if *marked && !*is_error {
                    stats.dropped_useless += 1;
                    None
                } else {
                    Some(ConversationMessage::ToolResult {
                        tool_call_id: tool_call_id.clone(),
                        tool_name: cap_name(tool_name),
                        text: cut_result(&redact(text, stats), stats),
                        is_error: *is_error,
                        useless: false,
                    })
                }
            }
            ConversationMessage::ShellExecution {
                command,
                output,
                exit_code,
            } => Some(ConversationMessage::ShellExecution {
                command: redact(command, stats),
                output: cut_result(&redact(output, stats), stats),
                exit_code: *exit_code,
            }),
        };
        out.extend(cleaned);
    }
    out
}

fn clean_block(
    block: &AssistantBlock,
    dialect: Dialect,
    useless: &HashSet<&str>,
    stats: &mut CleanStats,
) -> Option<AssistantBlock> {
    match block {
        AssistantBlock::Text { text } => {
            let text = redact(text, stats);
            (!text.trim().is_empty()).then_some(AssistantBlock::Text { text })
        }
        AssistantBlock::Thinking { thinking } => {
            if dialect == Dialect::Anthropic {
                return None;
            }
            let thinking = redact(thinking, stats);
            (!thinking.trim().is_empty()).then_some(AssistantBlock::Thinking { thinking })
        }
        AssistantBlock::ToolCall {
            id,
            name,
            arguments,
        } => {
            if useless.contains(id.as_str()) {
                return None;
            }
            let mut arguments = arguments.clone();
            let before = count_markers_in_json(&arguments);
            redact_json_strings(&mut arguments);
            stats.redactions += count_markers_in_json(&arguments).saturating_sub(before);
            Some(AssistantBlock::ToolCall {
                id: id.clone(),
                name: redact(&cap_name(name), stats),
                arguments,
            })
        }
    }
}

/// Redacts `text`, counting the secrets replaced.
pub(super) fn redact(text: &str, stats: &mut CleanStats) -> String {
    let redacted = redact_secrets(text);
    let added = count_markers(&redacted).saturating_sub(count_markers(text));
    stats.redactions += added as u64;
    redacted.into_owned()
}

fn count_markers(text: &str) -> usize {
    text.matches(REDACTED_SECRET).count()
}

fn count_markers_in_json(value: &Value) -> u64 {
    match value {
        Value::String(text) => count_markers(text) as u64,
        Value::Array(items) => items.iter().map(count_markers_in_json).sum(),
        Value::Object(members) => members.values().map(count_markers_in_json).sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

fn cut_result(text: &str, stats: &mut CleanStats) -> String {
    let cut = truncate_tool_result(text, TOOL_RESULT_MAX_CHARS);
    if cut.len() != text.len() {
        stats.truncated_tool_results += 1;
    }
    cut.into_owned()
}

fn cap_name(name: &str) -> String {
    name.chars().take(MAX_NAME_CHARS).collect()
}

/// Serializes messages as labelled blocks separated by blank lines.
pub fn serialize_messages(messages: &[ConversationMessage]) -> String {
    let mut out = String::new();
    for message in messages {
        append_message(&mut out, message);
    }
    out
}

/// Serializes one message (its blocks separated by blank lines, no leading separator).
pub fn serialize_message(message: &ConversationMessage) -> String {
    let mut out = String::new();
    append_message(&mut out, message);
    out
}

/// The separator between two serialized blocks.
pub(super) const BLOCK_SEPARATOR: &str = "\n\n";

fn push_block(out: &mut String, label: &str, text: &str) {
    if !out.is_empty() {
        out.push_str(BLOCK_SEPARATOR);
    }
    out.push_str(label);
    out.push_str(text);
}

fn append_message(out: &mut String, message: &ConversationMessage) {
    match message {
        ConversationMessage::User { text } => push_block(out, "[User]: ", text),
        ConversationMessage::Assistant { content } => {
            for block in content {
                match block {
                    AssistantBlock::Text { text } => push_block(out, "[Assistant]: ", text),
                    AssistantBlock::Thinking { thinking } => push_block(out, "[Think]: ", thinking),
                    AssistantBlock::ToolCall {
                        name, arguments, ..
                    } => push_block(out, "[Tool Call]: ", &render_call(name, arguments)),
                }
            }
        }
        ConversationMessage::ToolResult { text, is_error, .. } => {
            if *is_error {
                push_block(out, "[Tool Result]: (error) ", text);
            } else {
                push_block(out, "[Tool Result]: ", text);
            }
        }
        ConversationMessage::ShellExecution {
            command,
            output,
            exit_code,
        } => {
            let mut text = format!("$ {command}");
            if !output.is_empty() {
                text.push('\n');
                text.push_str(output);
            }
            if let Some(code) = exit_code {
                text.push_str(&format!("\n(exit code {code})"));
            }
            push_block(out, "[Shell]: ", &text);
        }
    }
}

/// `name(key=<json>, ...)` for an object of arguments, `name(<json>)` otherwise.
fn render_call(name: &str, arguments: &Value) -> String {
    match arguments {
        Value::Object(members) => {
            let parts: Vec<String> = members
                .iter()
                .map(|(key, value)| format!("{key}={value}"))
                .collect();
            format!("{name}({})", parts.join(", "))
        }
        Value::Null => format!("{name}()"),
        other => format!("{name}({other})"),
    }
}
