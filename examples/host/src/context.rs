//! Assembling a request: the pinned preamble plus the conversation's live view.
//!
//! The preamble (the host's instructions, the pinned instruction files, the memory block) is
//! not part of the conversation: it is rebuilt for every request from its sources, so a
//! compaction cannot lose it. The conversation is `memory_compaction`'s [`Session`]: after a
//! compaction its live view is the latest summary plus the messages that compaction kept and
//! every message since. In working-memory mode it is a `working_memory` session's
//! [`Assembly`] instead ([`build_working_request`]): the working memory, inside its rules,
//! follows the preamble in the system prompt, and the messages are the ones the working
//! memory has not absorbed.

use goal_steering::internal_context_message;
use memory_compaction::compaction::Session;
use memory_protocol::compaction::{AssistantBlock, ConversationEntry, ConversationMessage};
use memory_protocol::tools::ToolDefinition;
use memory_sanitize::TokenCounter;
use serde_json::json;
use working_memory::session::Assembly;

use crate::model::{HostMessage, HostRequest, ToolCall};

/// The host's own instructions, first in every system prompt.
pub const HOST_INSTRUCTIONS: &str = "You are a coding agent working in the project folder \
    named in the environment block. Use the shell tool to read and change files and to run \
    commands. Use the memory tools to look up what earlier sessions learned, and the goal \
    tools to report on the thread's goal.";

/// The internal-context source of a compaction summary in the conversation.
pub const SUMMARY_SOURCE: &str = "compaction";

/// The name of the host's shell tool.
pub const SHELL_TOOL: &str = "shell";

/// The pinned part of every request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Preamble {
    /// Instruction files the project pins (`AGENTS.md`), with their paths.
    pub pinned: Vec<(String, String)>,
    /// The memory block for the working directory, as `memory_introspect` rendered it.
    pub memory_block: String,
}

impl Preamble {
    /// The system prompt: instructions, each pinned file under a heading naming its path, then
    /// the memory block.
    pub fn system(&self) -> String {
        let mut system = HOST_INSTRUCTIONS.to_owned();
        for (path, text) in &self.pinned {
            system.push_str(&format!(
                "\n\n# Instructions from {path}\n\n{}",
                text.trim_end()
            ));
        }
        if !self.memory_block.is_empty() {
            system.push_str("\n\n");
            system.push_str(&self.memory_block);
        }
        system
    }
}

/// The tools every request offers: the shell, then the memory and goal tools as
/// `memory_protocol` defines them (the same definitions the MCP server lists).
pub fn host_tools(memory_tools: Vec<ToolDefinition>) -> Vec<ToolDefinition> {
    let mut tools = vec![ToolDefinition {
        name: SHELL_TOOL,
        description: "Runs a shell command in the project folder and returns its exit code and \
            output (long output keeps its head and tail).",
        parameters: json!({
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command line."}},
            "required": ["command"],
            "additionalProperties": false
        }),
        output_schema: None,
    }];
    tools.extend(memory_tools);
    tools.extend(memory_protocol::tools::goal_tools());
    tools
}

/// The request for the conversation as it is now.
pub fn build_request(
    preamble: &Preamble,
    session: &Session,
    tools: &[ToolDefinition],
) -> HostRequest {
    let live = session.live();
    let mut messages = Vec::new();
    if let Some(previous) = live.previous {
        messages.push(HostMessage::User {
            text: internal_context_message(SUMMARY_SOURCE, &previous.summary),
        });
    }
    messages.extend(
        live.messages
            .iter()
            .map(|entry| host_message(&entry.message)),
    );
    HostRequest {
        system: preamble.system(),
        messages,
        tools: tools.to_vec(),
    }
}

/// The request for a working-memory conversation: the system prompt is the pinned preamble
/// followed by the assembly's instructions (the rules for reading a working memory with the
/// seven-section document inside, absent until the first commit), and the messages are the
/// assembled ones, oldest first.
pub fn build_working_request(
    preamble: &Preamble,
    assembly: &Assembly,
    tools: &[ToolDefinition],
) -> HostRequest {
    let mut system = preamble.system();
    if let Some(instructions) = &assembly.instructions {
        system.push_str("\n\n");
        system.push_str(instructions.trim_end());
    }
    HostRequest {
        system,
        messages: assembly
            .messages
            .iter()
            .map(|entry| host_message(&entry.message))
            .collect(),
        tools: tools.to_vec(),
    }
}

