//! Offline phase-2 consolidation: deterministic, without a language model.
//!
//! Every selected raw memory is read back with [`RawMemory::parse`] and regrouped:
//! `MEMORY.md` gets one `# Task Group:` block per project (newest activity first), one
//! `## Task n` section per task with its outcome, date, thread, rollout summary file and
//! keywords (the index citations point into), and the group's preferences, knowledge and
//! failure lessons, each tagged with the tasks it came from (see `memory_md`).
//! `memory_summary.md` holds the user profile, preferences, general tips and what is in memory
//! by project and day, within its token budget (see `summary`). Notes agents saved with
//! `memory_note` get a section of their own in both files.
//!
//! Both files are regenerated from the current selection on every pass, so what only a
//! removed thread supported disappears with it; anchors of earlier generated blocks that no
//! longer appear are declared obsolete. Any other text of the previous `MEMORY.md` (hand
//! edits, a model-written handbook, material appended by a rejected rewrite) is carried
//! forward verbatim, so the consolidation guard has nothing to reject.

mod memory_md;
mod summary;

use std::collections::BTreeMap;

use memory_protocol::consolidation::{ConsolidationInput, ConsolidationNote, ConsolidationOutput};
use memory_protocol::memory_format::{RawMemory, Section, TaskBlock, sections, split_front_matter};
use memory_protocol::stage_one::StageOneOutputRecord;
use memory_transcript::anchors::{extract_anchors, missing_anchors};

/// The last line of an offline `MEMORY.md`; marks the file as ours to regenerate.
pub(crate) const MEMORY_FOOTER: &str = "<!-- Consolidated by the agent-memory offline engine, \
    without a language model: task groups by project, newest first; regenerated on every pass. -->";
/// Heading of the previous file's text that is not one of our blocks.
pub(crate) const KEPT_HEADING: &str = "# Notes kept from the previous MEMORY.md";
/// Longest task title, in characters.
const MAX_TITLE_CHARS: usize = 120;
/// Heading of the notes agents saved with `memory_note`, regenerated from `notes/` on every
/// pass (a removed note file leaves it, its anchors declared obsolete).
pub(crate) const NOTES_HEADING: &str = "# Agent Notes";

/// A note as one line: its body (without the header `memory_note` writes), on one line.
pub(crate) fn note_line(note: &ConsolidationNote) -> String {
    one_line(note.body())
}

/// One task of one selected thread.
pub(crate) struct Entry<'a> {
    pub record: &'a StageOneOutputRecord,
    pub task: TaskBlock,
    pub keywords: Vec<String>,
    pub date: String,
    pub summary_file: Option<&'a str>,
}

/// The tasks of one project, newest first.
pub(crate) struct Group<'a> {
    /// Short name: the raw memories' `task_group`, else the folder name.
    pub name: String,
    /// The working directory the group is keyed by.
    pub cwd: String,
    pub entries: Vec<Entry<'a>>,
}

/// Consolidates `input` deterministically (see the module docs).
pub(crate) fn consolidate(input: &ConsolidationInput) -> ConsolidationOutput {
    let groups = groups(input);
    let previous = Previous::parse(&input.memory_md);
    let memory_md = memory_md::render(&groups, &input.notes, previous.kept.trim());
    // Generated blocks are regenerated from the current selection: their anchors may go.
    // Other text may not.
    let forgettable = extract_anchors(&previous.generated);
    let obsolete = missing_anchors(&input.memory_md, &memory_md, &[])
        .into_iter()
        .filter(|anchor| forgettable.contains(anchor))
        .collect();
    let budget = usize::try_from(input.summary_token_budget).unwrap_or(usize::MAX);
    ConsolidationOutput {
        memory_md,
        memory_summary_md: summary::render(&groups, &input.notes, budget),
        obsolete,
    }
}

/// The selected memories as task groups: by working directory, groups and entries newest
/// first.
fn groups(input: &ConsolidationInput) -> Vec<Group<'_>> {
    let mut by_cwd: BTreeMap<String, Group<'_>> = BTreeMap::new();
    for record in &input.selected {
        if record.raw_memory.trim().is_empty() {
            continue;
        }
        let memory = RawMemory::parse(&record.raw_memory);
        let cwd = project_cwd(record, &memory);
        let group = by_cwd.entry(cwd.clone()).or_insert_with(|| Group {
            name: group_name(&memory, &cwd),
            cwd,
            entries: Vec::new(),
        });
        let summary_file = input
            .rollout_summary_files
            .get(&record.thread_id)
            .map(String::as_str);
        for task in tasks_of(record, &memory) {
            group.entries.push(Entry {
                record,
                task,
                keywords: memory.front.keywords.clone(),
                date: date(record.source_updated_at),
                summary_file,
            });
        }
    }
    let mut groups: Vec<Group<'_>> = by_cwd.into_values().collect();
    for group in &mut groups {
        // Stable: tasks of one thread keep their order.
        group.entries.sort_by(|a, b| {
            b.record
                .source_updated_at
                .cmp(&a.record.source_updated_at)
                .then_with(|| a.record.thread_id.cmp(&b.record.thread_id))
        });
    }
    groups.sort_by(|a, b| {
        let newest = |g: &Group<'_>| g.entries.first().map_or(0, |e| e.record.source_updated_at);
        newest(b).cmp(&newest(a)).then_with(|| a.cwd.cmp(&b.cwd))
    });
    groups
}

