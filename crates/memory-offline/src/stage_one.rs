//! Stage-one extraction: one rollout's structured input to `{raw_memory, rollout_summary,
//! rollout_slug}`, in the format of [`memory_protocol::memory_format`].
//!
//! The session is split into tasks; each task gets its title (from what the user asked, never
//! from injected context), its outcome judged from evidence, the preferences the user stated,
//! its failure lessons, the commands verified in it and the files it changed. A session with
//! no tool activity and no stated preference has nothing reusable and gets the no-op answer.

use memory_protocol::StageOneOutput;
use memory_protocol::memory_format::{
    FrontMatter, RawMemory, Section, TaskBlock, TaskOutcome, sections,
};
use memory_protocol::stage_one::StageOneInput;

use super::lessons::{MAX_LESSONS, STILL_FAILED, error_suffix, lessons};
use super::outcome::judge;
use super::tasks::{Task, split_tasks};
use super::text::{
    MAX_LINE_CHARS, capped_join, code, content_words, one_line, push_distinct, sentences,
};
use super::tool_output::RunStatus;
use super::transcript::{Event, Transcript};
use super::user_text::asks_for_information;
use super::{MAX_RAW_MEMORY_CHARS, MAX_SLUG_CHARS, MAX_SUMMARY_CHARS, OFFLINE_NOTICE};
use memory_transcript::shell::CommandKind;

const MAX_PREFERENCES: usize = 10;
const MAX_FACTS: usize = 10;
const MAX_STEPS: usize = 24;
const MAX_VERIFIED: usize = 6;
const MAX_FILES: usize = 20;
const MAX_KEYWORDS: usize = 10;
const MAX_ANSWER_CHARS: usize = 320;
/// Prefix of the knowledge item listing a task's passing commands (the summary reads it back).
pub(crate) const PASSED_PREFIX: &str = "Commands that passed here: ";

/// Words of a title that say what kind of request it is, not what it is about.
const GENERIC_WORDS: [&str; 24] = [
    "fix", "make", "add", "update", "change", "run", "use", "get", "set", "check", "try", "see",
    "look", "figure", "out", "why", "work", "works", "working", "instead", "new", "code", "file",
    "thing",
];

/// Extracts a stage-one output from one rollout's structured input.
pub(crate) fn extract_memory(input: &StageOneInput) -> StageOneOutput {
    let transcript = Transcript::read(&input.items);
    let all_tasks = split_tasks(&transcript);
    // A question answered without tools is part of a session's work when other tasks ran
    // tools; alone (`what is a borrow checker?`) it is general knowledge, nothing to remember.
    let session_worked = all_tasks.iter().any(|task| task.had_activity(&transcript));
    let tasks: Vec<Task> = all_tasks
        .into_iter()
        .filter(|task| {
            task.had_activity(&transcript)
                || !task.preferences.is_empty()
                || !task.facts.is_empty()
                || (session_worked && task.answer.is_some() && asks_for_information(&task.requests))
        })
        .filter(|task| !task.dropped_before_an_answer(&transcript))
        .collect();
    if tasks.is_empty() {
        return StageOneOutput {
            raw_memory: String::new(),
            rollout_summary: String::new(),
            rollout_slug: Some(String::new()),
        };
    }
    let views: Vec<TaskView> = tasks
        .iter()
        .map(|task| TaskView::new(task, &transcript, input))
        .collect();
    StageOneOutput {
        raw_memory: cap_text(&raw_memory(&views, input), MAX_RAW_MEMORY_CHARS),
        rollout_summary: cap_text(&summary(&views, &transcript, input), MAX_SUMMARY_CHARS),
        rollout_slug: Some(slug(&views[0].title)),
    }
}

/// What one task shows, ready to render.
struct TaskView {
    title: String,
    outcome: TaskOutcome,
    note: String,
    preferences: Vec<String>,
    facts: Vec<String>,
    lessons: Vec<String>,
    verified: Vec<String>,
    answer: Option<String>,
    searches: Vec<String>,
    files: Vec<String>,
    steps: Vec<String>,
    keywords: Vec<String>,
}

