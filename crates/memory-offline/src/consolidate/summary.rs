//! The offline `memory_summary.md`: the part of memory injected into every session.
//!
//! `v1`, then a user profile (projects, languages, recent activity, outcomes), the user's
//! preferences (each with its project), general tips (failure lessons and the checks that
//! pass per project), and what is in memory: the last three memory days by project and day,
//! then older topics. It fits its token budget by dropping, in order, older topics, tips, the
//! oldest recent entries and the last preferences; the profile goes last.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use memory_protocol::memory_format::{TaskOutcome, sections};
use memory_protocol::names::memory_root as names;
use memory_sanitize::{TokenCounter, TruncationPolicy, o200k, truncate_middle};

use super::super::stage_one::PASSED_PREFIX;
use memory_protocol::consolidation::ConsolidationNote;

use super::{Entry, Group, comparable, note_line, one_line};

/// Memory days shown in full under "What's in Memory"; older tasks are listed as topics.
const RECENT_DAYS: usize = 3;
const MAX_PREFERENCES: usize = 24;
const MAX_TIPS: usize = 10;
/// Longest note line, in characters: the whole note is in `notes/`.
const MAX_NOTE_CHARS: usize = 160;
/// Longest line of the summary, in characters: the details are in `MEMORY.md`.
const MAX_SUMMARY_LINE_CHARS: usize = 280;

/// The summary's parts, each a list of lines that can be dropped one by one.
struct Parts {
    profile: Vec<String>,
    preferences: Vec<String>,
    tips: Vec<String>,
    /// `(group heading, date, line)` in display order.
    recent: Vec<(String, String, String)>,
    older: Vec<String>,
    /// Agent notes, newest first.
    notes: Vec<String>,
}

