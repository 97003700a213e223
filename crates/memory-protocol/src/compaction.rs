//! Compaction: the conversation a host keeps as a session, the entry that records a compaction,
//! the plan a compaction reports, and what a summarizer request carries.
//!
//! A session is a sequence of [`SessionEntry`] values, one JSON object per line: messages
//! ([`ConversationEntry`]) and compaction entries ([`CompactionEntry`]), each with an id unique
//! within the session. The context a model sees after a compaction is the latest compaction's
//! summary, then its pinned message (if any), then every message from its first kept entry on,
//! compaction entries left out.

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
        /// True when the host marked the result as carrying nothing worth summarizing (a
        /// superseded read, an empty search). A useless result that is not an error is left out
        /// of summarizer input together with its call.
        #[serde(default)]
        useless: bool,
    },
    /// A shell command the user ran directly (not through the assistant), with its output.
    /// Serialized for a summarizer under its own `[Shell]` label.
    ShellExecution {
        /// The command line.
        command: String,
        /// Combined output.
        output: String,
        /// Exit code, when known.
        exit_code: Option<i32>,
    },
}

impl ConversationMessage {
    /// A user message of `text`.
    pub fn user(text: impl Into<String>) -> Self {
        ConversationMessage::User { text: text.into() }
    }

    /// An assistant message of visible `text` alone.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        ConversationMessage::Assistant {
            content: vec![AssistantBlock::Text { text: text.into() }],
        }
    }

    /// An assistant message holding one call of the tool `name` with `arguments`.
    pub fn tool_call(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: serde_json::Value,
    ) -> Self {
        ConversationMessage::Assistant {
            content: vec![AssistantBlock::ToolCall {
                id: id.into(),
                name: name.into(),
                arguments,
            }],
        }
    }

    /// The result of the call `tool_call_id` of the tool `tool_name`: `text`, an error when
    /// `is_error`, never marked useless.
    pub fn tool_result(
        tool_call_id: impl Into<String>,
        tool_name: impl Into<String>,
        text: impl Into<String>,
        is_error: bool,
    ) -> Self {
        ConversationMessage::ToolResult {
            tool_call_id: tool_call_id.into(),
            tool_name: tool_name.into(),
            text: text.into(),
            is_error,
            useless: false,
        }
    }

    /// True for a user message.
    pub fn is_user(&self) -> bool {
        matches!(self, ConversationMessage::User { .. })
    }
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

/// One line of a session file, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionEntry {
    /// A message.
    Message(ConversationEntry),
    /// A compaction.
    Compaction(CompactionEntry),
}

impl SessionEntry {
    /// The entry's id.
    pub fn id(&self) -> &str {
        match self {
            SessionEntry::Message(entry) => &entry.id,
            SessionEntry::Compaction(entry) => &entry.id,
        }
    }
}

/// The record of one compaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompactionEntry {
    /// Entry id, unique within the session.
    pub id: String,
    /// The hand-off summary that replaces the summarized messages, ending with the tracked
    /// files block.
    pub summary: String,
    /// Two or three sentences for display, when the engine wrote them.
    pub short_summary: Option<String>,
    /// Id of the first message entry kept verbatim after the summary; `None` when nothing
    /// before this entry was kept (codex's own compactions).
    pub first_kept_entry_id: Option<String>,
    /// Id of a user message before the first kept entry that is kept verbatim all the same:
    /// the latest user message, when the cut falls inside its turn.
    pub pinned_entry_id: Option<String>,
    /// Estimated context size in tokens before compacting.
    pub tokens_before: u64,
    /// Estimated context size in tokens right after compacting: the summary plus every kept
    /// message.
    pub tokens_after: u64,
    /// Messages this compaction summarized (not counting those summarized before).
    pub messages_summarized: u64,
    /// The engine that wrote the summary (`offline`, `openai:gpt-5-mini`, `codex`).
    pub engine: String,
    /// Files read and modified, bounded.
    pub details: CompactionDetails,
}