/// The conversation's tokens in a working-memory request, as [`request_tokens`] counts them:
/// the assembly's instructions (the working memory) and its messages, without the preamble
/// and the tools.
pub fn conversation_tokens(assembly: &Assembly, counter: &dyn TokenCounter) -> u64 {
    let conversation = build_working_request(&Preamble::default(), assembly, &[]);
    let empty = HostRequest {
        system: Preamble::default().system(),
        messages: Vec::new(),
        tools: Vec::new(),
    };
    request_tokens(&conversation, counter).saturating_sub(request_tokens(&empty, counter))
}

/// The tokens `entries` take in a request, as [`request_tokens`] counts them.
pub fn messages_tokens(entries: &[ConversationEntry], counter: &dyn TokenCounter) -> u64 {
    let request = HostRequest {
        system: String::new(),
        messages: entries
            .iter()
            .map(|entry| host_message(&entry.message))
            .collect(),
        tools: Vec::new(),
    };
    request_tokens(&request, counter)
}

/// One conversation message as the model receives it.
pub fn host_message(message: &ConversationMessage) -> HostMessage {
    match message {
        ConversationMessage::User { text } => HostMessage::User { text: text.clone() },
        ConversationMessage::Assistant { content } => {
            let mut text = Vec::new();
            let mut tool_calls = Vec::new();
            for block in content {
                match block {
                    AssistantBlock::Text { text: part } => text.push(part.as_str()),
                    AssistantBlock::ToolCall {
                        id,
                        name,
                        arguments,
                    } => tool_calls.push(ToolCall {
                        call_id: id.clone(),
                        name: name.clone(),
                        arguments: arguments.clone(),
                    }),
                    AssistantBlock::Thinking { .. } => {}
                }
            }
            HostMessage::Assistant {
                text: text.join("\n"),
                tool_calls,
            }
        }
        ConversationMessage::ToolResult {
            tool_call_id, text, ..
        } => HostMessage::Tool {
            call_id: tool_call_id.clone(),
            output: text.clone(),
        },
        ConversationMessage::ShellExecution {
            command,
            output,
            exit_code,
        } => HostMessage::User {
            text: format!(
                "$ {command}\n{output}\n(exit code {})",
                exit_code.map_or_else(|| "unknown".to_owned(), |code| code.to_string())
            ),
        },
    }
}

/// Every text of a request, for the invariants that look for a text anywhere in it.
pub fn request_text(request: &HostRequest) -> String {
    let mut text = request.system.clone();
    for message in &request.messages {
        text.push('\n');
        match message {
            HostMessage::User { text: part } => text.push_str(part),
            HostMessage::Assistant {
                text: part,
                tool_calls,
            } => {
                text.push_str(part);
                for call in tool_calls {
                    text.push('\n');
                    text.push_str(&call.arguments.to_string());
                }
            }
            HostMessage::Tool { output, .. } => text.push_str(output),
        }
    }
    text
}

/// The request's size in tokens: the system prompt, every message (tool calls with their
/// arguments) and the tool definitions as the API sends them.
pub fn request_tokens(request: &HostRequest, counter: &dyn TokenCounter) -> u64 {
    let count = |text: &str| u64::try_from(counter.count(text)).unwrap_or(u64::MAX);
    let tools: u64 = request
        .tools
        .iter()
        .map(|tool| count(&tool.openai_function().to_string()))
        .sum();
    let messages: u64 = request
        .messages
        .iter()
        .map(|message| match message {
            HostMessage::User { text } => count(text),
            HostMessage::Assistant { text, tool_calls } => {
                count(text)
                    + tool_calls
                        .iter()
                        .map(|call| count(&call.name) + count(&call.arguments.to_string()))
                        .sum::<u64>()
            }
            HostMessage::Tool { output, .. } => count(output),
        })
        .sum();
    count(&request.system) + tools + messages
}
