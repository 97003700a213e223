//! The write path's prompts (stage-one extraction, phase-2 consolidation) and the read path's
//! guidance on using memory (`memory-introspect` renders it ahead of the memory block).

use memory_protocol::memory_format::{
    RAW_TASK_HEADING, SUMMARY_TASK_HEADING, TaskOutcome, keys, sections,
};
use memory_protocol::names::{REDACTED_SECRET, citation, memory_root};

use crate::engine::Vars;
use crate::error::Result;
use crate::registry::memories::{
    CONSOLIDATION_INPUT, CONSOLIDATION_SYSTEM, READ_PATH, STAGE_ONE_INPUT, STAGE_ONE_SYSTEM,
};
use crate::untrusted::UntrustedText;

/// The stage-one system prompt: what makes a memory worth keeping, the no-op answer and the
/// exact formats of [`memory_protocol::StageOneOutput`]'s fields, in the names of
/// [`memory_protocol::memory_format`] (the format the offline engine writes too).
pub fn stage_one_system() -> Result<String> {
    stage_one_system_vars().render()
}

/// The outcome names, as the prompts list them (`success | partial | uncertain | fail`).
const OUTCOMES: &str = "success | partial | uncertain | fail";

pub(crate) fn stage_one_system_vars() -> Vars {
    debug_assert_eq!(
        OUTCOMES,
        TaskOutcome::ALL.map(TaskOutcome::as_str).join(" | ")
    );
    Vars::new(&STAGE_ONE_SYSTEM)
        .constant("redacted_marker", REDACTED_SECRET)
        .constant("outcomes", OUTCOMES)
        .constant("key_description", keys::DESCRIPTION)
        .constant("key_task", keys::TASK)
        .constant("key_task_group", keys::TASK_GROUP)
        .constant("key_task_outcome", keys::TASK_OUTCOME)
        .constant("key_cwd", keys::CWD)
        .constant("key_keywords", keys::KEYWORDS)
        .constant("raw_task_heading", RAW_TASK_HEADING)
        .constant("summary_task_heading", SUMMARY_TASK_HEADING)
        .constant("section_preferences", sections::PREFERENCE_SIGNALS)
        .constant("section_failures", sections::FAILURES)
        .constant("section_knowledge", sections::REUSABLE_KNOWLEDGE)
        .constant("section_references", sections::REFERENCES)
        .constant("section_key_steps", sections::KEY_STEPS)
        .constant("section_outcome", sections::OUTCOME)
        .constant("section_rollout_context", sections::ROLLOUT_CONTEXT)
}

/// What the stage-one input prompt is rendered from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StageOneInputContext {
    /// Path of the rollout file.
    pub rollout_path: UntrustedText,
    /// Working directory recorded in the rollout (empty when unknown).
    pub rollout_cwd: UntrustedText,
    /// The filtered, redacted and truncated serialization of the rollout.
    pub rollout_contents: UntrustedText,
}

/// The stage-one user message: the rollout's path and cwd, its contents inside
/// `<rollout-content>`, and a reminder of the output contract.
pub fn stage_one_input(ctx: &StageOneInputContext) -> Result<String> {
    stage_one_input_vars(ctx).render()
}

pub(crate) fn stage_one_input_vars(ctx: &StageOneInputContext) -> Vars {
    Vars::new(&STAGE_ONE_INPUT)
        .inline_text("rollout_path", &ctx.rollout_path)
        .inline_text("rollout_cwd", &ctx.rollout_cwd)
        .text("rollout_contents", &ctx.rollout_contents)
}

/// The consolidation system prompt: the two memory files, the anchor rule and the exact
/// output contract of [`memory_protocol::consolidation::ConsolidationOutput`].
pub fn consolidation_system() -> Result<String> {
    consolidation_system_vars().render()
}

