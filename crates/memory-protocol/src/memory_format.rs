//! The one memory format: what a stage-one raw memory and rollout summary look like, whoever
//! writes them (a language model following the stage-one prompt, or the offline engine).
//!
//! A raw memory is a front matter block with six keys, then one block per task:
//!
//! ```text
//! ---
//! description: <one line: the task, its outcome and the main takeaway>
//! task: <the main task's title>
//! task_group: <the project or topic it belongs to>
//! task_outcome: success | partial | uncertain | fail
//! cwd: <the working directory>
//! keywords: <comma-separated search terms>
//! ---
//!
//! ### Task 1: <title>
//! task_outcome: <outcome>
//!
//! Preference signals:
//! - <how the user wants work done>
//!
//! Failures and how to do differently:
//! - <what failed, what made it pass, the difference>
//!
//! Reusable knowledge:
//! - <facts and verified commands>
//!
//! References:
//! - <files, commands, ids>
//! ```
//!
//! A rollout summary starts with `# <one sentence>` and a `Rollout context:` line, then has one
//! `## Task n: <title>` block per task with an `Outcome:` line and the same sections plus
//! `Key steps`. The prompt templates render these names from the constants here, and
//! [`RawMemory::parse`] reads any text back leniently (model output varies), so the two writers
//! cannot drift apart.

use std::fmt::Write as _;

/// The front matter keys of a raw memory, in order.
pub mod keys {
    /// One line: the task, its outcome and the main takeaway.
    pub const DESCRIPTION: &str = "description";
    /// The main task's title.
    pub const TASK: &str = "task";
    /// The project or topic the task belongs to.
    pub const TASK_GROUP: &str = "task_group";
    /// The outcome, one of [`super::TaskOutcome`]'s names.
    pub const TASK_OUTCOME: &str = "task_outcome";
    /// The working directory the work happened in.
    pub const CWD: &str = "cwd";
    /// Comma-separated search terms.
    pub const KEYWORDS: &str = "keywords";
    /// Every key, in the order they are written.
    pub const ALL: [&str; 6] = [DESCRIPTION, TASK, TASK_GROUP, TASK_OUTCOME, CWD, KEYWORDS];
}

/// Section names of a task block.
pub mod sections {
    /// How the user wants work done: stated rules, corrections, rejected approaches.
    pub const PREFERENCE_SIGNALS: &str = "Preference signals";
    /// What failed, what made it pass later, and the difference.
    pub const FAILURES: &str = "Failures and how to do differently";
    /// Durable facts and commands verified in the session.
    pub const REUSABLE_KNOWLEDGE: &str = "Reusable knowledge";
    /// Files, commands, ids and paths a reader can follow.
    pub const REFERENCES: &str = "References";
    /// The steps taken, in order (rollout summaries only).
    pub const KEY_STEPS: &str = "Key steps";
    /// The outcome line label of a rollout summary's task block.
    pub const OUTCOME: &str = "Outcome";
    /// The context line label under a rollout summary's title.
    pub const ROLLOUT_CONTEXT: &str = "Rollout context";
}

/// Heading prefix of a task block in a raw memory (`### Task 1: ...`).
pub const RAW_TASK_HEADING: &str = "### Task";
/// Heading prefix of a task block in a rollout summary (`## Task 1: ...`).
pub const SUMMARY_TASK_HEADING: &str = "## Task";

/// How a task ended, judged from evidence (tests, exit codes, the user's reaction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TaskOutcome {
    /// Done and verified (a passing check after the last change, or the user's approval).
    Success,
    /// Some of it done or verified, some not.
    Partial,
    /// No evidence either way, or no real work.
    Uncertain,
    /// Not done: abandoned, refused by the user, or still broken at the end.
    Fail,
}

impl TaskOutcome {
    /// Every outcome, in the order the prompt lists them.
    pub const ALL: [TaskOutcome; 4] = [
        TaskOutcome::Success,
        TaskOutcome::Partial,
        TaskOutcome::Uncertain,
        TaskOutcome::Fail,
    ];

