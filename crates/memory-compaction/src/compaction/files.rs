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
use memory_transcript::file_ops::FileOps;

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
        for path in &previous.modified_files {
            push(path, true, &mut ranked);
        }
        for path in &previous.read_files {
            push(path, false, &mut ranked);
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

/// The block appended to a summary, or an empty string when no file is tracked.
///
/// ```text
/// <files>
/// modified:
/// - src/parser.rs
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
        for file in files {
            out.push_str("- ");
            out.push_str(file);
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

/// `text` without any files block: every `<files>` ... `</files>` span (any case, whitespace
/// inside the tags allowed), and an unclosed `<files>` to the end. Also removes the older
/// `<read-files>` and `<modified-files>` blocks. Trailing whitespace left behind is trimmed.
pub fn strip_files_blocks(text: &str) -> String {
    let mut out = text.to_owned();
    for tag in [FILES_TAG, "read-files", "modified-files"] {
        out = strip_block(&out, tag);
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    out
}

fn strip_block(text: &str, tag: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((start, open_end)) = find_tag(rest, tag, false) {
        out.push_str(rest.get(..start).unwrap_or_default());
        let after_open = rest.get(open_end..).unwrap_or_default();
        rest = match find_tag(after_open, tag, true) {
            Some((_, close_end)) => after_open.get(close_end..).unwrap_or_default(),
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// The byte range of the first `<tag>` (or `</tag>` when `closing`), ASCII case-insensitive,
/// with optional whitespace after `<`, around `/`, and before `>`.
fn find_tag(text: &str, tag: &str, closing: bool) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(offset) = bytes.get(from..)?.iter().position(|&b| b == b'<') {
        let start = from + offset;
        from = start + 1;
        let mut i = skip_spaces(bytes, start + 1);
        if closing {
            if bytes.get(i) != Some(&b'/') {
                continue;
            }
            i = skip_spaces(bytes, i + 1);
        }
        let end = i + tag.len();
        if bytes
            .get(i..end)
            .is_some_and(|name| name.eq_ignore_ascii_case(tag.as_bytes()))
        {
            let close = skip_spaces(bytes, end);
            if bytes.get(close) == Some(&b'>') {
                return Some((start, close + 1));
            }
        }
    }
    None
}

fn skip_spaces(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}
