//! File tracking across compactions: the files a summarized span read and modified (from its
//! tool calls, read by [`memory_transcript::file_ops`]), merged with the previous compaction's
//! lists and bounded.
//!
//! The lists are bounded to [`FILE_LIST_LIMIT`] files, the most recently touched first, with
//! a count of the files no longer listed. The block rendered into a summary is stripped from
//! the previous summary before it is sent again, so summaries do not grow with every
//! compaction.

use std::collections::BTreeSet;

use memory_protocol::compaction::{
    AssistantBlock, CompactionDetails, ConversationMessage, summary_sections::FILES_TAG,
};
use memory_transcript::file_ops::{FileOps, tracked_path};

/// Most files listed in a compaction's details and files block.
pub const FILE_LIST_LIMIT: usize = 20;

/// Records the file operations of `messages`' tool calls.
pub fn scan_messages(ops: &mut FileOps, messages: &[ConversationMessage]) {
    for message in messages {
        let ConversationMessage::Assistant { content } = message else {
            continue;
        };
        for block in content {
            if let AssistantBlock::ToolCall {
                name, arguments, ..
            } = block
            {
                ops.scan_call(name, arguments);
            }
        }
    }
}

/// Merges a span's file operations with the previous compaction's lists and bounds the result
/// to [`FILE_LIST_LIMIT`] files: the span's files, most recent first (modified before read at
/// equal recency), then the previous modified files, then the previous read files. A file
/// modified anywhere is listed as modified. The lists come out sorted.
///
/// The previous lists are checked again as paths are checked when first seen: read selectors
/// stripped (so `a.md:10-20` and `a.md` are one file) and URL-like entries dropped.
pub fn merge_details(ops: &FileOps, previous: Option<&CompactionDetails>) -> CompactionDetails {
    let mut modified: BTreeSet<String> = BTreeSet::new();
    let mut ranked: Vec<String> = Vec::new();
    let mut push = |path: &str, is_modified: bool, ranked: &mut Vec<String>| {
        if is_modified {
            modified.insert(path.to_owned());
        }
        if !ranked.iter().any(|p| p == path) {
            ranked.push(path.to_owned());
        }
    };
    for (path, is_modified) in ops.most_recent_first() {
        push(&path, is_modified, &mut ranked);
    }
    if let Some(previous) = previous {
        for path in previous
            .modified_files
            .iter()
            .filter_map(|p| tracked_path(p))
        {
            push(&path, true, &mut ranked);
        }
        for path in previous.read_files.iter().filter_map(|p| tracked_path(p)) {
            push(&path, false, &mut ranked);
        }
    }
    let listed: Vec<String> = ranked.iter().take(FILE_LIST_LIMIT).cloned().collect();
    let dropped = ranked.len().saturating_sub(listed.len()) as u64;
    let mut details = CompactionDetails {
        read_files: listed
            .iter()
            .filter(|p| !modified.contains(*p))
            .cloned()
            .collect(),
        modified_files: listed
            .iter()
            .filter(|p| modified.contains(*p))
            .cloned()
            .collect(),
        elided_files: previous.map_or(0, |p| p.elided_files) + dropped,
    };
    details.read_files.sort();
    details.modified_files.sort();
    details
}

/// The block appended to a summary, or an empty string when no file is tracked. Files that
/// share a folder are one line, the folder then their names, so a long run of work in one
/// folder does not fill the summary with the same prefix.
///
/// ```text
/// <files>
/// modified:
/// - src/parser.rs
/// - src/lexer/: mod.rs, tokens.rs
/// read:
/// - src/lib.rs
/// (3 more files not listed)
/// </files>
/// ```
pub fn files_block(details: &CompactionDetails) -> String {
    if details.read_files.is_empty()
        && details.modified_files.is_empty()
        && details.elided_files == 0
    {
        return String::new();
    }
    let mut out = format!("<{FILES_TAG}>\n");
    for (label, files) in [
        ("modified", &details.modified_files),
        ("read", &details.read_files),
    ] {
        if files.is_empty() {
            continue;
        }
        out.push_str(label);
        out.push_str(":\n");
        for line in folder_lines(files) {
            out.push_str("- ");
            out.push_str(&line);
            out.push('\n');
        }
    }
    if details.elided_files > 0 {
        out.push_str(&format!(
            "({} more files not listed)\n",
            details.elided_files
        ));
    }
    out.push_str(&format!("</{FILES_TAG}>"));
    out
}