    /// The name written in a memory.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskOutcome::Success => "success",
            TaskOutcome::Partial => "partial",
            TaskOutcome::Uncertain => "uncertain",
            TaskOutcome::Fail => "fail",
        }
    }

    /// Reads an outcome from the first word of `text`, accepting common variants (`failed`,
    /// `unclear`, `succeeded`) since a model may write them.
    pub fn parse(text: &str) -> Option<TaskOutcome> {
        let word: String = text
            .trim()
            .trim_start_matches(['*', '`', '_'])
            .chars()
            .take_while(|ch| ch.is_ascii_alphabetic())
            .collect::<String>()
            .to_ascii_lowercase();
        match word.as_str() {
            "success" | "succeeded" | "successful" | "done" => Some(TaskOutcome::Success),
            "partial" | "partially" => Some(TaskOutcome::Partial),
            "uncertain" | "unclear" | "unknown" => Some(TaskOutcome::Uncertain),
            "fail" | "failed" | "failure" | "abandoned" => Some(TaskOutcome::Fail),
            _ => None,
        }
    }
}

impl std::fmt::Display for TaskOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The front matter of a raw memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrontMatter {
    /// One line: the task, its outcome and the main takeaway.
    pub description: String,
    /// The main task's title.
    pub task: String,
    /// The project or topic.
    pub task_group: String,
    /// The overall outcome.
    pub task_outcome: Option<TaskOutcome>,
    /// The working directory.
    pub cwd: String,
    /// Search terms.
    pub keywords: Vec<String>,
}

/// A named list of items within a task block (`Preference signals:` and its `- ` lines).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Section {
    /// The section name, such as [`sections::PREFERENCE_SIGNALS`].
    pub heading: String,
    /// The items, one line each, without their `- ` marker.
    pub items: Vec<String>,
}

/// One task of a raw memory or rollout summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskBlock {
    /// The task's title.
    pub title: String,
    /// How it ended, when stated.
    pub outcome: Option<TaskOutcome>,
    /// A short note after the outcome (rollout summaries: the evidence for it).
    pub outcome_note: Option<String>,
    /// The sections, in order.
    pub sections: Vec<Section>,
}

impl TaskBlock {
    /// The items of the section named `heading` (compared case-insensitively), or none.
    pub fn items(&self, heading: &str) -> &[String] {
        self.sections
            .iter()
            .find(|section| section.heading.eq_ignore_ascii_case(heading))
            .map(|section| section.items.as_slice())
            .unwrap_or(&[])
    }

    /// Writes the block. `raw` selects the raw-memory style (`### Task n: title` and a
    /// `task_outcome:` line) over the rollout-summary style (`## Task n: title` and an
    /// `Outcome:` line). Empty sections are left out.
    pub fn render(&self, index: usize, raw: bool, out: &mut String) {
        let heading = if raw {
            RAW_TASK_HEADING
        } else {
            SUMMARY_TASK_HEADING
        };
        let _ = writeln!(out, "{heading} {index}: {}", one_line(&self.title));
        if let Some(outcome) = self.outcome {
            let label = if raw {
                keys::TASK_OUTCOME
            } else {
                sections::OUTCOME
            };
            let _ = write!(out, "{label}: {outcome}");
            if let Some(note) = self
                .outcome_note
                .as_deref()
                .filter(|n| !n.trim().is_empty())
            {
                let _ = write!(out, " ({})", one_line(note));
            }
            out.push('\n');
        }
        for section in self.sections.iter().filter(|s| !s.items.is_empty()) {
            let _ = writeln!(out, "\n{}:", section.heading);
            for item in &section.items {
                let _ = writeln!(out, "- {}", one_line(item));
            }
        }
    }
}

/// A raw memory: front matter and task blocks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawMemory {
    /// The front matter.
    pub front: FrontMatter,
    /// The tasks, in order.
    pub tasks: Vec<TaskBlock>,
}

impl RawMemory {
    /// Writes the raw memory in the format of the [module docs](self).
    pub fn render(&self) -> String {
        let front = &self.front;
        let mut out = String::from("---\n");
        let outcome = front.task_outcome.map(TaskOutcome::as_str).unwrap_or("");
        let keywords = front.keywords.join(", ");
        for (key, value) in [
            (keys::DESCRIPTION, front.description.as_str()),
            (keys::TASK, front.task.as_str()),
            (keys::TASK_GROUP, front.task_group.as_str()),
            (keys::TASK_OUTCOME, outcome),
            (keys::CWD, front.cwd.as_str()),
            (keys::KEYWORDS, keywords.as_str()),
        ] {
            let _ = writeln!(out, "{key}: {}", one_line(value));
        }
        out.push_str("---\n");
        for (index, task) in self.tasks.iter().enumerate() {
            out.push('\n');
            task.render(index + 1, true, &mut out);
        }
        out
    }

