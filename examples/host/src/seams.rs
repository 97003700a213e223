//! The seam invariants: what users lose between the crates, checked by the host itself on
//! every request it sends (and on every compaction and rollout it writes).
//!
//! Each [`Seam`] names the user reports it answers. A broken invariant is a [`Violation`]; the
//! run goes on and counts it, so one run shows every seam that broke.

use std::collections::HashSet;

use memory_protocol::compaction::CompactionDetails;

use crate::model::{HostMessage, HostRequest};

/// One invariant at a seam between the crates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Seam {
    /// After a compaction, every request holds the active goal's objective and its remaining
    /// budget (codex #29811, #19910, #31659: the goal's hidden context dropped by compaction).
    GoalAfterCompaction,
    /// Every request holds the pinned instruction files (claude-code #4017, #5731, #24572:
    /// `CLAUDE.md` / `AGENTS.md` lost after compaction).
    PinnedInstructions,
    /// No tool result without its call and no call without its result, in any request
    /// (pi #4570: an orphan result after chained compactions failed every later request).
    ToolPairing,
    /// Every request fits the model's window (codex #40619).
    FitsWindow,
    /// A compaction never leaves the context larger than it found it (codex #40619).
    CompactionShrinks,
    /// The modified-files list a compaction carries only grows within a session.
    ModifiedFilesGrow,
    /// No request in one project holds another project's private facts (codex #17496).
    ProjectIsolation,
    /// A fact an earlier session established is recalled into a later session's requests
    /// (codex #29033: memories generated but never injected).
    Recall,
    /// The rollout the host wrote reads back with no bad line and no unknown line type, and
    /// the write path registers it.
    RolloutReadBack,
}

impl Seam {
    /// Every seam, in report order.
    pub const ALL: [Seam; 9] = [
        Seam::GoalAfterCompaction,
        Seam::PinnedInstructions,
        Seam::ToolPairing,
        Seam::FitsWindow,
        Seam::CompactionShrinks,
        Seam::ModifiedFilesGrow,
        Seam::ProjectIsolation,
        Seam::Recall,
        Seam::RolloutReadBack,
    ];

    /// A short name for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Seam::GoalAfterCompaction => "goal_after_compaction",
            Seam::PinnedInstructions => "pinned_instructions",
            Seam::ToolPairing => "tool_pairing",
            Seam::FitsWindow => "fits_window",
            Seam::CompactionShrinks => "compaction_shrinks",
            Seam::ModifiedFilesGrow => "modified_files_grow",
            Seam::ProjectIsolation => "project_isolation",
            Seam::Recall => "recall",
            Seam::RolloutReadBack => "rollout_read_back",
        }
    }
}

/// One broken invariant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Which invariant.
    pub seam: Seam,
    /// The session (1-based) it happened in.
    pub session: usize,
    /// The request (1-based, across the run) it was seen on, if it was a request.
    pub request: Option<u64>,
    /// What was wrong.
    pub detail: String,
}

/// Every call without a result and every result without a call in `request`. A call's result
/// must follow it before the next assistant or user message.
pub fn unpaired_calls(request: &HostRequest) -> Vec<String> {
    let mut problems = Vec::new();
    let mut open: Vec<String> = Vec::new();
    let close = |open: &mut Vec<String>, problems: &mut Vec<String>| {
        for call in open.drain(..) {
            problems.push(format!("call {call} has no result"));
        }
    };
    for message in &request.messages {
        match message {
            HostMessage::User { .. } => close(&mut open, &mut problems),
            HostMessage::Assistant { tool_calls, .. } => {
                close(&mut open, &mut problems);
                open.extend(tool_calls.iter().map(|call| call.call_id.clone()));
            }
            HostMessage::Tool { call_id, .. } => {
                if let Some(at) = open.iter().position(|call| call == call_id) {
                    open.remove(at);
                } else {
                    problems.push(format!("result {call_id} has no call before it"));
                }
            }
        }
    }
    close(&mut open, &mut problems);
    problems
}

/// Files `previous` listed as modified that `next` lost: none when `next` lists every one of
/// them, or when it elided at least as many more files as it dropped.
pub fn lost_modified_files(previous: &CompactionDetails, next: &CompactionDetails) -> Vec<String> {
    let kept: HashSet<&str> = next.modified_files.iter().map(String::as_str).collect();
    let lost: Vec<String> = previous
        .modified_files
        .iter()
        .filter(|file| !kept.contains(file.as_str()))
        .cloned()
        .collect();
    let newly_elided = next.elided_files.saturating_sub(previous.elided_files);
    if u64::try_from(lost.len()).unwrap_or(u64::MAX) <= newly_elided {
        Vec::new()
    } else {
        lost
    }
}
