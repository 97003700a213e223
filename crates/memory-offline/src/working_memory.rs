//! The working memory, offline: the seven sections read from the messages' structure.
//!
//! What each section gets:
//!
//! - Session Title: the first request, cut to ten words;
//! - Current State: the latest request, the last command and how it ended, the last reply,
//!   how many issues are open, and the offline notice;
//! - Task & Goals: every request, one line each;
//! - Key Facts & Decisions: preferences the user stated (as rules), decisions the assistant
//!   explained (`because`, `instead of`, ...), and commands that pass after failing;
//! - Files & Context: paths from tool-call arguments and patches, with what was done to them;
//! - Errors & Corrections: failed commands and tool calls with their error line (and whether a
//!   later run passed), and the user's corrections;
//! - Open Issues: questions no reply followed, and failures nothing fixed.
//!
//! A create request is answered with the whole document; an update with one operation per
//! section: KEEP where nothing is new, APPEND of what the document lacks, UPDATE of Current
//! State, and of Open Issues when an item was settled (a failing command that now passes is
//! marked resolved). A section the size warnings name is consolidated: its bullets are joined
//! three to a line, every word kept. Everything is read from the structured input.

use std::collections::BTreeMap;

use memory_protocol::compaction::{AssistantBlock, ConversationEntry, ConversationMessage};
use memory_protocol::working_memory::{
    SectionOp, WorkingMemoryCreateInput, WorkingMemorySection, WorkingMemorySections,
    WorkingMemoryUpdate, WorkingMemoryUpdateInput, limits,
};
use serde_json::Value;

use super::OFFLINE_NOTICE;
use super::patches::patch_changes;
use super::text::{MAX_LINE_CHARS, ending_a_sentence, first_sentence, one_line, word_count};
use super::tool_output::{RunStatus as CommandStatus, error_line, exit_code_in_text, run_status};
use super::user_text::read_user_message;
use memory_transcript::file_ops::FileOps;
use memory_transcript::shell::{
    CommandKey, command_from_args, is_inspection, last_key as command_key,
};

/// Most words of a title.
const TITLE_WORDS: usize = 10;
/// Fewest words of a sentence taken as a request.
const MIN_REQUEST_WORDS: usize = 3;
/// Bullets joined into one when a warned section is consolidated.
const CONSOLIDATE_GROUP: usize = 3;
/// Requests Task & Goals lists after the first one: the goal is the first request and its
/// newest changes, not every request of the session (a long session would grow it forever).
const RECENT_GOALS: usize = 3;

/// Argument keys that name a file.
const PATH_KEYS: [&str; 7] = [
    "path",
    "file",
    "file_path",
    "filename",
    "filepath",
    "target_file",
    "notebook_path",
];

/// Words that make an assistant sentence a decision worth keeping.
const DECISION_CUES: [&str; 8] = [
    "because",
    "instead of",
    "rather than",
    "decided",
    "we chose",
    "i chose",
    "i'll use",
    "we'll use",
];

/// How a user sentence starts when it sets a constraint on the work (the shared preference
/// reader covers `always`, `never`, `don't` and the like).
const CONSTRAINT_STARTS: [&str; 4] = ["keep ", "only ", "must ", "make it "];

/// How a user message starts when it corrects the assistant.
const CORRECTION_STARTS: [&str; 9] = [
    "no,",
    "no.",
    "no ",
    "actually",
    "that's wrong",
    "that is wrong",
    "that's not",
    "not quite",
    "wrong",
];

#[derive(Debug, Clone)]
struct Run {
    command: String,
    status: CommandStatus,
    error: Option<String>,
}

