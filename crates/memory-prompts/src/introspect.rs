//! Introspection prompts: the `<memory>` fence and its self-describing header, labelled
//! sources, the one-line memory states, the `<memory-recall>` fence and its hits, and the
//! host/project environment block.
//!
//! The two fences take one `body` slot each, escaped for every memory boundary tag, so text
//! inside a fence can open or close neither fence. `memory-introspect` composes the body from
//! the other templates and owns stripping an existing fence (so fencing is idempotent).

use memory_protocol::introspect::{MemoryMode, MemoryScope, MemoryState};

use crate::engine::Vars;
use crate::error::{Error, Result};
use crate::registry::introspect::{
    ENVIRONMENT, MEMORY_BLOCK, MEMORY_HEADER, MEMORY_SOURCE, RECALL, RECALL_HIT, STATE_CHANGE,
    STATE_LINE,
};
use crate::untrusted::UntrustedText;

/// The always-on fence: `<memory source="agent-memory">`, the body, `</memory>`.
pub fn memory_fence(body: &UntrustedText) -> Result<String> {
    memory_fence_vars(body).render()
}

pub(crate) fn memory_fence_vars(body: &UntrustedText) -> Vars {
    Vars::new(&MEMORY_BLOCK).text("body", body)
}

/// The per-turn recall fence: `<memory-recall>`, a note that what follows is recalled
/// background data and not new user input, the body, `</memory-recall>`.
pub fn recall_fence(body: &UntrustedText) -> Result<String> {
    recall_fence_vars(body).render()
}

pub(crate) fn recall_fence_vars(body: &UntrustedText) -> Vars {
    Vars::new(&RECALL).text("body", body)
}

/// What the memory block's header says. The numbers are the ones `memory_status` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryHeaderContext {
    /// The memory root (an absolute path or the configured alias).
    pub root: UntrustedText,
    /// How far the memory reaches.
    pub scope: MemoryScope,
    /// Tokens of the summary as stored.
    pub summary_tokens: u64,
    /// Token budget of the summary (positive).
    pub summary_budget_tokens: u64,
    /// Read-only or writable.
    pub mode: MemoryMode,
    /// True when the host offers the memory tools.
    pub tools: bool,
    /// When memory last changed (its newest file's modification time, Unix seconds); `None`
    /// when nothing is written yet. The clock is never shown, so the header's text changes
    /// only when memory does and a host's cached prompt prefix stays valid.
    pub last_written: Option<i64>,
}

/// The header of the always-on block: what it is, who writes it, where it lives and how far it
/// reaches, how full its budget is, the mode, where to look further and when memory last
/// changed.
pub fn memory_header(ctx: &MemoryHeaderContext) -> Result<String> {
    memory_header_vars(ctx)?.render()
}

pub(crate) fn memory_header_vars(ctx: &MemoryHeaderContext) -> Result<Vars> {
    if ctx.summary_budget_tokens == 0 {
        return Err(Error::InvalidContext {
            template: MEMORY_HEADER.name,
            reason: "the summary budget must be positive",
        });
    }
    let percent = i128::from(ctx.summary_tokens) * 100 / i128::from(ctx.summary_budget_tokens);
    Ok(Vars::new(&MEMORY_HEADER)
        .inline_text("root", &ctx.root)
        .constant("scope", scope_name(ctx.scope))
        .number("percent", percent)
        .number("used", ctx.summary_tokens)
        .number("limit", ctx.summary_budget_tokens)
        .flag("writable", ctx.mode == MemoryMode::Writable)
        .flag("tools", ctx.tools)
        .optional_inline_text(
            "last_written",
            ctx.last_written
                .map(|seconds| UntrustedText::new(format_utc(seconds)))
                .as_ref(),
        ))
}

/// Who wrote a source the block carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// The always-on summary, written by the memory system.
    Summary {
        /// True when it was cut to its budget.
        cut: bool,
        /// Other projects whose lines were left out, the block being for one project.
        other_projects: u32,
    },
    /// A note an agent saved with `memory_note`, written at this time (Unix seconds).
    Note {
        /// When the note was written.
        written_at: i64,
    },
    /// An instruction file the host loaded and passed in (such as `AGENTS.md`).
    HostInstructions,
}

/// One labelled source inside the memory block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemorySourceContext {
    /// Who wrote it.
    pub kind: SourceKind,
    /// Where it is (relative to the memory root, or the host's path for host files).
    pub path: UntrustedText,
    /// How far it reaches.
    pub scope: MemoryScope,
    /// Its text.
    pub text: UntrustedText,
}

/// One source with its provenance label: who wrote it, where it is and how far it reaches.
pub fn memory_source(ctx: &MemorySourceContext) -> Result<String> {
    memory_source_vars(ctx).render()
}

