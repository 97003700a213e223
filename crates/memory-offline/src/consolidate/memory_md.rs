//! The offline `MEMORY.md`: one `# Task Group:` block per project, a `## Task n` index entry
//! per task (outcome, date, thread, rollout summary file, keywords, references), then the
//! group's preferences, knowledge and failure lessons, each tagged with its tasks.

use std::fmt::Write as _;

use memory_protocol::memory_format::sections;

use memory_protocol::consolidation::ConsolidationNote;

use super::{Group, KEPT_HEADING, MEMORY_FOOTER, NOTES_HEADING, note_line, one_line};

/// The three block-level sections, in order, with the task-block section each gathers.
const BLOCK_SECTIONS: [(&str, &str); 3] = [
    ("User preferences", sections::PREFERENCE_SIGNALS),
    ("Reusable knowledge", sections::REUSABLE_KNOWLEDGE),
    ("Failures and how to do differently", sections::FAILURES),
];

/// Renders `MEMORY.md` from the groups and the notes, with `kept` (text of the previous file that is not
/// ours) under its own heading, and the footer that marks the file as ours.
pub(crate) fn render(groups: &[Group<'_>], notes: &[ConsolidationNote], kept: &str) -> String {
    let mut out = String::new();
    for group in groups {
        render_group(group, &mut out);
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

fn render_group(group: &Group<'_>, out: &mut String) {
    let oldest = group.entries.last().map_or("", |e| e.date.as_str());
    let newest = group.entries.first().map_or("", |e| e.date.as_str());
    let span = if oldest == newest {
        newest.to_owned()
    } else {
        format!("{oldest} to {newest}")
    };
    let cwd = one_line(&group.cwd);
    let _ = write!(
        out,
        "# Task Group: {}\nscope: work in `{cwd}`, {} task(s), {span}\napplies_to: cwd={cwd}; \
         reuse_rule=reuse for work in this folder; re-check paths, versions and commands \
         against the current tree first\n\n",
        one_line(&group.name),
        group.entries.len(),
    );
    for (index, entry) in group.entries.iter().enumerate() {
        let thread = one_line(&entry.record.thread_id);
        let outcome = entry.task.outcome.map_or("uncertain", |o| o.as_str());
        let _ = write!(
            out,
            "## Task {}: {}\noutcome: {outcome}; updated_at: {}; thread_id: `{thread}`\n\n",
            index + 1,
            one_line(&entry.task.title),
            entry.date,
        );
        if let Some(file) = entry.summary_file {
            let _ = write!(
                out,
                "### rollout_summary_files\n- {} (cwd={cwd}, rollout_path={}, updated_at={}, \
                 thread_id={thread})\n\n",
                one_line(file),
                one_line(&entry.record.rollout_path),
                rfc3339(entry.record.source_updated_at),
            );
        }
        if !entry.keywords.is_empty() {
            let keywords: Vec<String> = entry.keywords.iter().map(|k| one_line(k)).collect();
            let _ = write!(out, "### keywords\n- {}\n\n", keywords.join(", "));
        }
        let references = entry.task.items(sections::REFERENCES);
        if !references.is_empty() {
            out.push_str("### references\n");
            for reference in references {
                let _ = writeln!(out, "- {}", one_line(reference));
            }
            out.push('\n');
        }
    }
    for (heading, section) in BLOCK_SECTIONS {
        let items = merged_items(group, section);
        if items.is_empty() {
            continue;
        }
        let _ = writeln!(out, "## {heading}");
        for (item, tasks) in items {
            let label = if tasks.len() == 1 { "Task" } else { "Tasks" };
            let numbers: Vec<String> = tasks.iter().map(ToString::to_string).collect();
            let _ = writeln!(
                out,
                "- {} [{label} {}]",
                one_line(&item),
                numbers.join(", ")
            );
        }
        out.push('\n');
    }
}

/// The items of one section over the group's tasks, each once, with the task numbers (1-based)
/// it came from, in order of first appearance (newest task first).
fn merged_items(group: &Group<'_>, section: &str) -> Vec<(String, Vec<usize>)> {
    let mut items: Vec<(String, Vec<usize>)> = Vec::new();
    for (index, entry) in group.entries.iter().enumerate() {
        for item in entry.task.items(section) {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            match items
                .iter_mut()
                .find(|(known, _)| known.eq_ignore_ascii_case(item))
            {
                Some((_, tasks)) => {
                    if !tasks.contains(&(index + 1)) {
                        tasks.push(index + 1);
                    }
                }
                None => items.push((item.to_owned(), vec![index + 1])),
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
