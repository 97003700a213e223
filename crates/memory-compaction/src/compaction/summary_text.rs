//! Reading and guarding summary text: its sections, its Done items, and the guard that keeps
//! every earlier Done item through an update.
//!
//! A summarizer updating a summary may drop finished work or list it as open again (codex
//! #38931). The guard compares the update with the summary it replaced: a Done item that
//! disappeared is put back under Done, and an In Progress, Blocked or Next Steps item that
//! repeats a Done item is removed. Items the update folded into its count line are counted,
//! not dropped (the oldest missing ones). When putting items back would take the summary over
//! its size cap, the oldest restored items are folded into one line that counts them.

use std::collections::HashSet;

use memory_protocol::compaction::summary_sections::{
    ADDITIONAL_NOTES, BLOCKED, CRITICAL_CONTEXT, DONE, IN_PROGRESS, KEY_DECISIONS, NEXT_STEPS,
    PROGRESS, folded_done_count, folded_done_item, is_item_start, item_text, section_items,
    section_range,
};
use memory_sanitize::{FULL_STOPS, TokenCounter};

/// The item's text for comparison: without its bullet, checkbox or number, whitespace
/// collapsed, lowercase, without a trailing full stop of any script (`.`, `。`, ...).
pub fn normalize_item(item: &str) -> String {
    let collapsed = item_text(item)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    collapsed
        .trim_end_matches(|ch| ch == ' ' || FULL_STOPS.contains(&ch))
        .to_lowercase()
}

/// What the guard changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GuardReport {
    /// Earlier Done items put back.
    pub restored: usize,
    /// Open items removed because they repeat a Done item.
    pub reopened_removed: usize,
    /// Restored items folded into a count line to respect the size cap.
    pub folded: usize,
}

/// Keeps every Done item of `previous` in `updated` (see the module docs). `cap_tokens` bounds
/// the result when items are put back.
pub fn keep_done_items(
    previous: &str,
    updated: &str,
    cap_tokens: u64,
    counter: &dyn TokenCounter,
) -> (String, GuardReport) {
    let (previous_folded, previous_done) = split_folded(section_items(previous, DONE));
    let (updated_folded, updated_done) = split_folded(section_items(updated, DONE));
    let present: HashSet<String> = updated_done.iter().map(|i| normalize_item(i)).collect();
    // An update that folded older items into its count line accounts for that many of the
    // missing items, oldest first; only the rest were dropped.
    let newly_folded = updated_folded.saturating_sub(previous_folded);
    let missing: Vec<String> = previous_done
        .into_iter()
        .filter(|item| !present.contains(&normalize_item(item)))
        .skip(newly_folded)
        .map(|item| as_done_item(&item))
        .collect();
    // Items an earlier pass folded into a count must stay counted.
    let lost_folded = previous_folded.saturating_sub(updated_folded);
    let mut done: HashSet<String> = present;
    done.extend(missing.iter().map(|i| normalize_item(i)));
    let (without_reopened, reopened_removed) = remove_open_items(updated, &done);
    let mut report = GuardReport {
        restored: missing.len(),
        reopened_removed,
        folded: 0,
    };
    if missing.is_empty() && lost_folded == 0 {
        return (without_reopened, report);
    }
    let base = remove_folded_lines(&without_reopened);
    let mut folded = 0;
    loop {
        let total_folded = updated_folded + lost_folded + folded;
        let mut items: Vec<String> = Vec::new();
        if total_folded > 0 {
            items.push(format!("- [x] {}", folded_done_item(total_folded)));
        }
        items.extend(missing.iter().skip(folded).cloned());
        let text = insert_done_items(&base, &items);
        let fits = u64::try_from(counter.count(&text)).unwrap_or(u64::MAX) <= cap_tokens;
        if fits || folded >= missing.len() {
            report.folded = folded;
            return (text, report);
        }
        folded += 1;
    }
}

/// Splits folded count lines from the other Done items: (their total count, the others).
fn split_folded(items: Vec<String>) -> (usize, Vec<String>) {
    let mut folded = 0;
    let mut rest = Vec::new();
    for item in items {
        match folded_done_count(&item) {
            Some(count) => folded += count,
            None => rest.push(item),
        }
    }
    (folded, rest)
}

fn remove_folded_lines(text: &str) -> String {
    text.lines()
        .filter(|line| folded_done_count(line).is_none())
        .collect::<Vec<_>>()
        .join("\n")
}

fn as_done_item(item: &str) -> String {
    let normalized_start = item.trim_start();
    for prefix in ["- [x] ", "- [X] ", "* [x] ", "* [X] "] {
        if normalized_start.starts_with(prefix) {
            return item.to_owned();
        }
    }
    let body = normalized_start
        .trim_start_matches(['-', '*'])
        .trim_start()
        .trim_start_matches("[ ]")
        .trim_start();
    format!("- [x] {body}")
}

/// Removes items of In Progress, Blocked and Next Steps whose text is a Done item.
fn remove_open_items(text: &str, done: &HashSet<String>) -> (String, usize) {
    let lines: Vec<&str> = text.lines().collect();
    let mut drop = vec![false; lines.len()];
    let mut removed = 0;
    for header in [IN_PROGRESS, BLOCKED, NEXT_STEPS] {
        let Some(range) = section_range(&lines, header) else {
            continue;
        };
        let mut index = range.start;
        while index < range.end {
            let line = lines.get(index).copied().unwrap_or_default();
            if is_item_start(line) {
                let mut end = index + 1;
                while end < range.end
                    && lines
                        .get(end)
                        .is_some_and(|l| l.starts_with([' ', '\t']) && !l.trim().is_empty())
                {
                    end += 1;
                }
                let item = lines.get(index..end).unwrap_or_default().join("\n");
                if done.contains(&normalize_item(&item)) {
                    drop.iter_mut()
                        .take(end)
                        .skip(index)
                        .for_each(|d| *d = true);
                    removed += 1;
                }
                index = end;
            } else {
                index += 1;
            }
        }
    }
    if removed == 0 {
        return (text.to_owned(), 0);
    }
    let kept: Vec<&str> = lines
        .iter()
        .zip(&drop)
        .filter(|(_, dropped)| !**dropped)
        .map(|(line, _)| *line)
        .collect();
    (kept.join("\n"), removed)
}

/// Inserts items at the top of the Done section, creating it (and Progress) when missing.
fn insert_done_items(text: &str, items: &[String]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let position =
        |lines: &[String], header: &str| lines.iter().position(|l| l.trim_end() == header);
    let block: Vec<String> = items.to_vec();
    if let Some(at) = position(&lines, DONE) {
        lines.splice(at + 1..at + 1, block);
    } else if let Some(at) = position(&lines, PROGRESS) {
        let mut section = vec![DONE.to_owned()];
        section.extend(block);
        lines.splice(at + 1..at + 1, section);
    } else {
        let mut section = vec![PROGRESS.to_owned(), DONE.to_owned()];
        section.extend(block);
        section.push(String::new());
        let at = [
            KEY_DECISIONS,
            NEXT_STEPS,
            CRITICAL_CONTEXT,
            ADDITIONAL_NOTES,
        ]
        .iter()
        .find_map(|header| position(&lines, header));
        match at {
            Some(at) => {
                lines.splice(at..at, section);
            }
            None => {
                if lines.last().is_some_and(|l| !l.trim().is_empty()) {
                    lines.push(String::new());
                }
                section.pop();
                lines.extend(section);
            }
        }
    }
    lines.join("\n")
}
