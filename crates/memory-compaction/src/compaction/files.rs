//! File tracking: the files a summarized span read and modified, read from its tool calls,
//! merged with the previous compaction's lists and bounded.
//!
//! Recognised calls: read tools (`read`, `read_file`, `view`, ...), write and edit tools
//! (`write`, `edit`, `str_replace`, ...), `apply_patch` (the files its headers name), and
//! shell commands (`exec_command`, `shell`, `bash`, `local_shell`, ...) whose effect on a file
//! is plain from the command line: `cat`, `head`, `sed -n` and the like read; `sed -i`, `tee`,
//! `touch`, `rm`, `cp`, `mv` and output redirection modify. URLs and arguments that do not look
//! like paths are ignored.
//!
//! The lists are bounded to [`FILE_LIST_LIMIT`] files, the most recently touched first, with
//! a count of the files no longer listed. The block rendered into a summary is stripped from
//! the previous summary before it is sent again, so summaries do not grow with every
//! compaction.

use std::collections::{BTreeSet, HashMap};

use memory_protocol::compaction::{
    AssistantBlock, CompactionDetails, ConversationMessage, summary_sections::FILES_TAG,
};
use memory_sanitize::redact_secrets;
use serde_json::Value;

/// Most files listed in a compaction's details and files block.
pub const FILE_LIST_LIMIT: usize = 20;
/// Longest path kept, in characters.
const MAX_PATH_CHARS: usize = 300;

/// Files touched by a span, each with the position of its latest touch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOps {
    touched: HashMap<String, Touch>,
    clock: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Touch {
    modified: bool,
    latest: u64,
}

impl FileOps {
    /// Records the file operations of `messages`' tool calls.
    pub fn scan(&mut self, messages: &[ConversationMessage]) {
        for message in messages {
            let ConversationMessage::Assistant { content } = message else {
                continue;
            };
            for block in content {
                if let AssistantBlock::ToolCall {
                    name, arguments, ..
                } = block
                {
                    self.scan_call(name, arguments);
                }
            }
        }
    }

    /// Files read, in order of their latest touch.
    pub fn read(&self) -> Vec<String> {
        self.sorted(false)
    }

    /// Files modified, in order of their latest touch.
    pub fn modified(&self) -> Vec<String> {
        self.sorted(true)
    }

    /// True when nothing was touched.
    pub fn is_empty(&self) -> bool {
        self.touched.is_empty()
    }

    fn sorted(&self, modified: bool) -> Vec<String> {
        let mut files: Vec<(&String, &Touch)> = self
            .touched
            .iter()
            .filter(|(_, touch)| touch.modified == modified)
            .collect();
        files.sort_by_key(|(_, touch)| touch.latest);
        files.into_iter().map(|(path, _)| path.clone()).collect()
    }

    fn note(&mut self, path: &str, modified: bool) {
        let Some(path) = clean_path(path) else {
            return;
        };
        self.clock += 1;
        let touch = self.touched.entry(path).or_insert(Touch {
            modified,
            latest: 0,
        });
        touch.modified |= modified;
        touch.latest = self.clock;
    }

    fn scan_call(&mut self, name: &str, arguments: &Value) {
        let tool = name.rsplit(['.', '/', ':']).next().unwrap_or(name);
        let tool = tool.to_ascii_lowercase();
        match tool.as_str() {
            "read" | "read_file" | "view" | "view_file" | "open_file" | "cat" | "read_many_files" => {
                for path in path_arguments(arguments) {
                    self.note(&path, false);
                }
            }
            "write" | "write_file" | "create_file" | "create" | "edit" | "edit_file"
            | "multi_edit" | "multiedit" | "str_replace" | "replace" | "delete_file" => {
                for path in path_arguments(arguments) {
                    self.note(&path, true);
                }
            }
            "str_replace_editor" | "str_replace_based_edit_tool" | "text_editor" => {
                let viewing = arguments.get("command").and_then(Value::as_str) == Some("view");
                for path in path_arguments(arguments) {
                    self.note(&path, !viewing);
                }
            }
            "apply_patch" => {
                let patch = match arguments {
                    Value::String(text) => Some(text.as_str()),
                    other => other
                        .get("input")
                        .or(other.get("patch"))
                        .and_then(Value::as_str),
                };
                if let Some(patch) = patch {
                    self.scan_patch(patch);
                }
            }
            _ => {
                if let Some(script) = shell_script(arguments) {
                    if script.contains("*** Begin Patch") {
                        self.scan_patch(&script);
                    } else {
                        self.scan_shell(&script);
                    }
                }
            }
        }
    }