/// One line per folder of `files` (in the order folders first appear): the path itself for a
/// folder's only file, else `folder/: name, name`.
fn folder_lines(files: &[String]) -> Vec<String> {
    let mut folders: Vec<(&str, Vec<&str>)> = Vec::new();
    for file in files {
        let (folder, name) = match file.rfind(['/', '\\']) {
            Some(end) => file.split_at(end + 1),
            None => ("", file.as_str()),
        };
        match folders.iter_mut().find(|(seen, _)| *seen == folder) {
            Some((_, names)) => names.push(name),
            None => folders.push((folder, vec![name])),
        }
    }
    folders
        .into_iter()
        .flat_map(|(folder, names)| match names.as_slice() {
            [name] => vec![format!("{folder}{name}")],
            _ if folder.is_empty() => names.iter().map(|name| (*name).to_owned()).collect(),
            _ => vec![format!("{folder}: {}", names.join(", "))],
        })
        .collect()
}

/// `text` without the files blocks this crate writes (see [`files_block`]), and without the
/// older `<read-files>` and `<modified-files>` blocks. Trailing whitespace is trimmed.
///
/// A block is recognised only in the exact form written: the opening tag alone on its line,
/// then only lines of the block's own grammar (`modified:`, `read:`, `- PATH`, the elided
/// count; for the older blocks, one path per line), then the closing tag alone on its line.
/// Anything else (a `<files>` inside a sentence, an XML manifest's `<files>` element, an
/// unclosed tag) is text and stays.
pub fn strip_files_blocks(text: &str) -> String {
    let mut lines: Vec<&str> = text.split('\n').collect();
    // Removing a block can join what surrounded it into a new one; strip until nothing changes.
    loop {
        let before = lines.len();
        for tag in [FILES_TAG, "read-files", "modified-files"] {
            lines = strip_block(lines, tag);
        }
        if lines.len() == before {
            break;
        }
    }
    let mut out = lines.join("\n");
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    out
}

fn strip_block<'t>(lines: Vec<&'t str>, tag: &str) -> Vec<&'t str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut out = Vec::with_capacity(lines.len());
    let mut index = 0;
    while let Some(&line) = lines.get(index) {
        if line.trim_end() == open
            && let Some(length) =
                block_length(lines.get(index + 1..).unwrap_or_default(), tag, &close)
        {
            index += length + 2;
            continue;
        }
        out.push(line);
        index += 1;
    }
    out
}

/// The number of body lines before the closing tag, when every one is of the block's grammar.
fn block_length(body: &[&str], tag: &str, close: &str) -> Option<usize> {
    for (count, line) in body.iter().enumerate() {
        let line = line.trim_end();
        if line == close {
            return Some(count);
        }
        let fits = if tag == FILES_TAG {
            is_files_line(line)
        } else {
            !line.trim().is_empty() && !line.starts_with('<')
        };
        if !fits {
            return None;
        }
    }
    None
}

/// A line [`files_block`] writes between its tags.
fn is_files_line(line: &str) -> bool {
    if matches!(line, "modified:" | "read:") {
        return true;
    }
    if let Some(path) = line.strip_prefix("- ") {
        return !path.trim().is_empty();
    }
    line.strip_prefix('(')
        .and_then(|rest| rest.strip_suffix(" more files not listed)"))
        .is_some_and(|count| !count.is_empty() && count.bytes().all(|b| b.is_ascii_digit()))
}
