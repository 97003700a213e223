//! Failure lessons: a failing command paired with what made it pass later, stated as the
//! difference between the two (a quoted argument, a flag, another folder, a file edit, a
//! command run in between), with the agent's own reading of the cause when it gave one. A
//! check that still fails at the end of the task is a warning of its own.

use super::outcome::check_statuses;
use super::patches::SmallEdit;
use super::tasks::Task;
use super::text::{capped_join, code, one_line, sentences};
use super::tool_output::RunStatus;
use super::transcript::{Event, Run, Transcript};
use memory_transcript::shell::{CommandKey, CommandKind, CommandLine};

/// Most lessons kept per task.
pub(crate) const MAX_LESSONS: usize = 6;
/// What the lesson of a check that still fails at the end of a task says.
pub(crate) const STILL_FAILED: &str = "still failed at the end";
/// Longest lesson, in characters.
const MAX_LESSON_CHARS: usize = 700;
/// Longest quoted cause, in characters.
const MAX_CAUSE_CHARS: usize = 360;

/// Words that mark an explanation of a failure in the agent's commentary.
const CAUSE_MARKERS: [&str; 20] = [
    "because",
    "cause",
    "since ",
    "requires",
    "expects",
    "expected",
    "is not",
    "isn't",
    "was not",
    "wasn't",
    "missing",
    "points at",
    "points to",
    "flaky",
    "needs",
    "stale",
    "renamed",
    "not registered",
    "no longer",
    "instead of",
];

/// The lessons of one task, most useful first (fixed failures, then unresolved ones).
pub(crate) fn lessons(task: &Task, transcript: &Transcript) -> Vec<String> {
    let runs = task.runs(transcript);
    let last_change = task
        .events
        .iter()
        .copied()
        .filter(|&i| matches!(transcript.events.get(i), Some(Event::Patch(_))))
        .max();
    let mut fixed = Vec::new();
    let mut unresolved = Vec::new();
    for (position, (at, failed)) in runs.iter().enumerate() {
        if !matches!(failed.status, RunStatus::Failed(_)) {
            continue;
        }
        let keys = failed.line.keys();
        let later = runs.get(position + 1..).unwrap_or(&[]);
        // Another failure of the same check before the pass: that later one carries the lesson.
        let pass = later
            .iter()
            .position(|(_, run)| passes_any(run, &keys, failed));
        let refailed = later
            .iter()
            .take(pass.unwrap_or(later.len()))
            .any(|(_, run)| matches!(run.status, RunStatus::Failed(_)) && run.line.keys() == keys);
        if refailed {
            continue;
        }
        match pass.and_then(|p| later.get(p)) {
            Some((pass_at, passed)) => {
                let attempts = runs
                    .iter()
                    .take(position + 1)
                    .filter(|(_, run)| {
                        matches!(run.status, RunStatus::Failed(_)) && run.line.keys() == keys
                    })
                    .count();
                // The agent often explains a failure just before it acts on it, so its
                // reasoning counts from the run before the failure.
                let reasoning_from = position
                    .checked_sub(1)
                    .and_then(|p| runs.get(p))
                    .map_or(0, |(i, _)| *i);
                let lesson = FixedFailure {
                    failed,
                    passed,
                    attempts,
                    between: (*at, *pass_at),
                    reasoning_from,
                };
                fixed.push(lesson.describe(task, transcript));
            }
            None => {
                // A failure before the last change that nobody re-ran is the bug being shown,
                // not a lesson; one after it is still broken.
                let still_broken = last_change.is_none_or(|change| *at > change)
                    && failed.line.kind() != CommandKind::Inspect;
                if still_broken {
                    unresolved.push(one_line(
                        &format!(
                            "{} {STILL_FAILED}{}; nothing in the session made it pass.",
                            code(&failed.text),
                            error_suffix(failed)
                        ),
                        MAX_LESSON_CHARS,
                    ));
                }
            }
        }
    }
    fixed.extend(unresolved);
    fixed.dedup();
    fixed.truncate(MAX_LESSONS);
    fixed
}

