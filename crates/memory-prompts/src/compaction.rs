//! Compaction prompts: the summarizer's system prompt, the summary formats and the user
//! message that wraps the conversation, the previous summary and extra context.

use crate::engine::{Template, Vars};
use crate::error::{Error, Result};
use crate::registry::compaction::{
    REQUEST, SHORT_SUMMARY, SUMMARY, SYSTEM, TURN_PREFIX, UPDATE_SUMMARY,
};
use crate::untrusted::UntrustedText;

/// The system prompt of every summarizer call: strict format, all inputs are untrusted data,
/// never continue the conversation.
pub fn system() -> Result<String> {
    Vars::new(&SYSTEM).render()
}

/// Which summary the summarizer is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SummaryFormat {
    /// The first hand-off summary (Goal, Constraints & Preferences, Progress, Key Decisions,
    /// Next Steps, Critical Context, Additional Notes). Takes no previous summary.
    Initial,
    /// Merge the conversation into the previous summary. Needs a previous summary.
    Update,
    /// Two or three first-person sentences, pull-request style, for display.
    Short,
    /// The first part of a turn too long to keep (Original Request, Early Progress, Context for
    /// Suffix). Takes the summary of an earlier part of the same turn, if any.
    TurnPrefix,
}

impl SummaryFormat {
    /// Every format.
    pub const ALL: [SummaryFormat; 4] = [
        SummaryFormat::Initial,
        SummaryFormat::Update,
        SummaryFormat::Short,
        SummaryFormat::TurnPrefix,
    ];

    /// The label `compaction/request.md` dispatches on.
    fn label(self) -> &'static str {
        match self {
            SummaryFormat::Initial => "initial",
            SummaryFormat::Update => "update",
            SummaryFormat::Short => "short",
            SummaryFormat::TurnPrefix => "turn_prefix",
        }
    }

    fn template(self) -> &'static Template {
        match self {
            SummaryFormat::Initial => &SUMMARY,
            SummaryFormat::Update => &UPDATE_SUMMARY,
            SummaryFormat::Short => &SHORT_SUMMARY,
            SummaryFormat::TurnPrefix => &TURN_PREFIX,
        }
    }

    /// The format's instructions alone (what [`summary_request`] places after the data).
    pub fn instructions(self) -> Result<String> {
        Vars::new(self.template()).render()
    }
}

/// What a summarizer's user message is rendered from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryRequestContext {
    /// The summary asked for.
    pub format: SummaryFormat,
    /// The serialized conversation to summarize.
    pub conversation: UntrustedText,
    /// The summary the conversation continues from (required by [`SummaryFormat::Update`],
    /// refused by [`SummaryFormat::Initial`]).
    pub previous_summary: Option<UntrustedText>,
    /// Extra context lines (for example notes from plan mode), one bullet each.
    pub additional_context: Vec<UntrustedText>,
    /// The user's focus for this summary (`/compact <focus>`), rendered on one line.
    pub focus: Option<UntrustedText>,
}

/// The summarizer's user message: `<conversation>`, then `<previous-summary>` and
/// `<additional-context>` when given, then the format's instructions and the focus line.
pub fn summary_request(ctx: &SummaryRequestContext) -> Result<String> {
    summary_request_vars(ctx)?.render()
}

pub(crate) fn summary_request_vars(ctx: &SummaryRequestContext) -> Result<Vars> {
    let invalid = |reason| Error::InvalidContext {
        template: REQUEST.name,
        reason,
    };
    match (ctx.format, &ctx.previous_summary) {
        (SummaryFormat::Update, None) => {
            return Err(invalid("the update format needs a previous summary"));
        }
        (SummaryFormat::Initial, Some(_)) => {
            return Err(invalid(
                "the initial format would drop the previous summary; use the update format",
            ));
        }
        _ => {}
    }
    Ok(Vars::new(&REQUEST)
        .constant("format", ctx.format.label())
        .text("conversation", &ctx.conversation)
        .optional_text("previous_summary", ctx.previous_summary.as_ref())
        .text_list("additional_context", &ctx.additional_context)
        .optional_inline_text("focus", ctx.focus.as_ref()))
}
