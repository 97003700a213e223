//! Judging how a task ended, from evidence in this order: the user's reaction, the checks run
//! after the last change (every `&&` segment counts), the agent's own final answer.
//!
//! - `fail`: the user gave up on it or rejected the result, or a check still fails and
//!   nothing after the last change passed, or the answer admits it is not done and nothing
//!   was changed;
//! - `partial`: a check still fails at the end, but something was changed and another check
//!   passed after the change; or the answer admits the task is unfinished after a change;
//! - `success`: every check run after the last change passed, or the user approved, or a
//!   question was answered from real work (the commands ran; failing tests can be the answer);
//! - `uncertain`: no real work (only looking around), or changes nobody verified.

use std::collections::BTreeMap;

use memory_protocol::memory_format::TaskOutcome;

use super::tasks::Task;
use super::text::sentences;
use super::tool_output::RunStatus;
use super::transcript::{Event, Run, Transcript};
use super::user_text::{Reaction, asks_for_information};
use memory_transcript::shell::{CommandKey, CommandKind};

/// Phrases with which an answer admits the task is not done.
const ADMISSIONS: [&str; 18] = [
    "could not",
    "couldn't",
    "was unable to",
    "were unable to",
    "wasn't able to",
    "was not able to",
    "unable to",
    "still fail",
    "still failing",
    "did not manage",
    "didn't manage",
    "not fixed",
    "remains broken",
    "still broken",
    "blocked by",
    "haven't been able",
    "without success",
    "not able to",
];

/// The outcome of a task and a short note on the evidence.
pub(crate) fn judge(task: &Task, transcript: &Transcript) -> (TaskOutcome, String) {
    let evidence = Evidence::gather(task, transcript);
    let reaction = task.final_reaction(transcript);
    if task.reactions.iter().any(|(_, r)| *r == Reaction::Abandon) {
        return (TaskOutcome::Fail, "the user dropped it".to_owned());
    }
    if !evidence.real_work {
        return (
            TaskOutcome::Uncertain,
            "nothing was changed or built; only looked around".to_owned(),
        );
    }
    if reaction == Some(Reaction::Negative) {
        let outcome = if evidence.changed && !evidence.passing.is_empty() {
            TaskOutcome::Partial
        } else {
            TaskOutcome::Fail
        };
        return (outcome, "the user said it was still wrong".to_owned());
    }
    // Progress is a change: checks that pass without one did not move the task forward.
    let did_something = evidence.changed;
    if asks_for_information(&task.requests)
        && !evidence.changed
        && task
            .answer
            .as_deref()
            .is_some_and(|answer| !admits_failure(answer))
    {
        return (
            TaskOutcome::Success,
            "the question was answered from the commands run".to_owned(),
        );
    }
    if let Some(failing) = evidence.failing.first() {
        // Part of it works only when something passed after the last change too.
        let outcome = if did_something && !evidence.passing.is_empty() {
            TaskOutcome::Partial
        } else {
            TaskOutcome::Fail
        };
        return (outcome, format!("`{failing}` still failed at the end"));
    }
    if task.answer.as_deref().is_some_and(admits_failure) {
        let outcome = if did_something {
            TaskOutcome::Partial
        } else {
            TaskOutcome::Fail
        };
        return (outcome, "the final answer says it is not done".to_owned());
    }
    if !evidence.passing.is_empty() {
        let checks = evidence.passing.join("`, `");
        return (
            TaskOutcome::Success,
            format!("`{checks}` passed after the last change"),
        );
    }
    if reaction == Some(Reaction::Positive) {
        return (
            TaskOutcome::Success,
            "the user approved the result".to_owned(),
        );
    }
    (
        TaskOutcome::Uncertain,
        "changes were made but nothing verified them".to_owned(),
    )
}

/// Words that report a problem solved. An admission that a later clause of its sentence
/// resolves ("could not import the package; after `pip install -e .` all tests pass") tells
/// the cause, not the end; within the admission's own clause the word is under its negation
/// ("unable to make the tests pass").
const RESOLUTIONS: [&str; 10] = [
    "pass",
    "passes",
    "passed",
    "works",
    "worked",
    "fixed",
    "resolved",
    "succeeds",
    "succeeded",
    "green",
];

/// Where a later clause, one that reports what happened next, starts (a colon or a comma only
/// explains: "could not reproduce it: `npm run lint` passes here").
const CLAUSE_BREAKS: [&str; 5] = [";", " but ", " after ", " then ", " now "];

/// Whether the answer admits the task is not done: some sentence holds an admission that no
/// later clause of that sentence resolves.
fn admits_failure(answer: &str) -> bool {
    sentences(&answer.to_lowercase())
        .iter()
        .any(|sentence| match last_admission(sentence) {
            Some(end) => !resolved_after(sentence.get(end..).unwrap_or_default()),
            None => false,
        })
}

/// Whether a clause of `rest` after its first break reports the problem solved.
fn resolved_after(rest: &str) -> bool {
    let Some(next_clause) = CLAUSE_BREAKS
        .iter()
        .filter_map(|mark| rest.find(mark).map(|at| at + mark.len()))
        .min()
    else {
        return false;
    };
    rest.get(next_clause..)
        .unwrap_or_default()
        .split(|ch: char| !ch.is_alphanumeric())
        .any(|word| RESOLUTIONS.contains(&word))
}