pub(crate) fn memory_source_vars(ctx: &MemorySourceContext) -> Vars {
    let (kind, written_at, cut, other_projects) = match ctx.kind {
        SourceKind::Summary {
            cut,
            other_projects,
        } => ("summary", None, cut, other_projects),
        SourceKind::Note { written_at } => ("note", Some(format_utc(written_at)), false, 0),
        SourceKind::HostInstructions => ("host_file", None, false, 0),
    };
    Vars::new(&MEMORY_SOURCE)
        .constant("kind", kind)
        .flag("cut", cut)
        .number("other_projects", other_projects)
        .inline_text("path", &ctx.path)
        .constant("scope", scope_name(ctx.scope))
        .optional_inline_text("written_at", written_at.map(UntrustedText::new).as_ref())
        .labelled_text("text", &ctx.text)
}

/// One recalled passage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallHitContext {
    /// The file it came from, relative to the memory root.
    pub path: UntrustedText,
    /// Its first line, 1-based.
    pub line: u32,
    /// True for an agent note, false for text the memory system wrote.
    pub note: bool,
    /// True when a consolidation has run since the note was written (it was reviewed); an
    /// agent note without one is labelled unreviewed.
    pub consolidated: bool,
    /// How far it reaches.
    pub scope: MemoryScope,
    /// The passage.
    pub text: UntrustedText,
}

/// One recalled passage under its source line: path, line and who wrote it.
pub fn recall_hit(ctx: &RecallHitContext) -> Result<String> {
    recall_hit_vars(ctx).render()
}

pub(crate) fn recall_hit_vars(ctx: &RecallHitContext) -> Vars {
    Vars::new(&RECALL_HIT)
        .inline_text("path", &ctx.path)
        .number("line", ctx.line)
        .flag("note", ctx.note)
        .flag("consolidated", ctx.consolidated)
        .constant("scope", scope_name(ctx.scope))
        .labelled_text("text", &ctx.text)
}

/// What a one-line memory state is rendered from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateLineContext {
    /// The state: disabled, empty, unavailable or degraded (ready memory has no state line).
    pub state: MemoryState,
    /// What is wrong, in a few words, for the unavailable and degraded states.
    pub problem: Option<UntrustedText>,
}

/// The one line that says memory is off, empty, unreadable or partly broken. Each state says
/// something different about what missing memory means.
pub fn state_line(ctx: &StateLineContext) -> Result<String> {
    state_line_vars(ctx)?.render()
}

pub(crate) fn state_line_vars(ctx: &StateLineContext) -> Result<Vars> {
    if ctx.state == MemoryState::Ready {
        return Err(Error::InvalidContext {
            template: STATE_LINE.name,
            reason: "ready memory is shown with the memory block, not a state line",
        });
    }
    Ok(Vars::new(&STATE_LINE)
        .constant("state", ctx.state.as_str())
        .optional_inline_text("problem", ctx.problem.as_ref()))
}

/// The line that says the memory state changed since the last turn.
pub fn state_change(previous: MemoryState, state: MemoryState) -> Result<String> {
    state_change_vars(previous, state)?.render()
}

pub(crate) fn state_change_vars(previous: MemoryState, state: MemoryState) -> Result<Vars> {
    if previous == state {
        return Err(Error::InvalidContext {
            template: STATE_CHANGE.name,
            reason: "the state did not change",
        });
    }
    Ok(Vars::new(&STATE_CHANGE)
        .constant("previous", previous.as_str())
        .constant("state", state.as_str()))
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

/// The environment block: `<environment>` naming the host and its state folder apart from the
/// project and the memory root, so the model does not mistake one for another.
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

fn scope_name(scope: MemoryScope) -> &'static str {
    match scope {
        MemoryScope::Global => "global",
        MemoryScope::Project => "project",
    }
}

/// `D Mon YYYY HH:MM UTC` for Unix seconds (proleptic Gregorian calendar): unambiguous, and a
/// token shorter than the ISO form.
pub fn format_utc(seconds: i64) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = seconds.div_euclid(86_400);
    let second_of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let (hour, minute) = (second_of_day / 3_600, second_of_day % 3_600 / 60);
    let month = usize::try_from(month - 1)
        .ok()
        .and_then(|index| MONTHS.get(index))
        .unwrap_or(&"???");
    format!("{day} {month} {year:04} {hour:02}:{minute:02} UTC")
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
        assert_eq!(format_utc(0), "1 Jan 1970 00:00 UTC");
        assert_eq!(format_utc(951_782_400), "29 Feb 2000 00:00 UTC");
        assert_eq!(format_utc(1_767_225_599), "31 Dec 2025 23:59 UTC");
        assert_eq!(format_utc(-1), "31 Dec 1969 23:59 UTC");
        // Extremes do not panic.
        assert!(!format_utc(i64::MAX).is_empty());
        assert!(!format_utc(i64::MIN).is_empty());
    }
}
