//! The conversation model: what the host sends each step and what comes back.
//!
//! `memory_protocol::ModelClient` is the model the library crates call for their own tasks
//! (extraction, consolidation, compaction summaries); the agent's own conversation needs a
//! chat model with tools, which is [`HostModel`]. [`ScriptedModel`] replays a script's
//! replies; an OpenAI-compatible server is reached the same way by a chat client.

use std::collections::VecDeque;
use std::sync::Mutex;

use async_trait::async_trait;
use memory_protocol::tools::ToolDefinition;
use serde_json::{Value, json};

use crate::error::{HostError, Result};
use crate::script::Reply;

/// One request to the conversation model.
#[derive(Debug, Clone, PartialEq)]
pub struct HostRequest {
    /// The system prompt: the host's instructions, the pinned instruction files and the
    /// memory block. Rebuilt for every request, so nothing in it can be compacted away.
    pub system: String,
    /// The conversation: the latest compaction summary, then the live messages.
    pub messages: Vec<HostMessage>,
    /// The tools the model may call.
    pub tools: Vec<ToolDefinition>,
}

impl HostRequest {
    /// The request as an OpenAI Chat Completions body (`messages` with the system prompt
    /// first, `tools` as function tools), without the model name.
    pub fn chat_body(&self) -> Value {
        let mut messages = vec![json!({ "role": "system", "content": self.system })];
        messages.extend(self.messages.iter().map(|message| match message {
            HostMessage::User { text } => json!({ "role": "user", "content": text }),
            HostMessage::Assistant { text, tool_calls } if tool_calls.is_empty() => {
                json!({ "role": "assistant", "content": text })
            }
            HostMessage::Assistant { text, tool_calls } => json!({
                "role": "assistant",
                "content": text,
                "tool_calls": tool_calls.iter().map(|call| json!({
                    "id": call.call_id,
                    "type": "function",
                    "function": { "name": call.name, "arguments": call.arguments.to_string() },
                })).collect::<Vec<_>>(),
            }),
            HostMessage::Tool { call_id, output } => {
                json!({ "role": "tool", "tool_call_id": call_id, "content": output })
            }
        }));
        let tools: Vec<Value> = self
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                })
            })
            .collect();
        json!({ "messages": messages, "tools": tools })
    }
}

/// A message of a request, in the chat-completions shape.
#[derive(Debug, Clone, PartialEq)]
pub enum HostMessage {
    /// A user-side message (the user's words, a recall fence, hidden host context).
    User {
        /// The text.
        text: String,
    },
    /// An assistant message with its tool calls.
    Assistant {
        /// The text.
        text: String,
        /// The calls it made.
        tool_calls: Vec<ToolCall>,
    },
    /// A tool's result.
    Tool {
        /// The call it answers.
        call_id: String,
        /// The tool's output.
        output: String,
    },
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// Pairs the call with its result.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, a JSON object.
    pub arguments: Value,
}

/// What the model answered.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelReply {
    /// The text.
    pub text: String,
    /// The tool calls (none ends the turn).
    pub tool_calls: Vec<ToolCall>,
    /// Output tokens, when the model reports them.
    pub output_tokens: Option<u64>,
}

/// The conversation model a host talks to.
#[async_trait]
pub trait HostModel: Send + Sync {
    /// The model's name, for the rollout's turn context.
    fn name(&self) -> String;

    /// The next reply to `request`.
    async fn respond(&self, request: &HostRequest) -> Result<ModelReply>;
}

/// Replays a script's replies in order, one per request; call ids are numbered so every call
/// is unique across the run.
#[derive(Debug)]
pub struct ScriptedModel {
    replies: Mutex<(VecDeque<Reply>, u64)>,
}

impl ScriptedModel {
    /// A model that answers with `replies`, in order.
    pub fn new(replies: Vec<Reply>) -> ScriptedModel {
        ScriptedModel {
            replies: Mutex::new((replies.into(), 0)),
        }
    }
}

#[async_trait]
impl HostModel for ScriptedModel {
    fn name(&self) -> String {
        "scripted".to_owned()
    }

    async fn respond(&self, _request: &HostRequest) -> Result<ModelReply> {
        let mut state = self
            .replies
            .lock()
            .map_err(|_| HostError::Model("the scripted model's state is poisoned".to_owned()))?;
        let (queue, calls) = &mut *state;
        let reply = queue
            .pop_front()
            .ok_or_else(|| HostError::Model("the script has no reply left".to_owned()))?;
        let tool_calls = reply
            .tool_calls
            .into_iter()
            .map(|call| {
                *calls += 1;
                ToolCall {
                    call_id: format!("call_{calls}"),
                    name: call.name,
                    arguments: call.arguments,
                }
            })
            .collect();
        Ok(ModelReply {
            output_tokens: Some(u64::try_from(reply.text.len() / 4).unwrap_or(u64::MAX)),
            text: reply.text,
            tool_calls,
        })
    }
}