    fn scan_patch(&mut self, patch: &str) {
        const HEADERS: [&str; 4] = [
            "*** Add File:",
            "*** Update File:",
            "*** Delete File:",
            "*** Move to:",
        ];
        for line in patch.lines() {
            let line = line.trim();
            if let Some(path) = HEADERS
                .iter()
                .find_map(|header| line.strip_prefix(header))
            {
                self.note(path.trim(), true);
            }
        }
    }

    fn scan_shell(&mut self, script: &str) {
        for segment in shell_segments(script) {
            let words = shell_words(&segment);
            self.scan_command(&words);
        }
    }

    fn scan_command(&mut self, words: &[String]) {
        let mut args: Vec<&str> = Vec::new();
        let mut redirect_next = false;
        for word in words {
            if redirect_next {
                self.note(word, true);
                redirect_next = false;
                continue;
            }
            let stripped = word.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&');
            if let Some(target) = stripped
                .strip_prefix(">>")
                .or_else(|| stripped.strip_prefix('>'))
            {
                if target.is_empty() {
                    redirect_next = true;
                } else if !target.starts_with('&') {
                    self.note(target, true);
                }
                continue;
            }
            if word.starts_with('<') {
                continue;
            }
            args.push(word);
        }
        let mut rest = args
            .iter()
            .copied()
            .skip_while(|w| w.contains('=') || matches!(*w, "sudo" | "env" | "time" | "command"));
        let Some(program) = rest.next() else {
            return;
        };
        let program = program.rsplit('/').next().unwrap_or(program);
        let rest: Vec<&str> = rest.collect();
        match program {
            "cat" | "less" | "more" | "nl" | "bat" | "batcat" | "wc" | "diff" | "cmp" => {
                for path in operands(&rest, &[]) {
                    self.note(path, false);
                }
            }
            "head" | "tail" => {
                for path in operands(&rest, &["-n", "-c", "--lines", "--bytes"]) {
                    self.note(path, false);
                }
            }
            "sed" => self.scan_sed(&rest),
            "tee" | "touch" | "rm" | "truncate" => {
                for path in operands(&rest, &["-s", "--size"]) {
                    self.note(path, true);
                }
            }
            "cp" | "mv" | "install" => {
                let paths = operands(&rest, &["-t", "--target-directory"]);
                if program == "mv" {
                    for path in &paths {
                        self.note(path, true);
                    }
                } else if let Some(target) = paths.last() {
                    self.note(target, true);
                }
            }
            _ => {}
        }
    }

    fn scan_sed(&mut self, args: &[&str]) {
        let in_place = args
            .iter()
            .any(|a| *a == "-i" || a.starts_with("-i") || a.starts_with("--in-place"));
        let has_script_option = args.iter().any(|a| matches!(*a, "-e" | "-f" | "--expression"));
        let operands = operands(args, &["-e", "-f", "--expression", "--file", "-l"]);
        let files = if has_script_option {
            operands.as_slice()
        } else {
            operands.get(1..).unwrap_or_default()
        };
        for path in files {
            self.note(path, in_place);
        }
    }
}

/// Arguments that are not options, skipping the value of each option in `with_value`.
fn operands<'a>(args: &[&'a str], with_value: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut skip = false;
    let mut options_done = false;
    for arg in args {
        if skip {
            skip = false;
            continue;
        }
        if !options_done && *arg == "--" {
            options_done = true;
            continue;
        }
        if !options_done && arg.starts_with('-') && arg.len() > 1 {
            skip = with_value.contains(arg);
            continue;
        }
        out.push(*arg);
    }
    out
}

