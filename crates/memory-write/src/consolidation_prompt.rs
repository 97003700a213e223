//! The consolidation request, bounded as memory grows.
//!
//! The prompt holds the current `MEMORY.md` and `memory_summary.md`, what changed since the
//! last pass (added, changed and removed threads, each with its rollout summary file and
//! title), a one-line index of the unchanged threads, and the raw memories and rollout
//! summaries of the added and changed threads only (all of them on a first pass), and the notes
//! in `notes/`. Unchanged
//! threads are already in `MEMORY.md`, so the prompt grows with the change, not with the
//! memory. Every part is cut (head and tail kept) to its share of the prompt budget.

use std::collections::BTreeSet;

use memory_prompts::UntrustedText;
use memory_prompts::memories::{ConsolidationContext, consolidation_input, consolidation_system};
use memory_protocol::consolidation::{ConsolidationInput, ConsolidationOutput};
use memory_protocol::memory_format::RawMemory;
use memory_protocol::names::memory_root as names;
use memory_protocol::stage_one::StageOneOutputRecord;
use memory_protocol::{ModelRequest, TaskKind, input_token_budget};
use memory_sanitize::{TruncationPolicy, o200k, truncate_middle};

use crate::error::{Error, Result};
use crate::memory_root::{raw_memory_block, render_rollout_summary};

/// Shares of the prompt budget, in percent, by part. They add up to less than 100: the
/// templates' own text needs room too.
const MEMORY_SHARE: usize = 35;
const SUMMARY_SHARE: usize = 5;
const CHANGES_SHARE: usize = 8;
const RAW_SHARE: usize = 24;
const ROLLOUT_SHARE: usize = 14;
const NOTES_SHARE: usize = 8;

/// The prompt budget in tokens for a model with this input window: the same share of the
/// window every request gets ([`input_token_budget`]).
pub fn prompt_budget(context_window: Option<u64>) -> u64 {
    input_token_budget(context_window)
}

/// The consolidation request for `input` within `budget` prompt tokens (see the module docs;
/// [`prompt_budget`] gives the first try's budget, a context overflow halves it).
pub(crate) fn consolidation_request(
    input: &ConsolidationInput,
    budget: u64,
) -> Result<ModelRequest> {
    let budget = usize::try_from(budget).unwrap_or(usize::MAX);
    let share = |percent: usize| budget.saturating_mul(percent) / 100;
    let first_pass = input.memory_md.trim().is_empty();
    let new: BTreeSet<&str> = input
        .changes
        .added
        .iter()
        .chain(&input.changes.changed)
        .map(String::as_str)
        .collect();
    let fresh: Vec<&StageOneOutputRecord> = input
        .selected
        .iter()
        .filter(|record| first_pass || new.contains(record.thread_id.as_str()))
        .collect();
    let file_of = |record: &StageOneOutputRecord| {
        input
            .rollout_summary_files
            .get(&record.thread_id)
            .cloned()
            .unwrap_or_default()
    };
    let stem_of = |record: &StageOneOutputRecord| {
        let file = file_of(record);
        file.trim_start_matches(names::ROLLOUT_SUMMARIES_DIR)
            .trim_start_matches('/')
            .trim_end_matches(".md")
            .to_owned()
    };
    let raw_memories: String = fresh
        .iter()
        .map(|record| format!("{}\n", raw_memory_block(record, &stem_of(record))))
        .collect();
    let rollout_summaries: String = fresh
        .iter()
        .map(|record| {
            format!(
                "### {}\n\n{}\n",
                file_of(record),
                render_rollout_summary(record)
            )
        })
        .collect();
    // Notes agents added with `memory_note` since they were last folded in.
    let notes: String = input
        .notes
        .iter()
        .map(|note| format!("## {}\n\n{}\n\n", note.path, note.text.trim()))
        .collect::<String>()
        .trim_end()
        .to_owned();
    let context = ConsolidationContext {
        memory_md: UntrustedText::new(cut(&input.memory_md, share(MEMORY_SHARE))),
        memory_summary_md: UntrustedText::new(cut(&input.memory_summary_md, share(SUMMARY_SHARE))),
        selection_changes: UntrustedText::new(cut(&changes_text(input), share(CHANGES_SHARE))),
        raw_memories: UntrustedText::new(cut(&raw_memories, share(RAW_SHARE))),
        rollout_summaries: UntrustedText::new(cut(&rollout_summaries, share(ROLLOUT_SHARE))),
        notes: (!notes.is_empty()).then(|| UntrustedText::new(cut(&notes, share(NOTES_SHARE)))),
        summary_token_budget: input.summary_token_budget,
    };
    Ok(ModelRequest {
        task: TaskKind::Consolidation,
        instructions: consolidation_system()?,
        input: consolidation_input(&context)?,
        structured_input: serde_json::to_value(input).map_err(Error::Serialize)?,
        output_schema: Some(ConsolidationOutput::output_schema()),
        // Sent only when the user configured one on the model: many models refuse it.
        reasoning_effort: None,
        max_output_tokens: None,
    })
}

/// The changes as lines the model can act on, then the index of unchanged threads.
fn changes_text(input: &ConsolidationInput) -> String {
    let describe = |id: &str| -> String {
        let record = input.selected.iter().find(|r| r.thread_id == id);
        let file = input
            .rollout_summary_files
            .get(id)
            .map_or(String::new(), |file| format!(" ({file})"));
        let task = record
            .map(|r| RawMemory::parse(&r.raw_memory).front.task)
            .filter(|task| !task.trim().is_empty())
            .map_or(String::new(), |task| format!(": {}", one_line(&task)));
        format!("- `{}`{file}{task}\n", one_line(id))
    };
    let mut out = String::new();
    for (label, ids) in [
        ("Added (new material below)", &input.changes.added),
        (
            "Changed (extracted again; new material below replaces the old)",
            &input.changes.changed,
        ),
        (
            "Removed (forget what only these supported)",
            &input.changes.removed,
        ),
    ] {
        out.push_str(&format!("{label}:\n"));
        if ids.is_empty() {
            out.push_str("- none\n");
        }
        for id in ids {
            out.push_str(&describe(id));
        }
    }
    let touched: BTreeSet<&str> = input
        .changes
        .added
        .iter()
        .chain(&input.changes.changed)
        .map(String::as_str)
        .collect();
    let unchanged: Vec<&StageOneOutputRecord> = input
        .selected
        .iter()
        .filter(|r| !touched.contains(r.thread_id.as_str()))
        .collect();
    out.push_str("Unchanged (already in the current files; keep them):\n");
    if unchanged.is_empty() {
        out.push_str("- none\n");
    }
    for record in unchanged {
        out.push_str(&describe(&record.thread_id));
    }
    out
}

fn cut(text: &str, max_tokens: usize) -> String {
    truncate_middle(text, TruncationPolicy::Tokens(max_tokens), o200k()).into_owned()
}

fn one_line(text: &str) -> String {
    text.chars()
        .map(|ch| if ch.is_control() { ' ' } else { ch })
        .collect()
}
