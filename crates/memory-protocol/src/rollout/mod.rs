//! Rollout files: the session transcripts codex writes, one JSON object per line.
//!
//! Current files wrap every item in an envelope, `{"timestamp", "ordinal"?, "type", "payload",
//! "metadata"?}`. The oldest files (before about September 2025) start with a bare header
//! `{id, timestamp, instructions, git}`, followed by response items without an envelope and by
//! `{"record_type": "state"}` lines. [`RolloutLine`] reads every one of these shapes and always
//! writes the envelope form.
//!
//! Reading is tolerant by design: unknown line types and unknown item types are kept as raw JSON
//! in the catch-all variants ([`RolloutItem::Other`], [`ResponseItem::Other`],
//! [`ContentItem::Other`]), unknown fields are ignored (or kept, for [`SessionMeta`]), and fields
//! that some codex versions omit are optional. Only a line that is not a JSON object, or a known
//! item whose fields have the wrong JSON types, is an error.

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod read;
mod schema;
mod write;

/// One line of a rollout file.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutLine {
    /// When the line was written, as codex wrote it (RFC 3339, 3 to 9 fractional digits).
    /// Absent on the oldest format's bare items.
    pub timestamp: Option<String>,
    /// Position of the line in its thread, written by some codex versions.
    pub ordinal: Option<u64>,
    /// Harness metadata written beside the payload by some codex versions, kept as is.
    pub metadata: Option<Value>,
    /// What the line carries.
    pub item: RolloutItem,
}

/// What a rollout line carries, tagged by the envelope's `type`.
#[derive(Debug, Clone, PartialEq)]
pub enum RolloutItem {
    /// `session_meta`: who, where and how the session ran.
    SessionMeta(SessionMeta),
    /// `response_item`: a model input or output item.
    ResponseItem(ResponseItem),
    /// `compacted`: a compaction summary that replaced earlier history.
    Compacted(Compacted),
    /// `turn_context`: the settings a turn ran with.
    TurnContext(TurnContext),
    /// `event_msg`: a UI or lifecycle event.
    EventMsg(EventMsg),
    /// A `{"record_type": ...}` line of the oldest format (all fields but `timestamp` and
    /// `ordinal`, `record_type` included).
    StateRecord(Map<String, Value>),
    /// Any other line type (`world_state`, `token_usage_record`, `inter_agent_communication`,
    /// types nobody has seen yet), kept as raw JSON.
    Other(UnknownRolloutItem),
}

/// A rollout line of a type this crate does not model. Its `item_type` is never one of the
/// modelled types (`session_meta`, `response_item`, `compacted`, `turn_context`, `event_msg`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UnknownRolloutItem {
    /// The envelope's `type`.
    pub item_type: String,
    /// The envelope's `payload` (`null` when the line had none).
    pub payload: Value,
}

/// The `session_meta` payload. Every field is optional because codex versions differ; fields
/// this crate does not name are kept in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionMeta {
    /// Thread id (all versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Session id (newer versions; older files have only `id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// When the session started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// Working directory the session started in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The client that wrote the file, such as `codex_cli_rs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub originator: Option<String>,
    /// Version of the client that wrote the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli_version: Option<String>,
    /// Where the session came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SessionSource>,
    /// Model provider id, such as `openai`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_provider: Option<String>,
    /// Instructions of the oldest format, a plain string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Base instructions: a string, or `{"text": ...}` in newer versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_instructions: Option<BaseInstructions>,
    /// Git state when the session started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitInfo>,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

impl SessionMeta {
    /// The thread id: `id`, else `session_id`.
    pub fn thread_id(&self) -> Option<&str> {
        self.id.as_deref().or(self.session_id.as_deref())
    }
}

/// `session_meta.source`: a lowercase name (`cli`, `vscode`, `exec`, `mcp`, or a custom string)
/// or a structured source such as `{"subagent": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SessionSource {
    /// A named source.
    Named(String),
    /// A structured source, kept as JSON.
    Structured(Map<String, Value>),
}