/// Files tracked across compactions, bounded so the lists cannot grow with every compaction.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompactionDetails {
    /// Files read and not modified, sorted.
    pub read_files: Vec<String>,
    /// Files written or edited, sorted.
    pub modified_files: Vec<String>,
    /// Files tracked at some point and no longer listed, counted when they were dropped.
    #[serde(default)]
    pub elided_files: u64,
}

/// What a compaction did, or would do (`--plan-only`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompactionPlan {
    /// Messages considered: those the previous compaction kept and those added since.
    pub messages_total: u64,
    /// Messages summarized (the history span and, for a split turn, the turn prefix).
    pub messages_summarized: u64,
    /// Messages kept verbatim (`messages_total - messages_summarized`).
    pub messages_kept: u64,
    /// Id of the first kept message entry.
    pub first_kept_entry_id: Option<String>,
    /// True when the cut falls inside a turn, whose beginning is summarized on its own.
    pub split_turn: bool,
    /// Summarizer windows planned: history windows plus turn-prefix windows.
    pub windows: u64,
    /// Estimated context size in tokens before compacting.
    pub tokens_before: u64,
    /// Estimated context size in tokens after compacting; `None` until a summary exists.
    pub tokens_after: Option<u64>,
    /// Useless tool results left out, each with its call.
    pub dropped_useless: u64,
    /// Tool results and shell outputs cut to the per-result limit.
    pub truncated_tool_results: u64,
    /// Secrets replaced in what was sent to the summarizer and in what came back.
    pub redactions: u64,
}

/// The structured input of every summarizer request (task kinds `compaction_summary`,
/// `compaction_update`, `turn_prefix_summary` and `short_summary`): the same data the prompt
/// was rendered from, already redacted, with useless results dropped and long results cut.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SummaryInput {
    /// The messages of this window, in order.
    pub messages: Vec<ConversationMessage>,
    /// The summary to update: the previous compaction's (without its files block) or the
    /// running summary of earlier windows; for a short summary, the new main summary.
    pub previous_summary: Option<String>,
    /// What the user asked the summary to focus on.
    pub focus: Option<String>,
    /// Additional context to take into account (notes from the host or the user).
    #[serde(default)]
    pub additional_context: Vec<String>,
    /// Cap on the summary's length in tokens.
    pub max_output_tokens: u32,
}

/// The headers of the summary formats, as the templates ask for them and as code looks for
/// them.
pub mod summary_sections {
    /// What the user is trying to achieve.
    pub const GOAL: &str = "## Goal";
    /// Requirements and preferences.
    pub const CONSTRAINTS: &str = "## Constraints & Preferences";
    /// Parent of Done, In Progress and Blocked.
    pub const PROGRESS: &str = "## Progress";
    /// Finished work (`- [x]` items).
    pub const DONE: &str = "### Done";
    /// Started, unfinished work (`- [ ]` items).
    pub const IN_PROGRESS: &str = "### In Progress";
    /// Stuck work.
    pub const BLOCKED: &str = "### Blocked";
    /// Decisions with their reasons.
    pub const KEY_DECISIONS: &str = "## Key Decisions";
    /// The next actions.
    pub const NEXT_STEPS: &str = "## Next Steps";
    /// Data the next model cannot do without, the pending question among it.
    pub const CRITICAL_CONTEXT: &str = "## Critical Context";
    /// Anything else.
    pub const ADDITIONAL_NOTES: &str = "## Additional Notes";

    /// The hand-off summary's headers, in order.
    pub const SUMMARY: [&str; 10] = [
        GOAL,
        CONSTRAINTS,
        PROGRESS,
        DONE,
        IN_PROGRESS,
        BLOCKED,
        KEY_DECISIONS,
        NEXT_STEPS,
        CRITICAL_CONTEXT,
        ADDITIONAL_NOTES,
    ];

    /// Turn prefix: the request that started the turn.
    pub const ORIGINAL_REQUEST: &str = "## Original Request";
    /// Turn prefix: what the summarized part of the turn did.
    pub const EARLY_PROGRESS: &str = "## Early Progress";
    /// Turn prefix: what the kept part of the turn depends on.
    pub const CONTEXT_FOR_SUFFIX: &str = "## Context for Suffix";

