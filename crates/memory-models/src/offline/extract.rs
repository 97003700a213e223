//! Facts read from a transcript's structure: requests, stated preferences, commands and their
//! exit status, file changes, errors, fixes and the final answer.
//!
//! Everything here works on untrusted text and never panics: lengths are capped on character
//! boundaries and no text is indexed by position.

use std::collections::BTreeMap;

use memory_protocol::REDACTED_SECRET;
use memory_protocol::rollout::{ContentItem, ResponseItem, ToolOutput};
use serde_json::Value;

/// Longest request, preference, command or error line kept, in characters.
pub(crate) const MAX_LINE_CHARS: usize = 240;
/// Longest final answer kept, in characters.
pub(crate) const MAX_OUTCOME_CHARS: usize = 600;
/// Most distinct preferences, errors or fix details collected; more are never rendered.
const MAX_COLLECTED: usize = 64;
/// Most steps before a passing run searched for what fixed it.
const MAX_FIX_WINDOW: usize = 500;

/// Wrappers the host adds to user messages; they are context, not what the user asked.
const CONTEXT_TAGS: [&str; 6] = [
    "environment_context",
    "user_instructions",
    "subagent_notification",
    "codex_internal_context",
    "turn_aborted",
    "skill",
];

/// What a transcript shows, in order of appearance.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Facts {
    /// What the user asked, one line each.
    pub requests: Vec<String>,
    /// Preferences the user stated, phrased as rules.
    pub preferences: Vec<String>,
    /// Shell commands run.
    pub commands: Vec<Command>,
    /// Files changed by patches that applied.
    pub changes: Vec<FileChange>,
    /// Web searches.
    pub searches: Vec<String>,
    /// Everything above, in transcript order.
    pub steps: Vec<Step>,
    /// Distinct error lines, from failed commands and patches.
    pub errors: Vec<String>,
    /// Failed commands that a later similar command passed.
    pub fixes: Vec<Fix>,
    /// Failed commands that nothing later fixed (indexes into `commands`).
    pub unresolved: Vec<usize>,
    /// The final assistant message.
    pub outcome: Option<String>,
}

impl Facts {
    /// True when nothing in the transcript is worth remembering: no command, no file change,
    /// no stated preference and no error, only conversation.
    pub(crate) fn is_empty(&self) -> bool {
        self.commands.is_empty()
            && self.changes.is_empty()
            && self.preferences.is_empty()
            && self.errors.is_empty()
    }
}

/// One shell command.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Command {
    /// The command line, on one line.
    pub text: String,
    /// How it ended.
    pub status: CommandStatus,
    /// The most telling error line of its output, when it failed.
    pub error: Option<String>,
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CommandStatus {
    /// Exit code 0, or output with no sign of failure.
    Passed,
    /// A non-zero exit code (when known) or failure markers in the output.
    Failed(Option<i64>),
    /// No output recorded, or still running.
    Unknown,
}

/// A file a patch touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileChange {
    /// The path as the patch wrote it.
    pub path: String,
    /// What happened to it.
    pub kind: ChangeKind,
}

/// What a patch did to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangeKind {
    /// `*** Add File:`.
    Added,
    /// `*** Update File:`.
    Updated,
    /// `*** Delete File:`.
    Deleted,
}

impl ChangeKind {
    pub(crate) fn verb(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Updated => "updated",
            ChangeKind::Deleted => "deleted",
        }
    }
}

/// One event of the transcript, in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// A command (index into `Facts::commands`).
    Command(usize),
    /// A patch that applied (indexes into `Facts::changes`).
    Patch(Vec<usize>),
    /// A patch that failed, with its error line.
    FailedPatch(String),
    /// A web search (index into `Facts::searches`).
    Search(usize),
}

/// A failure and what made it pass.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fix {
    /// The last failing run (index into `commands`).
    pub failed: usize,
    /// How many similar runs failed before it passed.
    pub failed_runs: usize,
    /// The run that passed (index into `commands`).
    pub passed: usize,
    /// Files changed between the first failure and the pass.
    pub changed: Vec<String>,
    /// Other passing commands run in between.
    pub ran: Vec<String>,
}

/// What a tool call is, for pairing it with its output.
enum Pending {
    Command(usize),
    Patch(Vec<FileChange>),
}

