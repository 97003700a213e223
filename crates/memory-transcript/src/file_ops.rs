//! Which files a tool call reads or modifies, read from its name and arguments.
//!
//! Recognised calls: read tools (`read`, `read_file`, `view`, ...), write and edit tools
//! (`write`, `edit`, `str_replace`, ...), `apply_patch` (the files its headers name), and
//! shell commands (`exec_command`, `shell`, `bash`, `local_shell`, ...) whose effect on a file
//! is plain from the command line: `cat`, `head`, `sed -n` and the like read; `sed -i`, `tee`,
//! `touch`, `rm`, `cp`, `mv` and output redirection modify. URLs and arguments that do not look
//! like paths (globs, variables, options, devices) are ignored, and secrets in paths are
//! redacted. A file tool's path argument may hold spaces and backslashes (Windows paths); a
//! read selector (`:100-170`, `:raw`, `#L10`) is stripped so one file is one entry, and any
//! path with a `scheme://` inside it (`src/x.ts:conflict://3`, `artifact://7`) is not a file.
//!
//! Both the compactor (which tracks files across compactions) and the offline summarizer
//! (which lists them) read tool calls this way, so the rules live here once.

use std::collections::HashMap;

use serde_json::Value;

use memory_sanitize::redact_secrets;

use crate::paths::plausible_path;
use crate::shell::{CommandLine, Word, command_from_args};