/// The shell script of a shell tool call's arguments (`cmd`, `command` or `script`: a string,
/// or an argument vector with `bash -lc SCRIPT` unwrapped).
fn shell_script(arguments: &Value) -> Option<String> {
    let command = arguments
        .get("cmd")
        .or(arguments.get("command"))
        .or(arguments.get("script"))?;
    match command {
        Value::String(text) => Some(text.clone()),
        Value::Array(argv) => {
            let argv: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
            match argv.as_slice() {
                [shell, flag, script]
                    if matches!(shell.rsplit('/').next(), Some("bash" | "sh" | "zsh"))
                        && matches!(*flag, "-c" | "-lc" | "-cl") =>
                {
                    Some((*script).to_owned())
                }
                words => Some(words.join(" ")),
            }
        }
        _ => None,
    }
}

/// The commands of a script: split on `&&`, `||`, `;`, `|` and line breaks outside quotes.
fn shell_segments(script: &str) -> Vec<String> {
    let mut segments = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut chars = script.chars().peekable();
    while let Some(ch) = chars.next() {
        match (quote, ch) {
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            (Some(_), c) => current.push(c),
            (None, '\'' | '"') => {
                quote = Some(ch);
                current.push(ch);
            }
            (None, ';' | '\n' | '|') => {
                if ch == '|' && chars.peek() == Some(&'|') {
                    chars.next();
                }
                segments.push(std::mem::take(&mut current));
            }
            (None, '&') if chars.peek() == Some(&'&') => {
                chars.next();
                segments.push(std::mem::take(&mut current));
            }
            (None, c) => current.push(c),
        }
    }
    segments.push(current);
    segments.retain(|s| !s.trim().is_empty());
    segments
}

/// Words of one command, with quotes removed (no expansion).
fn shell_words(segment: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for ch in segment.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '\'' | '"') => {
                quote = Some(ch);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            (None, c) => {
                current.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(current);
    }
    words
}

/// Path arguments of a file tool: `path`, `file_path`, `filename`, `file`, `target_file`, or
/// a `paths` / `files` array.
fn path_arguments(arguments: &Value) -> Vec<String> {
    const SINGLE: [&str; 6] = [
        "path",
        "file_path",
        "filepath",
        "filename",
        "file",
        "target_file",
    ];
    let mut paths = Vec::new();
    if let Value::String(path) = arguments {
        paths.push(path.clone());
    }
    for key in SINGLE {
        if let Some(path) = arguments.get(key).and_then(Value::as_str) {
            paths.push(path.to_owned());
        }
    }
    for key in ["paths", "files", "file_paths"] {
        if let Some(list) = arguments.get(key).and_then(Value::as_array) {
            paths.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
        }
    }
    paths
}

/// The path as tracked, or `None` when it does not look like a file path: empty, too long, an
/// option, a URL, a glob or variable, a device, or containing whitespace or control characters.
fn clean_path(path: &str) -> Option<String> {
    let path = path.trim().trim_end_matches(['/', ',']);
    let looks_like_url = path
        .split_once("://")
        .is_some_and(|(scheme, _)| !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c)));
    let plausible = !path.is_empty()
        && path.chars().count() <= MAX_PATH_CHARS
        && !path.starts_with('-')
        && !looks_like_url
        && !path.starts_with("/dev/")
        && !path.starts_with("/proc/")
        && !path.contains(['*', '?', '$', '`', '{', '}', '<', '>', '|', '\\'])
        && !path.chars().any(|c| c.is_whitespace() || c.is_control())
        && path.chars().any(|c| c.is_alphanumeric());
    plausible.then(|| redact_secrets(path).into_owned())
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
    let mut recent: Vec<(&String, &Touch)> = ops.touched.iter().collect();
    recent.sort_by(|a, b| {
        b.1.latest
            .cmp(&a.1.latest)
            .then(b.1.modified.cmp(&a.1.modified))
            .then(a.0.cmp(b.0))
    });
    for (path, touch) in recent {
        push(path, touch.modified, &mut ranked);
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
