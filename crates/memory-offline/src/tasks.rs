//! Splitting a session into tasks.
//!
//! A user message that asks for something starts a task when there is none yet, when it says
//! so (`next, ...`), or when the previous task's turn ended (the agent answered) and the
//! message does not continue it (`also ...`, `still fails`, a correction). A message that only
//! reacts or states preferences belongs to the current task; its leading reaction (`Thanks!
//! Next, ...`) is the verdict on the task before. Preferences stated before any request go to
//! the first task.

use super::text::content_words;
use super::transcript::Event as TimelineEvent;
use super::transcript::{Event, Run, Transcript};
use super::user_text::{FollowUp, Reaction, read_user_message, title_from_requests};

/// Longest task title, in characters.
pub(crate) const MAX_TITLE_CHARS: usize = 120;

/// One task of a session.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Task {
    /// What the user asked, sentence by sentence.
    pub requests: Vec<String>,
    /// Preferences stated while the task ran, as rules.
    pub preferences: Vec<String>,
    /// Facts the user asked to be remembered (`Remember: staging listens on port 6543`).
    pub facts: Vec<String>,
    /// Reactions to the task, with the index of the event they came in.
    pub reactions: Vec<(usize, Reaction)>,
    /// Indexes into [`Transcript::events`] of everything the task did.
    pub events: Vec<usize>,
    /// The agent's last answer (a final answer when the session marked one).
    pub answer: Option<String>,
    /// Assistant messages that were not the answer, in order (the agent's reasoning aloud).
    pub commentary: Vec<(usize, String)>,
    /// True once the agent answered after the task's last user message.
    turn_done: bool,
    /// True when `answer` is one the session marked as final.
    answer_is_final: bool,
}

impl Task {
    /// The task's title: its first request with content, else a description of what it did.
    pub(crate) fn title(&self) -> Option<String> {
        title_from_requests(&self.requests, MAX_TITLE_CHARS)
    }

    /// The commands the task ran, each with its index into [`Transcript::events`], in order.
    pub(crate) fn runs<'t>(&self, transcript: &'t Transcript) -> Vec<(usize, &'t Run)> {
        self.events
            .iter()
            .filter_map(|&i| match transcript.events.get(i) {
                Some(Event::Run(run)) => transcript.runs.get(*run).map(|r| (i, r)),
                _ => None,
            })
            .collect()
    }

    /// True when the task ran any command, patched any file or searched the web.
    pub(crate) fn had_activity(&self, transcript: &Transcript) -> bool {
        self.events.iter().any(|&i| {
            matches!(
                transcript.events.get(i),
                Some(Event::Run(_) | Event::Patch(_) | Event::FailedPatch(_) | Event::Search(_))
            )
        })
    }

    /// True when the user gave up on the task before the agent answered it (an interrupted
    /// run, `wrong repo, ignore this`) and nothing was changed: there is nothing to remember.
    pub(crate) fn dropped_before_an_answer(&self, transcript: &Transcript) -> bool {
        let Some(dropped_at) = self
            .reactions
            .iter()
            .find(|(_, reaction)| *reaction == Reaction::Abandon)
            .map(|(at, _)| *at)
        else {
            return false;
        };
        self.preferences.is_empty()
            && self.facts.is_empty()
            && !self.events.iter().any(|&i| match transcript.events.get(i) {
                Some(Event::Patch(_) | Event::FailedPatch(_)) => true,
                Some(Event::Assistant {
                    final_answer: true, ..
                }) => i < dropped_at,
                _ => false,
            })
    }

    /// The last reaction, if nothing was run or changed after it.
    pub(crate) fn final_reaction(&self, transcript: &Transcript) -> Option<Reaction> {
        let (at, reaction) = *self.reactions.last()?;
        let work_after = self.events.iter().any(|&i| {
            i > at
                && matches!(
                    transcript.events.get(i),
                    Some(Event::Run(_) | Event::Patch(_))
                )
        });
        (!work_after).then_some(reaction)
    }
}

