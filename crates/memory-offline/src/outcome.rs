//! Judging how a task ended, from evidence in this order: the user's reaction, the checks run
//! after the last change (every `&&` segment counts), the agent's own final answer.
//!
//! - `fail`: the user gave up on it, rejected it (`revert it`) or said it was still wrong, or a
//!   check still fails and nothing after the last change passed or the answer admits the task
//!   failed, or the answer admits it is not done and nothing was changed;
//! - `partial`: a check still fails at the end, but something was changed and another check
//!   passed after the change; or the answer says part of it is left (`two of the three`,
//!   `the remaining ...`) after a change;
//! - `success`: every check run after the last change passed, or the user approved, or a
//!   question was answered from real work (the commands ran; failing tests can be the answer);
//! - `uncertain`: no real work (only looking around), changes nobody verified, or a change the
//!   agent says it could not check (no Docker daemon, no network) that the user did not approve.
//!
//! Admissions are read in the languages users write in, and only within their clause: `could not
//! import the package; after pip install -e . all tests pass` reports a cause, not the end.

use std::collections::BTreeMap;

use memory_protocol::memory_format::TaskOutcome;

use super::tasks::Task;
use super::text::sentences;
use super::tool_output::RunStatus;
use super::transcript::{Event, Run, Transcript};
use super::user_text::{Reaction, asks_for_information};
use memory_transcript::shell::{CommandKey, CommandKind};

/// Phrases with which an answer admits the task is not done, in the languages users write in
/// (matched on the answer lowercased with `str::to_lowercase`).
const ADMISSIONS: [&str; 40] = [
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
    "无法",
    "没能",
    "未能",
    "没有成功",
    "できませんでした",
    "できなかった",
    "못했",
    "не удалось",
    "не смог",
    "не получилось",
    "n'ai pas pu",
    "pas réussi",
    "no pude",
    "no he podido",
    "no logré",
    "konnte nicht",
    "nicht geschafft",
    "não consegui",
    "non sono riuscit",
    "non ho potuto",
    "nie udało",
    "niet gelukt",
];

/// Phrases with which an answer says the agent could not check its change (no Docker daemon,
/// no network for the build): the change is unverified, not failed.
const UNVERIFIED: [&str; 45] = [
    "i couldn't check",
    "i could not check",
    "i couldn't verify",
    "i could not verify",
    "i can't verify",
    "i cannot verify",
    "i couldn't test",
    "i could not test",
    "i couldn't run the tests",
    "i could not run the tests",
    "i can't render",
    "i cannot render",
    "i can't run the",
    "i cannot run the",
    "change is unverified",
    "changes are unverified",
    "could not be verified",
    "couldn't be verified",
    "could not be tested",
    "couldn't be tested",
    "i haven't tested",
    "i have not tested",
    "i didn't test",
    "i did not test",
    "not been tested",
    "无法验证",
    "未验证",
    "没有验证",
    "確認できませんでした",
    "検証できませんでした",
    "확인하지 못했",
    "확인하지 못",
    "검증하지 못",
    "검증은 못",
    "확인은 못",
    "nicht getestet",
    "nicht überprüfen",
    "no pude probar",
    "no pude verificar",
    "não consegui testar",
    "non ho potuto testare",
    "niet getest",
    "nie przetestowa",
    "не проверил",
    "не удалось проверить",
];

/// Phrases with which an answer says part of the task is left (`the rest`, `still needs`).
const PARTS_LEFT: [&str; 20] = [
    "remaining ",
    "left to do",
    "still to do",
    "still needs",
    "still need to",
    "not yet done",
    "noch nicht",
    "pas encore",
    "reste à",
    "todavía no",
    "aún no",
    "ainda não",
    "non ancora",
    "ancora da",
    "nog niet",
    "jeszcze nie",
    "ещё не",
    "еще не",
    "还没",
    "尚未",
];

/// The word between a part and its whole (`two of the three`, `2 z 3`, `2 von 3`).
const PART_OF: [&str; 8] = ["of", "z", "von", "de", "di", "van", "из", "sur"];