impl SessionSource {
    /// Sources of sessions a person drove interactively, the only ones codex extracts memories
    /// from.
    pub const INTERACTIVE: [&'static str; 4] = ["cli", "vscode", "atlas", "chatgpt"];

    /// The source's name: the string, or the single key of a structured source.
    pub fn name(&self) -> Option<&str> {
        match self {
            SessionSource::Named(name) => Some(name),
            SessionSource::Structured(map) => map.keys().next().map(String::as_str),
        }
    }

    /// True for a sub-agent session (`{"subagent": ...}`, or a named `subagent`).
    pub fn is_subagent(&self) -> bool {
        self.name()
            .is_some_and(|n| n.eq_ignore_ascii_case("subagent"))
    }

    /// True for a session a person drove interactively ([`Self::INTERACTIVE`]).
    pub fn is_interactive(&self) -> bool {
        match self {
            SessionSource::Named(name) => Self::INTERACTIVE
                .iter()
                .any(|known| name.eq_ignore_ascii_case(known)),
            SessionSource::Structured(_) => false,
        }
    }
}

/// `session_meta.base_instructions`: a plain string or `{"text": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum BaseInstructions {
    /// The plain string form.
    Text(String),
    /// The object form.
    Object {
        /// The instructions.
        text: String,
    },
}

/// Git state recorded with a session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GitInfo {
    /// Commit hash of `HEAD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_hash: Option<String>,
    /// Checked-out branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Remote URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_url: Option<String>,
}

/// The `compacted` payload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Compacted {
    /// The summary that replaced earlier history.
    #[serde(default)]
    pub message: String,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// The `turn_context` payload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TurnContext {
    /// Working directory of the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Model the turn ran with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// The `event_msg` payload: an event tagged by its own `type`, kept as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct EventMsg {
    /// The event's `type`, such as `user_message` or `token_count` (empty when missing).
    pub event_type: String,
    /// The event's other fields.
    pub fields: Map<String, Value>,
}

/// A model input or output item (`response_item` payloads), tagged by `type`.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseItem {
    /// `message`: a user, assistant, developer or system message.
    Message(MessageItem),
    /// `reasoning`: the model's reasoning summary and encrypted content.
    Reasoning(ReasoningItem),
    /// `function_call`: a tool call with JSON arguments.
    FunctionCall(FunctionCallItem),
    /// `function_call_output`: a tool result.
    FunctionCallOutput(FunctionCallOutputItem),
    /// `custom_tool_call`: a free-form tool call (such as `apply_patch`).
    CustomToolCall(CustomToolCallItem),
    /// `custom_tool_call_output`: the result of a custom tool call.
    CustomToolCallOutput(CustomToolCallOutputItem),
    /// `local_shell_call`: a shell command the model ran.
    LocalShellCall(LocalShellCallItem),
    /// `web_search_call`: a web search.
    WebSearchCall(WebSearchCallItem),
    /// Any other item type (`agent_message`, `ghost_snapshot`, `tool_search_call`,
    /// `tool_search_output`, `image_generation_call`, types nobody has seen yet), kept as JSON.
    Other(UnknownItem),
}

/// An item of a type this crate does not model. Its `item_type` is never one of the modelled
/// types of the enum it sits in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UnknownItem {
    /// The item's `type`.
    pub item_type: String,
    /// The item's other fields.
    pub fields: Map<String, Value>,
}

/// `message` item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MessageItem {
    /// Item id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `user`, `assistant`, `developer` or `system`.
    pub role: String,
    /// The message's parts (possibly none).
    #[serde(default)]
    pub content: Vec<ContentItem>,
    /// `commentary` or `final_answer` on assistant messages of newer versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

/// `reasoning` item.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReasoningItem {
    /// Item id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Summary parts (possibly none).
    #[serde(default)]
    pub summary: Vec<ReasoningText>,
    /// Raw reasoning parts, when the provider returns them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ReasoningText>>,
    /// Opaque encrypted reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_content: Option<String>,
}

