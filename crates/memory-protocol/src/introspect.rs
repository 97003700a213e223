//! Introspection: what memory the model has, and the memory tools' requests and results.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where memory stands, as the model is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemoryState {
    /// Turned off by the user's choice.
    Disabled,
    /// On, and nothing is recorded yet (normal for a new install).
    Empty,
    /// On, with memories available.
    Ready,
    /// On, but partly broken: some memory is available, some is not.
    Degraded,
    /// On, but unreadable this turn. Absence of memory says nothing about the past.
    Unavailable,
}

/// A structured failure of a memory tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryToolFailure {
    /// Memory is turned off.
    pub disabled: bool,
    /// Memory is on but could not be read.
    pub unavailable: bool,
    /// What went wrong.
    pub error: Option<String>,
    /// Something the caller should know that did not stop the call.
    pub warning: Option<String>,
    /// What the caller can do about it.
    pub action: Option<String>,
}

/// Kind of a memory-root entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemoryEntryType {
    /// A file.
    File,
    /// A directory.
    Directory,
}

/// `memory_list`: the immediate children of a folder of the memory root.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryListRequest {
    /// Folder relative to the memory root; the root when absent.
    #[serde(default)]
    pub path: Option<String>,
    /// Cursor from a previous result.
    #[serde(default)]
    pub cursor: Option<String>,
    /// At most this many entries.
    #[serde(default)]
    pub max_results: Option<u32>,
}

/// One listed entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryListEntry {
    /// Path relative to the memory root.
    pub path: String,
    /// File or directory.
    pub entry_type: MemoryEntryType,
}

/// Result of `memory_list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryListResult {
    /// The listed folder.
    pub path: String,
    /// Its entries, sorted by path.
    pub entries: Vec<MemoryListEntry>,
    /// Cursor for the next page.
    pub next_cursor: Option<String>,
    /// True when more entries exist.
    pub truncated: bool,
}

/// `memory_read`: lines of one memory file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryReadRequest {
    /// File relative to the memory root.
    pub path: String,
    /// First line to return, 1-based; 1 when absent.
    #[serde(default)]
    pub line_offset: Option<u32>,
    /// At most this many lines.
    #[serde(default)]
    pub max_lines: Option<u32>,
}

/// Result of `memory_read`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryReadResult {
    /// The file read.
    pub path: String,
    /// Line number of the first returned line, 1-based.
    pub start_line_number: u32,
    /// The text.
    pub content: String,
    /// True when the text was cut to the budget.
    pub truncated: bool,
}

/// How several queries must match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum MemorySearchMatchMode {
    /// Any query matches.
    Any,
    /// All queries match on one line.
    AllOnSameLine,
    /// All queries match within a window of lines.
    AllWithinLines {
        /// Window size in lines.
        line_count: u32,
    },
}

/// `memory_search`: find lines in the memory root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemorySearchRequest {
    /// What to look for (at least one, not blank).
    pub queries: Vec<String>,
    /// How queries combine; `any` when absent.
    #[serde(default)]
    pub match_mode: Option<MemorySearchMatchMode>,
    /// Folder or file to search, relative to the memory root.
    #[serde(default)]
    pub path: Option<String>,
    /// Cursor from a previous result.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Lines of context around each match.
    #[serde(default)]
    pub context_lines: Option<u32>,
    /// Case-sensitive matching (the default).
    #[serde(default)]
    pub case_sensitive: Option<bool>,
    /// Compare only letters and digits, ignoring separators.
    #[serde(default)]
    pub normalized: Option<bool>,
    /// At most this many matches.
    #[serde(default)]
    pub max_results: Option<u32>,
}

/// One search match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemorySearchMatch {
    /// File relative to the memory root.
    pub path: String,
    /// Line that matched, 1-based.
    pub match_line_number: u32,
    /// First line of `content`, 1-based.
    pub content_start_line_number: u32,
    /// The matching line with its context.
    pub content: String,
    /// The queries that matched.
    pub matched_queries: Vec<String>,
}

/// Result of `memory_search`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemorySearchResult {
    /// The queries searched.
    pub queries: Vec<String>,
    /// Matches sorted by path, then line.
    pub matches: Vec<MemorySearchMatch>,
    /// Cursor for the next page.
    pub next_cursor: Option<String>,
    /// True when more matches exist.
    pub truncated: bool,
}

/// `memory_status`: takes no arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryStatusRequest {}

/// Result of `memory_status`: live, checkable numbers about memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryStatusResult {
    /// Where memory stands.
    pub state: MemoryState,
    /// The memory root, when the host allows showing it.
    pub root: Option<String>,
    /// Files in the memory root.
    pub files: u32,
    /// Tokens of the always-on summary.
    pub summary_tokens: u64,
    /// Token budget of the always-on summary.
    pub summary_budget_tokens: u64,
    /// Stored stage-one outputs.
    pub stage_one_outputs: u64,
    /// When memory was last consolidated (Unix seconds).
    pub last_consolidated_at: Option<i64>,
    /// What is wrong, in the degraded and unavailable states.
    pub problem: Option<String>,
}