pub(crate) fn consolidation_system_vars() -> Vars {
    Vars::new(&CONSOLIDATION_SYSTEM)
        .constant("redacted_marker", REDACTED_SECRET)
        .constant("outcomes", OUTCOMES)
        .constant("memory_file", memory_root::MEMORY_FILE)
        .constant("summary_file", memory_root::MEMORY_SUMMARY_FILE)
        .constant("summary_version", memory_root::MEMORY_SUMMARY_VERSION)
        .constant("rollout_summaries_dir", memory_root::ROLLOUT_SUMMARIES_DIR)
}

/// What the consolidation input prompt is rendered from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsolidationContext {
    /// The current `MEMORY.md` (empty on the first pass).
    pub memory_md: UntrustedText,
    /// The current `memory_summary.md` (empty on the first pass).
    pub memory_summary_md: UntrustedText,
    /// The threads added, changed, removed and unchanged since the last pass.
    pub selection_changes: UntrustedText,
    /// The raw memories of the added and changed threads (`raw_memories.md` blocks).
    pub raw_memories: UntrustedText,
    /// The rollout summaries of the same threads, concatenated.
    pub rollout_summaries: UntrustedText,
    /// Token budget of `memory_summary.md`.
    pub summary_token_budget: u64,
    /// The notes of `notes/`, concatenated; `None` when there are none.
    pub notes: Option<UntrustedText>,
}

/// The consolidation user message: the current files, the selection changes and the new
/// material, each inside its boundary tag, with the summary's token budget. A blank
/// `MEMORY.md` makes it a first pass.
pub fn consolidation_input(ctx: &ConsolidationContext) -> Result<String> {
    consolidation_input_vars(ctx).render()
}

pub(crate) fn consolidation_input_vars(ctx: &ConsolidationContext) -> Vars {
    Vars::new(&CONSOLIDATION_INPUT)
        .flag("first_pass", ctx.memory_md.is_blank())
        .number("summary_token_budget", ctx.summary_token_budget)
        .constant("memory_file", memory_root::MEMORY_FILE)
        .constant("summary_file", memory_root::MEMORY_SUMMARY_FILE)
        .constant("raw_memories_file", memory_root::RAW_MEMORIES_FILE)
        .constant("rollout_summaries_dir", memory_root::ROLLOUT_SUMMARIES_DIR)
        .text("memory_md", &ctx.memory_md)
        .text("memory_summary_md", &ctx.memory_summary_md)
        .text("selection_changes", &ctx.selection_changes)
        .text("raw_memories", &ctx.raw_memories)
        .text("rollout_summaries", &ctx.rollout_summaries)
        .constant("notes_dir", memory_root::NOTES_DIR)
        .optional_text("notes", ctx.notes.as_ref())
}

/// What the read-path prompt is rendered from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadPathContext {
    /// The token cap of the summary in the memory block that follows.
    pub summary_token_cap: u64,
    /// True when the host offers the memory tools (`memory_search`, `memory_read`).
    pub tools: bool,
    /// True when the model may add notes with `memory_note`; the text then says how, instead
    /// of forbidding writes.
    pub writable: bool,
}

/// The read path: how to use memory, its layout, how to look, whether and how to add to it,
/// and the citation contract (the block whose names are in [`memory_protocol::names::citation`]).
/// The `<memory>` block with the summary follows it.
pub fn read_path(ctx: &ReadPathContext) -> Result<String> {
    read_path_vars(ctx).render()
}

pub(crate) fn read_path_vars(ctx: &ReadPathContext) -> Vars {
    Vars::new(&READ_PATH)
        .number("summary_token_cap", ctx.summary_token_cap)
        .flag("tools", ctx.tools)
        .flag("writable", ctx.writable)
        .constant("memory_file", memory_root::MEMORY_FILE)
        .constant("summary_file", memory_root::MEMORY_SUMMARY_FILE)
        .constant("raw_memories_file", memory_root::RAW_MEMORIES_FILE)
        .constant("rollout_summaries_dir", memory_root::ROLLOUT_SUMMARIES_DIR)
        .constant("citation_block", citation::BLOCK)
        .constant("citation_entries", citation::ENTRIES)
        .constant("citation_threads", citation::THREAD_IDS)
        .constant("notes_dir", memory_root::NOTES_DIR)
}