/// Reads the facts from `items`.
pub(crate) fn extract(items: &[ResponseItem]) -> Facts {
    let mut facts = Facts::default();
    let mut pending: BTreeMap<String, Pending> = BTreeMap::new();
    let mut final_answer = None;
    let mut last_assistant = None;

    for item in items {
        match item {
            ResponseItem::Message(message) => {
                let text = message_text(&message.content);
                match message.role.as_str() {
                    "user" => {
                        let cleaned = strip_context_blocks(&text);
                        let request = one_line(&cleaned, MAX_LINE_CHARS);
                        if !request.is_empty() {
                            facts.requests.push(request);
                        }
                        for rule in preferences(&cleaned) {
                            push_distinct(&mut facts.preferences, rule);
                        }
                    }
                    "assistant" if !text.trim().is_empty() => {
                        if message.phase.as_deref() == Some("final_answer") {
                            final_answer = Some(text);
                        } else {
                            last_assistant = Some(text);
                        }
                    }
                    _ => {}
                }
            }
            ResponseItem::FunctionCall(call) => {
                let args: Option<Value> = serde_json::from_str(&call.arguments).ok();
                // The patch text: the `input` (or `patch`) argument, else the command, else
                // the raw arguments when they are not JSON at all.
                let command = args.as_ref().and_then(command_from_args);
                let patch_text = match &args {
                    Some(args) => args
                        .get("input")
                        .or(args.get("patch"))
                        .and_then(Value::as_str)
                        .or(command.as_deref()),
                    None => Some(call.arguments.as_str()),
                };
                match (patch_text, &command) {
                    (Some(patch), _) if call.name == "apply_patch" || is_patch(patch) => {
                        start_patch(&mut pending, &call.call_id, patch);
                    }
                    (_, Some(command)) => {
                        start_command(&mut facts, &mut pending, &call.call_id, command);
                    }
                    _ => {}
                }
            }
            ResponseItem::LocalShellCall(call) => {
                let command = command_from_argv(&call.action.command);
                let call_id = call.call_id.clone().or(call.id.clone()).unwrap_or_default();
                if is_patch(&command) {
                    start_patch(&mut pending, &call_id, &command);
                } else if !command.is_empty() {
                    start_command(&mut facts, &mut pending, &call_id, &command);
                }
            }
            ResponseItem::CustomToolCall(call) => {
                if call.name == "apply_patch" || is_patch(&call.input) {
                    start_patch(&mut pending, &call.call_id, &call.input);
                }
            }
            ResponseItem::FunctionCallOutput(output) => {
                finish_call(&mut facts, &mut pending, &output.call_id, &output.output);
            }
            ResponseItem::CustomToolCallOutput(output) => {
                finish_call(&mut facts, &mut pending, &output.call_id, &output.output);
            }
            ResponseItem::WebSearchCall(search) => {
                let query = search
                    .action
                    .as_ref()
                    .and_then(|a| a.get("query").or(a.get("url")))
                    .and_then(Value::as_str)
                    .map(|q| one_line(q, MAX_LINE_CHARS))
                    .unwrap_or_default();
                if !query.is_empty() {
                    facts.steps.push(Step::Search(facts.searches.len()));
                    facts.searches.push(query);
                }
            }
            ResponseItem::Reasoning(_) | ResponseItem::Other(_) => {}
        }
    }
    // A patch whose output was never recorded most likely applied: codex records the call
    // before it runs, and a session can end before the output line is written.
    let unanswered: Vec<Pending> = std::mem::take(&mut pending).into_values().collect();
    for call in unanswered {
        if let Pending::Patch(changes) = call {
            commit_patch(&mut facts, changes);
        }
    }
    facts.outcome = final_answer
        .or(last_assistant)
        .map(|text| one_line(&text, MAX_OUTCOME_CHARS))
        .filter(|text| !text.is_empty());
    link_fixes(&mut facts);
    facts
}

fn start_command(
    facts: &mut Facts,
    pending: &mut BTreeMap<String, Pending>,
    call_id: &str,
    command: &str,
) {
    let index = facts.commands.len();
    facts.commands.push(Command {
        text: one_line(command, MAX_LINE_CHARS),
        status: CommandStatus::Unknown,
        error: None,
    });
    facts.steps.push(Step::Command(index));
    pending.insert(call_id.to_owned(), Pending::Command(index));
}

fn start_patch(pending: &mut BTreeMap<String, Pending>, call_id: &str, patch: &str) {
    pending.insert(call_id.to_owned(), Pending::Patch(patch_changes(patch)));
}

