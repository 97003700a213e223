//! Usage signals: the citation block an agent ends its answer with, read back into which
//! memories it used.
//!
//! The read path asks for one block at the end of an answer (the names are in
//! [`memory_protocol::names::citation`]; codex's block is read too):
//!
//! ```text
//! <memory-citation>
//! <citation_entries>
//! MEMORY.md:12-20|note=[the deploy rule]
//! rollout_summaries/2025-11-04T14-02-11-n2j8-deploy.md:1-30|note=[the failing env var]
//! </citation_entries>
//! <rollout_ids>
//! 019a5210-33c8-7e10-a4d1-92b7f0c4d002
//! </rollout_ids>
//! </memory-citation>
//! ```
//!
//! Every thread id listed counts, and so does every thread an entry points into: the `## Task`
//! section of `MEMORY.md` a line range falls in (or, for a line of a group's preferences,
//! knowledge or lessons, the tasks it is tagged with, else every task of the group), the
//! thread of a rollout summary file, the thread block of `raw_memories.md`. Each cited thread's
//! memory gets one more use and a last-use time, which ranks it higher in the next selection.

use std::collections::BTreeSet;
use std::path::{Component, Path};

use memory_protocol::names::citation as tags;
use memory_protocol::names::memory_root as names;

use crate::error::Result;
use crate::memory_root::MemoryRoot;
use crate::store::{WriteStore, now_unix};

/// Longest thread id accepted from a citation.
const MAX_ID_CHARS: usize = 100;
/// Most entries and ids read from one message.
const MAX_ITEMS: usize = 256;

/// One citation block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Citation {
    /// The entries pointing into the memory root.
    pub entries: Vec<CitationEntry>,
    /// The thread ids listed.
    pub thread_ids: Vec<String>,
}

/// One `path:start-end|note=[...]` line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CitationEntry {
    /// The file, as written (relative to the memory root, or absolute inside it).
    pub path: String,
    /// First line cited (1-based), when given.
    pub start: Option<usize>,
    /// Last line cited, when given.
    pub end: Option<usize>,
    /// Why it mattered, when given.
    pub note: Option<String>,
}

/// What recording one message's citations did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsageReport {
    /// Citation blocks found.
    pub blocks: usize,
    /// The threads the citations name or point into, sorted.
    pub cited_threads: Vec<String>,
    /// Stored memories whose usage was recorded (cited threads that have one).
    pub recorded: usize,
}

/// Every citation block in `text` (the contract asks for one at the end; more are read too).
pub fn parse_citations(text: &str) -> Vec<Citation> {
    let mut citations = Vec::new();
    for tag in [tags::BLOCK, tags::CODEX_BLOCK] {
        for block in tag_bodies(text, tag) {
            let mut citation = Citation::default();
            for body in tag_bodies(block, tags::ENTRIES) {
                citation
                    .entries
                    .extend(body.lines().filter_map(parse_entry).take(MAX_ITEMS));
            }
            for tag in [tags::THREAD_IDS, tags::LEGACY_THREAD_IDS] {
                for body in tag_bodies(block, tag) {
                    citation.thread_ids.extend(
                        body.lines()
                            .map(|line| line.trim().trim_start_matches("- ").trim_matches('`'))
                            .filter(|id| is_thread_id(id))
                            .map(str::to_owned)
                            .take(MAX_ITEMS),
                    );
                }
            }
            citations.push(citation);
        }
    }
    citations
}

/// The threads `citations` name or point into, reading the memory root's files to resolve
/// entries. Entries outside the root, or into files that are missing, resolve to nothing.
pub fn cited_threads(citations: &[Citation], root: &MemoryRoot) -> Result<BTreeSet<String>> {
    let mut threads: BTreeSet<String> = BTreeSet::new();
    let mut memory_index: Option<MemoryIndex> = None;
    for citation in citations {
        threads.extend(citation.thread_ids.iter().cloned());
        for entry in &citation.entries {
            let Some(relative) = inside_root(&entry.path, root.dir()) else {
                continue;
            };
            let lines = entry
                .start
                .map(|start| start..=entry.end.unwrap_or(start).max(start));
            if relative == names::MEMORY_FILE {
                if memory_index.is_none() {
                    memory_index = Some(MemoryIndex::parse(
                        &root.read(names::MEMORY_FILE)?.unwrap_or_default(),
                    ));
                }
                if let Some(index) = &memory_index {
                    threads.extend(index.threads(lines));
                }
            } else if relative == names::RAW_MEMORIES_FILE {
                let text = root.read(names::RAW_MEMORIES_FILE)?.unwrap_or_default();
                threads.extend(raw_memory_threads(&text, lines));
            } else if relative
                .strip_prefix(names::ROLLOUT_SUMMARIES_DIR)
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|file| !file.contains('/'))
            {
                let text = root.read(&relative)?.unwrap_or_default();
                threads.extend(
                    text.lines()
                        .take(8)
                        .find_map(|line| line.strip_prefix("thread_id:"))
                        .map(str::trim)
                        .filter(|id| is_thread_id(id))
                        .map(str::to_owned),
                );
            }
        }
    }
    Ok(threads)
}

