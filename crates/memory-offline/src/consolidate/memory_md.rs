//! The offline `MEMORY.md`: one `# Task Group:` block per project, a `## Task n` index entry
//! per task (outcome, date, thread, rollout summary file, keywords, references), then the
//! group's preferences, knowledge and failure lessons, each tagged with its tasks.
//!
//! Sessions repeat work: tasks of one group whose titles match (case, spacing and punctuation
//! aside) are one index entry that counts its sessions, and an item several sessions stated is
//! one line that counts them, so a lesson learned in a hundred sessions is one entry, not a
//! hundred. The file stays under [`MAX_MEMORY_MD_BYTES`]: past it, the least-used entries (the
//! oldest among equals) are condensed to their heading first, then left out with a count.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use memory_protocol::consolidation::ConsolidationNote;
use memory_protocol::memory_format::sections;

use super::{
    Entry, Group, KEPT_HEADING, MEMORY_FOOTER, NOTES_HEADING, comparable, note_line, one_line,
};

/// The three block-level sections, in order, with the task-block section each gathers.
const BLOCK_SECTIONS: [(&str, &str); 3] = [
    ("User preferences", sections::PREFERENCE_SIGNALS),
    ("Reusable knowledge", sections::REUSABLE_KNOWLEDGE),
    ("Failures and how to do differently", sections::FAILURES),
];

/// The size `MEMORY.md` is held under, in bytes (about 16 k tokens): the file is the handbook
/// an agent greps and reads in parts, and codex users saw it reach 2,450 lines of repeats.
pub(crate) const MAX_MEMORY_MD_BYTES: usize = 64 * 1024;
/// Rollout summary files, keywords and references one index entry lists at most.
const MAX_LISTED: usize = 5;
const MAX_KEYWORDS: usize = 12;
/// Task numbers one item lists before it counts the rest.
const MAX_TASK_NUMBERS: usize = 6;

/// How much of one index entry the file holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Detail {
    Full,
    /// The heading and the outcome line only.
    Condensed,
    Left,
}

/// One `## Task n` entry: the tasks of a group that share a title, newest first.
struct IndexEntry<'g, 'a> {
    tasks: Vec<&'g Entry<'a>>,
    detail: Detail,
}

impl IndexEntry<'_, '_> {
    /// How often the memories behind this entry were cited.
    fn usage(&self) -> u64 {
        self.tasks.iter().map(|e| e.record.usage_count).sum()
    }

    fn newest_time(&self) -> i64 {
        self.tasks.first().map_or(0, |e| e.record.source_updated_at)
    }

    fn sessions(&self) -> usize {
        self.tasks
            .iter()
            .map(|e| e.record.thread_id.as_str())
            .collect::<BTreeSet<_>>()
            .len()
    }
}