fn commit_patch(facts: &mut Facts, changes: Vec<FileChange>) {
    let mut indexes = Vec::new();
    for change in changes {
        indexes.push(facts.changes.len());
        facts.changes.push(change);
    }
    if !indexes.is_empty() {
        facts.steps.push(Step::Patch(indexes));
    }
}

fn finish_call(
    facts: &mut Facts,
    pending: &mut BTreeMap<String, Pending>,
    call_id: &str,
    output: &ToolOutput,
) {
    let Some(call) = pending.remove(call_id) else {
        return;
    };
    let (exit_code, text) = exit_code_and_text(output);
    match call {
        Pending::Command(index) => {
            let program = facts
                .commands
                .get(index)
                .map(|c| command_key(&c.text).program);
            let mut status = command_status(exit_code, &text);
            // grep and rg exit with 1 when nothing matched: an answer, not a failure.
            if status == CommandStatus::Failed(Some(1))
                && matches!(program.as_deref(), Some("rg" | "grep"))
                && !text.to_ascii_lowercase().contains("error")
            {
                status = CommandStatus::Passed;
            }
            let error = matches!(status, CommandStatus::Failed(_))
                .then(|| error_line(&text))
                .flatten();
            if let Some(line) = &error {
                push_distinct(&mut facts.errors, line.clone());
            }
            if let Some(command) = facts.commands.get_mut(index) {
                command.status = status;
                command.error = error;
            }
        }
        Pending::Patch(changes) => {
            let lower = text.trim_start().to_ascii_lowercase();
            let failed = match exit_code {
                Some(code) => code != 0,
                None => {
                    !lower.starts_with("success")
                        && (lower.contains("fail") || lower.contains("error"))
                }
            };
            if failed {
                let line =
                    error_line(&text).unwrap_or_else(|| "the patch did not apply".to_owned());
                push_distinct(&mut facts.errors, format!("apply_patch: {line}"));
                facts.steps.push(Step::FailedPatch(line));
            } else {
                commit_patch(facts, changes);
            }
        }
    }
}

/// Links each failed command to the next similar one: a pass makes a fix, another failure
/// continues the chain, nothing leaves it unresolved.
fn link_fixes(facts: &mut Facts) {
    let keys: Vec<CommandKey> = facts
        .commands
        .iter()
        .map(|c| command_key(&c.text))
        .collect();
    let step_of: BTreeMap<usize, usize> = facts
        .steps
        .iter()
        .enumerate()
        .filter_map(|(step, s)| match s {
            Step::Command(index) => Some((*index, step)),
            _ => None,
        })
        .collect();
    // The next run of the same check that finished, for every command, in one backward pass.
    let mut next_run: Vec<Option<usize>> = vec![None; facts.commands.len()];
    let mut latest: BTreeMap<&CommandKey, usize> = BTreeMap::new();
    for (index, (command, key)) in facts.commands.iter().zip(&keys).enumerate().rev() {
        if let Some(slot) = next_run.get_mut(index) {
            *slot = latest.get(key).copied();
        }
        if command.status != CommandStatus::Unknown {
            latest.insert(key, index);
        }
    }
    // For a failure that continues a chain: (first failure of the chain, runs so far).
    let mut chain: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    for (index, command) in facts.commands.iter().enumerate() {
        if !matches!(command.status, CommandStatus::Failed(_)) {
            continue;
        }
        let (first, runs) = chain.get(&index).copied().unwrap_or((index, 1));
        let key = keys.get(index);
        let next = next_run.get(index).copied().flatten();
        match next.map(|later| (later, facts.commands.get(later).map(|c| c.status))) {
            Some((later, Some(CommandStatus::Passed))) => {
                let from = step_of.get(&first).copied().unwrap_or(0);
                let to = step_of.get(&later).copied().unwrap_or(0);
                let (changed, ran) = between(facts, from, to, key);
                facts.fixes.push(Fix {
                    failed: index,
                    failed_runs: runs,
                    passed: later,
                    changed,
                    ran,
                });
            }
            Some((later, _)) => {
                chain.insert(later, (first, runs + 1));
            }
            None => facts.unresolved.push(index),
        }
    }
}