#[derive(Debug, Default)]
struct Observed {
    requests: Vec<String>,
    requirements: Vec<String>,
    decisions: Vec<String>,
    corrections: Vec<String>,
    /// Questions with whether a reply followed.
    questions: Vec<(String, bool)>,
    /// Path to what was done to it, in first-seen order.
    files: Vec<(String, String)>,
    runs: Vec<Run>,
    /// Failed tool calls that are not commands: (tool, error line).
    tool_failures: Vec<(String, String)>,
    /// Commands whose call got no result among the messages: the conversation went on
    /// without it (a call still waiting is never archived, so never sent here).
    unanswered: Vec<String>,
    last_reply: Option<String>,
}

impl Observed {
    fn file(&mut self, path: &str, note: String) {
        let path = path.trim();
        if path.is_empty() || path.len() > MAX_LINE_CHARS {
            return;
        }
        match self.files.iter_mut().find(|(known, _)| known == path) {
            Some(entry) => {
                if !entry.1.contains(&note) {
                    entry.1 = format!("{}, {note}", entry.1);
                }
            }
            None => self.files.push((path.to_owned(), note)),
        }
    }

    /// True when a later run of the same command passed.
    fn fixed(&self, index: usize) -> bool {
        let key = command_key(&self.runs[index].command);
        self.runs[index + 1..]
            .iter()
            .any(|run| run.status == CommandStatus::Passed && command_key(&run.command) == key)
    }
}

fn push_distinct(list: &mut Vec<String>, item: String) {
    if !item.is_empty() && !list.contains(&item) {
        list.push(item);
    }
}

fn observe(messages: &[ConversationEntry]) -> Observed {
    let mut seen = Observed::default();
    let mut pending: BTreeMap<String, String> = BTreeMap::new();
    for entry in messages {
        match &entry.message {
            ConversationMessage::User { text } => observe_user(&mut seen, text),
            ConversationMessage::Assistant { content } => {
                for block in content {
                    match block {
                        AssistantBlock::Text { text } => observe_reply(&mut seen, text),
                        AssistantBlock::Thinking { .. } => {}
                        AssistantBlock::ToolCall {
                            id,
                            name,
                            arguments,
                        } => {
                            observe_call(&mut seen, name, arguments);
                            if let Some(command) = command_from_args(arguments) {
                                pending.insert(id.clone(), one_line(&command, MAX_LINE_CHARS));
                            }
                        }
                    }
                }
            }
            ConversationMessage::ToolResult {
                tool_call_id,
                tool_name,
                text,
                is_error,
                ..
            } => match pending.remove(tool_call_id) {
                Some(command) => {
                    let code = exit_code_in_text(text);
                    let status = match (is_error, code) {
                        (true, None) => CommandStatus::Failed(None),
                        _ => run_status(code, text),
                    };
                    seen.runs.push(run(command, status, text));
                }
                None if *is_error => {
                    let line = error_line(text).unwrap_or_else(|| "no output".to_owned());
                    seen.tool_failures.push((one_line(tool_name, 60), line));
                }
                None => {}
            },
            ConversationMessage::ShellExecution {
                command,
                output,
                exit_code,
            } => {
                let status = run_status(exit_code.map(i64::from), output);
                seen.runs
                    .push(run(one_line(command, MAX_LINE_CHARS), status, output));
            }
        }
    }
    seen.unanswered = pending.into_values().collect();
    seen
}

fn run(command: String, status: CommandStatus, output: &str) -> Run {
    let error = match status {
        CommandStatus::Failed(_) => error_line(output),
        _ => None,
    };
    Run {
        command,
        status,
        error,
    }
}

