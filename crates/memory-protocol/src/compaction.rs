//! Compaction: the conversation model summarized when the context fills, and the entry that
//! records a compaction.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A conversation message, tagged by `role`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "role", rename_all = "snake_case", deny_unknown_fields)]
pub enum ConversationMessage {
    /// What the user said.
    User {
        /// The text.
        text: String,
    },
    /// What the assistant produced: text, thinking and tool calls, in order.
    Assistant {
        /// The blocks.
        content: Vec<AssistantBlock>,
    },
    /// A tool's result.
    ToolResult {
        /// Id of the call this answers.
        tool_call_id: String,
        /// Name of the tool.
        tool_name: String,
        /// The result text.
        text: String,
        /// True when the tool failed.
        is_error: bool,
    },
    /// A shell command the user ran directly, with its output.
    ShellExecution {
        /// The command line.
        command: String,
        /// Combined output.
        output: String,
        /// Exit code, when known.
        exit_code: Option<i32>,
    },
}

/// A block of an assistant message, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum AssistantBlock {
    /// Visible text.
    Text {
        /// The text.
        text: String,
    },
    /// Reasoning.
    Thinking {
        /// The reasoning text.
        thinking: String,
    },
    /// A tool call.
    ToolCall {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Arguments as JSON.
        arguments: serde_json::Value,
    },
}

/// A message with the id of the session entry it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConversationEntry {
    /// Entry id, unique within the session.
    pub id: String,
    /// The message.
    pub message: ConversationMessage,
}

/// The record of one compaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompactionEntry {
    /// The hand-off summary that replaces the summarized span.
    pub summary: String,
    /// Id of the first entry kept verbatim after the summary.
    pub first_kept_entry_id: String,
    /// Context size in tokens before compacting.
    pub tokens_before: u64,
    /// Files the summarized span read and modified.
    pub details: CompactionDetails,
}

/// Files tracked across compactions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompactionDetails {
    /// Files read and not modified, sorted.
    pub read_files: Vec<String>,
    /// Files written or edited, sorted.
    pub modified_files: Vec<String>,
}