/// Where the sentence's last admission ends.
fn last_admission(sentence: &str) -> Option<usize> {
    ADMISSIONS
        .iter()
        .filter_map(|phrase| sentence.rfind(phrase).map(|at| at + phrase.len()))
        .max()
}

/// What the task's events show.
struct Evidence {
    /// Something was changed, built, run or committed (not only looked at).
    real_work: bool,
    /// A file was changed (patch or editing command).
    changed: bool,
    /// Checks whose last run after the last change passed (the command text).
    passing: Vec<String>,
    /// Checks whose last run after the last change failed (the command text).
    failing: Vec<String>,
}

impl Evidence {
    fn gather(task: &Task, transcript: &Transcript) -> Evidence {
        let runs: Vec<(usize, &Run)> = task
            .events
            .iter()
            .filter_map(|&i| match transcript.events.get(i) {
                Some(Event::Run(run)) => transcript.runs.get(*run).map(|r| (i, r)),
                _ => None,
            })
            .collect();
        let last_change = task
            .events
            .iter()
            .copied()
            .filter(|&i| match transcript.events.get(i) {
                Some(Event::Patch(_)) => true,
                Some(Event::Run(run)) => transcript.runs.get(*run).is_some_and(|r| {
                    r.line.kind() == CommandKind::Edit && r.status == RunStatus::Passed
                }),
                _ => false,
            })
            .max();
        let changed = last_change.is_some();
        let real_work = changed
            || runs.iter().any(|(_, run)| {
                run.status != RunStatus::Unknown && run.line.kind() != CommandKind::Inspect
            });
        // The last status of every check after the last change, by key.
        let mut last: BTreeMap<CommandKey, (RunStatus, String)> = BTreeMap::new();
        for (_, run) in runs
            .iter()
            .filter(|(i, _)| last_change.is_none_or(|change| *i > change))
        {
            if !matches!(
                run.line.kind(),
                CommandKind::Work | CommandKind::VersionControl
            ) || run.status == RunStatus::Unknown
            {
                continue;
            }
            for (key, status) in check_statuses(run) {
                if status == RunStatus::Passed {
                    // A pass of the whole suite settles the earlier runs of its parts.
                    for (known, entry) in last.iter_mut() {
                        if key.covers(known) {
                            *entry = (RunStatus::Passed, run.text.clone());
                        }
                    }
                }
                last.insert(key, (status, run.text.clone()));
            }
        }
        let mut passing = Vec::new();
        let mut failing = Vec::new();
        for (status, text) in last.into_values() {
            let list = if status == RunStatus::Passed {
                &mut passing
            } else {
                &mut failing
            };
            if !list.contains(&text) {
                list.push(text);
            }
        }
        Evidence {
            real_work,
            changed,
            passing,
            failing,
        }
    }
}

/// What one run says about each of its checks: a passing `a && b` passes both; a passing
/// `a; b` only says `b` passed; a failing run fails the checks it could have failed on (all of
/// them, since the output rarely says which).
pub(crate) fn check_statuses(run: &Run) -> Vec<(CommandKey, RunStatus)> {
    let checks: Vec<_> = run
        .line
        .checks()
        .into_iter()
        .filter(|s| s.kind() != CommandKind::Inspect)
        .collect();
    match run.status {
        RunStatus::Passed if run.line.all_checks_known_on_success() => checks
            .iter()
            .map(|s| (s.key(), RunStatus::Passed))
            .collect(),
        RunStatus::Passed => checks
            .last()
            .map(|s| vec![(s.key(), RunStatus::Passed)])
            .unwrap_or_default(),
        RunStatus::Failed(code) => checks
            .iter()
            .map(|s| (s.key(), RunStatus::Failed(code)))
            .collect(),
        RunStatus::Unknown => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn an_admission_is_read_within_its_sentence_and_clause() {
        assert!(admits_failure(
            "I could not deploy: the SSH key is rejected."
        ));
        assert!(admits_failure("I was unable to make the tests pass."));
        assert!(admits_failure(
            "The build works. I could not get the linter to run, so I stopped."
        ));
        assert!(admits_failure("Tests pass, but the crash is not fixed."));
        assert!(admits_failure(
            "I could not reproduce the lint failure locally: `npm run lint` passes here."
        ));
        assert!(!admits_failure(
            "The tests could not import the package because it was not installed; after `pip install -e .` all 41 tests pass."
        ));
        assert!(!admits_failure(
            "It was unable to find the config at first, but now it works."
        ));
        assert!(!admits_failure("Done: all 12 tests pass."));
    }

    proptest! {
        #[test]
        fn any_answer_is_judged_without_panicking(answer in "(\\PC|[.;,:!?\n]| but | could not | pass ){0,80}") {
            let _ = admits_failure(&answer);
            // An answer without any admission phrase never admits.
            let clean: String = answer.replace("could not", "could");
            let lowered = clean.to_lowercase();
            if !ADMISSIONS.iter().any(|phrase| lowered.contains(phrase)) {
                prop_assert!(!admits_failure(&clean));
            }
        }
    }
}