    /// Reads a raw memory leniently: a missing front matter, other heading levels, bold or
    /// heading-style section labels and `*` bullets are all accepted; what cannot be read is
    /// skipped. Text before the first task heading that is not front matter is ignored.
    pub fn parse(text: &str) -> RawMemory {
        let (front_text, body) = split_front_matter(text);
        let mut memory = RawMemory {
            front: parse_front_matter(front_text),
            tasks: Vec::new(),
        };
        let mut current: Option<TaskBlock> = None;
        let mut section: Option<usize> = None;
        for line in body.lines() {
            let trimmed = line.trim();
            if let Some(title) = task_heading(trimmed) {
                memory.tasks.extend(current.take());
                current = Some(TaskBlock {
                    title,
                    ..TaskBlock::default()
                });
                section = None;
                continue;
            }
            let Some(task) = current.as_mut() else {
                continue;
            };
            if let Some(item) = bullet(trimmed) {
                match section.and_then(|index| task.sections.get_mut(index)) {
                    Some(open) => open.items.push(item.to_owned()),
                    None => {
                        task.sections.push(Section {
                            heading: String::new(),
                            items: vec![item.to_owned()],
                        });
                        section = Some(task.sections.len() - 1);
                    }
                }
                continue;
            }
            if let Some((label, rest)) = labelled_line(trimmed) {
                if label.eq_ignore_ascii_case(keys::TASK_OUTCOME)
                    || label.eq_ignore_ascii_case(sections::OUTCOME)
                {
                    task.outcome = TaskOutcome::parse(rest);
                    section = None;
                    continue;
                }
                if rest.is_empty() {
                    task.sections.push(Section {
                        heading: label.to_owned(),
                        items: Vec::new(),
                    });
                    section = Some(task.sections.len() - 1);
                    continue;
                }
            }
            if let Some(heading) = section_heading(trimmed) {
                task.sections.push(Section {
                    heading: heading.to_owned(),
                    items: Vec::new(),
                });
                section = Some(task.sections.len() - 1);
            }
        }
        memory.tasks.extend(current);
        memory
    }
}

/// Splits a leading `---` ... `---` block from the rest: `(front matter, body)`. Without one the
/// front matter is empty.
pub fn split_front_matter(text: &str) -> (&str, &str) {
    let trimmed = text.trim_start();
    let Some(rest) = trimmed
        .strip_prefix("---\n")
        .or_else(|| trimmed.strip_prefix("---\r\n"))
    else {
        return ("", trimmed);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let front = rest.get(..offset).unwrap_or("");
            let body = rest.get(offset + line.len()..).unwrap_or("");
            return (front, body);
        }
        offset += line.len();
    }
    ("", trimmed)
}

fn parse_front_matter(text: &str) -> FrontMatter {
    let mut front = FrontMatter::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim().trim_matches('"').to_owned();
        match key.trim() {
            keys::DESCRIPTION => front.description = value,
            keys::TASK => front.task = value,
            keys::TASK_GROUP => front.task_group = value,
            keys::TASK_OUTCOME => front.task_outcome = TaskOutcome::parse(&value),
            keys::CWD => front.cwd = value,
            keys::KEYWORDS => {
                front.keywords = value
                    .trim_matches(['[', ']'])
                    .split(',')
                    .map(|word| word.trim().trim_matches(['"', '\'']).to_owned())
                    .filter(|word| !word.is_empty())
                    .collect();
            }
            _ => {}
        }
    }
    front
}

/// The title of a task heading (`### Task 2: Fix it`, `## Task 1 - Fix it`, `### Task 3`).
fn task_heading(line: &str) -> Option<String> {
    let rest = line.strip_prefix('#')?.trim_start_matches('#').trim_start();
    let rest = strip_prefix_ignore_case(rest, "task")?;
    let rest = rest.trim_start();
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let title = rest
        .get(digits..)
        .unwrap_or("")
        .trim_start_matches([':', '-', '.', ')', ' ', '\u{2014}', '\u{2013}'])
        .trim();
    Some(title.to_owned())
}

/// `- item` or `* item`, without the marker.
fn bullet(line: &str) -> Option<&str> {
    let item = line
        .strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))?
        .trim();
    (!item.is_empty()).then_some(item)
}

/// `Label: rest` where the label is a few words (bold markers removed).
fn labelled_line(line: &str) -> Option<(&str, &str)> {
    let line = line.trim_start_matches('*');
    let (label, rest) = line.split_once(':')?;
    let label = label.trim().trim_end_matches('*');
    let words = label.split_whitespace().count();
    let plain = label
        .chars()
        .all(|ch| ch.is_ascii_alphabetic() || ch == ' ' || ch == '_');
    ((1..=6).contains(&words) && plain).then(|| (label, rest.trim().trim_start_matches('*').trim()))
}