impl TaskView {
    fn new(task: &Task, transcript: &Transcript, input: &StageOneInput) -> TaskView {
        let title = task.title().unwrap_or_else(|| {
            if task.had_activity(transcript) {
                format!("Work in {}", cwd_name(input))
            } else {
                format!("Preferences stated in {}", cwd_name(input))
            }
        });
        let (outcome, note) = judge(task, transcript);
        let mut verified = Vec::new();
        let mut files = Vec::new();
        let mut searches = Vec::new();
        let mut keywords = Vec::new();
        for word in content_words(&title)
            .into_iter()
            .filter(|w| (3..=24).contains(&w.len()) && !GENERIC_WORDS.contains(&w.as_str()))
            .filter(|w| w.chars().any(|c| c.is_ascii_alphabetic()))
            .take(4)
        {
            push_distinct(&mut keywords, word, MAX_KEYWORDS);
        }
        for &index in &task.events {
            match transcript.events.get(index) {
                Some(Event::Run(r)) => {
                    let Some(run) = transcript.runs.get(*r) else {
                        continue;
                    };
                    if run.line.kind() == CommandKind::Work {
                        for key in run.line.keys() {
                            if let Some(word) = key.keyword() {
                                push_distinct(&mut keywords, word, MAX_KEYWORDS);
                            }
                        }
                        if run.status == RunStatus::Passed {
                            let mut text = code(&run.text);
                            if let Some(dir) = run.workdir.as_deref()
                                && Some(dir) != input.rollout_cwd.as_deref()
                                && run.line.cd_target().is_none()
                            {
                                text.push_str(&format!(" (in {})", code(dir)));
                            }
                            push_distinct(&mut verified, text, usize::MAX);
                        }
                    }
                    if let Some(error) = run.error.as_deref() {
                        for id in error_ids(error) {
                            push_distinct(&mut keywords, id, MAX_KEYWORDS);
                        }
                    }
                }
                Some(Event::Patch(p)) => {
                    for change in transcript.patches.get(*p).map_or(&[][..], |p| &p.changes) {
                        push_distinct(
                            &mut files,
                            format!("{} ({})", change.path, change.kind.verb()),
                            usize::MAX,
                        );
                        let name = change.path.rsplit('/').next().unwrap_or(&change.path);
                        push_distinct(&mut keywords, one_line(name, 60), MAX_KEYWORDS);
                    }
                }
                Some(Event::Search(query)) => push_distinct(&mut searches, query.clone(), 5),
                _ => {}
            }
        }
        // The first two sentences of the answer: what was done and why; the rest tends to be
        // advice about the session itself.
        let answer = task
            .answer
            .as_deref()
            .map(|answer| {
                one_line(
                    &sentences(answer)
                        .into_iter()
                        .take(2)
                        .collect::<Vec<_>>()
                        .join(" "),
                    MAX_ANSWER_CHARS,
                )
            })
            .filter(|answer| !answer.is_empty());
        let mut lessons = lessons(task, transcript);
        // A task that ended unfinished without a check still failing (the agent put its change
        // back, the failure is in what it found, the user stopped it there) keeps what the
        // agent found out as its lesson.
        let answer = match answer {
            Some(found)
                if matches!(outcome, TaskOutcome::Fail | TaskOutcome::Partial)
                    && lessons.len() < MAX_LESSONS
                    && !lessons.iter().any(|lesson| lesson.contains(STILL_FAILED)) =>
            {
                lessons.push(format!(
                    "Left unresolved, as the agent reported it: {found}"
                ));
                None
            }
            answer => answer,
        };
        TaskView {
            steps: key_steps(task, transcript),
            lessons,
            preferences: task
                .preferences
                .iter()
                .take(MAX_PREFERENCES)
                .cloned()
                .collect(),
            facts: task.facts.iter().take(MAX_FACTS).cloned().collect(),
            title,
            outcome,
            note,
            verified,
            answer,
            searches,
            files,
            keywords,
        }
    }

    /// The sections both renderings share; `summary` adds the key steps.
    fn block(&self, summary: bool) -> TaskBlock {
        let mut knowledge = Vec::new();
        if !self.verified.is_empty() {
            knowledge.push(format!(
                "{PASSED_PREFIX}{}",
                capped_join(&self.verified, MAX_VERIFIED)
            ));
        }
        for fact in &self.facts {
            knowledge.push(format!("The user stated: {fact}"));
        }
        if let Some(answer) = &self.answer {
            knowledge.push(format!("Result as the agent reported it: {answer}"));
        }
        if !self.searches.is_empty() {
            knowledge.push(format!(
                "Looked up on the web: {}",
                self.searches.join("; ")
            ));
        }
        let mut references = Vec::new();
        if !self.files.is_empty() {
            references.push(format!(
                "Files changed: {}",
                capped_join(&self.files, MAX_FILES)
            ));
        }
        let mut sections = vec![Section {
            heading: sections::PREFERENCE_SIGNALS.to_owned(),
            items: self.preferences.clone(),
        }];
        if summary {
            sections.push(Section {
                heading: sections::KEY_STEPS.to_owned(),
                items: self.steps.clone(),
            });
        }
        sections.extend([
            Section {
                heading: sections::FAILURES.to_owned(),
                items: self.lessons.clone(),
            },
            Section {
                heading: sections::REUSABLE_KNOWLEDGE.to_owned(),
                items: knowledge,
            },
            Section {
                heading: sections::REFERENCES.to_owned(),
                items: references,
            },
        ]);
        TaskBlock {
            title: self.title.clone(),
            outcome: Some(self.outcome),
            outcome_note: summary.then(|| self.note.clone()),
            sections,
        }
    }
}

