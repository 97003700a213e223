//! Phase 2 (consolidation) of the write path: stage-one outputs become the memory files.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::stage_one::StageOneOutputRecord;

/// The structured input of a consolidation request ([`crate::TaskKind::Consolidation`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConsolidationInput {
    /// The current `MEMORY.md` (empty on the first pass).
    pub memory_md: String,
    /// The current `memory_summary.md` (empty on the first pass).
    pub memory_summary_md: String,
    /// The selected stage-one outputs, sorted by thread id.
    pub selected: Vec<StageOneOutputRecord>,
    /// What changed in the selection since the last successful pass.
    #[serde(default)]
    pub changes: SelectionChanges,
    /// The file each selected thread's rollout summary is in, relative to the memory root
    /// (`rollout_summaries/<stem>.md`), by thread id.
    #[serde(default)]
    pub rollout_summary_files: std::collections::BTreeMap<String, String>,
    /// Token budget of `memory_summary.md`.
    pub summary_token_budget: u64,
    /// Notes agents added with `memory_note` (`notes/`), sorted by path. Every pass sees all
    /// of them, so a note stays in memory until the user removes its file.
    #[serde(default)]
    pub notes: Vec<ConsolidationNote>,
}

/// One note of `notes/`, as phase 2 reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConsolidationNote {
    /// The note's path relative to the memory root (`notes/<name>.md`).
    pub path: String,
    /// The note file's text.
    pub text: String,
}

impl ConsolidationNote {
    /// The note without the title and header lines `memory_note` writes above it.
    pub fn body(&self) -> &str {
        note_body(&self.text)
    }
}

/// First line of every note `memory_note` writes; its header lines follow, then a blank line,
/// then the note.
pub const NOTE_TITLE: &str = "# Agent note";

/// A note file's text without the title and header lines `memory_note` writes; a note written
/// by hand is returned whole (trimmed).
pub fn note_body(text: &str) -> &str {
    match text.strip_prefix(NOTE_TITLE) {
        Some(rest) => rest
            .split_once("\n\n")
            .map_or(rest, |(_, body)| body)
            .trim(),
        None => text.trim(),
    }
}

/// How the selection differs from what the last successful pass consolidated, by thread id,
/// each list sorted. A first pass lists every selected thread as added.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectionChanges {
    /// Threads selected now and not consolidated before.
    pub added: Vec<String>,
    /// Threads consolidated before whose memory was extracted again since.
    pub changed: Vec<String>,
    /// Threads consolidated before and no longer selected (forgotten, pruned, unused for too
    /// long, or their session used external context). What only they supported goes.
    pub removed: Vec<String>,
}

impl SelectionChanges {
    /// True when the selection is exactly what was consolidated last time.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }
}

/// What the model returns for a consolidation. Strict: unknown fields are rejected.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConsolidationOutput {
    /// The new `MEMORY.md`.
    pub memory_md: String,
    /// The new `memory_summary.md`, starting with the version line.
    pub memory_summary_md: String,
    /// Anchors of the old `MEMORY.md` (paths, commands, dates, names) the model dropped on
    /// purpose because they are obsolete. Any other old anchor must survive.
    pub obsolete: Vec<String>,
}

impl ConsolidationOutput {
    /// The JSON Schema sent to the model as its strict output format.
    pub fn output_schema() -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "memory_md": { "type": "string" },
                "memory_summary_md": { "type": "string" },
                "obsolete": { "type": "array", "items": { "type": "string" } }
            },
            "required": ["memory_md", "memory_summary_md", "obsolete"],
            "additionalProperties": false
        })
    }
}