fn observe_user(seen: &mut Observed, text: &str) {
    let text = memory_transcript::injected::strip_injected(text);
    let rules = read_user_message(&text).preferences;
    // The request is the first sentence that asks for something: not an acknowledgement
    // ("Great.", "Thanks!") and not a stated rule, which goes to the facts.
    let request = sentences(&text)
        .iter()
        .map(|sentence| sentence.trim_end_matches(['.', '!']))
        .find(|sentence| {
            word_count(sentence) >= MIN_REQUEST_WORDS
                && read_user_message(sentence).preferences.is_empty()
        })
        .map(|sentence| one_line(sentence, MAX_LINE_CHARS))
        .unwrap_or_default();
    let lower = text.trim_start().to_ascii_lowercase();
    if !seen.requests.is_empty()
        && CORRECTION_STARTS
            .iter()
            .any(|start| lower.starts_with(start))
    {
        push_distinct(
            &mut seen.corrections,
            format!("User correction: {}", one_line(text.trim(), MAX_LINE_CHARS)),
        );
    }
    push_distinct(&mut seen.requests, request);
    for rule in rules {
        push_distinct(&mut seen.requirements, format!("User rule: {rule}"));
    }
    for sentence in sentences(&text) {
        let lower = sentence.to_ascii_lowercase();
        if !sentence.ends_with(['?', '？'])
            && CONSTRAINT_STARTS
                .iter()
                .any(|start| lower.starts_with(start))
        {
            let rule = format!(
                "User rule: {}",
                ending_a_sentence(one_line(&sentence, MAX_LINE_CHARS))
            );
            push_distinct(&mut seen.requirements, rule);
        }
    }
    for sentence in sentences(&text) {
        if sentence.ends_with('?') {
            seen.questions
                .push((one_line(&sentence, MAX_LINE_CHARS), false));
        }
    }
}

fn observe_reply(seen: &mut Observed, text: &str) {
    if text.trim().is_empty() {
        return;
    }
    for question in &mut seen.questions {
        question.1 = true;
    }
    for sentence in sentences(text) {
        let lower = sentence.to_ascii_lowercase();
        if DECISION_CUES.iter().any(|cue| lower.contains(cue)) {
            push_distinct(
                &mut seen.decisions,
                format!("Decision: {}", one_line(&sentence, MAX_LINE_CHARS)),
            );
        }
    }
    seen.last_reply = Some(one_line(first_sentence(text), MAX_LINE_CHARS));
}

fn observe_call(seen: &mut Observed, name: &str, arguments: &Value) {
    let tool = one_line(name, 60);
    let lower = tool.to_ascii_lowercase();
    let verb = if ["write", "edit", "patch", "create", "replace"]
        .iter()
        .any(|w| lower.contains(w))
    {
        format!("edited with `{tool}`")
    } else if ["read", "view", "open", "cat"]
        .iter()
        .any(|w| lower.contains(w))
    {
        "read".to_owned()
    } else {
        format!("used by `{tool}`")
    };
    let mut strings = Vec::new();
    collect_strings(arguments, &mut strings, 0);
    for key in PATH_KEYS {
        if let Some(Value::String(path)) = arguments.get(key) {
            seen.file(path, verb.clone());
        }
    }
    for text in strings {
        for change in patch_changes(text) {
            seen.file(&change.path, change.kind.verb().to_owned());
        }
    }
    // Files a shell command reads, recognised as the compactor recognises them.
    let mut ops = FileOps::default();
    ops.scan_call(name, arguments);
    for path in ops.read() {
        seen.file(&path, "read".to_owned());
    }
}

fn collect_strings<'a>(value: &'a Value, out: &mut Vec<&'a str>, depth: usize) {
    if depth > 8 {
        return;
    }
    match value {
        Value::String(text) => out.push(text),
        Value::Array(values) => values
            .iter()
            .for_each(|v| collect_strings(v, out, depth + 1)),
        Value::Object(map) => map
            .values()
            .for_each(|v| collect_strings(v, out, depth + 1)),
        _ => {}
    }
}

/// The engine's one sentence splitter (a period inside `src/a.rs` or `12.42` ends nothing),
/// without fragments too short to say anything.
fn sentences(text: &str) -> Vec<String> {
    crate::text::sentences(text)
        .into_iter()
        .filter(|s| s.chars().count() >= 4)
        .collect()
}

/// What the messages say, section by section.
struct Derived {
    title: String,
    state: String,
    goals: Vec<String>,
    facts: Vec<String>,
    files: Vec<String>,
    errors: Vec<String>,
    open: Vec<String>,
    /// Keys of commands that passed, to settle open issues.
    passed: Vec<CommandKey>,
    /// Whether the messages had any reply, to settle questions.
    replied: bool,
}