/// A reasoning text part: `{"type": "summary_text" | "reasoning_text" | "text", "text"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReasoningText {
    /// The part's `type`.
    #[serde(rename = "type")]
    pub text_type: String,
    /// The text.
    #[serde(default)]
    pub text: String,
}

/// `function_call` item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FunctionCallItem {
    /// Item id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Tool name, such as `exec_command` or `shell`.
    pub name: String,
    /// Tool namespace, when the tool has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Arguments, a JSON document encoded as a string.
    #[serde(default)]
    pub arguments: String,
    /// Id pairing the call with its output.
    #[serde(default)]
    pub call_id: String,
}

/// `function_call_output` item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FunctionCallOutputItem {
    /// Item id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Id of the call this answers.
    #[serde(default)]
    pub call_id: String,
    /// The tool's output.
    pub output: ToolOutput,
}

/// A tool output: a string, an array of content parts, or an object (older versions wrote
/// `{"content": ..., "success": ...}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ToolOutput {
    /// Plain text.
    Text(String),
    /// Content parts.
    Parts(Vec<ContentItem>),
    /// An object, kept as JSON.
    Object(Map<String, Value>),
}

impl ToolOutput {
    /// The output's text: the string, the text parts joined by newlines, or an object's
    /// `content` string (else its JSON).
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            ToolOutput::Text(text) => Cow::Borrowed(text),
            ToolOutput::Parts(parts) => {
                let texts: Vec<&str> = parts.iter().filter_map(ContentItem::text).collect();
                Cow::Owned(texts.join("\n"))
            }
            ToolOutput::Object(map) => match map.get("content") {
                Some(Value::String(text)) => Cow::Borrowed(text),
                _ => Cow::Owned(Value::Object(map.clone()).to_string()),
            },
        }
    }
}

/// `custom_tool_call` item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CustomToolCallItem {
    /// Item id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Call status, such as `completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Id pairing the call with its output.
    #[serde(default)]
    pub call_id: String,
    /// Tool name, such as `apply_patch`.
    pub name: String,
    /// Tool namespace, when the tool has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The free-form input.
    #[serde(default)]
    pub input: String,
}

/// `custom_tool_call_output` item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CustomToolCallOutputItem {
    /// Item id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Id of the call this answers.
    #[serde(default)]
    pub call_id: String,
    /// Tool name, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The tool's output.
    pub output: ToolOutput,
}

/// `local_shell_call` item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LocalShellCallItem {
    /// Item id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Id pairing the call with its output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// `completed`, `in_progress` or `incomplete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// What to run.
    pub action: LocalShellAction,
}

/// The action of a `local_shell_call`: `{"type": "exec", "command": [...], ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LocalShellAction {
    /// The action's `type`, `exec` in every known version.
    #[serde(rename = "type", default = "exec_action_type")]
    pub action_type: String,
    /// Program and arguments.
    #[serde(default)]
    pub command: Vec<String>,
    /// Timeout in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Directory to run in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_directory: Option<String>,
    /// Extra environment variables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    /// User to run as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

fn exec_action_type() -> String {
    "exec".to_owned()
}

/// `web_search_call` item.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WebSearchCallItem {
    /// Item id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Call status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// What was searched or opened (`search`, `open_page`, `find_in_page`), kept as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Value>,
}

/// A part of a message or tool output, tagged by `type`.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentItem {
    /// `input_text`: text the model received.
    InputText {
        /// The text.
        text: String,
    },
    /// `output_text`: text the model produced.
    OutputText {
        /// The text.
        text: String,
    },
    /// `input_image`: an image the model received.
    InputImage {
        /// Image URL or `data:` URL.
        image_url: String,
        /// Detail level, when given.
        detail: Option<String>,
    },
    /// Any other part type (`input_audio`, types nobody has seen yet), kept as JSON.
    Other(UnknownItem),
}

impl ContentItem {
    /// The text of a text part.
    pub fn text(&self) -> Option<&str> {
        match self {
            ContentItem::InputText { text } | ContentItem::OutputText { text } => Some(text),
            ContentItem::InputImage { .. } | ContentItem::Other(_) => None,
        }
    }
}