/// Renders the summary within `budget` tokens.
pub(crate) fn render(groups: &[Group<'_>], notes: &[ConsolidationNote], budget: usize) -> String {
    let mut parts = Parts::gather(groups, notes);
    let counter = o200k();
    loop {
        let text = parts.render();
        if counter.count(&text) <= budget || !parts.drop_one() {
            if counter.count(&text) > budget {
                return truncate_middle(&text, TruncationPolicy::Tokens(budget), counter)
                    .into_owned();
            }
            return text;
        }
    }
}

impl Parts {
    fn gather(groups: &[Group<'_>], notes: &[ConsolidationNote]) -> Parts {
        let all: Vec<(&Group<'_>, &Entry<'_>)> = groups
            .iter()
            .flat_map(|g| g.entries.iter().map(move |e| (g, e)))
            .collect();
        let mut by_time = all.clone();
        by_time.sort_by(|(_, a), (_, b)| {
            b.record
                .source_updated_at
                .cmp(&a.record.source_updated_at)
                .then_with(|| a.record.thread_id.cmp(&b.record.thread_id))
        });
        Parts {
            profile: profile(groups, &by_time),
            preferences: collect(&by_time, sections::PREFERENCE_SIGNALS, MAX_PREFERENCES),
            tips: tips(groups, &by_time),
            recent: recent(groups),
            older: older(groups),
            notes: notes
                .iter()
                .rev()
                .map(|note| {
                    format!(
                        "{} (`{}`)",
                        capped(&note_line(note), MAX_NOTE_CHARS),
                        one_line(&note.path)
                    )
                })
                .collect(),
        }
    }

    fn render(&self) -> String {
        let mut out = format!("{}\n## User Profile\n", names::MEMORY_SUMMARY_VERSION);
        for line in &self.profile {
            let _ = writeln!(out, "{line}");
        }
        if !self.preferences.is_empty() {
            out.push_str("\n## User preferences\n");
            for line in &self.preferences {
                let _ = writeln!(out, "- {line}");
            }
        }
        if !self.tips.is_empty() {
            out.push_str("\n## General Tips\n");
            for line in &self.tips {
                let _ = writeln!(out, "- {line}");
            }
        }
        let _ = write!(
            out,
            "\n## What's in Memory\nDetails in {}: one `# Task Group` per project, `## Task n` \
             entries pointing to {}/.\n",
            names::MEMORY_FILE,
            names::ROLLOUT_SUMMARIES_DIR
        );
        if self.recent.is_empty() && self.older.is_empty() && self.notes.is_empty() {
            out.push_str("Nothing yet.\n");
        }
        let mut last_group: Option<&str> = None;
        let mut last_date: Option<&str> = None;
        for (group, date, line) in &self.recent {
            if last_group != Some(group.as_str()) {
                let _ = writeln!(out, "\n### {group}");
                last_group = Some(group);
                last_date = None;
            }
            if last_date != Some(date.as_str()) {
                let _ = writeln!(out, "#### {date}");
                last_date = Some(date);
            }
            let _ = writeln!(out, "- {line}");
        }
        if !self.older.is_empty() {
            out.push_str("\n### Older Memory Topics\n");
            for line in &self.older {
                let _ = writeln!(out, "- {line}");
            }
        }
        if !self.notes.is_empty() {
            out.push_str("\n### Agent Notes\n");
            for line in &self.notes {
                let _ = writeln!(out, "- {line}");
            }
        }
        out
    }

    /// Drops the least important line; false when nothing is left to drop.
    fn drop_one(&mut self) -> bool {
        self.older.pop().is_some()
            || self.notes.pop().is_some()
            || self.tips.pop().is_some()
            || self.drop_oldest_recent()
            || self.preferences.pop().is_some()
            || self.profile.pop().is_some()
    }

    fn drop_oldest_recent(&mut self) -> bool {
        let oldest = self
            .recent
            .iter()
            .enumerate()
            .min_by(|(_, a), (_, b)| a.1.cmp(&b.1))
            .map(|(index, _)| index);
        match oldest {
            Some(index) => {
                self.recent.remove(index);
                true
            }
            None => false,
        }
    }
}

fn profile(groups: &[Group<'_>], by_time: &[(&Group<'_>, &Entry<'_>)]) -> Vec<String> {
    if groups.is_empty() {
        return vec!["No sessions are in memory yet.".to_owned()];
    }
    let projects: Vec<String> = groups
        .iter()
        .map(|group| {
            let languages = languages(group);
            if languages.is_empty() {
                one_line(&group.name)
            } else {
                format!("{} ({})", one_line(&group.name), languages.join(", "))
            }
        })
        .collect();
    let mut lines = vec![format!(
        "Works on {} project(s) in memory: {}.",
        groups.len(),
        projects.join("; ")
    )];
    if let Some((group, entry)) = by_time.first() {
        lines.push(format!(
            "Most recent session: {} in {}: {}.",
            entry.date,
            one_line(&group.name),
            one_line(&entry.task.title)
        ));
    }
    let count = |outcome: TaskOutcome| {
        by_time
            .iter()
            .filter(|(_, e)| e.task.outcome == Some(outcome))
            .count()
    };
    lines.push(format!(
        "Tasks on record: {}; {} succeeded, {} partial, {} uncertain, {} failed.",
        by_time.len(),
        count(TaskOutcome::Success),
        count(TaskOutcome::Partial),
        count(TaskOutcome::Uncertain),
        count(TaskOutcome::Fail),
    ));
    lines.push(
        "Made by the agent-memory offline engine from the structure of past sessions, without \
         a language model."
            .to_owned(),
    );
    lines
}

/// Languages a group's sessions used, read from the tools in its keywords.
fn languages(group: &Group<'_>) -> Vec<&'static str> {
    const TOOLS: [(&str, &str); 16] = [
        ("cargo", "Rust"),
        ("rustc", "Rust"),
        ("go", "Go"),
        ("golangci-lint", "Go"),
        ("pnpm", "JavaScript"),
        ("npm", "JavaScript"),
        ("yarn", "JavaScript"),
        ("vite", "JavaScript"),
        ("tsc", "TypeScript"),
        ("pytest", "Python"),
        ("uv", "Python"),
        ("python", "Python"),
        ("pip", "Python"),
        ("mvn", "Java"),
        ("gradle", "Java"),
        ("dotnet", ".NET"),
    ];
    let mut found: Vec<&'static str> = Vec::new();
    for entry in &group.entries {
        for keyword in &entry.keywords {
            let program = keyword.split_whitespace().next().unwrap_or("");
            if let Some((_, language)) = TOOLS.iter().find(|(tool, _)| *tool == program)
                && !found.contains(language)
            {
                found.push(language);
            }
        }
    }
    found
}

/// The items of one section over every task, newest first, each once, with the project.
fn collect(by_time: &[(&Group<'_>, &Entry<'_>)], section: &str, max: usize) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (group, entry) in by_time {
        for item in entry.task.items(section) {
            let key = item.trim().to_ascii_lowercase();
            if key.is_empty() || !seen.insert(key) {
                continue;
            }
            out.push(format!(
                "{} ({})",
                capped(&one_line(item.trim()), MAX_SUMMARY_LINE_CHARS),
                one_line(&group.name)
            ));
            if out.len() >= max {
                return out;
            }
        }
    }
    out
}

/// Failure lessons, newest first, then the checks that passed per project.
fn tips(groups: &[Group<'_>], by_time: &[(&Group<'_>, &Entry<'_>)]) -> Vec<String> {
    let mut tips = collect(by_time, sections::FAILURES, MAX_TIPS);
    for group in groups {
        let passed = group.entries.iter().find_map(|entry| {
            entry
                .task
                .items(sections::REUSABLE_KNOWLEDGE)
                .iter()
                .find_map(|item| item.strip_prefix(PASSED_PREFIX))
        });
        if let Some(commands) = passed {
            tips.push(format!(
                "In {}, these passed: {}",
                one_line(&group.name),
                one_line(commands)
            ));
        }
    }
    tips
}

/// The tasks of the last [`RECENT_DAYS`] memory days, by group (newest group first) and day.
fn recent(groups: &[Group<'_>]) -> Vec<(String, String, String)> {
    let days = recent_days(groups);
    let mut out = Vec::new();
    for group in groups {
        let heading = format!("{} (`{}`)", one_line(&group.name), one_line(&group.cwd));
        // A task repeated over sessions is listed once, on its newest day.
        let mut listed = BTreeSet::new();
        for entry in group.entries.iter().filter(|e| days.contains(&e.date)) {
            if listed.insert(comparable(&entry.task.title)) {
                out.push((heading.clone(), entry.date.clone(), entry_line(entry)));
            }
        }
    }
    out
}

/// Older tasks, one line per group.
fn older(groups: &[Group<'_>]) -> Vec<String> {
    let days = recent_days(groups);
    groups
        .iter()
        .filter_map(|group| {
            // A task repeated over sessions is one topic, dated by its newest session.
            let mut topics: Vec<(String, String, usize)> = Vec::new();
            for entry in group.entries.iter().filter(|e| !days.contains(&e.date)) {
                let key = comparable(&entry.task.title);
                match topics.iter_mut().find(|(known, _, _)| *known == key) {
                    Some((_, _, count)) => *count += 1,
                    None => topics.push((
                        key,
                        format!("{} ({}", one_line(&entry.task.title), entry.date),
                        1,
                    )),
                }
            }
            let topics: Vec<String> = topics
                .into_iter()
                .map(|(_, topic, count)| match count {
                    1 => format!("{topic})"),
                    _ => format!("{topic}, {count} sessions)"),
                })
                .collect();
            (!topics.is_empty())
                .then(|| format!("{}: {}", one_line(&group.name), topics.join("; ")))
        })
        .collect()
}

fn recent_days(groups: &[Group<'_>]) -> Vec<String> {
    let days: BTreeSet<&str> = groups
        .iter()
        .flat_map(|g| g.entries.iter().map(|e| e.date.as_str()))
        .collect();
    days.into_iter()
        .rev()
        .take(RECENT_DAYS)
        .map(str::to_owned)
        .collect()
}

/// `text` cut to `max` characters at a word, with `…`.
fn capped(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max.saturating_sub(1)).collect();
    let head = match head.rfind(' ') {
        Some(space) if space > max / 2 => head.get(..space).unwrap_or(&head).to_owned(),
        _ => head,
    };
    format!("{}…", head.trim_end())
}

fn entry_line(entry: &Entry<'_>) -> String {
    let outcome = entry.task.outcome.map_or("uncertain", |o| o.as_str());
    let mut line = format!("{} ({outcome})", one_line(&entry.task.title));
    let keywords: Vec<&str> = entry.keywords.iter().map(String::as_str).take(6).collect();
    if !keywords.is_empty() {
        let _ = write!(line, "; keywords: {}", one_line(&keywords.join(", ")));
    }
    line
}