fn derive(messages: &[ConversationEntry]) -> Derived {
    let seen = observe(messages);
    let title = seen
        .requests
        .first()
        .map(|request| title_from(request))
        .unwrap_or_default();
    let mut facts = seen.requirements.clone();
    facts.extend(seen.decisions.iter().cloned());
    let mut errors = Vec::new();
    let mut open = Vec::new();
    for (index, run) in seen.runs.iter().enumerate() {
        if !matches!(run.status, CommandStatus::Failed(_)) {
            continue;
        }
        let detail = run
            .error
            .clone()
            .unwrap_or_else(|| "no error line".to_owned());
        let fixed = seen.fixed(index);
        let entry = if fixed {
            format!("`{}` failed: {detail}; a later run passed", run.command)
        } else {
            format!("`{}` failed: {detail}", run.command)
        };
        push_distinct(&mut errors, entry);
        if fixed {
            if !is_inspection(&run.command) {
                push_distinct(
                    &mut facts,
                    format!("`{}` passes after the fix", run.command),
                );
            }
        } else {
            push_distinct(
                &mut open,
                format!(
                    "{} `{}` failed and has not passed since: {detail}",
                    limits::NEW_MARKER,
                    run.command
                ),
            );
        }
    }
    for (tool, line) in &seen.tool_failures {
        push_distinct(&mut errors, format!("`{tool}` call failed: {line}"));
    }
    for command in &seen.unanswered {
        push_distinct(
            &mut errors,
            format!("`{command}` got no answer: the conversation went on without its result"),
        );
    }
    errors.extend(seen.corrections.iter().cloned());
    for (question, answered) in &seen.questions {
        if !answered {
            push_distinct(
                &mut open,
                format!("{} Unanswered question: {question}", limits::NEW_MARKER),
            );
        }
    }
    let files = seen
        .files
        .iter()
        .map(|(path, note)| format!("`{path}`: {note}"))
        .collect();
    let state = current_state(&seen, open.len());
    let passed = seen
        .runs
        .iter()
        .filter(|run| run.status == CommandStatus::Passed)
        .map(|run| command_key(&run.command))
        .collect();
    Derived {
        title,
        state,
        goals: seen.requests.clone(),
        facts,
        files,
        errors,
        open,
        passed,
        replied: seen.last_reply.is_some(),
    }
}

