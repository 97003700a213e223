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

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::error::Error;

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

// ----- Reading -------------------------------------------------------------------------------

impl RolloutLine {
    /// Parses one line of a rollout file (any format version).
    pub fn parse(line: &str) -> Result<RolloutLine, Error> {
        let value: Value = serde_json::from_str(line).map_err(|e| Error::Json(e.to_string()))?;
        RolloutLine::from_value(value)
    }

    /// Converts one parsed line (any format version).
    pub fn from_value(value: Value) -> Result<RolloutLine, Error> {
        let Value::Object(mut map) = value else {
            return Err(Error::NotAnObject(json_kind(&value)));
        };
        let timestamp = match map.remove("timestamp") {
            Some(Value::String(ts)) => Some(ts),
            Some(other) => {
                // Not a line-level timestamp we understand: keep it with the item.
                map.insert("timestamp".to_owned(), other);
                None
            }
            None => None,
        };
        let ordinal = match map.get("ordinal").and_then(Value::as_u64) {
            Some(n) => {
                map.remove("ordinal");
                Some(n)
            }
            None => None,
        };
        let has_string_type = matches!(map.get("type"), Some(Value::String(_)));

        if has_string_type && map.contains_key("payload") {
            let metadata = map.remove("metadata");
            let item_type = take_string(&mut map, "type");
            let payload = map.remove("payload").unwrap_or(Value::Null);
            let item = RolloutItem::from_envelope(item_type, payload)?;
            return Ok(RolloutLine {
                timestamp,
                ordinal,
                metadata,
                item,
            });
        }
        if map.contains_key("record_type") {
            return Ok(RolloutLine {
                timestamp,
                ordinal,
                metadata: None,
                item: RolloutItem::StateRecord(map),
            });
        }
        if has_string_type {
            // Oldest format: a bare response item.
            let item = ResponseItem::from_map(map)?;
            return Ok(RolloutLine {
                timestamp,
                ordinal,
                metadata: None,
                item: RolloutItem::ResponseItem(item),
            });
        }
        if map.contains_key("id") || map.contains_key("instructions") {
            // Oldest format: the session header `{id, timestamp, instructions, git}`.
            if let Some(ts) = timestamp {
                map.insert("timestamp".to_owned(), Value::String(ts));
            }
            let meta =
                serde_json::from_value(Value::Object(map)).map_err(|e| Error::InvalidItem {
                    item_type: "session_meta".to_owned(),
                    message: e.to_string(),
                })?;
            return Ok(RolloutLine {
                timestamp: None,
                ordinal,
                metadata: None,
                item: RolloutItem::SessionMeta(meta),
            });
        }
        // No type at all (`{}` has been seen): keep it as an untyped line.
        Ok(RolloutLine {
            timestamp,
            ordinal,
            metadata: None,
            item: RolloutItem::Other(UnknownRolloutItem {
                item_type: String::new(),
                payload: Value::Object(map),
            }),
        })
    }
}

impl RolloutItem {
    /// The envelope `type` names this crate models.
    pub const KNOWN_TYPES: [&'static str; 5] = [
        "session_meta",
        "response_item",
        "compacted",
        "turn_context",
        "event_msg",
    ];

    fn from_envelope(item_type: String, payload: Value) -> Result<RolloutItem, Error> {
        let invalid = |e: serde_json::Error| Error::InvalidItem {
            item_type: item_type.clone(),
            message: e.to_string(),
        };
        Ok(match item_type.as_str() {
            "session_meta" => RolloutItem::SessionMeta(
                serde_json::from_value(null_to_object(payload)).map_err(invalid)?,
            ),
            "response_item" => RolloutItem::ResponseItem(ResponseItem::from_value(payload)?),
            "compacted" => RolloutItem::Compacted(
                serde_json::from_value(null_to_object(payload)).map_err(invalid)?,
            ),
            "turn_context" => RolloutItem::TurnContext(
                serde_json::from_value(null_to_object(payload)).map_err(invalid)?,
            ),
            "event_msg" => {
                let Value::Object(mut fields) = payload else {
                    return Err(Error::InvalidItem {
                        item_type,
                        message: format!(
                            "payload must be an object, found {}",
                            json_kind(&payload)
                        ),
                    });
                };
                let event_type = match fields.remove("type") {
                    Some(Value::String(t)) => t,
                    Some(other) => {
                        fields.insert("type".to_owned(), other);
                        String::new()
                    }
                    None => String::new(),
                };
                RolloutItem::EventMsg(EventMsg { event_type, fields })
            }
            _ => RolloutItem::Other(UnknownRolloutItem { item_type, payload }),
        })
    }