/// Files changed and other passing commands run strictly between two steps, looking back at
/// most [`MAX_FIX_WINDOW`] steps from the pass so a long transcript stays linear.
fn between(
    facts: &Facts,
    from: usize,
    to: usize,
    key: Option<&CommandKey>,
) -> (Vec<String>, Vec<String>) {
    let mut changed = Vec::new();
    let mut ran = Vec::new();
    let from = (from + 1).max(to.saturating_sub(MAX_FIX_WINDOW));
    for step in facts.steps.iter().take(to).skip(from) {
        match step {
            Step::Patch(indexes) => {
                for change in indexes.iter().filter_map(|i| facts.changes.get(*i)) {
                    push_distinct(&mut changed, change.path.clone());
                }
            }
            Step::Command(index) => {
                if let Some(command) = facts.commands.get(*index)
                    && command.status == CommandStatus::Passed
                    && !is_inspection(&command.text)
                    && Some(&command_key(&command.text)) != key
                {
                    push_distinct(&mut ran, command.text.clone());
                }
            }
            Step::FailedPatch(_) | Step::Search(_) => {}
        }
    }
    (changed, ran)
}

/// What makes two commands "the same check": the program and its first argument that is not
/// an option (`cargo test -p a` and `cargo test --all` match; `cargo build` does not).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct CommandKey {
    pub program: String,
    pub subject: Option<String>,
}

pub(crate) fn command_key(command: &str) -> CommandKey {
    // The last `&&` / `;` segment is the command that decided the exit status; earlier ones
    // are usually `cd dir`.
    let segment = command
        .rsplit(['&', ';'])
        .map(str::trim)
        .find(|s| !s.is_empty())
        .unwrap_or("");
    let mut words = segment
        .split_whitespace()
        .skip_while(|w| w.contains('=') || matches!(*w, "sudo" | "env" | "time" | "command"));
    let program = words
        .next()
        .map(|w| w.rsplit('/').next().unwrap_or(w).to_owned())
        .unwrap_or_default();
    let subject = words
        .find(|w| !w.starts_with('-') && !w.starts_with('|'))
        .map(str::to_owned);
    CommandKey { program, subject }
}

/// True for a command that only looks around (`ls`, `rg`, `git status`, ...): it neither
/// fixes anything nor is worth remembering as a working command.
pub(crate) fn is_inspection(command: &str) -> bool {
    const LOOKERS: [&str; 16] = [
        "ls", "cat", "head", "tail", "rg", "grep", "find", "fd", "pwd", "echo", "wc", "which",
        "tree", "less", "stat", "file",
    ];
    let key = command_key(command);
    LOOKERS.contains(&key.program.as_str())
        || (key.program == "git"
            && matches!(
                key.subject.as_deref(),
                Some("status" | "diff" | "log" | "show")
            ))
}

/// The program and subcommand of a command, for keywords (`cargo test`).
pub(crate) fn command_keyword(command: &str) -> Option<String> {
    let key = command_key(command);
    if key.program.is_empty()
        || !key
            .program
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return None;
    }
    match key.subject {
        Some(subject) if subject.chars().all(|c| c.is_ascii_lowercase() || c == '-') => {
            Some(format!("{} {subject}", key.program))
        }
        _ => Some(key.program),
    }
}

/// The command line of a shell tool call's arguments (`cmd` or `command`, a string or an
/// argument vector).
pub(crate) fn command_from_args(args: &Value) -> Option<String> {
    let command = args.get("cmd").or(args.get("command"))?;
    let text = match command {
        Value::String(text) => text.clone(),
        Value::Array(argv) => {
            let argv: Vec<String> = argv
                .iter()
                .map(|a| a.as_str().map(str::to_owned))
                .collect::<Option<_>>()?;
            command_from_argv(&argv)
        }
        _ => return None,
    };
    (!text.trim().is_empty()).then_some(text)
}