/// `#### Preference signals` as a section heading.
fn section_heading(line: &str) -> Option<&str> {
    let heading = line.strip_prefix('#')?.trim_start_matches('#').trim();
    let heading = heading.trim_end_matches(':').trim();
    (!heading.is_empty()).then_some(heading)
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| text.get(prefix.len()..).unwrap_or(""))
}

/// A value on one line: control characters (newlines included) become spaces.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|ch| if ch.is_control() { ' ' } else { ch })
        .collect::<String>()
        .trim()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RawMemory {
        RawMemory {
            front: FrontMatter {
                description: "Fix the parser: success".into(),
                task: "Fix the parser".into(),
                task_group: "tidewater".into(),
                task_outcome: Some(TaskOutcome::Success),
                cwd: "/src/tidewater".into(),
                keywords: vec!["parser".into(), "cargo test".into()],
            },
            tasks: vec![TaskBlock {
                title: "Fix the parser".into(),
                outcome: Some(TaskOutcome::Success),
                outcome_note: None,
                sections: vec![
                    Section {
                        heading: sections::PREFERENCE_SIGNALS.into(),
                        items: vec!["Never push to main.".into()],
                    },
                    Section {
                        heading: sections::REFERENCES.into(),
                        items: vec![],
                    },
                ],
            }],
        }
    }

    #[test]
    fn render_then_parse_round_trips() {
        let memory = sample();
        let text = memory.render();
        assert!(text.starts_with("---\ndescription: Fix the parser: success\n"));
        assert!(text.contains("\n### Task 1: Fix the parser\ntask_outcome: success\n"));
        assert!(!text.contains("References"), "empty sections are left out");
        let mut expected = memory;
        expected.tasks[0].sections.truncate(1);
        assert_eq!(RawMemory::parse(&text), expected);
    }

    #[test]
    fn model_variations_are_read() {
        let text = "Some preamble\n## Task 1 - Ship it\n**Outcome:** failed\n\n#### Preference signals\n* use pnpm\n\n**Reusable knowledge:**\n- `pnpm build` works\n### Task 2\n- stray item";
        let memory = RawMemory::parse(text);
        assert_eq!(memory.tasks.len(), 2);
        let first = &memory.tasks[0];
        assert_eq!(first.title, "Ship it");
        assert_eq!(first.outcome, Some(TaskOutcome::Fail));
        assert_eq!(first.items("preference signals"), ["use pnpm"]);
        assert_eq!(
            first.items(sections::REUSABLE_KNOWLEDGE),
            ["`pnpm build` works"]
        );
        assert_eq!(memory.tasks[1].title, "");
        assert_eq!(memory.tasks[1].sections[0].items, ["stray item"]);
    }

    proptest::proptest! {
        #[test]
        fn parsing_any_text_never_panics(text in "(\\PC|\n|---|### Task [0-9]: |- |: ){0,60}") {
            let memory = RawMemory::parse(&text);
            for task in &memory.tasks {
                proptest::prop_assert!(!task.title.contains('\n'));
            }
        }

        #[test]
        fn rendered_items_read_back(
            title in "[a-zA-Z][a-zA-Z `./-]{0,40}",
            items in proptest::collection::vec("[a-zA-Z0-9 `./:-]{1,60}", 0..5),
        ) {
            let memory = RawMemory {
                front: FrontMatter::default(),
                tasks: vec![TaskBlock {
                    title: title.clone(),
                    outcome: Some(TaskOutcome::Partial),
                    outcome_note: None,
                    sections: vec![Section { heading: sections::FAILURES.into(), items: items.clone() }],
                }],
            };
            let parsed = RawMemory::parse(&memory.render());
            let expected: Vec<String> = items.iter().map(|item| item.trim().to_owned()).filter(|item| !item.is_empty()).collect();
            proptest::prop_assert_eq!(parsed.tasks.len(), 1);
            proptest::prop_assert_eq!(&parsed.tasks[0].title, title.trim());
            proptest::prop_assert_eq!(parsed.tasks[0].items(sections::FAILURES), expected.as_slice());
        }
    }

    #[test]
    fn outcomes_accept_variants() {
        assert_eq!(TaskOutcome::parse("unclear"), Some(TaskOutcome::Uncertain));
        assert_eq!(TaskOutcome::parse(" Success."), Some(TaskOutcome::Success));
        assert_eq!(TaskOutcome::parse("maybe"), None);
    }
}
