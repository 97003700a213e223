//! Offline phase-2 consolidation: deterministic, without a language model.
//!
//! `MEMORY.md` groups the selected raw memories by project (working directory), newest first,
//! with long lines already written for an earlier entry removed. Entries are regenerated from the
//! current selection on every pass, so anchors of old entries that no longer appear (a thread
//! forgotten or re-extracted) are declared obsolete; any other text of the previous `MEMORY.md`
//! (hand edits, an earlier model-written handbook, material appended by a rejected rewrite) is
//! carried forward verbatim, so the consolidation guard has nothing to reject.
//! Notes agents saved with `memory_note` get their own section, regenerated from `notes/` on
//! every pass (a removed note file leaves it, its anchors declared obsolete).
//! `memory_summary.md` indexes the entries, newest first, then the newest notes, within the
//! token budget.

use std::collections::{BTreeMap, HashSet};

use memory_protocol::consolidation::{ConsolidationInput, ConsolidationNote, ConsolidationOutput};
use memory_protocol::names::memory_root as names;
use memory_protocol::stage_one::StageOneOutputRecord;
use memory_sanitize::anchors::{extract_anchors, missing_anchors};
use memory_sanitize::{TokenCounter, TruncationPolicy, o200k, truncate_middle};

/// First line of an offline `MEMORY.md`; marks the file as ours to regenerate.
const MEMORY_TITLE: &str = "# Memory (offline consolidation)";
const MEMORY_NOTICE: &str = "Consolidated by the agent-memory offline engine without a language \
    model: raw memories grouped by project, newest first, repeated items removed.";
const SUMMARY_NOTICE: &str = "Made by the agent-memory offline engine without a language model.";
/// Heading of the previous file's text that is not one of our entries.
const KEPT_HEADING: &str = "## Kept from the previous MEMORY.md";
const PROJECT_PREFIX: &str = "## Project ";
/// Heading of the notes section, regenerated from `notes/` on every pass.
const NOTES_HEADING: &str = "## Agent notes";
const NOTES_NOTICE: &str = "Notes agents saved with memory_note, oldest first; each stays until \
    its file is removed from notes/.";
/// Key under which the previous notes section is kept among the derived entries.
const NOTES_KEY: &str = "\0notes";
/// Longest note line in the summary, in characters.
const MAX_SUMMARY_NOTE_CHARS: usize = 160;
const ENTRY_PREFIX: &str = "### ";
/// Lines shorter than this are structure ("Outcome: success"), not worth deduplicating.
const MIN_DEDUP_CHARS: usize = 24;
const MAX_TITLE_CHARS: usize = 100;

/// One entry of the new `MEMORY.md`.
struct Entry<'a> {
    record: &'a StageOneOutputRecord,
    date: String,
    title: String,
}

/// Consolidates `input` deterministically (see the module docs).
pub(crate) fn consolidate(input: &ConsolidationInput) -> ConsolidationOutput {
    let mut entries: Vec<Entry<'_>> = input
        .selected
        .iter()
        .filter(|record| !record.raw_memory.trim().is_empty())
        .map(|record| Entry {
            record,
            date: date(record.source_updated_at),
            title: title(record),
        })
        .collect();
    entries.sort_by(|a, b| {
        b.record
            .source_updated_at
            .cmp(&a.record.source_updated_at)
            .then_with(|| a.record.thread_id.cmp(&b.record.thread_id))
    });

    let previous = Previous::parse(&input.memory_md);
    let memory_md = render_memory(&entries, &input.notes, previous.kept.trim());
    // Entries are derived from raw memories and regenerated from the current selection: the
    // anchors of old entries (of forgotten or re-extracted threads) may go. Other text may not.
    let derived: String = previous.entries.values().map(String::as_str).collect();
    let forgettable = extract_anchors(&derived);
    let obsolete = missing_anchors(&input.memory_md, &memory_md, &[])
        .into_iter()
        .filter(|anchor| forgettable.contains(anchor))
        .collect();
    let budget = usize::try_from(input.summary_token_budget).unwrap_or(usize::MAX);
    ConsolidationOutput {
        memory_md,
        memory_summary_md: render_summary(&entries, &input.notes, budget),
        obsolete,
    }
}