/// Joins an argument vector, unwrapping `bash -lc "script"`.
pub(crate) fn command_from_argv(argv: &[String]) -> String {
    if let [shell, flag, script] = argv
        && matches!(shell.rsplit('/').next(), Some("bash" | "sh" | "zsh"))
        && matches!(flag.as_str(), "-c" | "-lc" | "-cl")
    {
        return script.clone();
    }
    argv.iter()
        .map(|arg| {
            if arg.is_empty() || arg.contains(char::is_whitespace) {
                format!("'{arg}'")
            } else {
                arg.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_patch(text: &str) -> bool {
    text.contains("*** Begin Patch")
}

/// The files a patch in the `apply_patch` format touches, in order, each once.
pub(crate) fn patch_changes(patch: &str) -> Vec<FileChange> {
    let mut changes: Vec<FileChange> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for line in patch.lines() {
        let line = line.trim();
        let parsed = [
            ("*** Add File:", ChangeKind::Added),
            ("*** Update File:", ChangeKind::Updated),
            ("*** Delete File:", ChangeKind::Deleted),
            ("*** Move to:", ChangeKind::Added),
        ]
        .into_iter()
        .find_map(|(marker, kind)| line.strip_prefix(marker).map(|path| (path.trim(), kind)));
        if let Some((path, kind)) = parsed
            && !path.is_empty()
            && seen.insert(path)
        {
            changes.push(FileChange {
                path: one_line(path, MAX_LINE_CHARS),
                kind,
            });
        }
    }
    changes
}

/// The exit code (when the output records one) and the output text. Codex writes it in several
/// ways: object metadata, a JSON string `{"output", "metadata": {"exit_code"}}`, or a text
/// header such as `Process exited with code 1` or `Exit code: 1`.
pub(crate) fn exit_code_and_text(output: &ToolOutput) -> (Option<i64>, String) {
    let from_object = |map: &serde_json::Map<String, Value>| {
        let code = map
            .get("metadata")
            .and_then(|m| m.get("exit_code"))
            .and_then(Value::as_i64)
            .or_else(|| match map.get("success") {
                Some(Value::Bool(true)) => Some(0),
                Some(Value::Bool(false)) => Some(1),
                _ => None,
            });
        let text = map
            .get("output")
            .or(map.get("content"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        (code, text)
    };
    match output {
        ToolOutput::Object(map) => {
            let (code, text) = from_object(map);
            (code, text.unwrap_or_else(|| output.text().into_owned()))
        }
        other => {
            let text = other.text().into_owned();
            if text.trim_start().starts_with('{')
                && let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&text)
                && let (code @ Some(_), inner) = from_object(&map)
            {
                return (code, inner.unwrap_or(text));
            }
            (exit_code_in_text(&text), text)
        }
    }
}

/// An exit code written in the text, such as `Process exited with code 101`.
pub(crate) fn exit_code_in_text(text: &str) -> Option<i64> {
    const MARKERS: [&str; 4] = [
        "exited with code ",
        "exit code: ",
        "exit code ",
        "exit status: ",
    ];
    let lower = text.to_ascii_lowercase();
    MARKERS.iter().find_map(|marker| {
        let (_, rest) = lower.split_once(marker)?;
        let number: String = rest
            .chars()
            .enumerate()
            .take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && *c == '-'))
            .map(|(_, c)| c)
            .take(12)
            .collect();
        number.parse().ok()
    })
}

pub(crate) fn command_status(exit_code: Option<i64>, text: &str) -> CommandStatus {
    if let Some(code) = exit_code {
        return if code == 0 {
            CommandStatus::Passed
        } else {
            CommandStatus::Failed(Some(code))
        };
    }
    if text.contains("Process running with session ID") {
        return CommandStatus::Unknown;
    }
    let lower = text.to_ascii_lowercase();
    let failed = text.contains("FAILED")
        || lower.contains("error:")
        || lower.contains("error[")
        || lower.contains("command not found")
        || lower.contains("traceback (most recent call last)")
        || lower.contains("panicked at")
        || lower.contains("timed out");
    if failed {
        CommandStatus::Failed(None)
    } else {
        CommandStatus::Passed
    }
}

/// The most telling line of a failed output: an error line, else a failure line, else the
/// last line that is not part of the tool's own header.
pub(crate) fn error_line(text: &str) -> Option<String> {
    const HEADERS: [&str; 7] = [
        "process exited with code",
        "exit code:",
        "wall time:",
        "chunk id:",
        "original token count:",
        "output:",
        "total output lines:",
    ];
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| {
            let lower = line.to_ascii_lowercase();
            !line.is_empty() && !HEADERS.iter().any(|h| lower.starts_with(h))
        })
        .collect();
    let has = |needles: &[&str]| {
        lines.iter().find(|line| {
            let lower = line.to_ascii_lowercase();
            needles.iter().any(|n| lower.contains(n))
        })
    };
    let line = has(&["error"])
        .or_else(|| {
            has(&[
                "failed",
                "panicked",
                "fatal",
                "exception",
                "not found",
                "denied",
            ])
        })
        .or(lines.last())?;
    Some(one_line(line, MAX_LINE_CHARS))
}

/// A message's text parts, joined by newlines.
fn message_text(content: &[ContentItem]) -> String {
    content
        .iter()
        .filter_map(ContentItem::text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Removes the blocks a host wraps around user messages (`<environment_context>...`,
/// AGENTS.md instructions, ...). An unclosed block runs to the end of the text.
pub(crate) fn strip_context_blocks(text: &str) -> String {
    let mut out = text.to_owned();
    for tag in CONTEXT_TAGS {
        out = remove_between(&out, &format!("<{tag}"), &format!("</{tag}>"));
    }
    remove_between(&out, "# AGENTS.md instructions", "</INSTRUCTIONS>")
}

/// Removes every `open ... close` span, matching ASCII case-insensitively. Lowercasing ASCII
/// keeps byte offsets, and both markers are ASCII, so every cut is on a char boundary.
fn remove_between(text: &str, open: &str, close: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let (open, close) = (open.to_ascii_lowercase(), close.to_ascii_lowercase());
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    while let Some(start) = lower.get(cursor..).and_then(|rest| rest.find(&open)) {
        let start = cursor + start;
        out.push_str(text.get(cursor..start).unwrap_or(""));
        cursor = match lower.get(start..).and_then(|rest| rest.find(&close)) {
            Some(end) => start + end + close.len(),
            None => text.len(),
        };
    }
    out.push_str(text.get(cursor..).unwrap_or(""));
    out
}

/// Sentences of a user message that state a lasting preference, phrased as rules
/// ("please use pnpm" becomes "Use pnpm."). Questions are not preferences.
pub(crate) fn preferences(text: &str) -> Vec<String> {
    const LEADS: [&str; 9] = [
        "please ", "also ", "and ", "but ", "oh ", "ok ", "okay ", "so ", "btw ",
    ];
    const STARTS: [&str; 11] = [
        "always ",
        "never ",
        "don't ",
        "do not ",
        "dont ",
        "avoid ",
        "prefer ",
        "make sure ",
        "stop ",
        "remember to ",
        "from now on",
    ];
    const ANYWHERE: [&str; 8] = [
        "i prefer ",
        "i'd prefer ",
        "i would prefer ",
        "i like ",
        "i don't like ",
        "going forward",
        "in the future",
        " instead of ",
    ];
    let mut rules = Vec::new();
    let sentences = text
        .split(['\n', '!'])
        .flat_map(|line| line.split(". "))
        .map(|s| s.trim().trim_start_matches(['-', '*', '>', ' ']).trim());
    for sentence in sentences {
        if sentence.ends_with('?') || sentence.chars().count() < 8 {
            continue;
        }
        let lower = sentence.to_ascii_lowercase();
        let mut body = lower.as_str();
        let mut said_please = false;
        while let Some(lead) = LEADS.iter().find(|lead| body.starts_with(**lead)) {
            said_please |= *lead == "please ";
            body = body.get(lead.len()..).unwrap_or("").trim_start();
        }
        let is_rule = STARTS.iter().any(|s| body.starts_with(s))
            || (said_please && body.starts_with("use "))
            || ANYWHERE.iter().any(|s| lower.contains(s));
        if !is_rule {
            continue;
        }
        // Keep the user's casing: cut the same number of bytes from the original.
        let cut = lower.len() - body.len();
        let original = sentence.get(cut..).unwrap_or(sentence);
        let rule = match original.to_ascii_lowercase() {
            l if l.starts_with("i prefer ") => {
                format!("Prefer {}", original.get(9..).unwrap_or(""))
            }
            _ => original.to_owned(),
        };
        let mut rule = one_line(&capitalize(&rule), MAX_LINE_CHARS);
        if !rule.ends_with(['.', '…']) {
            rule.push('.');
        }
        push_distinct(&mut rules, rule);
    }
    rules
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Collapses whitespace to single spaces and caps the length, on char boundaries, with `…`.
pub(crate) fn one_line(text: &str, max_chars: usize) -> String {
    let mut chars = text
        .split_whitespace()
        .enumerate()
        .flat_map(|(i, word)| (i > 0).then_some(' ').into_iter().chain(word.chars()));
    let head: String = chars.by_ref().take(max_chars).collect();
    if chars.next().is_none() {
        return head;
    }
    let mut head: String = head.chars().take(max_chars.saturating_sub(1)).collect();
    head.truncate(head.trim_end().len());
    head.push('…');
    head
}

/// Appends `value` unless present or the list is full (so the check stays cheap).
fn push_distinct(list: &mut Vec<String>, value: String) {
    if list.len() < MAX_COLLECTED && !list.contains(&value) {
        list.push(value);
    }
}

/// The first sentence of a request.
pub(crate) fn first_sentence(text: &str) -> &str {
    text.split(['\n', '?', '!'])
        .flat_map(|part| part.split(". "))
        .map(str::trim)
        .find(|s| !s.is_empty())
        .unwrap_or("")
}

/// Lowercase words of a request, for the slug and keywords: ASCII letters and digits, without
/// filler words and the redaction marker.
pub(crate) fn content_words(text: &str) -> Vec<String> {
    const FILLER: [&str; 40] = [
        "a", "an", "the", "to", "of", "in", "on", "for", "and", "or", "is", "are", "my", "our",
        "this", "that", "please", "can", "you", "could", "would", "with", "it", "be", "me", "i",
        "we", "what", "why", "how", "does", "do", "hi", "hello", "hey", "thanks", "let", "lets",
        "some", "its",
    ];
    text.replace(REDACTED_SECRET, " ")
        .split(|c: char| !c.is_ascii_alphanumeric())
        .map(str::to_ascii_lowercase)
        .filter(|w| !w.is_empty() && !FILLER.contains(&w.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn one_line_collapses_and_caps() {
        assert_eq!(one_line("  a \n b\tc ", 10), "a b c");
        assert_eq!(one_line("hello wonderful world", 12), "hello wonde…");
        assert_eq!(one_line("ééééé", 3), "éé…");
        assert_eq!(one_line("", 3), "");
    }

    #[test]
    fn context_blocks_are_removed() {
        let text = "<environment_context>\n<cwd>/x</cwd>\n</environment_context>\nFix it.\n\
                    # AGENTS.md instructions for /x\n<INSTRUCTIONS>use pnpm</INSTRUCTIONS>";
        assert_eq!(strip_context_blocks(text).trim(), "Fix it.");
        assert_eq!(strip_context_blocks("a <skill>unclosed"), "a ");
    }

    #[test]
    fn preferences_become_rules() {
        let text = "Fix the bug. Please use pnpm, not npm. I prefer small commits\n\
                    Why does it always fail?\n- never push to main directly";
        assert_eq!(
            preferences(text),
            vec![
                "Use pnpm, not npm.",
                "Prefer small commits.",
                "Never push to main directly."
            ]
        );
        assert!(preferences("The test never ran, it seems.").is_empty());
    }

    #[test]
    fn exit_codes_are_read_from_every_format() {
        let text = |s: &str| ToolOutput::Text(s.to_owned());
        assert_eq!(
            exit_code_and_text(&text("Process exited with code 101\nboom")).0,
            Some(101)
        );
        assert_eq!(
            exit_code_and_text(&text("Exit code: 0\nWall time: 1s")).0,
            Some(0)
        );
        let json = r#"{"output":"x","metadata":{"exit_code":2,"duration_seconds":0.1}}"#;
        assert_eq!(exit_code_and_text(&text(json)), (Some(2), "x".to_owned()));
        let object: serde_json::Map<String, Value> =
            serde_json::from_str(r#"{"content":"done","success":false}"#).unwrap();
        assert_eq!(
            exit_code_and_text(&ToolOutput::Object(object)),
            (Some(1), "done".to_owned())
        );
        assert_eq!(exit_code_and_text(&text("exit code -1")).0, Some(-1));
        assert_eq!(exit_code_and_text(&text("no code here")).0, None);
    }

    #[test]
    fn status_without_exit_code_uses_markers() {
        assert_eq!(
            command_status(None, "test a ... FAILED"),
            CommandStatus::Failed(None)
        );
        assert_eq!(command_status(None, "all good"), CommandStatus::Passed);
        // An exit code wins over words in the output (grep for "error:" succeeds).
        assert_eq!(
            command_status(Some(0), "src/a.rs: error: x"),
            CommandStatus::Passed
        );
    }

    #[test]
    fn error_line_skips_headers_and_prefers_errors() {
        let text = "Chunk ID: 1\nWall time: 0.2 seconds\nProcess exited with code 101\nOutput:\n\
                    Compiling x\nerror[E0308]: mismatched types\n  --> src/a.rs:1:1";
        assert_eq!(
            error_line(text).as_deref(),
            Some("error[E0308]: mismatched types")
        );
        assert_eq!(error_line("a\nlast words").as_deref(), Some("last words"));
        assert_eq!(error_line("Exit code: 1\n"), None);
    }

    #[test]
    fn patches_list_each_file_once() {
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n*** Add File: b.md\n\
                     *** Delete File: c.txt\n*** Update File: src/a.rs\n*** Move to: src/d.rs\n*** End Patch";
        let paths: Vec<(String, &str)> = patch_changes(patch)
            .into_iter()
            .map(|c| (c.path, c.kind.verb()))
            .collect();
        assert_eq!(
            paths,
            vec![
                ("src/a.rs".to_owned(), "updated"),
                ("b.md".to_owned(), "added"),
                ("c.txt".to_owned(), "deleted"),
                ("src/d.rs".to_owned(), "added"),
            ]
        );
    }

    #[test]
    fn command_keys_match_the_same_check() {
        assert_eq!(
            command_key("cargo test -p a"),
            command_key("cd x && cargo test --all")
        );
        assert_ne!(command_key("cargo test"), command_key("cargo build"));
        assert_eq!(
            command_key("RUST_LOG=1 /usr/bin/pytest -q"),
            command_key("pytest")
        );
        assert_eq!(
            command_keyword("cd x && cargo test -p a").as_deref(),
            Some("cargo test")
        );
        assert_eq!(
            command_from_argv(&["bash".into(), "-lc".into(), "ls -la".into()]),
            "ls -la"
        );
        assert_eq!(command_from_argv(&["rg".into(), "a b".into()]), "rg 'a b'");
    }

    fn item(value: Value) -> ResponseItem {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn patches_count_from_every_tool_shape_once_they_apply() {
        let heredoc =
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.rs\n*** End Patch\nEOF";
        let items = vec![
            item(
                serde_json::json!({"type": "function_call", "name": "shell", "call_id": "1",
                "arguments": serde_json::json!({"command": ["bash", "-lc", heredoc]}).to_string()}),
            ),
            item(
                serde_json::json!({"type": "function_call_output", "call_id": "1",
                "output": "Exit code: 0\nOutput:\nSuccess. Updated the following files:\nM a.rs"}),
            ),
            item(
                serde_json::json!({"type": "function_call", "name": "apply_patch", "call_id": "2",
                "arguments": serde_json::json!({"input": "*** Begin Patch\n*** Add File: b.rs\n+x"}).to_string()}),
            ),
            item(
                serde_json::json!({"type": "function_call_output", "call_id": "2",
                "output": "apply_patch verification failed: Failed to find expected lines"}),
            ),
            // Recorded without its output: the session ended first.
            item(
                serde_json::json!({"type": "custom_tool_call", "name": "apply_patch", "call_id": "3",
                "input": "*** Begin Patch\n*** Delete File: c.rs\n*** End Patch"}),
            ),
        ];
        let facts = extract(&items);
        let changed: Vec<&str> = facts.changes.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(changed, ["a.rs", "c.rs"]);
        assert!(facts.commands.is_empty(), "{:?}", facts.commands);
        assert_eq!(
            facts.errors,
            ["apply_patch: apply_patch verification failed: Failed to find expected lines"]
        );
    }

    proptest! {
        #[test]
        fn one_line_never_exceeds_its_cap(text in "\\PC{0,300}", max in 0usize..80) {
            let line = one_line(&text, max);
            prop_assert!(line.chars().count() <= max.max(1));
            prop_assert!(!line.contains('\n'));
        }

        #[test]
        fn text_helpers_never_panic(text in "(\\PC|<environment_context>|</environment_context>|\\*\\*\\* Update File: |Exit code: -?[0-9]{0,20}|\n){0,40}") {
            let stripped = strip_context_blocks(&text);
            prop_assert!(stripped.len() <= text.len());
            for rule in preferences(&text) {
                prop_assert!(rule.chars().count() <= MAX_LINE_CHARS + 1);
                prop_assert!(rule.ends_with(['.', '…']));
            }
            for change in patch_changes(&text) {
                prop_assert!(!change.path.is_empty());
            }
            let _ = exit_code_in_text(&text);
            if let Some(line) = error_line(&text) {
                prop_assert!(line.chars().count() <= MAX_LINE_CHARS);
            }
            let _ = (command_key(&text), is_inspection(&text), command_keyword(&text));
            prop_assert!(text.contains(first_sentence(&text)));
            let argv: Vec<String> = text.split('\n').map(str::to_owned).collect();
            let _ = command_from_argv(&argv);
            for word in content_words(&text) {
                prop_assert!(word.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
            }
        }
    }
}
