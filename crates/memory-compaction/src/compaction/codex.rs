//! Codex rollouts as sessions.
//!
//! Each parsed rollout line gets the id `r<N>` (its position among the parsed lines, 1-based),
//! so converting a rollout again after it grew gives its earlier messages the same ids. Rules:
//!
//! - user messages become [`ConversationMessage::User`], without the blocks the host injects
//!   (AGENTS.md instructions, skills, environment context, codex's internal context); a
//!   message left empty is skipped; images become `[image]`;
//!   developer and system messages are skipped;
//! - consecutive assistant-side items (reasoning, assistant messages, `function_call`,
//!   `custom_tool_call`, `local_shell_call`, `web_search_call`) form one
//!   [`ConversationMessage::Assistant`], with the id of its first line;
//! - `function_call_output` and `custom_tool_call_output` become tool results, named after
//!   their call and flagged as errors when the output records a failure;
//! - codex's own `compacted` lines become compaction entries (engine `codex`) that keep
//!   nothing before them; their replacement history is not replayed;
//! - session metadata, turn context, events and unknown items are skipped.

use std::collections::HashMap;

use memory_protocol::compaction::{
    AssistantBlock, CompactionDetails, CompactionEntry, ConversationEntry, ConversationMessage,
    SessionEntry,
};
use memory_protocol::rollout::{ContentItem, ResponseItem, RolloutItem, RolloutLine, ToolOutput};
use memory_sanitize::TokenCounter;
use memory_transcript::filter::keep_for_memory;
use memory_transcript::tool_output::exit_code_and_text;
use serde_json::{Map, Value, json};

use super::error::Result;
use super::session::{Session, message_tokens};

/// The engine name of compaction entries converted from codex's `compacted` lines.
pub const CODEX_ENGINE: &str = "codex";

/// Converts rollout lines into a session. `counter` sizes the entries codex's compactions
/// become (`tokens_before`, `tokens_after`).
pub fn session_from_rollout(lines: &[RolloutLine], counter: &dyn TokenCounter) -> Result<Session> {
    let mut builder = Builder {
        entries: Vec::new(),
        assistant: None,
        call_names: HashMap::new(),
        counter,
        live_tokens: 0,
        live_messages: 0,
    };
    for (index, line) in lines.iter().enumerate() {
        let id = format!("r{}", index + 1);
        match &line.item {
            RolloutItem::ResponseItem(item) => builder.item(&id, item),
            RolloutItem::Compacted(compacted) => builder.compacted(&id, &compacted.message),
            _ => {}
        }
    }
    builder.flush();
    Session::new(builder.entries)
}

struct Builder<'a> {
    entries: Vec<SessionEntry>,
    assistant: Option<(String, Vec<AssistantBlock>)>,
    call_names: HashMap<String, String>,
    counter: &'a dyn TokenCounter,
    live_tokens: u64,
    live_messages: u64,
}