fn render_memory(entries: &[Entry<'_>], notes: &[ConsolidationNote], kept: &str) -> String {
    let mut out = format!("{MEMORY_TITLE}\n\n{MEMORY_NOTICE}\n");
    let mut seen = HashSet::new();
    for (project, group) in by_project(entries) {
        out.push_str(&format!("\n{PROJECT_PREFIX}`{project}`\n"));
        for entry in group {
            out.push_str(&format!(
                "\n{ENTRY_PREFIX}{} · {} · thread `{}`\n\n",
                entry.date,
                entry.title,
                one_line(&entry.record.thread_id)
            ));
            let body = entry_body(&entry.record.raw_memory, &mut seen);
            if body.is_empty() {
                out.push_str("(Everything in this memory is already listed above.)\n");
            } else {
                out.push_str(&body);
                out.push('\n');
            }
        }
    }
    if !notes.is_empty() {
        out.push_str(&format!("\n{NOTES_HEADING}\n\n{NOTES_NOTICE}\n\n"));
        for note in notes {
            out.push_str(&format!(
                "- `{}`: {}\n",
                one_line(&note.path),
                one_line(note.body())
            ));
        }
    }
    if !kept.is_empty() {
        out.push_str(&format!("\n{KEPT_HEADING}\n\n{kept}\n"));
    }
    out
}

/// The raw memory without its front matter, headings demoted below entry level (so the file
/// stays parseable), and long list items already written for an earlier entry removed.
fn entry_body(raw_memory: &str, seen: &mut HashSet<String>) -> String {
    let (front, body) = split_front_matter(raw_memory);
    let keywords = front
        .lines()
        .find_map(|line| line.strip_prefix("keywords:"))
        .map(str::trim)
        .filter(|keywords| !keywords.is_empty());
    let mut lines = Vec::new();
    if let Some(keywords) = keywords {
        lines.push(format!("keywords: {keywords}"));
    }
    let mut blank = false;
    for line in body.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            blank = !lines.is_empty();
            continue;
        }
        // Only list items are facts worth deduplicating; labels such as `Reusable knowledge:`
        // and headings repeat by design and give each entry its structure.
        let is_item = trimmed.starts_with("- ") || trimmed.starts_with("* ");
        if is_item && trimmed.chars().count() >= MIN_DEDUP_CHARS && !seen.insert(trimmed.to_owned())
        {
            continue;
        }
        if blank {
            lines.push(String::new());
            blank = false;
        }
        match trimmed.strip_prefix('#') {
            Some(heading) => lines.push(format!("#### {}", heading.trim_start_matches('#').trim())),
            None => lines.push(line.trim_end().to_owned()),
        }
    }
    lines.join("\n")
}

fn render_summary(entries: &[Entry<'_>], notes: &[ConsolidationNote], budget: usize) -> String {
    let counter = o200k();
    let header = format!(
        "{}\n{SUMMARY_NOTICE}\n\n## What's in memory\n\nDetails in {}, grouped by project; one \
         file per session in {}/.\n",
        names::MEMORY_SUMMARY_VERSION,
        names::MEMORY_FILE,
        names::ROLLOUT_SUMMARIES_DIR
    );
    // Newest entries first until the budget is spent; each line is counted on its own, and
    // the final text is cut as a last resort.
    let mut used = counter.count(&header);
    let mut included = Vec::new();
    for entry in entries {
        let line = summary_line(entry);
        let cost = counter.count(&line) + 1;
        if used + cost > budget {
            break;
        }
        used += cost;
        included.push(entry);
    }
    // Then the newest notes, while the budget lasts.
    let mut note_lines = Vec::new();
    for note in notes.iter().rev() {
        let text: String = one_line(note.body())
            .chars()
            .take(MAX_SUMMARY_NOTE_CHARS)
            .collect();
        let line = format!("- {text} (`{}`)\n", one_line(&note.path));
        let cost = counter.count(&line) + 1;
        if used + cost > budget {
            break;
        }
        used += cost;
        note_lines.push(line);
    }
    let mut out = header;
    if entries.is_empty() && notes.is_empty() {
        out.push_str("\nNo memories yet.\n");
    }
    let mut projects: BTreeMap<&str, Vec<&Entry<'_>>> = BTreeMap::new();
    for entry in included {
        projects
            .entry(project(entry.record))
            .or_default()
            .push(entry);
    }
    for (project, group) in projects {
        out.push_str(&format!("\n### {project}\n"));
        for entry in group {
            out.push_str(&summary_line(entry));
        }
    }
    if !note_lines.is_empty() {
        out.push_str("\n### Agent notes\n");
        for line in note_lines {
            out.push_str(&line);
        }
    }
    if counter.count(&out) > budget {
        return truncate_middle(&out, TruncationPolicy::Tokens(budget), counter).into_owned();
    }
    out
}

fn summary_line(entry: &Entry<'_>) -> String {
    format!(
        "- {}: {} (thread `{}`)\n",
        entry.date,
        entry.title,
        one_line(&entry.record.thread_id)
    )
}

fn by_project<'e, 'a>(entries: &'e [Entry<'a>]) -> BTreeMap<&'a str, Vec<&'e Entry<'a>>> {
    let mut groups: BTreeMap<&str, Vec<&Entry<'_>>> = BTreeMap::new();
    for entry in entries {
        groups.entry(project(entry.record)).or_default().push(entry);
    }
    groups
}