    /// The envelope `type` this item is written with (`record_type` lines answer `state`).
    pub fn item_type(&self) -> &str {
        match self {
            RolloutItem::SessionMeta(_) => "session_meta",
            RolloutItem::ResponseItem(_) => "response_item",
            RolloutItem::Compacted(_) => "compacted",
            RolloutItem::TurnContext(_) => "turn_context",
            RolloutItem::EventMsg(_) => "event_msg",
            RolloutItem::StateRecord(_) => "state",
            RolloutItem::Other(other) => &other.item_type,
        }
    }
}

impl ResponseItem {
    /// The item `type` names this crate models.
    pub const KNOWN_TYPES: [&'static str; 8] = [
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
    ];

    /// Converts a parsed item.
    pub fn from_value(value: Value) -> Result<ResponseItem, Error> {
        match value {
            Value::Object(map) => ResponseItem::from_map(map),
            other => Err(Error::InvalidItem {
                item_type: "response_item".to_owned(),
                message: format!("payload must be an object, found {}", json_kind(&other)),
            }),
        }
    }

    fn from_map(mut map: Map<String, Value>) -> Result<ResponseItem, Error> {
        let item_type = match map.get("type") {
            Some(Value::String(t)) => t.clone(),
            _ => {
                return Err(Error::InvalidItem {
                    item_type: "response_item".to_owned(),
                    message: "missing string field `type`".to_owned(),
                });
            }
        };
        fn typed<T: serde::de::DeserializeOwned>(
            item_type: &str,
            map: Map<String, Value>,
        ) -> Result<T, Error> {
            serde_json::from_value(Value::Object(map)).map_err(|e| Error::InvalidItem {
                item_type: item_type.to_owned(),
                message: e.to_string(),
            })
        }
        Ok(match item_type.as_str() {
            "message" => ResponseItem::Message(typed(&item_type, map)?),
            "reasoning" => ResponseItem::Reasoning(typed(&item_type, map)?),
            "function_call" => ResponseItem::FunctionCall(typed(&item_type, map)?),
            "function_call_output" => ResponseItem::FunctionCallOutput(typed(&item_type, map)?),
            "custom_tool_call" => ResponseItem::CustomToolCall(typed(&item_type, map)?),
            "custom_tool_call_output" => {
                ResponseItem::CustomToolCallOutput(typed(&item_type, map)?)
            }
            "local_shell_call" => ResponseItem::LocalShellCall(typed(&item_type, map)?),
            "web_search_call" => ResponseItem::WebSearchCall(typed(&item_type, map)?),
            _ => {
                map.remove("type");
                ResponseItem::Other(UnknownItem {
                    item_type,
                    fields: map,
                })
            }
        })
    }

    /// The item's `type`.
    pub fn item_type(&self) -> &str {
        match self {
            ResponseItem::Message(_) => "message",
            ResponseItem::Reasoning(_) => "reasoning",
            ResponseItem::FunctionCall(_) => "function_call",
            ResponseItem::FunctionCallOutput(_) => "function_call_output",
            ResponseItem::CustomToolCall(_) => "custom_tool_call",
            ResponseItem::CustomToolCallOutput(_) => "custom_tool_call_output",
            ResponseItem::LocalShellCall(_) => "local_shell_call",
            ResponseItem::WebSearchCall(_) => "web_search_call",
            ResponseItem::Other(other) => &other.item_type,
        }
    }
}

fn take_string(map: &mut Map<String, Value>, key: &str) -> String {
    match map.remove(key) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    }
}

fn null_to_object(value: Value) -> Value {
    match value {
        Value::Null => Value::Object(Map::new()),
        other => other,
    }
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

impl<'de> Deserialize<'de> for RolloutLine {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        RolloutLine::from_value(value).map_err(D::Error::custom)
    }
}

impl<'de> Deserialize<'de> for ResponseItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        ResponseItem::from_value(value).map_err(D::Error::custom)
    }
}

impl<'de> Deserialize<'de> for ContentItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct ImageFields {
            #[serde(default)]
            image_url: String,
            #[serde(default)]
            detail: Option<String>,
        }
        let value = Value::deserialize(deserializer)?;
        let Value::Object(mut map) = value else {
            return Err(D::Error::custom(format!(
                "content item must be an object, found {}",
                json_kind(&value)
            )));
        };
        let item_type = match map.get("type") {
            Some(Value::String(t)) => t.clone(),
            _ => {
                return Err(D::Error::custom(
                    "content item is missing string field `type`",
                ));
            }
        };
        let text = |map: &mut Map<String, Value>| match map.remove("text") {
            Some(Value::String(text)) => Ok(text),
            None => Ok(String::new()),
            Some(other) => Err(D::Error::custom(format!(
                "`{item_type}` text must be a string, found {}",
                json_kind(&other)
            ))),
        };
        Ok(match item_type.as_str() {
            "input_text" => ContentItem::InputText {
                text: text(&mut map)?,
            },
            "output_text" => ContentItem::OutputText {
                text: text(&mut map)?,
            },
            "input_image" => {
                let fields: ImageFields =
                    serde_json::from_value(Value::Object(map)).map_err(D::Error::custom)?;
                ContentItem::InputImage {
                    image_url: fields.image_url,
                    detail: fields.detail,
                }
            }
            _ => {
                map.remove("type");
                ContentItem::Other(UnknownItem {
                    item_type,
                    fields: map,
                })
            }
        })
    }
}