fn raw_memory(views: &[TaskView], input: &StageOneInput) -> String {
    let main = &views[0];
    let mut keywords = Vec::new();
    for view in views {
        for word in &view.keywords {
            push_distinct(&mut keywords, word.clone(), MAX_KEYWORDS);
        }
    }
    let takeaway = views
        .iter()
        .find_map(|v| v.lessons.first().cloned())
        .or_else(|| {
            views.iter().find_map(|v| {
                v.preferences
                    .first()
                    .map(|p| format!("the user asked: {p}"))
            })
        })
        .unwrap_or_else(|| main.note.clone());
    let more = match views.len() {
        1 => String::new(),
        n => format!(" (and {} more task{})", n - 1, if n > 2 { "s" } else { "" }),
    };
    let memory = RawMemory {
        front: FrontMatter {
            description: one_line(
                &format!("{}{more}: {}; {takeaway}", main.title, overall(views)),
                300,
            ),
            task: main.title.clone(),
            task_group: cwd_name(input),
            task_outcome: Some(overall(views)),
            cwd: one_line(
                input.rollout_cwd.as_deref().unwrap_or("unknown"),
                MAX_LINE_CHARS,
            ),
            keywords,
        },
        tasks: views.iter().map(|view| view.block(false)).collect(),
    };
    memory.render()
}

fn summary(views: &[TaskView], transcript: &Transcript, input: &StageOneInput) -> String {
    let failed = transcript
        .runs
        .iter()
        .filter(|r| matches!(r.status, RunStatus::Failed(_)))
        .count();
    let changed: usize = transcript.patches.iter().map(|p| p.changes.len()).sum();
    let headline = match views {
        [only] => format!("{} ({})", only.title, only.outcome),
        [first, rest @ ..] => format!(
            "{} ({}), then {} more task{}",
            first.title,
            first.outcome,
            rest.len(),
            if rest.len() > 1 { "s" } else { "" }
        ),
        [] => String::new(),
    };
    let mut out = format!(
        "# {}\n\n{}: in {}; {} task(s), {} command(s) run ({failed} failed), {changed} file change(s). {OFFLINE_NOTICE}\n",
        one_line(&headline, 200),
        sections::ROLLOUT_CONTEXT,
        one_line(
            input.rollout_cwd.as_deref().unwrap_or("an unknown folder"),
            MAX_LINE_CHARS
        ),
        views.len(),
        transcript.runs.len(),
    );
    for (index, view) in views.iter().enumerate() {
        out.push('\n');
        let mut block = view.block(true);
        if index + 1 == views.len()
            && let Some(references) = block
                .sections
                .iter_mut()
                .find(|s| s.heading == sections::REFERENCES)
        {
            references.items.push(format!(
                "Rollout: {}",
                one_line(&input.rollout_path, MAX_LINE_CHARS)
            ));
        }
        block.render(index + 1, false, &mut out);
    }
    out
}

/// The outcome of the whole session: the tasks' outcome when they agree, else `partial` when
/// something succeeded, else `uncertain`.
fn overall(views: &[TaskView]) -> TaskOutcome {
    let first = views.first().map_or(TaskOutcome::Uncertain, |v| v.outcome);
    if views.iter().all(|v| v.outcome == first) {
        return first;
    }
    if views
        .iter()
        .any(|v| matches!(v.outcome, TaskOutcome::Success | TaskOutcome::Partial))
    {
        TaskOutcome::Partial
    } else {
        TaskOutcome::Uncertain
    }
}