fn project(record: &StageOneOutputRecord) -> &str {
    record
        .cwd
        .as_deref()
        .map(str::trim)
        .filter(|cwd| !cwd.is_empty() && !cwd.contains(['\n', '\r', '`']))
        .unwrap_or("unknown project")
}

/// The entry title: the raw memory's `task:` line, else the summary's first line, else the slug.
fn title(record: &StageOneOutputRecord) -> String {
    let (front, _) = split_front_matter(&record.raw_memory);
    let from_front = front
        .lines()
        .find_map(|line| line.strip_prefix("task:"))
        .map(str::trim);
    let from_summary = record
        .rollout_summary
        .lines()
        .map(|line| line.trim_start_matches('#').trim())
        .find(|line| !line.is_empty());
    let title = from_front
        .filter(|text| !text.is_empty())
        .or(from_summary)
        .or(record.rollout_slug.as_deref())
        .unwrap_or("session");
    let title: String = one_line(title).chars().take(MAX_TITLE_CHARS).collect();
    title.trim().to_owned()
}

/// Splits a leading `---` ... `---` block from the rest.
fn split_front_matter(text: &str) -> (&str, &str) {
    let trimmed = text.trim_start();
    let Some(rest) = trimmed.strip_prefix("---\n") else {
        return ("", trimmed);
    };
    match rest.find("\n---") {
        Some(end) => {
            let front = rest.get(..end).unwrap_or("");
            let after = rest.get(end + 4..).unwrap_or("");
            (front, after.trim_start_matches(['-', '\r', '\n']))
        }
        None => ("", trimmed),
    }
}

fn one_line(text: &str) -> String {
    text.chars()
        .map(|ch| if ch.is_control() { ' ' } else { ch })
        .collect()
}

fn date(seconds: i64) -> String {
    jiff::Timestamp::from_second(seconds)
        .map(|time| time.strftime("%Y-%m-%d").to_string())
        .unwrap_or_else(|_| "unknown date".to_owned())
}

/// The previous `MEMORY.md`: our entries by thread id, and everything else.
struct Previous {
    entries: BTreeMap<String, String>,
    kept: String,
}

impl Previous {
    fn parse(text: &str) -> Previous {
        let mut previous = Previous {
            entries: BTreeMap::new(),
            kept: String::new(),
        };
        if text.trim().is_empty() {
            return previous;
        }
        if !text.starts_with(MEMORY_TITLE) {
            // Not ours: keep all of it.
            previous.kept = text.to_owned();
            return previous;
        }
        let mut current: Option<String> = None;
        let mut in_kept = false;
        let mut kept = Vec::new();
        for line in text.lines() {
            if in_kept {
                kept.push(line);
            } else if line == KEPT_HEADING {
                in_kept = true;
            } else if line == NOTES_HEADING {
                // The notes section is derived from `notes/`, like the entries.
                current = Some(NOTES_KEY.to_owned());
                previous.entries.entry(NOTES_KEY.to_owned()).or_default();
            } else if line.starts_with(ENTRY_PREFIX) {
                current = entry_thread_id(line);
                if let Some(id) = &current {
                    previous.entries.entry(id.clone()).or_default();
                }
            } else if line.starts_with(PROJECT_PREFIX) {
                current = None;
            }
            if !in_kept
                && let Some(entry) = current.as_ref().and_then(|id| previous.entries.get_mut(id))
            {
                entry.push_str(line);
                entry.push('\n');
            }
        }
        previous.kept = kept.join("\n");
        previous
    }
}