impl<'de> Deserialize<'de> for EventMsg {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match RolloutItem::from_envelope("event_msg".to_owned(), Value::deserialize(deserializer)?)
        {
            Ok(RolloutItem::EventMsg(event)) => Ok(event),
            Ok(_) => Err(D::Error::custom("not an event")),
            Err(e) => Err(D::Error::custom(e)),
        }
    }
}

// ----- Writing -------------------------------------------------------------------------------

impl Serialize for RolloutLine {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(ts) = &self.timestamp {
            map.serialize_entry("timestamp", ts)?;
        }
        if let Some(ordinal) = self.ordinal {
            map.serialize_entry("ordinal", &ordinal)?;
        }
        match &self.item {
            RolloutItem::StateRecord(fields) => {
                for (key, value) in fields {
                    map.serialize_entry(key, value)?;
                }
            }
            item => {
                map.serialize_entry("type", item.item_type())?;
                match item {
                    RolloutItem::SessionMeta(meta) => map.serialize_entry("payload", meta)?,
                    RolloutItem::ResponseItem(item) => map.serialize_entry("payload", item)?,
                    RolloutItem::Compacted(c) => map.serialize_entry("payload", c)?,
                    RolloutItem::TurnContext(t) => map.serialize_entry("payload", t)?,
                    RolloutItem::EventMsg(e) => map.serialize_entry("payload", e)?,
                    RolloutItem::Other(other) => map.serialize_entry("payload", &other.payload)?,
                    RolloutItem::StateRecord(_) => {}
                }
            }
        }
        if let Some(metadata) = &self.metadata {
            map.serialize_entry("metadata", metadata)?;
        }
        map.end()
    }
}

impl Serialize for EventMsg {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.fields.len() + 1))?;
        map.serialize_entry("type", &self.event_type)?;
        for (key, value) in &self.fields {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// Writes `{"type": tag, ...fields of value}`; `value` must serialize as a map.
struct Tagged<'a, T> {
    tag: &'a str,
    value: &'a T,
}

impl<T: Serialize> Serialize for Tagged<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wrapper<'a, T> {
            #[serde(rename = "type")]
            tag: &'a str,
            #[serde(flatten)]
            value: &'a T,
        }
        Wrapper {
            tag: self.tag,
            value: self.value,
        }
        .serialize(serializer)
    }
}

impl Serialize for ResponseItem {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let tag = self.item_type();
        match self {
            ResponseItem::Message(v) => Tagged { tag, value: v }.serialize(serializer),
            ResponseItem::Reasoning(v) => Tagged { tag, value: v }.serialize(serializer),
            ResponseItem::FunctionCall(v) => Tagged { tag, value: v }.serialize(serializer),
            ResponseItem::FunctionCallOutput(v) => Tagged { tag, value: v }.serialize(serializer),
            ResponseItem::CustomToolCall(v) => Tagged { tag, value: v }.serialize(serializer),
            ResponseItem::CustomToolCallOutput(v) => Tagged { tag, value: v }.serialize(serializer),
            ResponseItem::LocalShellCall(v) => Tagged { tag, value: v }.serialize(serializer),
            ResponseItem::WebSearchCall(v) => Tagged { tag, value: v }.serialize(serializer),
            ResponseItem::Other(other) => Tagged {
                tag,
                value: &other.fields,
            }
            .serialize(serializer),
        }
    }
}

impl Serialize for ContentItem {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentItem::InputText { text } | ContentItem::OutputText { text } => {
                let mut map = serializer.serialize_map(Some(2))?;
                let tag = if matches!(self, ContentItem::InputText { .. }) {
                    "input_text"
                } else {
                    "output_text"
                };
                map.serialize_entry("type", tag)?;
                map.serialize_entry("text", text)?;
                map.end()
            }
            ContentItem::InputImage { image_url, detail } => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("type", "input_image")?;
                map.serialize_entry("image_url", image_url)?;
                if let Some(detail) = detail {
                    map.serialize_entry("detail", detail)?;
                }
                map.end()
            }
            ContentItem::Other(other) => Tagged {
                tag: &other.item_type,
                value: &other.fields,
            }
            .serialize(serializer),
        }
    }
}