/// Renders `MEMORY.md` from the groups and the notes, with `kept` (text of the previous file that is not
/// ours) under its own heading, and the footer that marks the file as ours.
pub(crate) fn render(groups: &[Group<'_>], notes: &[ConsolidationNote], kept: &str) -> String {
    let mut index: Vec<Vec<IndexEntry<'_, '_>>> = groups.iter().map(index_entries).collect();
    let full = render_with(groups, &index, notes, kept);
    if full.len() <= MAX_MEMORY_MD_BYTES {
        return full;
    }
    // Least used first, the oldest among equals: every entry condensed, then left out, in that
    // order. Step k applies the first k of those changes; the size falls as k grows, so the
    // smallest k that fits is found by bisection.
    let mut order: Vec<(usize, usize)> = index
        .iter()
        .enumerate()
        .flat_map(|(g, entries)| (0..entries.len()).map(move |e| (g, e)))
        .collect();
    order.sort_by_key(|&(g, e)| {
        index
            .get(g)
            .and_then(|entries| entries.get(e))
            .map_or((0, 0), |entry| (entry.usage(), entry.newest_time()))
    });
    let mut at_step = |step: usize| {
        for (position, &(g, e)) in order.iter().enumerate() {
            let detail = if position + order.len() < step {
                Detail::Left
            } else if position < step {
                Detail::Condensed
            } else {
                Detail::Full
            };
            if let Some(entry) = index.get_mut(g).and_then(|entries| entries.get_mut(e)) {
                entry.detail = detail;
            }
        }
        render_with(groups, &index, notes, kept)
    };
    let (mut fits, mut over) = (order.len() * 2, 0);
    let mut best = at_step(fits);
    while fits - over > 1 {
        let step = over + (fits - over) / 2;
        let text = at_step(step);
        if text.len() <= MAX_MEMORY_MD_BYTES {
            fits = step;
            best = text;
        } else {
            over = step;
        }
    }
    best
}

fn render_with(
    groups: &[Group<'_>],
    index: &[Vec<IndexEntry<'_, '_>>],
    notes: &[ConsolidationNote],
    kept: &str,
) -> String {
    let mut out = String::new();
    for (group, entries) in groups.iter().zip(index) {
        render_group(group, entries, &mut out);
    }
    if groups.is_empty() && notes.is_empty() {
        out.push_str("No memories yet.\n\n");
    }
    if !notes.is_empty() {
        let _ = write!(
            out,
            "{NOTES_HEADING}\n\nSaved by agents with memory_note, oldest first; each stays until its \
             file leaves notes/.\n\n"
        );
        for note in notes {
            let _ = writeln!(out, "- `{}`: {}", one_line(&note.path), note_line(note));
        }
        out.push('\n');
    }
    if !kept.is_empty() {
        let _ = write!(out, "{KEPT_HEADING}\n\n{kept}\n\n");
    }
    out.push_str(MEMORY_FOOTER);
    out.push('\n');
    out
}

/// The group's tasks as index entries: one per title, in order of the newest task.
fn index_entries<'g, 'a>(group: &'g Group<'a>) -> Vec<IndexEntry<'g, 'a>> {
    let mut entries: Vec<IndexEntry<'g, 'a>> = Vec::new();
    let mut by_title: HashMap<String, usize> = HashMap::new();
    for task in &group.entries {
        let key = comparable(&task.task.title);
        match by_title.get(&key) {
            Some(&at) => entries[at].tasks.push(task),
            None => {
                by_title.insert(key, entries.len());
                entries.push(IndexEntry {
                    tasks: vec![task],
                    detail: Detail::Full,
                });
            }
        }
    }
    entries
}

fn render_group(group: &Group<'_>, index: &[IndexEntry<'_, '_>], out: &mut String) {
    let oldest = group.entries.last().map_or("", |e| e.date.as_str());
    let newest = group.entries.first().map_or("", |e| e.date.as_str());
    let cwd = one_line(&group.cwd);
    let _ = write!(
        out,
        "# Task Group: {}\nscope: work in `{cwd}`, {} task(s), {}\napplies_to: cwd={cwd}; \
         reuse_rule=reuse for work in this folder; re-check paths, versions and commands \
         against the current tree first\n\n",
        one_line(&group.name),
        group.entries.len(),
        span(oldest, newest),
    );
    // Task numbers of the entries the file holds, 1-based.
    let mut numbers: Vec<Option<usize>> = Vec::with_capacity(index.len());
    let mut left = 0;
    for entry in index {
        if entry.detail == Detail::Left {
            numbers.push(None);
            left += entry.tasks.len();
            continue;
        }
        let number = numbers.iter().flatten().count() + 1;
        numbers.push(Some(number));
        render_entry(number, entry, &cwd, out);
    }
    if left > 0 {
        let _ = write!(
            out,
            "({left} older or less-used task(s) of this group left out to keep this file under \
             {} KiB; their rollout summaries hold them)\n\n",
            MAX_MEMORY_MD_BYTES / 1024
        );
    }
    for (heading, section) in BLOCK_SECTIONS {
        let items = merged_items(index, &numbers, section);
        if items.is_empty() {
            continue;
        }
        let _ = writeln!(out, "## {heading}");
        for item in items {
            let _ = writeln!(out, "- {} [{}]", one_line(&item.text), item.tag());
        }
        out.push('\n');
    }
}

fn render_entry(number: usize, entry: &IndexEntry<'_, '_>, cwd: &str, out: &mut String) {
    let Some(newest) = entry.tasks.first() else {
        return;
    };
    let thread = one_line(&newest.record.thread_id);
    let outcome = newest.task.outcome.map_or("uncertain", |o| o.as_str());
    let _ = write!(
        out,
        "## Task {number}: {}\noutcome: {outcome}; updated_at: {}; thread_id: `{thread}`\n",
        one_line(&newest.task.title),
        newest.date,
    );
    let sessions = entry.sessions();
    if sessions > 1 {
        let oldest = entry.tasks.last().map_or("", |e| e.date.as_str());
        let _ = writeln!(
            out,
            "sessions: {sessions} ({}); outcomes: {}",
            span(oldest, &newest.date),
            outcome_counts(entry)
        );
    }
    out.push('\n');
    if entry.detail == Detail::Condensed {
        return;
    }
    let files: Vec<&Entry<'_>> = entry
        .tasks
        .iter()
        .copied()
        .filter(|e| e.summary_file.is_some())
        .collect();
    if !files.is_empty() {
        out.push_str("### rollout_summary_files\n");
        for task in files.iter().take(MAX_LISTED) {
            let _ = writeln!(
                out,
                "- {} (cwd={cwd}, updated_at={}, thread_id={})",
                one_line(task.summary_file.unwrap_or_default()),
                rfc3339(task.record.source_updated_at),
                one_line(&task.record.thread_id),
            );
        }
        if files.len() > MAX_LISTED {
            let _ = writeln!(
                out,
                "- and {} older session(s) of this task",
                files.len() - MAX_LISTED
            );
        }
        out.push('\n');
    }
    let keywords = distinct(
        entry.tasks.iter().flat_map(|e| e.keywords.iter()),
        MAX_KEYWORDS,
    );
    if !keywords.is_empty() {
        let _ = write!(out, "### keywords\n- {}\n\n", keywords.join(", "));
    }
    let references = distinct(
        entry
            .tasks
            .iter()
            .flat_map(|e| e.task.items(sections::REFERENCES)),
        MAX_LISTED,
    );
    if !references.is_empty() {
        out.push_str("### references\n");
        for reference in references {
            let _ = writeln!(out, "- {reference}");
        }
        out.push('\n');
    }
}

/// `a to b`, or `b` when both are the same day.
fn span(oldest: &str, newest: &str) -> String {
    if oldest == newest {
        newest.to_owned()
    } else {
        format!("{oldest} to {newest}")
    }
}

/// `3 success, 1 fail`, in the outcomes' own order.
fn outcome_counts(entry: &IndexEntry<'_, '_>) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for task in &entry.tasks {
        let outcome = task.task.outcome.map_or("uncertain", |o| o.as_str());
        match counts.iter_mut().find(|(known, _)| *known == outcome) {
            Some((_, count)) => *count += 1,
            None => counts.push((outcome, 1)),
        }
    }
    counts
        .iter()
        .map(|(outcome, count)| format!("{count} {outcome}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// At most `max` of `items`, each once (compared as [`comparable`]), on one line each.
fn distinct<'t>(items: impl Iterator<Item = &'t String>, max: usize) -> Vec<String> {
    let mut seen = BTreeSet::new();
    items
        .map(|item| one_line(item.trim()))
        .filter(|item| !item.is_empty() && seen.insert(comparable(item)))
        .take(max)
        .collect()
}

/// One block-level item with the entries and sessions that stated it.
struct Item {
    text: String,
    numbers: Vec<usize>,
    threads: BTreeSet<String>,
}

impl Item {
    /// `Task 1`, `Tasks 1, 2; 2 sessions`, `Tasks 1, 2, 3, 4, 5, 6 and 94 more; 100 sessions`.
    fn tag(&self) -> String {
        let label = if self.numbers.len() == 1 {
            "Task"
        } else {
            "Tasks"
        };
        let listed: Vec<String> = self
            .numbers
            .iter()
            .take(MAX_TASK_NUMBERS)
            .map(ToString::to_string)
            .collect();
        let mut tag = format!("{label} {}", listed.join(", "));
        if self.numbers.len() > MAX_TASK_NUMBERS {
            let _ = write!(tag, " and {} more", self.numbers.len() - MAX_TASK_NUMBERS);
        }
        if self.threads.len() > 1 {
            let _ = write!(tag, "; {} sessions", self.threads.len());
        }
        tag
    }
}

/// The items of one section over the group's shown entries, each once (compared as
/// [`comparable`]), with the task numbers and sessions it came from, in order of first
/// appearance (newest entry first). An item only left-out entries stated is left out too.
fn merged_items(
    index: &[IndexEntry<'_, '_>],
    numbers: &[Option<usize>],
    section: &str,
) -> Vec<Item> {
    let mut items: Vec<Item> = Vec::new();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    for (entry, number) in index.iter().zip(numbers) {
        let Some(number) = *number else {
            continue;
        };
        for task in &entry.tasks {
            for text in task.task.items(section) {
                let text = text.trim();
                let key = comparable(text);
                if key.is_empty() {
                    continue;
                }
                let at = *by_key.entry(key).or_insert_with(|| {
                    items.push(Item {
                        text: text.to_owned(),
                        numbers: Vec::new(),
                        threads: BTreeSet::new(),
                    });
                    items.len() - 1
                });
                let item = &mut items[at];
                if !item.numbers.contains(&number) {
                    item.numbers.push(number);
                }
                item.threads.insert(task.record.thread_id.clone());
            }
        }
    }
    items
}

fn rfc3339(seconds: i64) -> String {
    jiff::Timestamp::from_second(seconds)
        .map(|time| time.to_string())
        .unwrap_or_else(|_| seconds.to_string())
}