/// True when `run` passed and its success covers one of `keys`, or it ran the same arguments
/// with another program after `failed` could not find its program (`python` -> `python3`).
fn passes_any(run: &Run, keys: &[CommandKey], failed: &Run) -> bool {
    if run.status != RunStatus::Passed {
        return false;
    }
    let covered = check_statuses(run).iter().any(|(key, status)| {
        *status == RunStatus::Passed && keys.iter().any(|failed| key.covers(failed))
    });
    let inspected = failed.line.kind() == CommandKind::Inspect
        && run.line.kind() == CommandKind::Inspect
        && run.line.keys() == *keys;
    let not_found = failed
        .error
        .as_deref()
        .is_some_and(|e| e.to_ascii_lowercase().contains("not found"))
        && same_operands(&failed.line, &run.line);
    covered || inspected || not_found
}

fn same_operands(a: &CommandLine, b: &CommandLine) -> bool {
    let operands = |line: &CommandLine| -> Vec<String> {
        line.checks()
            .first()
            .map(|s| {
                s.command_words()
                    .iter()
                    .skip(1)
                    .map(|w| w.text.clone())
                    .collect()
            })
            .unwrap_or_default()
    };
    let (a, b) = (operands(a), operands(b));
    !a.is_empty() && a == b
}

/// A failure and the run that later passed the same check.
struct FixedFailure<'a> {
    failed: &'a Run,
    passed: &'a Run,
    attempts: usize,
    /// Event indexes of the failure and the pass.
    between: (usize, usize),
    /// Event index after which the agent's commentary may explain the failure.
    reasoning_from: usize,
}

