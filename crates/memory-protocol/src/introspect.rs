//! Introspection: what memory the model has, and the memory tools' requests, results and
//! failures.
//!
//! Every memory tool answers with its result or a [`MemoryToolFailure`]; over MCP the failure
//! is the `structuredContent` of a result with `isError: true`, so each tool's output schema
//! ([`crate::tools::all_tools`]) admits both.

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

impl MemoryState {
    /// The state's wire name (`"disabled"`, `"empty"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryState::Disabled => "disabled",
            MemoryState::Empty => "empty",
            MemoryState::Ready => "ready",
            MemoryState::Degraded => "degraded",
            MemoryState::Unavailable => "unavailable",
        }
    }
}

/// Whether the model may add to memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemoryMode {
    /// The model reads memory; only the background write path changes it.
    ReadOnly,
    /// The model may also add notes with `memory_note`.
    Writable,
}

/// How far one memory reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemoryScope {
    /// Shared by every project on this machine.
    Global,
    /// Kept for one project on this machine.
    Project,
}

/// State of the memory search index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemoryIndexState {
    /// Matches the files of the memory root.
    Fresh,
    /// Behind the files and could not be updated; searches read the files directly.
    Stale,
    /// Does not exist and could not be created; searches read the files directly.
    Missing,
    /// Exists but cannot be opened; searches read the files directly.
    Unavailable,
}

impl MemoryIndexState {
    /// The state's wire name (`"fresh"`, `"stale"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryIndexState::Fresh => "fresh",
            MemoryIndexState::Stale => "stale",
            MemoryIndexState::Missing => "missing",
            MemoryIndexState::Unavailable => "unavailable",
        }
    }
}

/// What kind of failure a memory tool reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemoryFailureCode {
    /// Memory is turned off by the user's choice.
    Disabled,
    /// Memory is on but could not be read.
    Unavailable,
    /// The named file, folder or heading does not exist (not the same as empty).
    NotFound,
    /// The arguments are invalid (blank query, bad range, unknown field).
    InvalidInput,
    /// The path leaves the memory root (absolute, `..`, percent-encoded or a symlink).
    PathRefused,
    /// Memory is read-only in this configuration.
    ReadOnly,
    /// A size or daily budget would be exceeded.
    BudgetExceeded,
    /// A note would be replaced or deleted without the version the caller read, or it changed
    /// since that version was read.
    Conflict,
    /// Anything else (an I/O error while writing).
    Failed,
}

/// A structured failure of a memory tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryToolFailure {
    /// What kind of failure.
    pub code: MemoryFailureCode,
    /// Memory is turned off.
    pub disabled: bool,
    /// Memory is on but could not be read.
    pub unavailable: bool,
    /// What went wrong.
    pub error: Option<String>,
    /// Something the caller should know, such as what to tell the user.
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
    /// A symbolic link; never followed.
    Symlink,
}

/// `memory_status`: takes no arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryStatusRequest {}

/// How full the always-on summary is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemorySummaryUse {
    /// Tokens of the summary (o200k), without its version line.
    pub tokens: u64,
    /// The summary's token budget.
    pub budget_tokens: u64,
    /// `tokens * 100 / budget_tokens`, rounded down (above 100 when over budget).
    pub percent: u64,
}

/// The search index, as `memory_status` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryIndexStatus {
    /// Where the index stands.
    pub state: MemoryIndexState,
    /// Files indexed.
    pub files: u32,
    /// Blocks (paragraphs) indexed.
    pub blocks: u64,
    /// Files re-indexed by this check because they changed.
    pub reindexed_files: u32,
    /// What is wrong with the index, when something is.
    pub problem: Option<String>,
}

/// Notes added with `memory_note`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryNotesStatus {
    /// Note files in `notes/`.
    pub files: u32,
    /// Notes newer than the summary: not yet consolidated, shown in the block.
    pub pending: u32,
    /// Notes this machine added today (UTC); on a shared store, notes that came from other
    /// machines do not count.
    pub today: u32,
    /// Most notes a day.
    pub daily_limit: u32,
    /// Most bytes of one note.
    pub max_note_bytes: u32,
}