/// The steps of a task, in order; consecutive looks around are merged into one line.
fn key_steps(task: &Task, transcript: &Transcript) -> Vec<String> {
    let mut steps: Vec<String> = Vec::new();
    let mut looked: Vec<String> = Vec::new();
    let flush = |steps: &mut Vec<String>, looked: &mut Vec<String>| {
        if !looked.is_empty() {
            steps.push(format!("looked at: {}", capped_join(looked, 4)));
            looked.clear();
        }
    };
    for &index in &task.events {
        let step = match transcript.events.get(index) {
            Some(Event::Run(r)) => {
                let Some(run) = transcript.runs.get(*r) else {
                    continue;
                };
                if run.line.kind() == CommandKind::Inspect
                    && !matches!(run.status, RunStatus::Failed(_))
                {
                    looked.push(code(&run.text));
                    continue;
                }
                let status = match run.status {
                    RunStatus::Passed => "passed".to_owned(),
                    RunStatus::Failed(_) => format!("failed{}", error_suffix(run)),
                    RunStatus::Unknown => "no result recorded".to_owned(),
                };
                format!("ran {}: {status}", code(&run.text))
            }
            Some(Event::Patch(p)) => {
                let files: Vec<String> = transcript
                    .patches
                    .get(*p)
                    .map_or(&[][..], |p| &p.changes)
                    .iter()
                    .map(|c| format!("{} {}", c.kind.verb(), c.path))
                    .collect();
                format!("edited: {}", capped_join(&files, 5))
            }
            Some(Event::FailedPatch(error)) => format!("a patch failed to apply: {}", code(error)),
            Some(Event::Search(query)) => format!("searched the web: {query}"),
            Some(Event::User(text)) if !steps.is_empty() || !looked.is_empty() => {
                let first = sentences(text).into_iter().next().unwrap_or_default();
                format!("the user wrote: {}", one_line(&first, 160))
            }
            _ => continue,
        };
        flush(&mut steps, &mut looked);
        steps.push(step);
    }
    flush(&mut steps, &mut looked);
    if steps.len() > MAX_STEPS {
        let more = steps.len() - MAX_STEPS;
        steps.truncate(MAX_STEPS);
        steps.push(format!("... and {more} more steps"));
    }
    steps
}

/// Identifiers in an error line worth searching for: compiler codes such as `E0583` or
/// `TS2322`.
fn error_ids(error: &str) -> Vec<String> {
    error
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| {
            let letters = word.chars().take_while(char::is_ascii_uppercase).count();
            (1..=3).contains(&letters)
                && word.len() > letters + 2
                && word.chars().skip(letters).all(|c| c.is_ascii_digit())
        })
        .map(str::to_owned)
        .take(2)
        .collect()
}

/// Short lowercase words of the title, joined by hyphens.
fn slug(title: &str) -> String {
    let mut slug = String::new();
    for word in content_words(title).iter().take(7) {
        if slug.len() + word.len() + 1 > MAX_SLUG_CHARS {
            break;
        }
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(word);
    }
    if slug.is_empty() {
        "session".to_owned()
    } else {
        slug
    }
}

/// The last component of the rollout's working directory.
fn cwd_name(input: &StageOneInput) -> String {
    input
        .rollout_cwd
        .as_deref()
        .map(|cwd| cwd.trim_end_matches(['/', '\\']))
        .and_then(|cwd| cwd.rsplit(['/', '\\']).next())
        .filter(|name| !name.trim().is_empty())
        .map(|name| one_line(name, 60))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Caps a rendered text at a line boundary, marking the cut.
fn cap_text(text: &str, max_chars: usize) -> String {
    const MARKER: &str = "\n[truncated by the offline engine]\n";
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let budget = max_chars.saturating_sub(MARKER.chars().count());
    let head: String = text.chars().take(budget).collect();
    let head = match head.rfind('\n') {
        Some(end) => head.get(..end).unwrap_or(&head).to_owned(),
        None => head,
    };
    format!("{head}{MARKER}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn cap_text_cuts_at_a_line_and_marks_it() {
        let text = "line one\nline two\nline three\n";
        assert_eq!(cap_text(text, 100), text);
        let capped = cap_text(&text.repeat(10), 60);
        assert!(capped.chars().count() <= 60, "{capped}");
        assert!(capped.ends_with("[truncated by the offline engine]\n"));
        assert!(capped.starts_with("line one\nline two"));
    }

    #[test]
    fn error_ids_and_slugs() {
        assert_eq!(
            error_ids("error[E0583]: file not found; TS2322 and HTTP 404"),
            ["E0583", "TS2322"]
        );
        assert_eq!(
            slug("Fix the `tidewater parse` panic!"),
            "fix-tidewater-parse-panic"
        );
        assert_eq!(slug("?!"), "session");
    }

    proptest! {
        #[test]
        fn cap_text_respects_any_budget(text in "\\PC{0,400}", max in 40usize..300) {
            prop_assert!(cap_text(&text, max).chars().count() <= max);
        }
    }
}