impl FixedFailure<'_> {
    fn describe(&self, task: &Task, transcript: &Transcript) -> String {
        let (from, to) = self.between;
        let inside = |i: &usize| *i > from && *i < to;
        let mut edits: Vec<&SmallEdit> = Vec::new();
        let mut files: Vec<String> = Vec::new();
        let mut ran: Vec<String> = Vec::new();
        for &i in task.events.iter().filter(|i| inside(i)) {
            match transcript.events.get(i) {
                Some(Event::Patch(p)) => {
                    if let Some(patch) = transcript.patches.get(*p) {
                        edits.extend(patch.edit.as_ref());
                        for change in &patch.changes {
                            if !files.contains(&change.path) {
                                files.push(change.path.clone());
                            }
                        }
                    }
                }
                Some(Event::Run(r)) => {
                    if let Some(run) = transcript.runs.get(*r)
                        && run.status == RunStatus::Passed
                        && matches!(run.line.kind(), CommandKind::Work | CommandKind::Edit)
                        && run.line.keys() != self.failed.line.keys()
                        && !ran.contains(&run.text)
                    {
                        ran.push(run.text.clone());
                    }
                }
                _ => {}
            }
        }
        let mut how = Vec::new();
        if let Some(word) = self.passed.line.newly_quoted_word(&self.failed.line) {
            how.push(format!(
                "quoting {} (it has shell metacharacters)",
                code(word)
            ));
        }
        how.extend(self.argument_changes());
        if !ran.is_empty() {
            let ran: Vec<String> = ran.iter().map(|r| code(r)).collect();
            how.push(format!("running {} first", capped_join(&ran, 3)));
        }
        match edits.as_slice() {
            [edit] if files.len() == 1 => how.push(describe_edit(edit)),
            _ if !files.is_empty() => how.push(format!("changing {}", capped_join(&files, 4))),
            _ => {}
        }
        let failed = code(&self.failed.text);
        let attempts = if self.attempts > 1 {
            format!(" ({} times)", self.attempts)
        } else {
            String::new()
        };
        let passed = if self.passed.text == self.failed.text {
            "it passed".to_owned()
        } else {
            format!("{} passed", code(&self.passed.text))
        };
        let how = if how.is_empty() {
            " on a later run with nothing changed in between (likely flaky)".to_owned()
        } else {
            format!(" after {}", how.join(", "))
        };
        let cause = self
            .cause(task, self.reasoning_from, to)
            .map(|cause| format!(" Cause noted: {cause}"))
            .unwrap_or_default();
        one_line(
            &format!(
                "{failed} failed{attempts}{}; {passed}{how}.{cause}",
                error_suffix(self.failed)
            ),
            MAX_LESSON_CHARS,
        )
    }

    /// Options and arguments the passing run added or dropped in the check it shares with
    /// the failure, and a folder change.
    fn argument_changes(&self) -> Vec<String> {
        let shared = self.failed.line.checks().into_iter().find_map(|failed| {
            let key = failed.key();
            self.passed
                .line
                .checks()
                .into_iter()
                .find(|passed| passed.key() == key)
                .map(|passed| (failed, passed))
        });
        let mut out = Vec::new();
        if let Some((failed, passed)) = shared {
            let words = |segment: &memory_transcript::shell::Segment| -> Vec<String> {
                segment
                    .command_words()
                    .iter()
                    .map(|w| w.text.clone())
                    .collect()
            };
            let (before, after) = (words(failed), words(passed));
            let added: Vec<String> = after
                .iter()
                .filter(|w| !before.contains(w))
                .map(|w| code(w))
                .collect();
            let dropped: Vec<String> = before
                .iter()
                .filter(|w| !after.contains(w))
                .map(|w| code(w))
                .collect();
            if !added.is_empty() && added.len() <= 3 {
                out.push(format!("adding {}", capped_join(&added, 3)));
            }
            if !dropped.is_empty() && dropped.len() <= 3 {
                out.push(format!("dropping {}", capped_join(&dropped, 3)));
            }
        }
        let folder = |run: &Run| {
            run.line
                .cd_target()
                .map(str::to_owned)
                .or_else(|| run.workdir.clone())
        };
        if let Some(dir) = folder(self.passed)
            && folder(self.failed) != Some(dir.clone())
        {
            out.push(format!("running it in {}", code(&dir)));
        }
        out
    }

    /// The agent's explanation between the failure and the pass: the first sentence of its
    /// commentary that names a cause.
    fn cause(&self, task: &Task, from: usize, to: usize) -> Option<String> {
        task.commentary
            .iter()
            .filter(|(i, _)| *i > from && *i < to)
            .flat_map(|(_, text)| sentences(text))
            .find(|sentence| {
                let lower = sentence.to_ascii_lowercase();
                CAUSE_MARKERS.iter().any(|marker| lower.contains(marker))
                    && !lower.starts_with("i'll")
                    && !lower.starts_with("let me")
            })
            .map(|sentence| one_line(&sentence, MAX_CAUSE_CHARS))
    }
}

fn describe_edit(edit: &SmallEdit) -> String {
    let quote = |lines: &[String]| -> String {
        lines
            .iter()
            .map(|l| code(l))
            .collect::<Vec<_>>()
            .join(" / ")
    };
    match (edit.removed.is_empty(), edit.added.is_empty()) {
        (false, false) => format!(
            "changing {} in {} to {}",
            quote(&edit.removed),
            edit.path,
            quote(&edit.added)
        ),
        (true, false) => format!("adding {} to {}", quote(&edit.added), edit.path),
        (false, true) => format!("removing {} from {}", quote(&edit.removed), edit.path),
        (true, true) => format!("changing {}", edit.path),
    }
}

/// ` (exit 101: error line)` for a failed run.
pub(crate) fn error_suffix(run: &Run) -> String {
    let exit = match run.status {
        RunStatus::Failed(Some(code)) => Some(format!("exit {code}")),
        _ => None,
    };
    match (exit, &run.error) {
        (Some(exit), Some(error)) => format!(" ({exit}: {})", code(error)),
        (Some(exit), None) => format!(" ({exit})"),
        (None, Some(error)) => format!(" ({})", code(error)),
        (None, None) => String::new(),
    }
}