/// The outcome of a task and a short note on the evidence.
pub(crate) fn judge(task: &Task, transcript: &Transcript) -> (TaskOutcome, String) {
    let evidence = Evidence::gather(task, transcript);
    let reaction = task.final_reaction(transcript);
    let answer = task.answer.as_deref().unwrap_or_default();
    let unverified = says_unverified(answer);
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
        && task.answer.is_some()
        && !admits_failure(answer)
    {
        return (
            TaskOutcome::Success,
            "the question was answered from the commands run".to_owned(),
        );
    }
    if did_something && unverified {
        // The user's own check settles what the agent could not.
        if reaction == Some(Reaction::Positive) {
            return (
                TaskOutcome::Success,
                "the user checked and approved the change".to_owned(),
            );
        }
        return (
            TaskOutcome::Uncertain,
            "the agent could not check its change".to_owned(),
        );
    }
    if let Some(failing) = evidence.failing.first() {
        // Part of it works only when something passed after the last change too, and the
        // answer does not say the task itself failed.
        let outcome = if did_something
            && !evidence.passing.is_empty()
            && (!admits_failure(answer) || parts_left(answer))
        {
            TaskOutcome::Partial
        } else {
            TaskOutcome::Fail
        };
        return (outcome, format!("`{failing}` still failed at the end"));
    }
    if admits_failure(answer) {
        let outcome = if did_something && (parts_left(answer) || !evidence.passing.is_empty()) {
            TaskOutcome::Partial
        } else {
            TaskOutcome::Fail
        };
        return (outcome, "the final answer says it is not done".to_owned());
    }
    if did_something && parts_left(answer) {
        return (
            TaskOutcome::Partial,
            "the final answer says part of it is left".to_owned(),
        );
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

/// Whether the answer says the agent could not check its change.
fn says_unverified(answer: &str) -> bool {
    let lower = answer.to_lowercase().replace('\u{2019}', "'");
    UNVERIFIED.iter().any(|phrase| lower.contains(phrase))
}

/// Number words, for `two of the three`.
const NUMBER_WORDS: [&str; 10] = [
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
];

/// Whether the answer says part of the task is left: `N of (the) M` with N below M, or a
/// phrase of what remains.
fn parts_left(answer: &str) -> bool {
    let lower = answer.to_lowercase();
    if PARTS_LEFT.iter().any(|phrase| lower.contains(phrase)) {
        return true;
    }
    let number = |word: &str| -> Option<usize> {
        word.parse().ok().or_else(|| {
            NUMBER_WORDS
                .iter()
                .position(|known| *known == word)
                .map(|at| at + 1)
        })
    };
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect();
    words.windows(3).enumerate().any(|(at, w)| {
        let whole = if w[2] == "the" {
            words.get(at + 3).copied()
        } else {
            Some(w[2])
        };
        PART_OF.contains(&w[1])
            && matches!(
                (number(w[0]), whole.and_then(number)),
                (Some(part), Some(all)) if part < all
            )
    })
}

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
        let runs = task.runs(transcript);
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

    #[test]
    fn admissions_in_other_languages_unverified_changes_and_parts_left_are_read() {
        assert!(admits_failure("本地无法复现这个问题。"));
        assert!(admits_failure("Je n'ai pas pu reproduire le bug."));
        assert!(admits_failure("Не удалось запустить миграцию."));
        assert!(says_unverified(
            "Updated the config. I couldn't verify it: there is no Docker daemon here."
        ));
        assert!(says_unverified(
            "I can\u{2019}t render the page here, please check it."
        ));
        assert!(!says_unverified(
            "The macros can't verify a runtime ORDER BY."
        ));
        assert!(parts_left("Three of the five handlers are ported."));
        assert!(parts_left("2 of 3 queries use the macro now."));
        assert!(parts_left("The remaining two endpoints still use Flask."));
        assert!(!parts_left("One of the tests was flaky; all pass now."));
        assert!(!parts_left("All 5 of 5 checks pass."));
        assert!(says_unverified("설정을 바꿨지만 확인하지 못했습니다."));
        assert!(says_unverified("설정은 바꿨지만 검증은 못 했습니다."));
        assert!(says_unverified(
            "The change could not be verified without a device."
        ));
        assert!(parts_left("Zrobione: 2 z 3 DTO."));
        assert!(parts_left("简体已完成，繁体还没翻译。"));
        assert!(parts_left("Die Hälfte ist portiert, der Rest noch nicht."));
    }

    proptest! {
        #[test]
        fn parts_left_needs_a_smaller_part(part in 0usize..20, all in 0usize..20, filler in "[xyz ,.;:]{0,40}") {
            let answer = format!("{filler} {part} of the {all} items are done.");
            prop_assert_eq!(parts_left(&answer), part < all);
        }

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