/// Splits the transcript into tasks (see the module docs). Preferences stated in a session
/// with no request at all come back in a task of their own with no requests.
pub(crate) fn split_tasks(transcript: &Transcript) -> Vec<Task> {
    let mut tasks: Vec<Task> = Vec::new();
    let mut early_preferences: Vec<String> = Vec::new();
    let mut early_facts: Vec<String> = Vec::new();
    for (index, event) in transcript.events.iter().enumerate() {
        match event {
            Event::User(text) => {
                let message = read_user_message(text);
                let starts_new = !message.requests.is_empty()
                    && match tasks.last() {
                        None => true,
                        Some(current) => {
                            let done = current.turn_done && current.had_activity(transcript);
                            message.new_task
                                || match message.follow_up {
                                    FollowUp::Hard => false,
                                    FollowUp::No => done,
                                    // `Also, ...` about something else entirely is a new task.
                                    FollowUp::Soft => {
                                        done && !shares_topic(
                                            current,
                                            transcript,
                                            &message.requests,
                                        )
                                    }
                                }
                        }
                    };
                if starts_new {
                    let leading = message.leading_reactions.len();
                    if let Some(previous) = tasks.last_mut() {
                        previous
                            .reactions
                            .extend(message.leading_reactions.iter().map(|r| (index, *r)));
                    }
                    let mut task = Task {
                        requests: message.requests,
                        preferences: std::mem::take(&mut early_preferences),
                        facts: std::mem::take(&mut early_facts),
                        reactions: message
                            .reactions
                            .iter()
                            .skip(leading)
                            .map(|r| (index, *r))
                            .collect(),
                        ..Task::default()
                    };
                    extend_distinct(&mut task.preferences, message.preferences);
                    extend_distinct(&mut task.facts, message.facts);
                    task.events.push(index);
                    tasks.push(task);
                } else if let Some(current) = tasks.last_mut() {
                    current.requests.extend(message.requests);
                    extend_distinct(&mut current.preferences, message.preferences);
                    extend_distinct(&mut current.facts, message.facts);
                    current
                        .reactions
                        .extend(message.reactions.iter().map(|r| (index, *r)));
                    current.events.push(index);
                    current.turn_done = false;
                } else {
                    extend_distinct(&mut early_preferences, message.preferences);
                    extend_distinct(&mut early_facts, message.facts);
                }
            }
            Event::Assistant { text, final_answer } => {
                let Some(current) = tasks.last_mut() else {
                    continue;
                };
                current.events.push(index);
                if *final_answer {
                    current.answer = Some(text.clone());
                    current.answer_is_final = true;
                } else {
                    current.commentary.push((index, text.clone()));
                    if !current.answer_is_final {
                        current.answer = Some(text.clone());
                    }
                }
                current.turn_done = true;
            }
            Event::Run(_) | Event::Patch(_) | Event::FailedPatch(_) | Event::Search(_) => {
                if tasks.is_empty() {
                    // Work before any request (the request was only injected context).
                    tasks.push(Task {
                        preferences: std::mem::take(&mut early_preferences),
                        facts: std::mem::take(&mut early_facts),
                        ..Task::default()
                    });
                }
                if let Some(current) = tasks.last_mut() {
                    current.events.push(index);
                    current.turn_done = false;
                }
            }
        }
    }
    if tasks.is_empty() && !(early_preferences.is_empty() && early_facts.is_empty()) {
        tasks.push(Task {
            preferences: early_preferences,
            facts: early_facts,
            ..Task::default()
        });
    }
    tasks
}

/// Words of a request too general to tie it to a task.
const GENERIC: [&str; 16] = [
    "add",
    "make",
    "fix",
    "change",
    "update",
    "should",
    "before",
    "after",
    "anything",
    "something",
    "everything",
    "thing",
    "things",
    "sure",
    "way",
    "command",
];

/// True when the requests share a topic word with the task: a word of its requests or a name
/// of a file it changed.
fn shares_topic(task: &Task, transcript: &Transcript, requests: &[String]) -> bool {
    let topical = |text: &str| -> Vec<String> {
        content_words(text)
            .into_iter()
            .filter(|w| w.len() >= 3 && !GENERIC.contains(&w.as_str()))
            .collect()
    };
    let mut known: Vec<String> = task.requests.iter().flat_map(|r| topical(r)).collect();
    for &index in &task.events {
        if let Some(TimelineEvent::Patch(p)) = transcript.events.get(index)
            && let Some(patch) = transcript.patches.get(*p)
        {
            for change in &patch.changes {
                known.extend(topical(&change.path));
            }
        }
    }
    requests
        .iter()
        .flat_map(|r| topical(r))
        .any(|word| known.contains(&word))
}

fn extend_distinct(list: &mut Vec<String>, items: Vec<String>) {
    for item in items {
        if !list.contains(&item) {
            list.push(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(events: Vec<Event>) -> Transcript {
        Transcript {
            events,
            ..Transcript::default()
        }
    }

    fn user(text: &str) -> Event {
        Event::User(text.into())
    }

    fn answer(text: &str) -> Event {
        Event::Assistant {
            text: text.into(),
            final_answer: true,
        }
    }

    #[test]
    fn a_new_request_after_an_answer_starts_a_task_and_follow_ups_do_not() {
        let mut transcript = events(vec![
            user("Bump the version in Cargo.toml to 1.4.0."),
            Event::Run(0),
            answer("Bumped."),
            user("Also update the changelog entry for it."),
            Event::Run(0),
            answer("Updated."),
            user("Thanks! Now fix the broken README badge link."),
            Event::Run(0),
            answer("Fixed the badge."),
        ]);
        transcript.runs.push(super::super::transcript::Run {
            text: "x".into(),
            line: memory_transcript::shell::CommandLine::parse("x"),
            workdir: None,
            status: super::super::tool_output::RunStatus::Passed,
            error: None,
        });
        let tasks = split_tasks(&transcript);
        assert_eq!(tasks.len(), 2, "{tasks:#?}");
        assert_eq!(tasks[0].requests.len(), 2);
        assert_eq!(tasks[0].reactions, [(6, Reaction::Positive)]);
        assert_eq!(tasks[1].answer.as_deref(), Some("Fixed the badge."));
        assert_eq!(
            tasks[1].title().as_deref(),
            Some("Fix the broken README badge link")
        );
    }

    #[test]
    fn preferences_without_requests_stay_with_the_task() {
        let transcript = events(vec![
            user("Never push to main directly."),
            user("Fix the login redirect."),
            answer("Done."),
            user("Great. Please always run the linter first."),
        ]);
        let tasks = split_tasks(&transcript);
        assert_eq!(tasks.len(), 1);
        assert_eq!(
            tasks[0].preferences,
            [
                "Never push to main directly.",
                "Always run the linter first."
            ]
        );
        assert_eq!(
            tasks[0].final_reaction(&transcript),
            Some(Reaction::Positive)
        );
    }
}