// ----- Schemas -------------------------------------------------------------------------------

/// `{"if": {type == tag}, "then": schema}` for one variant of a `type`-tagged union.
fn tagged_branch(tag_field: &str, tag: &str, then: Schema) -> Value {
    serde_json::json!({
        "if": {
            "properties": { tag_field: { "const": tag } },
            "required": [tag_field]
        },
        "then": then
    })
}

fn tag_property_then(field: &str, schema: Schema) -> Schema {
    json_schema!({ "properties": { field: schema } })
}

impl JsonSchema for RolloutLine {
    fn schema_name() -> Cow<'static, str> {
        "RolloutLine".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let branches = vec![
            tagged_branch(
                "type",
                "session_meta",
                tag_property_then("payload", generator.subschema_for::<SessionMeta>()),
            ),
            tagged_branch(
                "type",
                "response_item",
                tag_property_then("payload", generator.subschema_for::<ResponseItem>()),
            ),
            tagged_branch(
                "type",
                "compacted",
                tag_property_then("payload", generator.subschema_for::<Compacted>()),
            ),
            tagged_branch(
                "type",
                "turn_context",
                tag_property_then("payload", generator.subschema_for::<TurnContext>()),
            ),
            tagged_branch(
                "type",
                "event_msg",
                tag_property_then("payload", generator.subschema_for::<EventMsg>()),
            ),
        ];
        json_schema!({
            "description": "One line of a codex rollout file, as written (the envelope form). \
                Readers also accept the oldest format: a bare `{id, timestamp, instructions, git}` \
                header, bare response items, and `{\"record_type\": ...}` lines.",
            "type": "object",
            "properties": {
                "timestamp": { "type": "string", "description": "RFC 3339, 3 to 9 fractional digits" },
                "ordinal": { "type": "integer", "minimum": 0 },
                "type": { "type": "string" },
                "payload": true,
                "metadata": true
            },
            "anyOf": [
                { "required": ["type", "payload"] },
                { "required": ["record_type"] }
            ],
            "allOf": branches
        })
    }
}

impl JsonSchema for ResponseItem {
    fn schema_name() -> Cow<'static, str> {
        "ResponseItem".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let branches = vec![
            tagged_branch("type", "message", generator.subschema_for::<MessageItem>()),
            tagged_branch(
                "type",
                "reasoning",
                generator.subschema_for::<ReasoningItem>(),
            ),
            tagged_branch(
                "type",
                "function_call",
                generator.subschema_for::<FunctionCallItem>(),
            ),
            tagged_branch(
                "type",
                "function_call_output",
                generator.subschema_for::<FunctionCallOutputItem>(),
            ),
            tagged_branch(
                "type",
                "custom_tool_call",
                generator.subschema_for::<CustomToolCallItem>(),
            ),
            tagged_branch(
                "type",
                "custom_tool_call_output",
                generator.subschema_for::<CustomToolCallOutputItem>(),
            ),
            tagged_branch(
                "type",
                "local_shell_call",
                generator.subschema_for::<LocalShellCallItem>(),
            ),
            tagged_branch(
                "type",
                "web_search_call",
                generator.subschema_for::<WebSearchCallItem>(),
            ),
        ];
        json_schema!({
            "description": "A model input or output item, tagged by `type`. Types other than the \
                modelled ones are accepted and kept as JSON.",
            "type": "object",
            "required": ["type"],
            "properties": { "type": { "type": "string" } },
            "allOf": branches
        })
    }
}

impl JsonSchema for ContentItem {
    fn schema_name() -> Cow<'static, str> {
        "ContentItem".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        let text = json_schema!({ "properties": { "text": { "type": "string" } } });
        let image = json_schema!({
            "properties": {
                "image_url": { "type": "string" },
                "detail": { "type": "string" }
            }
        });
        json_schema!({
            "description": "A part of a message or tool output, tagged by `type`. Types other \
                than `input_text`, `output_text` and `input_image` are accepted and kept as JSON.",
            "type": "object",
            "required": ["type"],
            "properties": { "type": { "type": "string" } },
            "allOf": [
                tagged_branch("type", "input_text", text.clone()),
                tagged_branch("type", "output_text", text),
                tagged_branch("type", "input_image", image)
            ]
        })
    }
}

impl JsonSchema for EventMsg {
    fn schema_name() -> Cow<'static, str> {
        "EventMsg".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A UI or lifecycle event, tagged by its own `type`.",
            "type": "object",
            "properties": { "type": { "type": "string" } }
        })
    }
}