/// Parses the citations in an assistant message, resolves them against the memory root, and
/// records one use (now) for every cited thread's stored memory.
pub async fn record_citations(
    store: &dyn WriteStore,
    root: &MemoryRoot,
    message: &str,
) -> Result<UsageReport> {
    let citations = parse_citations(message);
    let threads = cited_threads(&citations, root)?;
    let ids: Vec<String> = threads.iter().cloned().collect();
    let recorded = if ids.is_empty() {
        0
    } else {
        store.record_memory_usage(&ids, now_unix()).await?
    };
    Ok(UsageReport {
        blocks: citations.len(),
        cited_threads: ids,
        recorded,
    })
}

/// The bodies of every `<tag>...</tag>` in `text`, matching the tag ASCII case-insensitively;
/// an unclosed tag runs to the end.
fn tag_bodies<'a>(text: &'a str, tag: &str) -> Vec<&'a str> {
    let lower = text.to_ascii_lowercase();
    let open = format!("<{}>", tag.to_ascii_lowercase());
    let close = format!("</{}>", tag.to_ascii_lowercase());
    let mut bodies = Vec::new();
    let mut cursor = 0;
    while let Some(found) = lower.get(cursor..).and_then(|rest| rest.find(&open)) {
        let start = cursor + found + open.len();
        let end = lower
            .get(start..)
            .and_then(|rest| rest.find(&close))
            .map_or(text.len(), |end| start + end);
        bodies.push(text.get(start..end).unwrap_or(""));
        cursor = (end + close.len()).min(text.len());
        if bodies.len() >= MAX_ITEMS {
            break;
        }
    }
    bodies
}

/// `path:start-end|note=[...]`, or a bare path.
fn parse_entry(line: &str) -> Option<CitationEntry> {
    let line = line.trim().trim_start_matches("- ").trim();
    if line.is_empty() {
        return None;
    }
    let (location, note) = match line.split_once('|') {
        Some((location, rest)) => {
            let note = rest
                .trim()
                .strip_prefix("note=")
                .map(|note| {
                    note.trim()
                        .trim_start_matches('[')
                        .trim_end_matches(']')
                        .trim()
                })
                .filter(|note| !note.is_empty())
                .map(str::to_owned);
            (location.trim(), note)
        }
        None => (line, None),
    };
    let location = location.trim_matches('`');
    let (path, range) = match location.rsplit_once(':') {
        Some((path, range)) if range.chars().all(|c| c.is_ascii_digit() || c == '-') => {
            (path, Some(range))
        }
        _ => (location, None),
    };
    let (start, end) = match range.map(|r| r.split_once('-').unwrap_or((r, r))) {
        Some((start, end)) => (start.parse().ok(), end.parse().ok()),
        None => (None, None),
    };
    (!path.trim().is_empty()).then(|| CitationEntry {
        path: path.trim().to_owned(),
        start,
        end,
        note,
    })
}

fn is_thread_id(id: &str) -> bool {
    !id.is_empty()
        && id.chars().count() <= MAX_ID_CHARS
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The path relative to the memory root with `/` separators, when it stays inside the root.
fn inside_root(path: &str, root: &Path) -> Option<String> {
    let path = Path::new(path.trim());
    let relative = if path.is_absolute() {
        path.strip_prefix(root).ok()?
    } else {
        path
    };
    let mut parts = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?.to_owned()),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// The threads of the `## Thread` blocks of `raw_memories.md` the lines fall in (all of them
/// without lines).
fn raw_memory_threads(text: &str, lines: Option<std::ops::RangeInclusive<usize>>) -> Vec<String> {
    let mut current: Option<String> = None;
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        if let Some(rest) = line.strip_prefix("## Thread ") {
            current = Some(rest.trim().trim_matches('`').to_owned());
        }
        let wanted = lines.as_ref().is_none_or(|range| range.contains(&number));
        if wanted
            && let Some(id) = &current
            && is_thread_id(id)
            && !found.contains(id)
        {
            found.push(id.clone());
        }
    }
    found
}

