//! Working-memory prompts: creating the seven-section document, updating it by per-section
//! operations (with a `<section_size_warnings>` block for oversized sections), and the
//! instructions that come with an archived working memory when a session's context is
//! assembled.

use memory_protocol::working_memory::{WorkingMemorySection, limits};

use crate::engine::Vars;
use crate::error::Result;
use crate::registry::working_memory::{ASSEMBLE, CREATE, UPDATE};
use crate::untrusted::UntrustedText;

/// Name of the tool the update prompt asks the model to call.
pub const UPDATE_TOOL: &str = memory_protocol::working_memory::UPDATE_TOOL_NAME;

/// Size limits of one section; a section over either gets a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SectionLimits {
    /// Most bullets a section should hold.
    pub bullets: u64,
    /// Most tokens a section should hold.
    pub tokens: u64,
}

impl Default for SectionLimits {
    fn default() -> Self {
        Self {
            bullets: limits::SECTION_BULLET_THRESHOLD as u64,
            tokens: limits::SECTION_TOKEN_THRESHOLD as u64,
        }
    }
}

/// What the create prompt is rendered from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreateContext {
    /// The serialized conversation.
    pub conversation: UntrustedText,
    /// An earlier summary of the session (for example a compaction summary), when there is one.
    pub previous_summary: Option<UntrustedText>,
    /// Section size limits.
    pub limits: SectionLimits,
}

/// The create prompt: the conversation and the seven-section skeleton; the model answers with
/// the whole document.
pub fn create(ctx: &CreateContext) -> Result<String> {
    create_vars(ctx).render()
}

pub(crate) fn create_vars(ctx: &CreateContext) -> Vars {
    let vars = Vars::new(&CREATE);
    let sections = section_records(&vars);
    vars.text("conversation", &ctx.conversation)
        .optional_text("previous_summary", ctx.previous_summary.as_ref())
        .records("sections", sections)
        .number("section_bullet_limit", ctx.limits.bullets)
        .number("section_token_limit", ctx.limits.tokens)
}

pub use memory_protocol::working_memory::SectionSizeWarning;

/// What the update prompt is rendered from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateContext {
    /// The current working-memory document.
    pub working_memory: UntrustedText,
    /// The new part of the conversation, serialized.
    pub conversation: UntrustedText,
    /// Sections over their limits; the prompt renders a warnings block when any.
    pub warnings: Vec<SectionSizeWarning>,
    /// Section size limits.
    pub limits: SectionLimits,
}

/// The update prompt: the current document, the new conversation, the size warnings and the
/// per-section rules; the model answers with one [`UPDATE_TOOL`] call.
pub fn update(ctx: &UpdateContext) -> Result<String> {
    update_vars(ctx).render()
}

pub(crate) fn update_vars(ctx: &UpdateContext) -> Vars {
    let vars = Vars::new(&UPDATE);
    let sections = section_records(&vars);
    let warnings = ctx
        .warnings
        .iter()
        .map(|warning| {
            vars.record()
                .constant("section", warning.section.header())
                .number("bullets", warning.bullets)
                .number("tokens", warning.tokens)
        })
        .collect();
    vars.text("working_memory", &ctx.working_memory)
        .text("conversation", &ctx.conversation)
        .records("warnings", warnings)
        .records("sections", sections)
        .number("section_bullet_limit", ctx.limits.bullets)
        .number("section_token_limit", ctx.limits.tokens)
        .constant("tool_name", UPDATE_TOOL)
        .constant(
            "append_only_section",
            WorkingMemorySection::ErrorsAndCorrections.header(),
        )
        .constant(
            "key_facts_section",
            WorkingMemorySection::KeyFactsAndDecisions.header(),
        )
        .constant(
            "files_section",
            WorkingMemorySection::FilesAndContext.header(),
        )
        .constant(
            "open_issues_section",
            WorkingMemorySection::OpenIssues.header(),
        )
        .constant("consolidation_sentinel", limits::CONSOLIDATION_SENTINEL)
        .constant("restored_marker", limits::RESTORED_MARKER)
        .constant("resolved_marker", limits::RESOLVED_MARKER)
}

/// What the assemble instructions are rendered from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AssembleContext {
    /// The archived working-memory document, already fitted to its token budget.
    pub working_memory: UntrustedText,
}

/// The instructions added to a session's system prompt when an archived working memory comes
/// with its live messages: the document, that it is lossy, that newer messages win on
/// conflict, and to ask rather than guess.
pub fn assemble(ctx: &AssembleContext) -> Result<String> {
    assemble_vars(ctx).render()
}

pub(crate) fn assemble_vars(ctx: &AssembleContext) -> Vars {
    Vars::new(&ASSEMBLE)
        .text("working_memory", &ctx.working_memory)
        .constant(
            "errors_section",
            WorkingMemorySection::ErrorsAndCorrections.header(),
        )
}

/// One record per section, in document order: header, what it holds, how to update it.
fn section_records(vars: &Vars) -> Vec<Vars> {
    WorkingMemorySection::ALL
        .into_iter()
        .map(|section| {
            let (purpose, update_rule) = section_guide(section);
            vars.record()
                .constant("header", section.header())
                .constant("purpose", purpose)
                .constant("update_rule", update_rule)
        })
        .collect()
}

/// What a section holds, and the default operation for it in an update.
fn section_guide(section: WorkingMemorySection) -> (&'static str, &'static str) {
    match section {
        WorkingMemorySection::SessionTitle => (
            "a title of five to ten words naming what the session is about",
            "KEEP, unless the session has moved to a different subject altogether.",
        ),
        WorkingMemorySection::CurrentState => (
            "two to five sentences on where the work stands now, including what is pending",
            "UPDATE to two to five sentences on where things stand now, still naming every pending item.",
        ),
        WorkingMemorySection::TaskAndGoals => (
            "what the user wants: every goal stated so far, with how success is judged",
            "KEEP; when goals were added or changed, UPDATE with every earlier goal still listed.",
        ),
        WorkingMemorySection::KeyFactsAndDecisions => (
            "durable facts and decisions, with the reasons, names, numbers and exact values",
            "APPEND new facts; UPDATE only to consolidate (required when the size warnings name it) or to correct a fact the conversation contradicts, keeping everything else.",
        ),
        WorkingMemorySection::FilesAndContext => (
            "files, functions, modules, commands and links that matter, each with why it matters",
            "APPEND resources that became relevant; UPDATE only to annotate, keeping every earlier item. No bulk lists of search results.",
        ),
        WorkingMemorySection::ErrorsAndCorrections => (
            "errors hit, corrections the user made and approaches that failed, each with how it was resolved",
            "APPEND only; KEEP when nothing new went wrong or was corrected. UPDATE only when the size warnings name it, to consolidate while keeping every error's commands, paths and messages.",
        ),
        WorkingMemorySection::OpenIssues => (
            "unanswered questions, blockers and risks, each marked when its status changes",
            "UPDATE, marking settled items resolved and new ones `[new]` rather than dropping them; never drop an unresolved item because it was not discussed.",
        ),
    }
}