    /// The turn-prefix summary's headers, in order.
    pub const TURN_PREFIX: [&str; 3] = [ORIGINAL_REQUEST, EARLY_PROGRESS, CONTEXT_FOR_SUFFIX];

    /// Heads the turn-prefix summary inside a compaction summary of a split turn.
    pub const TURN_CONTEXT: &str = "## Turn Context (split turn)";

    /// Name of the tag around the tracked-files block appended to every compaction summary.
    pub const FILES_TAG: &str = "files";

    /// The Done item (without its `- [x] ` bullet) that stands for `count` earlier finished
    /// items folded away to keep a summary within its size cap.
    pub fn folded_done_item(count: usize) -> String {
        format!("({count} {FOLDED_DONE_SUFFIX}")
    }

    /// The count of a folded Done item (as [`folded_done_item`] writes it, bullet optional).
    pub fn folded_done_count(item: &str) -> Option<usize> {
        let item = item.trim_start();
        let item = item.strip_prefix("- [x] ").unwrap_or(item);
        let (number, tail) = item.strip_prefix('(')?.split_once(' ')?;
        if tail != FOLDED_DONE_SUFFIX {
            return None;
        }
        number.parse().ok()
    }

    const FOLDED_DONE_SUFFIX: &str = "earlier finished items folded to fit the size cap)";

    /// The items under `header` in a summary: each bullet (`- `, `* `) or numbered (`1. `)
    /// line with its indented continuation lines, up to the next header of the same or a
    /// higher level. Empty when the header is missing.
    pub fn section_items(text: &str, header: &str) -> Vec<String> {
        let lines: Vec<&str> = text.lines().collect();
        let Some(range) = section_range(&lines, header) else {
            return Vec::new();
        };
        let mut items: Vec<String> = Vec::new();
        for line in lines.get(range).unwrap_or_default() {
            if is_item_start(line) {
                items.push((*line).to_owned());
            } else if line.starts_with([' ', '\t'])
                && !line.trim().is_empty()
                && let Some(last) = items.last_mut()
            {
                last.push('\n');
                last.push_str(line);
            }
        }
        items
    }

    /// The line range (after the header line) of the section `header` in `lines`.
    pub fn section_range(lines: &[&str], header: &str) -> Option<std::ops::Range<usize>> {
        let level = header_level(header)?;
        let start = lines.iter().position(|line| line.trim_end() == header)? + 1;
        let end = lines
            .iter()
            .enumerate()
            .skip(start)
            .find(|(_, line)| header_level(line).is_some_and(|l| l <= level))
            .map_or(lines.len(), |(i, _)| i);
        Some(start..end)
    }

    /// The level of a Markdown ATX header line (`## X` is 2), or `None` for other lines.
    pub fn header_level(line: &str) -> Option<usize> {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        (hashes > 0 && line.chars().nth(hashes) == Some(' ')).then_some(hashes)
    }

    /// An item's text without its bullet (`- `, `* `), number (`1. `) or checkbox (`[x] `,
    /// `[ ] `).
    pub fn item_text(item: &str) -> &str {
        let mut text = item.trim_start();
        for prefix in ["- ", "* "] {
            if let Some(rest) = text.strip_prefix(prefix) {
                text = rest;
            }
        }
        if let Some((number, rest)) = text.split_once(". ")
            && !number.is_empty()
            && number.chars().all(|c| c.is_ascii_digit())
        {
            text = rest;
        }
        for checkbox in ["[x] ", "[X] ", "[ ] "] {
            if let Some(rest) = text.strip_prefix(checkbox) {
                text = rest;
            }
        }
        text
    }

    /// True for a line that starts an item: `- `, `* ` or `N. ` at the start of the line.
    pub fn is_item_start(line: &str) -> bool {
        line.starts_with("- ")
            || line.starts_with("* ")
            || line.split_once(". ").is_some_and(|(number, _)| {
                !number.is_empty() && number.chars().all(|c| c.is_ascii_digit())
            })
    }
}