impl Builder<'_> {
    fn item(&mut self, id: &str, item: &ResponseItem) {
        match item {
            ResponseItem::Message(message) => match message.role.as_str() {
                "assistant" => {
                    let text = joined_text(&message.content);
                    if !text.trim().is_empty() {
                        self.block(id, AssistantBlock::Text { text });
                    }
                }
                "user" => {
                    if let Some(ResponseItem::Message(kept)) = keep_for_memory(item.clone()) {
                        let parts: Vec<&ContentItem> = kept
                            .content
                            .iter()
                            .filter(|part| !part.text().is_some_and(is_host_context))
                            .collect();
                        let text = parts
                            .iter()
                            .map(|part| match part {
                                ContentItem::InputImage { .. } => "[image]",
                                other => other.text().unwrap_or_default(),
                            })
                            .filter(|text| !text.is_empty())
                            .collect::<Vec<_>>()
                            .join("\n");
                        if !text.trim().is_empty() {
                            self.message(id, ConversationMessage::User { text });
                        }
                    }
                }
                _ => {}
            },
            ResponseItem::Reasoning(reasoning) => {
                let texts: Vec<&str> = reasoning
                    .summary
                    .iter()
                    .chain(reasoning.content.iter().flatten())
                    .map(|part| part.text.as_str())
                    .filter(|text| !text.trim().is_empty())
                    .collect();
                if !texts.is_empty() {
                    self.block(
                        id,
                        AssistantBlock::Thinking {
                            thinking: texts.join("\n"),
                        },
                    );
                }
            }
            ResponseItem::FunctionCall(call) => {
                let arguments = serde_json::from_str(&call.arguments)
                    .unwrap_or_else(|_| Value::String(call.arguments.clone()));
                self.call(id, &call.call_id, &call.name, arguments);
            }
            ResponseItem::CustomToolCall(call) => {
                self.call(
                    id,
                    &call.call_id,
                    &call.name,
                    json!({ "input": call.input }),
                );
            }
            ResponseItem::LocalShellCall(call) => {
                let call_id = call
                    .call_id
                    .clone()
                    .or(call.id.clone())
                    .unwrap_or_else(|| id.to_owned());
                let mut arguments = Map::new();
                arguments.insert("command".to_owned(), json!(call.action.command));
                if let Some(dir) = &call.action.working_directory {
                    arguments.insert("workdir".to_owned(), json!(dir));
                }
                self.call(id, &call_id, "local_shell", Value::Object(arguments));
            }
            ResponseItem::WebSearchCall(search) => {
                let call_id = search.id.clone().unwrap_or_else(|| id.to_owned());
                let arguments = search.action.clone().unwrap_or(Value::Null);
                self.call(id, &call_id, "web_search", arguments);
            }
            ResponseItem::FunctionCallOutput(output) => {
                self.result(id, &output.call_id, None, &output.output);
            }
            ResponseItem::CustomToolCallOutput(output) => {
                self.result(id, &output.call_id, output.name.as_deref(), &output.output);
            }
            ResponseItem::Other(_) => {}
        }
    }

    fn call(&mut self, id: &str, call_id: &str, name: &str, arguments: Value) {
        self.call_names.insert(call_id.to_owned(), name.to_owned());
        self.block(
            id,
            AssistantBlock::ToolCall {
                id: call_id.to_owned(),
                name: name.to_owned(),
                arguments,
            },
        );
    }

    fn result(&mut self, id: &str, call_id: &str, name: Option<&str>, output: &ToolOutput) {
        let (text, is_error) = output_text(output);
        let tool_name = name
            .map(str::to_owned)
            .or_else(|| self.call_names.get(call_id).cloned())
            .unwrap_or_default();
        self.message(
            id,
            ConversationMessage::ToolResult {
                tool_call_id: call_id.to_owned(),
                tool_name,
                text,
                is_error,
                useless: false,
            },
        );
    }

    fn block(&mut self, id: &str, block: AssistantBlock) {
        match &mut self.assistant {
            Some((_, blocks)) => blocks.push(block),
            None => self.assistant = Some((id.to_owned(), vec![block])),
        }
    }

    fn flush(&mut self) {
        if let Some((id, content)) = self.assistant.take() {
            self.push(id, ConversationMessage::Assistant { content });
        }
    }

    fn message(&mut self, id: &str, message: ConversationMessage) {
        self.flush();
        self.push(id.to_owned(), message);
    }

    fn push(&mut self, id: String, message: ConversationMessage) {
        self.live_tokens += message_tokens(&message, self.counter);
        self.live_messages += 1;
        self.entries
            .push(SessionEntry::Message(ConversationEntry { id, message }));
    }

    fn compacted(&mut self, id: &str, summary: &str) {
        self.flush();
        let tokens_after = u64::try_from(self.counter.count(summary)).unwrap_or(u64::MAX);
        self.entries.push(SessionEntry::Compaction(CompactionEntry {
            id: id.to_owned(),
            summary: summary.to_owned(),
            short_summary: None,
            first_kept_entry_id: None,
            pinned_entry_id: None,
            tokens_before: self.live_tokens,
            tokens_after,
            messages_summarized: self.live_messages,
            engine: CODEX_ENGINE.to_owned(),
            details: CompactionDetails::default(),
        }));
        self.live_tokens = tokens_after;
        self.live_messages = 0;
    }
}

fn joined_text(content: &[ContentItem]) -> String {
    content
        .iter()
        .filter_map(ContentItem::text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Blocks a host wraps around what it injects into user messages.
const HOST_CONTEXT_TAGS: [&str; 6] = [
    "environment_context",
    "user_instructions",
    "subagent_notification",
    "codex_internal_context",
    "turn_aborted",
    "skill",
];

/// True for a text part that is one whole host-injected block (`<environment_context>...`).
fn is_host_context(text: &str) -> bool {
    let trimmed = text.trim();
    HOST_CONTEXT_TAGS.iter().any(|tag| {
        let open = format!("<{tag}");
        let close = format!("</{tag}>");
        let starts = trimmed
            .get(..open.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(&open))
            && trimmed
                .as_bytes()
                .get(open.len())
                .is_some_and(|b| *b == b'>' || b.is_ascii_whitespace());
        let ends = trimmed
            .get(trimmed.len().saturating_sub(close.len())..)
            .is_some_and(|tail| tail.eq_ignore_ascii_case(&close));
        starts && ends
    })
}

/// The output's text, and whether it records a failure (a non-zero exit code or
/// `success: false`, however codex wrote it).
fn output_text(output: &ToolOutput) -> (String, bool) {
    let (code, text) = exit_code_and_text(output);
    (text, code.is_some_and(|code| code != 0))
}
