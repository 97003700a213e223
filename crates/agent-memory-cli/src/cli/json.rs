//! The `--json` output shapes of the commands. They are the CLI's own types, built from the
//! library's reports, so the library stays free to change its reports and the CLI's output
//! stays stable.

use agent_memory::introspect::{RenderedBlock, RenderedRecall};
use agent_memory::protocol::introspect::{MemoryIndexState, MemorySnapshot, MemoryState};
use agent_memory::write::phase_two::PhaseTwoReport;
use agent_memory::write::runner::PhaseTwoPass;
use serde::Serialize;

/// What every `--json` command prints when it fails: `{"error": {code, message, action}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ErrorJson {
    pub(crate) error: ErrorBody,
}

/// The failure: a snake_case code (`failed`, `not_found`, `interrupted`, or a memory tool's
/// failure code such as `invalid_input`), what went wrong, and what the user can do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ErrorBody {
    pub(crate) code: String,
    pub(crate) message: String,
    pub(crate) action: Option<String>,
}

impl ErrorJson {
    pub(crate) fn new(code: &str, message: String, action: Option<String>) -> Self {
        ErrorJson {
            error: ErrorBody {
                code: code.to_owned(),
                message,
                action,
            },
        }
    }
}

/// `consolidate --json`: the pass, and why it did what it did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ConsolidateJson {
    #[serde(flatten)]
    pub(crate) pass: PhaseTwoPass,
    /// True when the inputs matched the last success and the model was not called.
    pub(crate) unchanged: bool,
    /// Stale stage-one outputs deleted.
    pub(crate) pruned: usize,
    /// Old `MEMORY.md` anchors the model dropped (the rewrite was rejected).
    pub(crate) guard_missing: Vec<String>,
    /// Old `MEMORY.md` anchors dropped because only removed threads supported them.
    pub(crate) forgotten_anchors: usize,
    /// How the selection changed since the last successful pass.
    pub(crate) changes: ChangesJson,
    /// The model that consolidated.
    pub(crate) model: String,
    /// The memory root written.
    pub(crate) memory_root: String,
}

/// Thread ids added, changed and removed since the last successful pass.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct ChangesJson {
    pub(crate) added: Vec<String>,
    pub(crate) changed: Vec<String>,
    pub(crate) removed: Vec<String>,
}

impl ConsolidateJson {
    pub(crate) fn new(report: &PhaseTwoReport, model: String, memory_root: String) -> Self {
        ConsolidateJson {
            pass: PhaseTwoPass::from(report),
            unchanged: report.unchanged,
            pruned: report.pruned,
            guard_missing: report.guard_missing.clone(),
            forgotten_anchors: report.forgotten,
            changes: ChangesJson {
                added: report.changes.added.clone(),
                changed: report.changes.changed.clone(),
                removed: report.changes.removed.clone(),
            },
            model,
            memory_root,
        }
    }
}

/// `block --json`: the text to inject, and where, with its state and size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct BlockJson {
    /// Exactly what to inject (empty when memory is disabled without a line).
    pub(crate) text: String,
    /// The state the text shows.
    pub(crate) state: MemoryState,
    /// Where it goes: `system`.
    pub(crate) placement: &'static str,
    /// Its o200k tokens.
    pub(crate) tokens: usize,
    /// SHA-256 of `text` (hex): the same until memory changes, a key for a host's prompt cache.
    pub(crate) content_hash: String,
    /// The numbers it shows (what `--record` records).
    pub(crate) snapshot: MemorySnapshot,
    /// The recall for `--query`, when asked.
    pub(crate) recall: Option<RecallJson>,
}

impl BlockJson {
    pub(crate) fn new(block: &RenderedBlock, recall: Option<RecallJson>) -> Self {
        BlockJson {
            text: block.text.clone(),
            state: block.state,
            placement: block.placement.as_str(),
            tokens: block.tokens,
            content_hash: block.content_hash.clone(),
            snapshot: block.snapshot.clone(),
            recall,
        }
    }
}

/// The `recall` object of `block --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct RecallJson {
    /// Exactly what to put before the user's message (empty when nothing was recalled).
    pub(crate) text: String,
    /// The state the search ran in.
    pub(crate) state: MemoryState,
    /// Where it goes: `user_message`.
    pub(crate) placement: &'static str,
    /// Its o200k tokens.
    pub(crate) tokens: usize,
    /// Passages recalled.
    pub(crate) hits: usize,
    /// The search index recall used.
    pub(crate) index: MemoryIndexState,
    /// Why nothing was recalled, or how the message was simplified.
    pub(crate) note: Option<String>,
}

impl From<&RenderedRecall> for RecallJson {
    fn from(recall: &RenderedRecall) -> Self {
        RecallJson {
            text: recall.text.clone(),
            state: recall.state,
            placement: recall.placement.as_str(),
            tokens: recall.tokens,
            hits: recall.hits,
            index: recall.index,
            note: recall.note.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phase2_object_has_exactly_its_six_keys() {
        let report = PhaseTwoReport {
            ran: true,
            selected: 2,
            files_written: 5,
            model_calls: 1,
            skipped: Some("cooling down".to_owned()),
            pruned: 3,
            ..PhaseTwoReport::default()
        };
        assert_eq!(
            serde_json::to_value(PhaseTwoPass::from(&report)).unwrap(),
            serde_json::json!({
                "ran": true, "selected": 2, "files_written": 5, "model_calls": 1,
                "pending": false, "skipped": "cooling down"
            })
        );
        let full = ConsolidateJson::new(&report, "offline".to_owned(), "/h/memories".to_owned());
        let value = serde_json::to_value(full).unwrap();
        assert_eq!(value["ran"], true);
        assert_eq!(value["pruned"], 3);
        assert_eq!(value["skipped"], "cooling down");
        assert_eq!(value["memory_root"], "/h/memories");
    }
}
