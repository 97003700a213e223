//! Introspection prompts: the always-on memory block with its self-describing header, the
//! recall fence, the one-line memory states and the host/project environment block.

use memory_protocol::introspect::MemoryState;
use memory_protocol::names::boundary_tags;

use crate::engine::{Template, Vars, template};
use crate::error::{Error, Result};
use crate::untrusted::UntrustedText;

pub(crate) const MEMORY_BLOCK: Template =
    template!("introspect/memory_block.md", &[boundary_tags::MEMORY]);
pub(crate) const RECALL: Template =
    template!("introspect/recall.md", &[boundary_tags::MEMORY_RECALL]);
pub(crate) const STATE_LINE: Template = template!(
    "introspect/state_line.md",
    &[boundary_tags::MEMORY, boundary_tags::MEMORY_RECALL]
);
pub(crate) const ENVIRONMENT: Template =
    template!("introspect/environment.md", &[boundary_tags::ENVIRONMENT]);

pub(crate) const TEMPLATES: &[&Template] = &[&MEMORY_BLOCK, &RECALL, &STATE_LINE, &ENVIRONMENT];

/// What the always-on memory block is rendered from. The numbers are the ones
/// `memory_status` reports, so the model can check them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryBlockContext {
    /// The memory root folder.
    pub memory_root: UntrustedText,
    /// The always-on summary (`memory_summary.md`), already fitted to its budget.
    pub summary: UntrustedText,
    /// Tokens of the summary.
    pub summary_tokens: u64,
    /// Token budget of the summary (positive).
    pub summary_budget_tokens: u64,
    /// Files in the memory root.
    pub files: u32,
    /// When memory was last consolidated (Unix seconds), if ever.
    pub last_consolidated_at: Option<i64>,
}

/// The always-on memory block: `<memory>` with a header saying what the memory is, where it
/// lives, who wrote it, how full its budget is and how to look further, then the summary.
pub fn memory_block(ctx: &MemoryBlockContext) -> Result<String> {
    memory_block_vars(ctx)?.render()
}

pub(crate) fn memory_block_vars(ctx: &MemoryBlockContext) -> Result<Vars> {
    if ctx.summary_budget_tokens == 0 {
        return Err(Error::InvalidContext {
            template: MEMORY_BLOCK.name,
            reason: "the summary budget must be positive",
        });
    }
    let percent = i128::from(ctx.summary_tokens) * 100 / i128::from(ctx.summary_budget_tokens);
    let vars = Vars::new(&MEMORY_BLOCK)
        .inline_text("memory_root", &ctx.memory_root)
        .text("summary", &ctx.summary)
        .number("summary_tokens", ctx.summary_tokens)
        .number("summary_budget_tokens", ctx.summary_budget_tokens)
        .number("budget_percent", percent)
        .number("files", ctx.files);
    Ok(match ctx.last_consolidated_at {
        // A formatted date is built here from a number, not taken from outside; it still goes
        // through the escaping path so every runtime string does.
        Some(seconds) => vars.inline_text(
            "last_consolidated",
            &UntrustedText::new(format_utc(seconds)),
        ),
        None => vars.constant("last_consolidated", "never"),
    })
}

/// One recalled passage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecallHit {
    /// Where it came from (a path in the memory root, with a line number), on one line.
    pub source: UntrustedText,
    /// The passage.
    pub text: UntrustedText,
}

/// What the recall fence is rendered from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecallContext {
    /// The passages, best first (at least one).
    pub hits: Vec<RecallHit>,
}

/// The recall fence: `<memory-recall>` with a note that the passages are background data from
/// past sessions, then each passage under its source.
pub fn recall(ctx: &RecallContext) -> Result<String> {
    recall_vars(ctx)?.render()
}

pub(crate) fn recall_vars(ctx: &RecallContext) -> Result<Vars> {
    if ctx.hits.is_empty() {
        return Err(Error::InvalidContext {
            template: RECALL.name,
            reason: "recall needs at least one hit; render nothing instead",
        });
    }
    let vars = Vars::new(&RECALL);
    let hits = ctx
        .hits
        .iter()
        .map(|hit| {
            vars.record()
                .inline_text("source", &hit.source)
                .text("text", &hit.text)
        })
        .collect();
    Ok(vars.records("hits", hits))
}

/// What a one-line memory state is rendered from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateLineContext {
    /// The state: disabled, empty, unavailable or degraded (ready memory renders a
    /// [`memory_block`] instead).
    pub state: MemoryState,
    /// What is wrong, for the unavailable and degraded states.
    pub problem: Option<UntrustedText>,
}

/// The one line that stands in for the memory block when memory is off, empty, unreadable or
/// partly broken. Each state says something different about what absence means.
pub fn state_line(ctx: &StateLineContext) -> Result<String> {
    state_line_vars(ctx)?.render()
}

pub(crate) fn state_line_vars(ctx: &StateLineContext) -> Result<Vars> {
    let state = match ctx.state {
        MemoryState::Disabled => "disabled",
        MemoryState::Empty => "empty",
        MemoryState::Unavailable => "unavailable",
        MemoryState::Degraded => "degraded",
        MemoryState::Ready => {
            return Err(Error::InvalidContext {
                template: STATE_LINE.name,
                reason: "ready memory is shown with the memory block, not a state line",
            });
        }
    };
    Ok(Vars::new(&STATE_LINE)
        .constant("state", state)
        .optional_inline_text("problem", ctx.problem.as_ref()))
}

/// What the environment block is rendered from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvironmentContext {
    /// The host agent's name (for example `codex`).
    pub host: UntrustedText,
    /// Where the host keeps its own state.
    pub host_state_dir: UntrustedText,
    /// The memory root folder.
    pub memory_root: UntrustedText,
    /// The project the agent is working on (its root folder).
    pub project_root: UntrustedText,
    /// The operating system.
    pub os: UntrustedText,
    /// The shell, when known.
    pub shell: Option<UntrustedText>,
}

/// The environment block: `<environment>` naming the host and its state folder, the memory
/// root and the project, so the model does not mistake one for another.
pub fn environment(ctx: &EnvironmentContext) -> Result<String> {
    environment_vars(ctx).render()
}

pub(crate) fn environment_vars(ctx: &EnvironmentContext) -> Vars {
    Vars::new(&ENVIRONMENT)
        .inline_text("host", &ctx.host)
        .inline_text("host_state_dir", &ctx.host_state_dir)
        .inline_text("memory_root", &ctx.memory_root)
        .inline_text("project_root", &ctx.project_root)
        .inline_text("os", &ctx.os)
        .optional_inline_text("shell", ctx.shell.as_ref())
}

/// `YYYY-MM-DD HH:MM UTC` for Unix seconds (proleptic Gregorian calendar).
fn format_utc(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let second_of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let (hour, minute) = (second_of_day / 3_600, second_of_day % 3_600 / 60);
    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02} UTC")
}

/// Year, month and day of a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_unix_seconds_as_utc() {
        assert_eq!(format_utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(format_utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(format_utc(1_767_225_599), "2025-12-31 23:59 UTC");
        assert_eq!(format_utc(-1), "1969-12-31 23:59 UTC");
        // Extremes do not panic.
        assert!(!format_utc(i64::MAX).is_empty());
        assert!(!format_utc(i64::MIN).is_empty());
    }
}
