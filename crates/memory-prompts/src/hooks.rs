//! Prompts of the hooks an agent that owns its loop runs (Claude Code): the reminder injected
//! after a compaction, and the instructions its summarizer gets before one.

use crate::engine::Vars;
use crate::error::Result;
use crate::registry::hooks::{AFTER_COMPACTION, BEFORE_COMPACTION};
use crate::untrusted::UntrustedText;

/// The reminder that opens the context injected after a compaction: earlier context was
/// summarized, and what follows (memory block, instruction files, goal) is restated.
pub fn after_compaction() -> Result<String> {
    after_compaction_vars().render()
}

pub(crate) fn after_compaction_vars() -> Vars {
    Vars::new(&AFTER_COMPACTION)
}

/// What the instructions before a compaction are rendered from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BeforeCompactionContext {
    /// The objective of the session's goal, when it has one.
    pub objective: Option<UntrustedText>,
}

/// The instructions for the summarizer of a compaction: keep the user's rules, the rules of
/// the instruction files, corrections and failed approaches, and the goal's objective verbatim.
pub fn before_compaction(ctx: &BeforeCompactionContext) -> Result<String> {
    before_compaction_vars(ctx).render()
}

pub(crate) fn before_compaction_vars(ctx: &BeforeCompactionContext) -> Vars {
    let none = UntrustedText::new("");
    Vars::new(&BEFORE_COMPACTION)
        .flag("has_goal", ctx.objective.is_some())
        .xml_text("objective", ctx.objective.as_ref().unwrap_or(&none))
}