/// Where `MEMORY.md`'s task groups and task sections are, and which threads each holds.
#[derive(Debug, Default)]
struct MemoryIndex {
    groups: Vec<GroupIndex>,
}

#[derive(Debug, Default)]
struct GroupIndex {
    start: usize,
    tasks: Vec<TaskIndex>,
    /// Block-level lines (preferences, knowledge, lessons) with the task numbers they name.
    tagged: Vec<(usize, Vec<usize>)>,
}

#[derive(Debug, Default)]
struct TaskIndex {
    number: usize,
    start: usize,
    end: usize,
    threads: Vec<String>,
}

impl MemoryIndex {
    /// Reads `# Task Group:` blocks and their `## Task n` sections; a section ends at the next
    /// `## ` heading. Thread ids are read from `thread_id: X`, ``thread_id: `X` `` and
    /// `thread_id=X` in a section.
    fn parse(text: &str) -> MemoryIndex {
        let mut index = MemoryIndex::default();
        let mut in_task = false;
        for (number, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
            let trimmed = line.trim();
            if trimmed.starts_with("# ") && !trimmed.starts_with("## ") {
                index.groups.push(GroupIndex {
                    start: number,
                    ..GroupIndex::default()
                });
                in_task = false;
                continue;
            }
            let Some(group) = index.groups.last_mut() else {
                continue;
            };
            if let Some(rest) = trimmed.strip_prefix("## ") {
                in_task = false;
                if let Some(task_number) = task_number(rest) {
                    group.tasks.push(TaskIndex {
                        number: task_number,
                        start: number,
                        end: number,
                        threads: Vec::new(),
                    });
                    in_task = true;
                }
                continue;
            }
            if in_task && let Some(task) = group.tasks.last_mut() {
                task.end = number;
                for id in thread_ids_in(trimmed) {
                    if !task.threads.contains(&id) {
                        task.threads.push(id);
                    }
                }
            } else {
                let tagged = task_refs(trimmed);
                if !tagged.is_empty() {
                    group.tagged.push((number, tagged));
                }
            }
        }
        index
    }

    /// The threads the lines point into (every thread without lines).
    fn threads(&self, lines: Option<std::ops::RangeInclusive<usize>>) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        let mut add = |ids: &[String]| {
            for id in ids {
                if !found.contains(id) {
                    found.push(id.clone());
                }
            }
        };
        for (position, group) in self.groups.iter().enumerate() {
            let end = self
                .groups
                .get(position + 1)
                .map_or(usize::MAX, |next| next.start.saturating_sub(1));
            let overlaps = |start: usize, stop: usize| {
                lines
                    .as_ref()
                    .is_none_or(|range| *range.start() <= stop && start <= *range.end())
            };
            if !overlaps(group.start, end) {
                continue;
            }
            let mut specific = false;
            for task in &group.tasks {
                if overlaps(task.start, task.end) {
                    add(&task.threads);
                    specific = true;
                }
            }
            for (line, numbers) in &group.tagged {
                if overlaps(*line, *line) {
                    for task in group.tasks.iter().filter(|t| numbers.contains(&t.number)) {
                        add(&task.threads);
                    }
                    specific = true;
                }
            }
            if !specific {
                for task in &group.tasks {
                    add(&task.threads);
                }
            }
        }
        found
    }
}