/// The numbers of one rendered memory block, taken when it was rendered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemorySnapshot {
    /// When the numbers were taken (Unix seconds).
    pub as_of: i64,
    /// The state shown.
    pub state: MemoryState,
    /// Summary use shown, when there was a summary.
    pub summary: Option<MemorySummaryUse>,
    /// Files in the memory root.
    pub files: u32,
    /// The memory root's revision.
    pub revision: String,
}

/// Result of `memory_status`: live, checkable numbers about memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryStatusResult {
    /// Where memory stands.
    pub state: MemoryState,
    /// Whether the model may add notes.
    pub mode: MemoryMode,
    /// How far this memory reaches.
    pub scope: MemoryScope,
    /// The memory root (absolute path, or the configured alias).
    pub root: String,
    /// When these numbers were taken (Unix seconds).
    pub as_of: i64,
    /// Files in the memory root (symlinks and hidden files not counted).
    pub files: u32,
    /// Bytes of those files.
    pub bytes: u64,
    /// Changes whenever a file of the memory root changes.
    pub revision: String,
    /// Newest modification time of a memory file (Unix seconds).
    pub last_write_at: Option<i64>,
    /// Budget use of the always-on summary, when it could be read.
    pub summary: Option<MemorySummaryUse>,
    /// The search index.
    pub index: MemoryIndexStatus,
    /// Notes added with `memory_note`.
    pub notes: MemoryNotesStatus,
    /// The numbers of the last memory block injected, when one was recorded.
    pub last_injected: Option<MemorySnapshot>,
    /// What is wrong, in the degraded and unavailable states.
    pub problem: Option<String>,
}

/// `memory_list`: the tree under a folder of the memory root.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryListRequest {
    /// Folder relative to the memory root; the root when absent.
    #[serde(default)]
    pub path: Option<String>,
    /// Levels to descend, 1 to 6; 2 when absent.
    #[serde(default)]
    #[schemars(range(min = 1, max = 6))]
    pub depth: Option<u32>,
}

/// One listed entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryListEntry {
    /// Path relative to the memory root.
    pub path: String,
    /// File, directory or symlink.
    pub entry_type: MemoryEntryType,
    /// Size in bytes (for a directory, of the files listed under it).
    pub bytes: u64,
    /// Level below the listed folder, 1 for its children.
    pub depth: u32,
}

/// Result of `memory_list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryListResult {
    /// The listed folder, relative to the root (`""` for the root).
    pub path: String,
    /// Levels descended.
    pub depth: u32,
    /// Entries in tree order (sorted by path).
    pub entries: Vec<MemoryListEntry>,
    /// True when more entries exist than were listed.
    pub truncated: bool,
    /// Folders below that could not be listed, when there were any.
    pub warning: Option<String>,
}

/// `memory_read`: one memory file, a line range of it, or one section under a heading.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryReadRequest {
    /// File relative to the memory root.
    pub path: String,
    /// First line to return, 1-based; 1 when absent.
    #[serde(default)]
    pub start_line: Option<u32>,
    /// Last line to return, inclusive; the end of the file when absent.
    #[serde(default)]
    pub end_line: Option<u32>,
    /// Return only the section under this Markdown heading (not with a line range).
    #[serde(default)]
    pub heading: Option<String>,
}

/// Result of `memory_read`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryReadResult {
    /// The file read.
    pub path: String,
    /// The heading of the returned section, when one was asked for.
    pub heading: Option<String>,
    /// Line number of the first returned line, 1-based.
    pub start_line: u32,
    /// Line number of the last returned line (`start_line - 1` when nothing was returned).
    pub end_line: u32,
    /// Lines in the whole file.
    pub total_lines: u32,
    /// The text.
    pub content: String,
    /// True when the text was cut to the read budget; continue from `end_line + 1`.
    pub truncated: bool,
    /// The whole file's version (a hash of its bytes): `memory_note` asks for it to replace
    /// or delete a note, and refuses when the note changed since.
    pub version: String,
    /// When `heading` matched more than one heading of the file: the other sections, in file
    /// order (this result is the first); read one by its `start_line` and `end_line`. Empty
    /// otherwise.
    #[serde(default)]
    pub other_sections: Vec<MemoryLineRange>,
}