/// The thread id at the end of an entry heading: ``... · thread `<id>` ``.
fn entry_thread_id(heading: &str) -> Option<String> {
    let rest = heading.trim_end().strip_suffix('`')?;
    let (_, id) = rest.rsplit_once("thread `")?;
    Some(id.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn record(id: &str, cwd: &str, at: i64, raw: &str) -> StageOneOutputRecord {
        StageOneOutputRecord {
            thread_id: id.to_owned(),
            cwd: Some(cwd.to_owned()),
            rollout_path: format!("/r/{id}.jsonl"),
            raw_memory: raw.to_owned(),
            rollout_summary: format!("# Summary {id}"),
            rollout_slug: None,
            source_updated_at: at,
            generated_at: at,
            usage_count: 0,
            last_used_at: None,
            selected: false,
        }
    }

    fn input(memory_md: &str, selected: Vec<StageOneOutputRecord>) -> ConsolidationInput {
        ConsolidationInput {
            memory_md: memory_md.to_owned(),
            memory_summary_md: String::new(),
            selected,
            summary_token_budget: 2_500,
            notes: Vec::new(),
        }
    }

    const SHARED: &str = "- Always run `cargo fmt --all` before committing in this repo.";
    const LABEL: &str = "Reusable knowledge:";

    #[test]
    fn groups_by_project_newest_first_and_removes_repeated_lines() {
        let selected = vec![
            record(
                "t1",
                "/repo/a",
                1_750_000_000,
                &format!(
                    "---\ntask: Fix the build\nkeywords: cargo, build\n---\n### Task 1\n{LABEL}\n{SHARED}\n- run `cargo build --locked`"
                ),
            ),
            record(
                "t2",
                "/repo/a",
                1_760_000_000,
                &format!("### Task 1\n{LABEL}\n{SHARED}\n- use src/main.rs"),
            ),
            record("t3", "/repo/b", 1_755_000_000, "note about b"),
        ];
        let output = consolidate(&input("", selected));
        let md = &output.memory_md;
        assert!(md.starts_with(MEMORY_TITLE), "{md}");
        assert!(md.contains("without a language model"));
        let project_a = md.find("## Project `/repo/a`").unwrap();
        let project_b = md.find("## Project `/repo/b`").unwrap();
        assert!(project_a < project_b);
        let t1 = md.find("thread `t1`").unwrap();
        let t2 = md.find("thread `t2`").unwrap();
        assert!(t2 < t1, "newest first: {md}");
        assert!(
            md.contains("### 2025-06-15 · Fix the build · thread `t1`"),
            "{md}"
        );
        assert_eq!(md.matches(SHARED).count(), 1, "{md}");
        assert_eq!(
            md.matches(LABEL).count(),
            2,
            "labels stay with every entry: {md}"
        );
        assert!(md.contains("keywords: cargo, build") && md.contains("#### Task 1"));
        assert!(output.obsolete.is_empty());
        assert!(output.memory_summary_md.starts_with("v1\n"));
        assert!(output.memory_summary_md.contains(SUMMARY_NOTICE));
        assert!(
            output
                .memory_summary_md
                .contains("Fix the build (thread `t1`)")
        );
    }

    #[test]
    fn rerunning_on_its_own_output_is_stable_and_keeps_foreign_text() {
        let selected = vec![record("t1", "/repo", 1_750_000_000, "- use `make check`")];
        let first = consolidate(&input(
            "# My notes\nAlways run `just lint` first.\n",
            selected.clone(),
        ));
        assert!(first.memory_md.contains(KEPT_HEADING));
        assert!(first.memory_md.contains("Always run `just lint` first."));
        let second = consolidate(&input(&first.memory_md, selected));
        assert_eq!(second.memory_md, first.memory_md);
        assert!(second.obsolete.is_empty());
    }

    #[test]
    fn forgotten_threads_are_dropped_with_their_anchors_declared_obsolete() {
        let both = vec![
            record("t1", "/repo", 1_750_000_000, "- edit src/old_module.rs"),
            record("t2", "/repo", 1_750_000_100, "- edit src/new_module.rs"),
        ];
        let first = consolidate(&input("", both.clone()));
        let second = consolidate(&input(&first.memory_md, vec![both[1].clone()]));
        assert!(!second.memory_md.contains("old_module"));
        assert!(
            second.obsolete.contains(&"src/old_module.rs".to_owned()),
            "{:?}",
            second.obsolete
        );
        let missing = missing_anchors(&first.memory_md, &second.memory_md, &second.obsolete);
        assert!(
            missing.is_empty(),
            "the phase-2 guard would refuse: {missing:?}"
        );
    }

    #[test]
    fn the_summary_fits_its_budget_by_dropping_the_oldest() {
        let selected: Vec<_> = (0..200)
            .map(|i| {
                record(
                    &format!("thread-{i:03}"),
                    "/repo",
                    1_700_000_000 + i,
                    "- a memory line",
                )
            })
            .collect();
        let mut small = input("", selected);
        small.summary_token_budget = 300;
        let summary = consolidate(&small).memory_summary_md;
        assert!(o200k().count(&summary) <= 300);
        assert!(summary.contains("thread-199"), "newest kept");
        assert!(!summary.contains("thread-000"), "oldest dropped");
    }

    fn note(path: &str, body: &str) -> ConsolidationNote {
        ConsolidationNote {
            path: path.to_owned(),
            text: format!("# Agent note\nwritten_at: 2026-03-15T08:02:11Z\n\n{body}\n"),
        }
    }

    #[test]
    fn notes_get_their_own_section_and_leave_it_when_removed() {
        let selected = vec![record("t1", "/repo", 1_750_000_000, "- use `make check`")];
        let mut request = input("", selected.clone());
        request.notes = vec![
            note(
                "notes/2026-03-15T08-02-11Z-0001.md",
                "Statements use `;` as separator.",
            ),
            note(
                "notes/2026-03-16T08-00-00Z-0002.md",
                "Deploy with `just release`.",
            ),
        ];
        let first = consolidate(&request);
        let md = &first.memory_md;
        let notes_at = md.find(NOTES_HEADING).unwrap();
        assert!(md.find("## Project `/repo`").unwrap() < notes_at);
        assert!(md.contains(
            "- `notes/2026-03-15T08-02-11Z-0001.md`: Statements use `;` as separator.\n"
        ));
        assert!(
            !md.contains("written_at"),
            "the header lines stay in the note file"
        );
        let summary = &first.memory_summary_md;
        assert!(summary.contains("### Agent notes\n- Deploy with `just release`."));
        // Stable on its own output.
        request.memory_md = first.memory_md.clone();
        assert_eq!(consolidate(&request).memory_md, first.memory_md);
        // A removed note leaves, its anchors declared obsolete so the guard accepts it.
        let mut removed = input(&first.memory_md, selected);
        removed.notes = vec![request.notes[0].clone()];
        let second = consolidate(&removed);
        assert!(!second.memory_md.contains("just release"));
        let missing = missing_anchors(&first.memory_md, &second.memory_md, &second.obsolete);
        assert!(
            missing.is_empty(),
            "the phase-2 guard would refuse: {missing:?}"
        );
    }

    proptest! {
        #[test]
        fn any_input_consolidates_within_budget_and_passes_the_guard(
            old in "(\\PC|\n|#|`){0,300}",
            raws in prop::collection::vec(("[a-c/]{0,6}", "(\\PC|\n|-|#){0,120}"), 0..6),
            budget in 40u64..400,
            notes in prop::collection::vec("(\\PC|\n|-|#|`){0,80}", 0..4),
        ) {
            let selected = raws
                .iter()
                .enumerate()
                .map(|(i, (cwd, raw))| record(&format!("t{i}"), cwd, 1_700_000_000 + i as i64, raw))
                .collect();
            let mut request = input(&old, selected);
            request.summary_token_budget = budget;
            request.notes = notes
                .iter()
                .enumerate()
                .map(|(i, text)| ConsolidationNote { path: format!("notes/{i}.md"), text: text.clone() })
                .collect();
            let output = consolidate(&request);
            prop_assert!(output.memory_summary_md.starts_with("v1\n") || o200k().count(&output.memory_summary_md) <= budget as usize);
            prop_assert!(o200k().count(&output.memory_summary_md) <= budget as usize + 1);
            let missing = missing_anchors(&old, &output.memory_md, &output.obsolete);
            prop_assert!(missing.is_empty(), "the phase-2 guard would refuse: {:?}", missing);
        }
    }
}