/// `Task 3: ...` as 3.
fn task_number(heading: &str) -> Option<usize> {
    let rest = heading.strip_prefix("Task ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Task numbers named on a line: `[Task 2]`, `[Tasks 1, 3]`, `[Tasks 1, 2; 7 sessions]`,
/// `[Tasks 1, 2, 3, 4, 5, 6 and 9 more; 15 sessions]` (the numbers listed).
fn task_refs(line: &str) -> Vec<usize> {
    let Some(open) = line.rfind("[Task") else {
        return Vec::new();
    };
    let inner = line
        .get(open + 1..)
        .and_then(|rest| rest.split_once(']'))
        .map_or("", |(inner, _)| inner);
    let numbers = inner.split(';').next().unwrap_or_default();
    numbers
        .trim_start_matches("Tasks")
        .trim_start_matches("Task")
        .split(',')
        .filter_map(|n| {
            let digits: String = n.trim().chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect()
}

/// Thread ids written as `thread_id: X`, ``thread_id: `X` `` or `thread_id=X`.
fn thread_ids_in(line: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("thread_id") {
        let after = rest.get(at + "thread_id".len()..).unwrap_or("");
        let value = after
            .trim_start_matches([':', '=', ' '])
            .trim_start_matches('`');
        let id: String = value
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            .collect();
        let id = id.trim_end_matches('.').to_owned();
        if is_thread_id(&id) && !ids.contains(&id) {
            ids.push(id);
        }
        rest = after;
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn blocks_of_both_names_are_read() {
        let text = "Done.\n<memory-citation>\n<citation_entries>\nMEMORY.md:12-20|note=[deploy rule]\n\
                    rollout_summaries/a.md\n</citation_entries>\n<rollout_ids>\n019a-1\n not an id!\n\
                    </rollout_ids>\n</memory-citation>\n<oai-mem-citation><thread_ids>\nt2\n</thread_ids></oai-mem-citation>";
        let citations = parse_citations(text);
        assert_eq!(citations.len(), 2);
        assert_eq!(
            citations[0].entries[0],
            CitationEntry {
                path: "MEMORY.md".into(),
                start: Some(12),
                end: Some(20),
                note: Some("deploy rule".into())
            }
        );
        assert_eq!(citations[0].entries[1].start, None);
        assert_eq!(citations[0].thread_ids, ["019a-1"]);
        assert_eq!(citations[1].thread_ids, ["t2"]);
    }

    #[test]
    fn memory_md_lines_resolve_to_their_tasks() {
        let memory = "# Task Group: a\nscope: x\n\n## Task 1: one\noutcome: success; thread_id: `t1`\n\n\
                      ## Task 2: two\n- rollout_summaries/x.md (thread_id=t2)\n\n## User preferences\n\
                      - rule [Task 2]\n- other [Tasks 1, 2]\n# Task Group: b\n## Task 1: three\nthread_id: t3\n";
        let index = MemoryIndex::parse(memory);
        assert_eq!(index.threads(Some(4..=5)), ["t1"]);
        assert_eq!(index.threads(Some(8..=8)), ["t2"]);
        assert_eq!(index.threads(Some(11..=11)), ["t2"]);
        assert_eq!(index.threads(Some(12..=12)), ["t1", "t2"]);
        assert_eq!(index.threads(Some(1..=2)), ["t1", "t2"]);
        assert_eq!(index.threads(Some(14..=15)), ["t3"]);
        assert_eq!(index.threads(None), ["t1", "t2", "t3"]);
    }

    #[test]
    fn items_that_count_their_sessions_resolve_to_the_tasks_they_list() {
        assert_eq!(task_refs("- rule [Task 1; 100 sessions]"), [1]);
        assert_eq!(task_refs("- rule [Tasks 1, 3; 2 sessions]"), [1, 3]);
        assert_eq!(
            task_refs("- rule [Tasks 1, 2, 3, 4, 5, 6 and 9 more; 15 sessions]"),
            [1, 2, 3, 4, 5, 6]
        );
    }

    #[test]
    fn entries_outside_the_root_are_ignored() {
        let root = Path::new("/home/u/.agent-memory/memories");
        assert_eq!(inside_root("MEMORY.md", root).as_deref(), Some("MEMORY.md"));
        assert_eq!(
            inside_root(
                "/home/u/.agent-memory/memories/rollout_summaries/a.md",
                root
            )
            .as_deref(),
            Some("rollout_summaries/a.md")
        );
        assert_eq!(inside_root("../secrets.md", root), None);
        assert_eq!(inside_root("/etc/passwd", root), None);
    }

    proptest! {
        #[test]
        fn parsing_any_message_never_panics(text in "(\\PC|<memory-citation>|</memory-citation>|<citation_entries>|<rollout_ids>|:|-|\\||\n){0,60}") {
            for citation in parse_citations(&text) {
                for id in &citation.thread_ids {
                    prop_assert!(is_thread_id(id));
                }
                for entry in &citation.entries {
                    prop_assert!(!entry.path.is_empty());
                }
            }
            let index = MemoryIndex::parse(&text);
            let _ = index.threads(Some(1..=3));
            let _ = raw_memory_threads(&text, None);
        }
    }
}