fn title_from(request: &str) -> String {
    let words: Vec<&str> = request.split_whitespace().take(TITLE_WORDS).collect();
    let title = words.join(" ");
    let title = title.trim_end_matches([
        '.', ',', ';', ':', '!', '?', '。', '，', '；', '：', '！', '？',
    ]);
    let mut chars = title.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn current_state(seen: &Observed, open: usize) -> String {
    let mut sentences = Vec::new();
    if let Some(request) = seen.requests.last() {
        sentences.push(format!(
            "Latest request: {}",
            ending_a_sentence(request.trim_end_matches(['.', '?', '!']).to_owned())
        ));
    }
    if let Some(run) = seen.runs.last() {
        let outcome = match run.status {
            CommandStatus::Passed => "passed".to_owned(),
            CommandStatus::Failed(_) => format!(
                "failed ({})",
                run.error.as_deref().unwrap_or("no error line")
            ),
            CommandStatus::Unknown => "has no recorded result".to_owned(),
        };
        sentences.push(format!("Last command `{}` {outcome}.", run.command));
    }
    if let Some(reply) = &seen.last_reply {
        sentences.push(format!("Last reply: {}", ending_a_sentence(reply.clone())));
    }
    if open > 0 {
        sentences.push(format!("{open} open issue(s) pending."));
    }
    sentences.push(OFFLINE_NOTICE.to_owned());
    sentences.join(" ")
}

fn bullets(items: &[String]) -> String {
    items
        .iter()
        .map(|item| format!("- {item}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Answers a create request with the whole document.
pub(crate) fn create(input: &WorkingMemoryCreateInput) -> String {
    let derived = derive(&input.messages);
    let previous = input.previous.as_deref().unwrap_or("");
    let mut out = String::from("# Working Memory\n");
    for section in WorkingMemorySection::ALL {
        let body = match section {
            WorkingMemorySection::SessionTitle => derived.title.clone(),
            WorkingMemorySection::CurrentState => derived.state.clone(),
            WorkingMemorySection::TaskAndGoals => bullets(&bounded_goals(&[], &derived.goals)),
            WorkingMemorySection::KeyFactsAndDecisions => bullets(&derived.facts),
            WorkingMemorySection::FilesAndContext => bullets(&derived.files),
            WorkingMemorySection::ErrorsAndCorrections => bullets(&derived.errors),
            WorkingMemorySection::OpenIssues => bullets(&derived.open),
        };
        out.push_str(&format!("\n## {}\n", section.header()));
        if !body.is_empty() {
            out.push_str(&body);
            out.push('\n');
        }
    }
    if !previous.trim().is_empty() && derived.goals.is_empty() {
        // Nothing new to write from: the previous document carries on as it is.
        return previous.to_owned();
    }
    out
}

/// Answers an update request with one operation per section.
pub(crate) fn update(input: &WorkingMemoryUpdateInput) -> WorkingMemoryUpdate {
    let derived = derive(&input.messages);
    let body = |section: WorkingMemorySection| {
        input
            .sections
            .iter()
            .find(|s| s.section == section)
            .map(|s| s.body.as_str())
            .unwrap_or("")
    };
    let warned =
        |section: WorkingMemorySection| input.warnings.iter().any(|w| w.section == section);
    let new_only = |section: WorkingMemorySection, items: &[String]| -> Vec<String> {
        let existing = body(section).to_lowercase();
        items
            .iter()
            .filter(|item| !existing.contains(&item.to_lowercase()))
            .cloned()
            .collect()
    };
    let grow = |section: WorkingMemorySection, items: &[String]| -> SectionOp {
        let fresh = new_only(section, items);
        if warned(section) {
            return consolidate(body(section), &fresh);
        }
        if fresh.is_empty() {
            SectionOp::Keep
        } else {
            SectionOp::Append { items: fresh }
        }
    };
    let title = if body(WorkingMemorySection::SessionTitle).is_empty() && !derived.title.is_empty()
    {
        SectionOp::Update {
            content: derived.title.clone(),
        }
    } else {
        SectionOp::Keep
    };
    let state = if input.messages.is_empty() {
        SectionOp::Keep
    } else {
        SectionOp::Update {
            content: derived.state.clone(),
        }
    };
    let files: Vec<String> = derived
        .files
        .iter()
        .filter(|item| {
            let path = item.split('`').nth(1).unwrap_or(item);
            !body(WorkingMemorySection::FilesAndContext).contains(path)
        })
        .cloned()
        .collect();
    WorkingMemoryUpdate {
        sections: WorkingMemorySections {
            session_title: title,
            current_state: state,
            task_and_goals: goals_op(body(WorkingMemorySection::TaskAndGoals), &derived.goals),
            key_facts_and_decisions: grow(
                WorkingMemorySection::KeyFactsAndDecisions,
                &derived.facts,
            ),
            files_and_context: grow(WorkingMemorySection::FilesAndContext, &files),
            errors_and_corrections: grow(
                WorkingMemorySection::ErrorsAndCorrections,
                &derived.errors,
            ),
            open_issues: open_issues(body(WorkingMemorySection::OpenIssues), &derived),
        },
    }
}

/// The goal list: the first goal ever stated, then the newest [`RECENT_GOALS`] of the rest,
/// `old` (the section's items so far) before `fresh`, no two the same.
fn bounded_goals(old: &[String], fresh: &[String]) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for goal in old.iter().chain(fresh) {
        let goal = one_line(goal, MAX_LINE_CHARS);
        if !goal.is_empty() && !all.iter().any(|known| known.eq_ignore_ascii_case(&goal)) {
            all.push(goal);
        }
    }
    let Some((first, rest)) = all.split_first() else {
        return Vec::new();
    };
    let mut goals = vec![first.clone()];
    goals.extend(
        rest.iter()
            .skip(rest.len().saturating_sub(RECENT_GOALS))
            .cloned(),
    );
    goals
}

/// Task & Goals after new requests: the first goal and the newest ones, replacing older
/// requests (they are done or changed, and the archives keep them); KEEP when nothing changes.
fn goals_op(body: &str, fresh: &[String]) -> SectionOp {
    let old: Vec<String> = body
        .lines()
        .map(|line| line.trim().trim_start_matches(['-', '*']).trim())
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect();
    let goals = bounded_goals(&old, fresh);
    if goals == old {
        SectionOp::Keep
    } else {
        SectionOp::Update {
            content: bullets(&goals),
        }
    }
}

/// Joins a warned section's bullets three to a line (every word kept) and adds `fresh`.
fn consolidate(body: &str, fresh: &[String]) -> SectionOp {
    let items: Vec<&str> = body
        .lines()
        .map(|line| line.trim().trim_start_matches(['-', '*']).trim())
        .filter(|item| {
            !item.is_empty() && *item != limits::CONSOLIDATION_SENTINEL && !item.starts_with('#')
        })
        .collect();
    let mut lines: Vec<String> = items
        .chunks(CONSOLIDATE_GROUP)
        .map(|group| format!("- {}", group.join("; ")))
        .collect();
    lines.extend(fresh.iter().map(|item| format!("- {item}")));
    SectionOp::Update {
        content: lines.join("\n"),
    }
}

/// Open Issues: settled items marked resolved, `[new]` tags of older items dropped, new items
/// added; KEEP when nothing changes.
fn open_issues(body: &str, derived: &Derived) -> SectionOp {
    let mut lines = Vec::new();
    let mut changed = false;
    for line in body.lines() {
        let trimmed = line.trim();
        let Some(item) = trimmed
            .strip_prefix("- ")
            .or_else(|| trimmed.strip_prefix("* "))
        else {
            if !trimmed.is_empty() {
                lines.push(trimmed.to_owned());
            }
            continue;
        };
        let lower = item.to_ascii_lowercase();
        if lower.starts_with(limits::RESOLVED_MARKER) {
            lines.push(format!("- {item}"));
            continue;
        }
        let core = item
            .strip_prefix(limits::NEW_MARKER)
            .or_else(|| item.strip_prefix(limits::RESTORED_MARKER))
            .unwrap_or(item)
            .trim();
        let settled = settled_by(core, derived);
        if settled {
            lines.push(format!("- {} {core}", limits::RESOLVED_MARKER));
            changed = true;
        } else {
            changed |= core.len() != item.len() && item.starts_with(limits::NEW_MARKER);
            let kept = if item.starts_with(limits::NEW_MARKER) {
                core
            } else {
                item
            };
            lines.push(format!("- {kept}"));
        }
    }
    let existing = body.to_lowercase();
    for item in &derived.open {
        let core = item.trim_start_matches(limits::NEW_MARKER).trim();
        if !existing.contains(&core.to_lowercase()) {
            lines.push(format!("- {item}"));
            changed = true;
        }
    }
    if changed {
        SectionOp::Update {
            content: lines.join("\n"),
        }
    } else {
        SectionOp::Keep
    }
}

/// True when the new messages settle an open item: its command now passes, or it is an
/// unanswered question and a reply came.
fn settled_by(item: &str, derived: &Derived) -> bool {
    if item.starts_with("Unanswered question:") {
        return derived.replied;
    }
    item.split('`')
        .nth(1)
        .is_some_and(|command| derived.passed.contains(&command_key(command)))
}