/// The task blocks of a raw memory; a memory without any (free-form model output) becomes one
/// task holding its bullet lines as knowledge.
fn tasks_of(record: &StageOneOutputRecord, memory: &RawMemory) -> Vec<TaskBlock> {
    let mut tasks = memory.tasks.clone();
    if tasks.is_empty() {
        let (_, body) = split_front_matter(&record.raw_memory);
        let items: Vec<String> = body
            .lines()
            .map(str::trim)
            .filter_map(|line| line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")))
            .map(|line| line.trim().to_owned())
            .filter(|line| !line.is_empty())
            .collect();
        let items = if items.is_empty() {
            body.lines()
                .map(str::trim)
                .filter(|line| !line.is_empty() && !line.starts_with('#'))
                .map(str::to_owned)
                .collect()
        } else {
            items
        };
        tasks.push(TaskBlock {
            title: String::new(),
            outcome: memory.front.task_outcome,
            outcome_note: None,
            sections: vec![Section {
                heading: sections::REUSABLE_KNOWLEDGE.to_owned(),
                items,
            }],
        });
    }
    for task in &mut tasks {
        if task.title.trim().is_empty() {
            task.title = fallback_title(record, memory);
        }
        task.title = one_line(&task.title)
            .chars()
            .take(MAX_TITLE_CHARS)
            .collect();
        task.title = task.title.trim().to_owned();
        if task.outcome.is_none() {
            task.outcome = memory.front.task_outcome;
        }
    }
    tasks
}

/// A title for a task without one: the memory's `task`, else the summary's first line, else
/// the slug.
fn fallback_title(record: &StageOneOutputRecord, memory: &RawMemory) -> String {
    let from_summary = record
        .rollout_summary
        .lines()
        .map(|line| line.trim_start_matches('#').trim())
        .find(|line| !line.is_empty());
    [
        Some(memory.front.task.as_str()),
        from_summary,
        record.rollout_slug.as_deref(),
    ]
    .into_iter()
    .flatten()
    .map(str::trim)
    .find(|title| !title.is_empty())
    .unwrap_or("session")
    .to_owned()
}

fn project_cwd(record: &StageOneOutputRecord, memory: &RawMemory) -> String {
    [record.cwd.as_deref(), Some(memory.front.cwd.as_str())]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|cwd| !cwd.is_empty() && *cwd != "unknown" && !cwd.contains(['\n', '\r', '`']))
        .unwrap_or("unknown project")
        .to_owned()
}

fn group_name(memory: &RawMemory, cwd: &str) -> String {
    let from_memory = memory.front.task_group.trim();
    let name = if !from_memory.is_empty() && from_memory != "unknown" {
        from_memory
    } else {
        cwd.trim_end_matches(['/', '\\'])
            .rsplit(['/', '\\'])
            .next()
            .filter(|name| !name.is_empty())
            .unwrap_or(cwd)
    };
    one_line(name).chars().take(60).collect()
}

/// `text` for comparison: lowercase, words only, single spaces.
pub(crate) fn comparable(text: &str) -> String {
    text.split(|ch: char| !ch.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A value on one line: control characters become spaces.
pub(crate) fn one_line(text: &str) -> String {
    text.chars()
        .map(|ch| if ch.is_control() { ' ' } else { ch })
        .collect()
}

/// `YYYY-MM-DD` of a Unix time.
pub(crate) fn date(seconds: i64) -> String {
    jiff::Timestamp::from_second(seconds)
        .map(|time| time.strftime("%Y-%m-%d").to_string())
        .unwrap_or_else(|_| "unknown date".to_owned())
}

/// The previous `MEMORY.md`: the blocks we generated, and everything else.
struct Previous {
    generated: String,
    kept: String,
}

impl Previous {
    fn parse(text: &str) -> Previous {
        if !text.contains(MEMORY_FOOTER) {
            // Not ours: keep all of it.
            return Previous {
                generated: String::new(),
                kept: text.to_owned(),
            };
        }
        let without_footer = text.replace(MEMORY_FOOTER, "");
        match without_footer.split_once(KEPT_HEADING) {
            Some((generated, kept)) => Previous {
                generated: generated.to_owned(),
                kept: kept.to_owned(),
            },
            None => Previous {
                generated: without_footer,
                kept: String::new(),
            },
        }
    }
}

#[cfg(test)]
mod tests;
