//! One transcript's text to a [`Transcript`].

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{
    Answer, AnswerBlock, Entry, ToolResult, ToolUse, Transcript, Usage, UserOrigin, UserText,
};
use crate::injected::strip_hidden;
use crate::reader::Diagnostic;

/// Openings of the text Claude Code writes on the user's side for a slash command.
const SLASH_COMMAND_OPENINGS: [&str; 4] = [
    "<command-name>",
    "<command-message>",
    "<local-command-stdout>",
    "<local-command-caveat>",
];

/// Reads a Claude Code transcript's text. Never fails: a line that is not a JSON object is a
/// diagnostic, a line of an unknown kind an [`Entry::Unknown`].
pub fn parse_transcript(text: &str) -> Transcript {
    let mut reader = Reader::default();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let line_number = u64::try_from(index).unwrap_or(u64::MAX).saturating_add(1);
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(map)) => reader.line(&map),
            Ok(other) => reader.transcript.diagnostics.push(Diagnostic {
                line_number,
                message: format!("not a JSON object but {}", json_kind(&other)),
            }),
            Err(error) => reader.transcript.diagnostics.push(Diagnostic {
                line_number,
                message: error.to_string(),
            }),
        }
    }
    reader.finish()
}

#[derive(Default)]
struct Reader {
    transcript: Transcript,
    /// Where each `message.id`'s answer sits in `entries`.
    answers: HashMap<String, usize>,
    /// Conversation lines seen, and how many of them were `isSidechain`.
    conversation_lines: usize,
    sidechain_lines: usize,
    agent_id: Option<String>,
}

impl Reader {
    fn line(&mut self, map: &Map<String, Value>) {
        let kind = str_field(map, "type").unwrap_or_default();
        self.header(map);
        let entry = match kind {
            "user" => {
                self.conversation(map);
                self.user(map);
                return;
            }
            "assistant" => {
                self.conversation(map);
                self.assistant(map);
                return;
            }
            "attachment" => {
                self.conversation(map);
                Entry::Attachment {
                    attachment_type: map
                        .get("attachment")
                        .and_then(|a| a.get("type"))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                }
            }
            "system" => {
                self.conversation(map);
                let subtype = str_field(map, "subtype").unwrap_or_default();
                if subtype == "compact_boundary" {
                    Entry::CompactBoundary {
                        trigger: map
                            .get("compactMetadata")
                            .and_then(|m| m.get("trigger"))
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                    }
                } else {
                    Entry::System {
                        subtype: subtype.to_owned(),
                    }
                }
            }
            "queue-operation"
            | "last-prompt"
            | "tools-used"
            | "cost-state"
            | "mode"
            | "permission-mode"
            | "atis-latch"
            | "file-history-snapshot"
            | "api-request-shape"
            | "api-request-blob"
            | "api-request"
            | "summary"
            | "ai-title"
            | "custom-title"
            | "tag"
            | "agent-name"
            | "pr-link"
            | "worktree-state"
            | "content-replacement" => Entry::Bookkeeping {
                kind: kind.to_owned(),
            },
            other => Entry::Unknown {
                kind: other.to_owned(),
            },
        };
        self.transcript.entries.push(entry);
    }

    /// Session-wide fields, from the first line that has them.
    fn header(&mut self, map: &Map<String, Value>) {
        let transcript = &mut self.transcript;
        let fill = |slot: &mut Option<String>, key: &str| {
            if slot.is_none() {
                *slot = str_field(map, key)
                    .filter(|value| !value.is_empty())
                    .map(str::to_owned);
            }
        };
        fill(&mut transcript.session_id, "sessionId");
        fill(&mut transcript.cwd, "cwd");
        fill(&mut transcript.git_branch, "gitBranch");
        fill(&mut transcript.version, "version");
        fill(&mut transcript.entrypoint, "entrypoint");
        fill(&mut transcript.started_at, "timestamp");
        if let Some(timestamp) = str_field(map, "timestamp") {
            transcript.last_at = Some(timestamp.to_owned());
        }
    }