/// Lines `start_line..=end_line` (1-based) of a memory file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryLineRange {
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
}

/// `memory_search`: full-text search of the memory root.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemorySearchRequest {
    /// Words to find; blocks holding all of them come first, then blocks holding some.
    /// `"double quotes"` for an exact phrase. Common words are left out when there are others.
    pub query: String,
    /// Folder or file to search, relative to the memory root; everything when absent.
    #[serde(default)]
    pub path: Option<String>,
    /// At most this many hits, 1 to 50; 10 when absent.
    #[serde(default)]
    pub max_results: Option<u32>,
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemorySearchHit {
    /// File relative to the memory root.
    pub path: String,
    /// Line of the first match, 1-based.
    pub line: u32,
    /// Relevance (BM25, higher is better).
    pub score: f64,
    /// The Markdown heading the hit sits under, when there is one.
    pub heading: Option<String>,
    /// The matching line, cut around the match.
    pub snippet: String,
    /// True when the block holds every term of the query; hits holding only some come after
    /// all that hold every term.
    pub all_terms: bool,
    /// Other places (`path:line`) whose matching line says the same as this one's (the same
    /// sentence kept in the handbook, the raw memories and a session summary), merged into
    /// this hit; empty when there are none.
    #[serde(default)]
    pub also_in: Vec<String>,
}

/// Result of `memory_search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemorySearchResult {
    /// The query searched.
    pub query: String,
    /// Hits, best first.
    pub hits: Vec<MemorySearchHit>,
    /// True when more hits exist than were returned.
    pub truncated: bool,
    /// The memory state the search ran in (`empty` means nothing is recorded yet).
    pub state: MemoryState,
    /// The index the search used (anything but `fresh` means the files were read directly).
    pub index: MemoryIndexState,
    /// What the caller should know about these results, such as files that could not be read.
    pub warning: Option<String>,
}

/// `memory_note`: add a note to memory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryNoteRequest {
    /// The note: one durable fact, preference or decision, in plain words (not needed to
    /// delete).
    #[serde(default, deserialize_with = "null_as_default")]
    pub text: String,
    /// A few words naming what the note is about.
    #[serde(default)]
    pub topic: Option<String>,
    /// The note to replace or delete (`notes/<name>.md`, as memory_list or memory_search shows
    /// it); absent adds a new note.
    #[serde(default)]
    pub id: Option<String>,
    /// With `id`: the `version` memory_read returned for that note. Refused without it, or
    /// when the note changed since.
    #[serde(default)]
    pub version: Option<String>,
    /// With `id`: delete the note instead of replacing it.
    #[serde(default, deserialize_with = "null_as_default")]
    pub delete: bool,
}

/// A field whose `null` (as strict function calling sends for an argument left out) means its
/// default.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Option::unwrap_or_default)
}

/// Result of `memory_note`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryNoteResult {
    /// The note's file, relative to the memory root.
    pub path: String,
    /// Bytes written.
    pub bytes: u32,
    /// True when secrets were replaced before writing.
    pub redacted: bool,
    /// True when the note is already in the search index.
    pub indexed: bool,
    /// Notes this machine added today (UTC), this one included.
    pub notes_today: u32,
    /// Most notes a day.
    pub daily_limit: u32,
    /// Something the caller should know, such as an index that could not be updated.
    pub warning: Option<String>,
    /// The note's version as written (what a later replace or delete names); absent when it
    /// was deleted.
    pub version: Option<String>,
    /// True when the note was deleted.
    pub deleted: bool,
}