/// Files touched by a sequence of tool calls, each with the position of its latest touch.
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

    /// Every touched file with whether it was modified, most recent touch first (modified
    /// before read at equal recency, then by path).
    pub fn most_recent_first(&self) -> Vec<(String, bool)> {
        let mut files: Vec<(&String, &Touch)> = self.touched.iter().collect();
        files.sort_by(|a, b| {
            b.1.latest
                .cmp(&a.1.latest)
                .then(b.1.modified.cmp(&a.1.modified))
                .then(a.0.cmp(b.0))
        });
        files
            .into_iter()
            .map(|(path, touch)| (path.clone(), touch.modified))
            .collect()
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
        self.touch(path, modified);
    }

    /// Notes a file tool's path argument, which may hold spaces and backslashes.
    fn note_argument(&mut self, path: &str, modified: bool) {
        if let Some(path) = tracked_path(path) {
            self.touch(path, modified);
        }
    }

    fn touch(&mut self, path: String, modified: bool) {
        self.clock += 1;
        let touch = self.touched.entry(path).or_insert(Touch {
            modified,
            latest: 0,
        });
        touch.modified |= modified;
        touch.latest = self.clock;
    }

    /// Records the file operations of one tool call.
    pub fn scan_call(&mut self, name: &str, arguments: &Value) {
        let tool = name.rsplit(['.', '/', ':']).next().unwrap_or(name);
        let tool = tool.to_ascii_lowercase();
        match tool.as_str() {
            "read" | "read_file" | "view" | "view_file" | "open_file" | "cat"
            | "read_many_files" => {
                for path in path_arguments(arguments) {
                    self.note_argument(&path, false);
                }
            }
            "write" | "write_file" | "create_file" | "create" | "edit" | "edit_file"
            | "multi_edit" | "multiedit" | "str_replace" | "replace" | "delete_file" => {
                for path in path_arguments(arguments) {
                    self.note_argument(&path, true);
                }
            }
            "str_replace_editor" | "str_replace_based_edit_tool" | "text_editor" => {
                let viewing = arguments.get("command").and_then(Value::as_str) == Some("view");
                for path in path_arguments(arguments) {
                    self.note_argument(&path, !viewing);
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
                if let Some(script) = command_from_args(arguments) {
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
            if let Some(path) = HEADERS.iter().find_map(|header| line.strip_prefix(header)) {
                self.note(path.trim(), true);
            }
        }
    }

    fn scan_shell(&mut self, script: &str) {
        for segment in CommandLine::parse(script).segments {
            self.scan_command(&segment.words);
        }
    }

    fn scan_command(&mut self, words: &[Word]) {
        let mut args: Vec<&str> = Vec::new();
        let mut redirect_next = false;
        for word in words.iter().map(|word| word.text.as_str()) {
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
        let has_script_option = args
            .iter()
            .any(|a| matches!(*a, "-e" | "-f" | "--expression"));
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

/// Longest path argument tracked, in characters.
const MAX_PATH_CHARS: usize = 1_000;

/// A shell word as tracked (selector stripped, redacted), or `None` when it does not look like
/// a file path.
fn clean_path(path: &str) -> Option<String> {
    if has_url_scheme(path) {
        return None;
    }
    let path = plausible_path(path)?;
    plausible_path(strip_read_selector(path)).map(|path| redact_secrets(path).into_owned())
}

/// A file tool's path argument (or a path listed by an earlier compaction) as tracked: trimmed,
/// its read selector stripped, secrets redacted. `None` when it is not a file path: empty, too
/// long, an option, a glob or variable, a device, holding control characters, or URL-like (a
/// `scheme://` anywhere in it). Spaces and backslashes are allowed: `C:\work\my notes.md` is
/// a path.
pub fn tracked_path(argument: &str) -> Option<String> {
    let argument = argument.trim();
    if has_url_scheme(argument) {
        return None;
    }
    let mut path = argument;
    loop {
        let next = strip_read_selector(path)
            .trim_end_matches(['/', ','])
            .trim_end();
        if next == path {
            break;
        }
        path = next;
    }
    let plausible = !path.is_empty()
        && path.chars().count() <= MAX_PATH_CHARS
        && !path.starts_with('-')
        && !path.starts_with("/dev/")
        && !path.starts_with("/proc/")
        && !path.contains(['*', '?', '$', '`', '{', '}', '<', '>', '|'])
        && !path.chars().any(char::is_control)
        && path.chars().any(char::is_alphanumeric);
    plausible.then(|| redact_secrets(path).into_owned())
}

/// True when a `scheme://` appears anywhere in `path` (`https://x`, `src/x.ts:conflict://3`).
fn has_url_scheme(path: &str) -> bool {
    path.match_indices("://").any(|(at, _)| {
        path.get(..at)
            .and_then(|head| head.chars().next_back())
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// `path` without its read selectors: `:100-170`, `:L10+5`, `:50-`, `:raw`, `:conflicts`,
/// `#L10`, `#L10-L20`, and compounds such as `:1-50:raw`.
pub fn strip_read_selector(path: &str) -> &str {
    let mut path = path;
    loop {
        let anchor = path
            .rsplit_once('#')
            .filter(|(head, tail)| !head.is_empty() && is_line_anchor(tail));
        let selector = path
            .rsplit_once(':')
            .filter(|(head, tail)| !head.is_empty() && is_selector(tail));
        match anchor.or(selector) {
            Some((head, _)) => path = head,
            None => return path,
        }
    }
}

/// `L10`, `L10-L20`, `L10-20`.
fn is_line_anchor(text: &str) -> bool {
    text.strip_prefix('L').is_some_and(is_range)
}

/// `raw`, `conflicts`, or a line range (`100-170`, `L10+5`, `50-`, `7`).
fn is_selector(text: &str) -> bool {
    matches!(text, "raw" | "conflicts") || is_range(text.strip_prefix('L').unwrap_or(text))
}

/// `N`, `N-M`, `N-LM`, `N+M`, `N-` with ASCII digits.
fn is_range(text: &str) -> bool {
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    match text.split_once(['-', '+']) {
        None => digits(text),
        Some((start, end)) => {
            let end = end.strip_prefix('L').unwrap_or(end);
            digits(start) && (end.is_empty() || digits(end))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn shell_calls_are_read_with_the_shared_tokeniser() {
        let mut ops = FileOps::default();
        ops.scan_call(
            "exec_command",
            &json!({"cmd": "cat 'a b.txt' src/lib.rs && sed -i 's/x/y/' 目录/文件.rs > out.log 2>&1 & rm old\\ name.rs"}),
        );
        assert_eq!(ops.read(), ["src/lib.rs"]);
        assert_eq!(ops.modified(), ["out.log", "目录/文件.rs"]);
    }

    proptest! {
        #[test]
        fn any_command_gives_plausible_paths(
            command in "([\\p{Han}\\p{Hiragana}]|[a-z]{1,6}|cat |rm |sed -i |> |'|\"|\\\\|&&|\\||;|\\n| |/|\\.){0,50}",
            tool in prop_oneof![Just("bash"), Just("read_file"), Just("apply_patch")],
        ) {
            let mut ops = FileOps::default();
            ops.scan_call(tool, &json!({"command": command, "path": command}));
            for (path, _) in ops.most_recent_first() {
                if tool == "read_file" {
                    prop_assert_eq!(tracked_path(&path), Some(path.clone()));
                } else {
                    prop_assert_eq!(plausible_path(&path), Some(path.as_str()));
                }
            }
        }
    }
}