    fn conversation(&mut self, map: &Map<String, Value>) {
        self.conversation_lines += 1;
        if map.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            self.sidechain_lines += 1;
            if self.agent_id.is_none() {
                self.agent_id = str_field(map, "agentId").map(str::to_owned);
            }
        }
    }

    fn user(&mut self, map: &Map<String, Value>) {
        let timestamp = str_field(map, "timestamp").map(str::to_owned);
        let content = map.get("message").and_then(|m| m.get("content"));
        if map.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
            let text = content.map(content_text).unwrap_or_default();
            self.transcript
                .entries
                .push(Entry::CompactSummary { text, timestamp });
            return;
        }
        if let Some(Value::Array(blocks)) = content
            && blocks
                .iter()
                .any(|block| block_type(block) == "tool_result")
        {
            let results = blocks
                .iter()
                .filter(|block| block_type(block) == "tool_result")
                .count();
            for block in blocks {
                if block_type(block) != "tool_result" {
                    continue;
                }
                // The structured form belongs to the line, so only to its only result.
                let structured = (results == 1)
                    .then(|| map.get("toolUseResult").cloned())
                    .flatten();
                self.transcript.entries.push(Entry::ToolResult(ToolResult {
                    tool_use_id: block
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    content: strip_hidden(
                        &block.get("content").map(content_text).unwrap_or_default(),
                    ),
                    is_error: block.get("is_error").and_then(Value::as_bool) == Some(true),
                    structured,
                    timestamp: timestamp.clone(),
                }));
            }
            return;
        }
        let Some(content @ (Value::String(_) | Value::Array(_))) = content else {
            self.transcript.entries.push(Entry::Unknown {
                kind: "user".to_owned(),
            });
            return;
        };
        let text = content_text(content);
        let origin = if map.get("isMeta").and_then(Value::as_bool) == Some(true) {
            UserOrigin::Meta
        } else if SLASH_COMMAND_OPENINGS
            .iter()
            .any(|opening| text.trim_start().starts_with(opening))
        {
            UserOrigin::SlashCommand
        } else {
            UserOrigin::Typed
        };
        let text = match origin {
            UserOrigin::Typed => strip_hidden(&text),
            UserOrigin::Meta | UserOrigin::SlashCommand => text,
        };
        self.transcript.entries.push(Entry::User(UserText {
            uuid: str_field(map, "uuid").map(str::to_owned),
            timestamp,
            origin,
            text,
        }));
    }

    fn assistant(&mut self, map: &Map<String, Value>) {
        let message = map.get("message");
        let message_id = message
            .and_then(|m| m.get("id"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let blocks: Vec<AnswerBlock> = match message.and_then(|m| m.get("content")) {
            Some(Value::Array(blocks)) => blocks.iter().filter_map(answer_block).collect(),
            Some(Value::String(text)) => vec![AnswerBlock::Text(text.clone())],
            _ => Vec::new(),
        };
        if let Some(id) = &message_id
            && let Some(&at) = self.answers.get(id)
            && let Some(Entry::Answer(answer)) = self.transcript.entries.get_mut(at)
        {
            // Every line of one answer repeats its whole usage: it was counted with the first.
            answer.blocks.extend(blocks);
            return;
        }
        let usage = message.and_then(|m| m.get("usage"));
        let count = |key: &str| {
            usage
                .and_then(|u| u.get(key))
                .and_then(Value::as_i64)
                .unwrap_or(0)
                .max(0)
        };
        let answer = Answer {
            message_id: message_id.clone(),
            model: message
                .and_then(|m| m.get("model"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            timestamp: str_field(map, "timestamp").map(str::to_owned),
            blocks,
            usage: Usage {
                input_tokens: count("input_tokens"),
                cache_creation_input_tokens: count("cache_creation_input_tokens"),
                cache_read_input_tokens: count("cache_read_input_tokens"),
                output_tokens: count("output_tokens"),
            },
        };
        if let Some(id) = message_id {
            self.answers.insert(id, self.transcript.entries.len());
        }
        self.transcript.entries.push(Entry::Answer(answer));
    }

    fn finish(mut self) -> Transcript {
        if self.conversation_lines > 0 && self.sidechain_lines == self.conversation_lines {
            self.transcript.agent_id = Some(self.agent_id.unwrap_or_default());
        }
        self.transcript
    }
}

fn answer_block(block: &Value) -> Option<AnswerBlock> {
    match block_type(block) {
        "text" => Some(AnswerBlock::Text(
            block.get("text").and_then(Value::as_str)?.to_owned(),
        )),
        "tool_use" => Some(AnswerBlock::ToolUse(ToolUse {
            id: block
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            name: block
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            input: block.get("input").cloned().unwrap_or(Value::Null),
        })),
        _ => None,
    }
}

/// The text of a `content`: a string, or the text blocks of a list joined by newlines.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|block| block_type(block) == "text")
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn block_type(block: &Value) -> &str {
    block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn str_field<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
