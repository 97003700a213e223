//! Compaction summaries without a language model, read from the structure of the window's
//! messages ([`SummaryInput`]):
//!
//! - the goal from the user's requests (its first statement and newest change), constraints
//!   from the preferences they stated, the numbers the work must respect and their
//!   corrections of the agent;
//! - Done from verified steps (checks that passed, failures a later run fixed, changes that
//!   applied), In Progress and Blocked from failures nothing fixed;
//! - decisions from the assistant's reasoning in its own words (`instead of`, `because`, ...);
//! - next steps from unresolved failures, open questions and the assistant's stated plan;
//! - the last user message nobody answered, verbatim, and earlier questions the conversation
//!   went past without an answer;
//! - the files read and modified, and the commands that failed and passed.
//!
//! An update folds the previous summary and the window by kind: nothing Done is dropped (old
//! items are counted), a failure that now passes moves to Done, an answered question is
//! cleared, and the lists ordinary work fills stay within fixed budgets. Output stays within
//! `max_output_tokens`.

use std::collections::{BTreeMap, HashMap};

use memory_protocol::compaction::summary_sections::{
    CONTEXT_FOR_SUFFIX, EARLY_PROGRESS, ORIGINAL_REQUEST, section_items,
};
use memory_protocol::compaction::{AssistantBlock, ConversationMessage, SummaryInput};
use memory_sanitize::truncate_tool_result;
use memory_transcript::file_ops::FileOps;
use serde_json::Value;

use super::OFFLINE_NOTICE;
use super::compaction_doc::{
    BYTES_PER_OUTPUT_TOKEN, Doc, TURN_FILES_MODIFIED, TURN_LAST_NOTE, backticked, code, comparable,
    item_body, push_unique,
};
use super::text::{content_words, ending_a_sentence, one_line, word_count};
use super::tool_output::{RunStatus as CommandStatus, error_line, exit_code_in_text, run_status};
use super::user_text::read_user_message;
use memory_transcript::shell::{command_from_args, is_inspection, last_key};

/// Longest line kept for a request, decision, command or error, in characters.
const MAX_ITEM_CHARS: usize = 240;
/// Longest pending question quoted, in characters (head and tail kept around a marker).
const MAX_QUESTION_CHARS: usize = 2_000;
/// Failures of one check, with no pass, after which it is listed as blocked.
const BLOCKED_AFTER_FAILURES: usize = 3;
/// The next step a pending question adds.
const ANSWER_PENDING: &str = "Answer the pending user question quoted under Critical Context";
/// The next step when the work goes on with the newest goal line.
const CONTINUE_LATEST: &str = "Continue with the latest request under Goal";
/// How a Done item that counts a window's routine passing checks ends (the checks themselves
/// are under Commands that passed).
const ROUTINE_CHECKS: &str = " checks passed, listed under Critical Context";
/// Requests this short with no verb-like content are acknowledgements, not goals.
const MIN_GOAL_WORDS: usize = 3;

/// `compaction_summary`: the first hand-off summary of a window.
pub(crate) fn summary(input: &SummaryInput) -> String {
    let facts = Facts::read(&input.messages);
    let mut doc = Doc::default();
    facts.fill(&mut doc);
    finish(doc, input)
}

/// `compaction_update`: the previous summary with the window merged in.
pub(crate) fn update(input: &SummaryInput) -> String {
    let mut doc = input
        .previous_summary
        .as_deref()
        .map(Doc::parse)
        .unwrap_or_default();
    let facts = Facts::read(&input.messages);
    facts.fill(&mut doc);
    finish(doc, input)
}

/// `turn_prefix_summary`: the beginning of a split turn (folded into the summary of an
/// earlier part of the same turn, when there is one).
pub(crate) fn turn_prefix(input: &SummaryInput) -> String {
    let facts = Facts::read(&input.messages);
    let previous = input.previous_summary.as_deref().unwrap_or_default();
    let mut request = section_items(previous, ORIGINAL_REQUEST)
        .first()
        .map(|item| item_body(item));
    if request.is_none() {
        request = paragraph_after(previous, ORIGINAL_REQUEST);
    }
    let request = request
        .or_else(|| facts.requests.first().map(|r| quote_request(r)))
        .unwrap_or_else(|| "(the request came before this part of the turn)".to_owned());
    let mut progress: Vec<String> = section_items(previous, EARLY_PROGRESS)
        .iter()
        .map(|item| item_body(item))
        .collect();
    for step in facts.progress_lines() {
        push_unique(&mut progress, step);
    }
    let mut context: Vec<String> = Vec::new();
    for failure in facts.unresolved() {
        push_unique(&mut context, failure.open_item());
    }
    if !facts.modified.is_empty() {
        push_unique(
            &mut context,
            format!("{TURN_FILES_MODIFIED} {}", spans(&facts.modified)),
        );
    }
    if let Some(last) = &facts.last_assistant {
        push_unique(
            &mut context,
            format!("{TURN_LAST_NOTE} {}", one_line(last, MAX_ITEM_CHARS)),
        );
    }
    if context.is_empty() {
        context = section_items(previous, CONTEXT_FOR_SUFFIX)
            .iter()
            .map(|item| item_body(item))
            .collect();
    }
    let mut out = format!("{ORIGINAL_REQUEST}\n{request}\n\n{EARLY_PROGRESS}\n");
    let budget = bytes_for(input.max_output_tokens);
    let keep_progress = fitting_tail(&progress, budget / 2);
    if keep_progress < progress.len() {
        out.push_str(&format!(
            "- ({} earlier steps left out)\n",
            progress.len() - keep_progress
        ));
    }
    for line in progress.iter().skip(progress.len() - keep_progress) {
        out.push_str(&format!("- {line}\n"));
    }
    if progress.is_empty() {
        out.push_str("- No tool steps in this part.\n");
    }
    out.push_str(&format!("\n{CONTEXT_FOR_SUFFIX}\n"));
    for line in &context {
        out.push_str(&format!("- {line}\n"));
    }
    if context.is_empty() {
        out.push_str("- Nothing pending from this part.\n");
    }
    cap_bytes(out.trim_end(), budget)
}

/// `short_summary`: two or three first-person sentences about the work.
pub(crate) fn short_summary(input: &SummaryInput) -> String {
    let facts = Facts::read(&input.messages);
    let previous = input.previous_summary.as_deref().map(Doc::parse);
    // Doc::parse reads a split turn's original request as a goal too.
    let goal = previous
        .as_ref()
        .and_then(|doc| doc.goal.first().cloned())
        .or_else(|| facts.goals().first().cloned());
    let mut changed: Vec<String> = previous
        .as_ref()
        .map(|doc| doc.modified.clone())
        .unwrap_or_default();
    for file in &facts.modified {
        push_unique(&mut changed, file.clone());
    }
    let mut sentences = Vec::new();
    match &goal {
        Some(goal) => {
            let goal = one_line(goal, MAX_ITEM_CHARS);
            let goal = ending_a_sentence(goal.trim_end_matches('.').to_owned());
            sentences.push(format!("I worked on: {goal}"));
        }
        None => sentences.push("I continued the session's work.".to_owned()),
    }
    if !changed.is_empty() {
        let shown: Vec<String> = changed.iter().rev().take(4).map(|f| code(f)).collect();
        let more = changed.len().saturating_sub(shown.len());
        let mut sentence = format!("I changed {}", shown.join(", "));
        if more > 0 {
            sentence.push_str(&format!(" and {more} other files"));
        }
        sentence.push('.');
        sentences.push(sentence);
    }
    if let Some(failure) = facts.unresolved().last() {
        sentences.push(format!(
            "{} still fails{}.",
            code(&failure.text),
            failure
                .error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        ));
    } else if let Some(fix) = facts.fixes().last() {
        sentences.push(format!("I got {} passing again.", code(&fix.text)));
    }
    let text = sentences.join(" ");
    cap_bytes(
        &format!("{text} (offline summary)"),
        bytes_for(input.max_output_tokens),
    )
}

fn finish(mut doc: Doc, input: &SummaryInput) -> String {
    push_unique(&mut doc.notes, OFFLINE_NOTICE.to_owned());
    for context in input
        .additional_context
        .iter()
        .filter(|c| !c.trim().is_empty())
    {
        push_unique(
            &mut doc.notes,
            format!("Context given: {}", one_line(context, MAX_ITEM_CHARS)),
        );
    }
    if let Some(focus) = input.focus.as_deref().filter(|f| !f.trim().is_empty()) {
        push_unique(
            &mut doc.notes,
            format!("Focus requested: {}", one_line(focus, MAX_ITEM_CHARS)),
        );
    }
    doc.render(input.max_output_tokens)
}

fn bytes_for(tokens: u32) -> usize {
    usize::try_from(tokens)
        .unwrap_or(usize::MAX)
        .saturating_mul(BYTES_PER_OUTPUT_TOKEN)
}

fn cap_bytes(text: &str, bytes: usize) -> String {
    if text.len() <= bytes {
        return text.to_owned();
    }
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or_default().to_owned()
}

/// How many of the newest items fit `bytes`.
fn fitting_tail(items: &[String], bytes: usize) -> usize {
    let mut used = 0;
    items
        .iter()
        .rev()
        .take_while(|item| {
            used += item.len() + 3;
            used <= bytes
        })
        .count()
}

fn spans(items: &[String]) -> String {
    items.iter().map(|i| code(i)).collect::<Vec<_>>().join(", ")
}

fn paragraph_after(text: &str, header: &str) -> Option<String> {
    let mut lines = text.lines().skip_while(|line| line.trim_end() != header);
    lines.next()?;
    let body: Vec<&str> = lines
        .take_while(|line| !line.starts_with('#'))
        .skip_while(|line| line.trim().is_empty())
        .take_while(|line| !line.trim().is_empty())
        .collect();
    (!body.is_empty()).then(|| body.join("\n"))
}

fn quote_request(request: &str) -> String {
    truncate_tool_result(request.trim(), MAX_QUESTION_CHARS).into_owned()
}

/// One command and how it ended.
#[derive(Debug, Clone)]
struct Ran {
    text: String,
    /// The command on one line: runs of the same text are runs of the same check. (Coarser
    /// keys would let `cargo test -p a b` passing "fix" `cargo test -p a c` failing.)
    key: String,
    /// The program, for telling checks and searches apart.
    program: String,
    status: CommandStatus,
    error: Option<String>,
}

impl Ran {
    fn open_item(&self) -> String {
        match &self.error {
            Some(error) => format!("{} fails: {error}", code(&self.text)),
            None => format!("{} fails", code(&self.text)),
        }
    }

    fn exit_label(&self) -> String {
        match self.status {
            CommandStatus::Failed(Some(code)) => format!("{} (exit {code})", self.text),
            _ => self.text.clone(),
        }
    }

    fn is_check(&self) -> bool {
        const CHECKERS: [&str; 24] = [
            "cargo",
            "npm",
            "pnpm",
            "yarn",
            "bun",
            "npx",
            "go",
            "pytest",
            "python",
            "python3",
            "make",
            "just",
            "tox",
            "nox",
            "mvn",
            "gradle",
            "./gradlew",
            "dotnet",
            "ruff",
            "mypy",
            "eslint",
            "tsc",
            "jest",
            "vitest",
        ];
        !is_inspection(&self.text) && CHECKERS.contains(&self.program.as_str())
    }
}

/// What one window's messages show.
#[derive(Debug, Default)]
struct Facts {
    requests: Vec<String>,
    preferences: Vec<String>,
    /// The user's corrections of the agent (`No, use X instead`), as rules.
    corrections: Vec<String>,
    /// Questions the conversation went past: another user message came before any reply.
    passed_over: Vec<String>,
    /// Whether the window opens with an assistant reply (true) or a user message (false).
    opened_with_reply: Option<bool>,
    /// The assistant's text replies, in order.
    replies: Vec<String>,
    commands: Vec<Ran>,
    changes: Vec<Vec<String>>,
    failed_changes: Vec<String>,
    modified: Vec<String>,
    read: Vec<String>,
    decisions: Vec<String>,
    last_assistant: Option<String>,
    pending_question: Option<String>,
    errors: Vec<String>,
}

/// What a tool call was, for pairing it with its result.
enum Call {
    Command(usize),
    Change(Vec<String>),
}

impl Facts {
    fn read(messages: &[ConversationMessage]) -> Facts {
        let mut facts = Facts::default();
        // Each call with its place in the window: calls left without a result are read in
        // the order they were made, so the same window always gives the same summary.
        let mut calls: HashMap<String, (usize, Call)> = HashMap::new();
        let mut calls_made = 0;
        let mut files = FileOps::default();
        for message in messages {
            match message {
                ConversationMessage::User { text } => {
                    let cleaned = memory_transcript::injected::strip_injected(text);
                    if cleaned.trim().is_empty() {
                        continue;
                    }
                    for rule in read_user_message(&cleaned).preferences {
                        push_unique(&mut facts.preferences, rule);
                    }
                    match correction(&cleaned) {
                        Some(rule) => {
                            // The correction says it already; the same words as a rule repeat it.
                            let body = comparable(rule.trim_start_matches("Correction: "));
                            facts.preferences.retain(|known| comparable(known) != body);
                            push_unique(&mut facts.corrections, rule);
                        }
                        None => {
                            for rule in number_rules(&cleaned) {
                                push_unique(&mut facts.preferences, rule);
                            }
                        }
                    }
                    if let Some(previous) = facts.pending_question.take()
                        && is_question(&previous)
                    {
                        push_unique(&mut facts.passed_over, quote_request(&previous));
                    }
                    for decision in user_decisions(&cleaned) {
                        push_unique(&mut facts.decisions, decision);
                    }
                    facts.opened_with_reply.get_or_insert(false);
                    facts.pending_question = Some(cleaned.trim().to_owned());
                    facts.requests.push(cleaned);
                }
                ConversationMessage::Assistant { content } => {
                    for block in content {
                        match block {
                            AssistantBlock::Text { text } if !text.trim().is_empty() => {
                                facts.pending_question = None;
                                facts.opened_with_reply.get_or_insert(true);
                                facts
                                    .passed_over
                                    .retain(|question| !answers(text, question));
                                facts.replies.push(text.clone());
                                for decision in decisions(text) {
                                    push_unique(&mut facts.decisions, decision);
                                }
                                facts.last_assistant = Some(text.clone());
                            }
                            AssistantBlock::ToolCall {
                                id,
                                name,
                                arguments,
                            } => {
                                files.scan_call(name, arguments);
                                if let Some(call) = facts.call(name, arguments) {
                                    calls.insert(id.clone(), (calls_made, call));
                                    calls_made += 1;
                                }
                            }
                            AssistantBlock::Text { .. } | AssistantBlock::Thinking { .. } => {}
                        }
                    }
                }
                ConversationMessage::ToolResult {
                    tool_call_id,
                    text,
                    is_error,
                    ..
                } => {
                    if let Some((_, call)) = calls.remove(tool_call_id) {
                        facts.finish(call, text, *is_error);
                    }
                }
                ConversationMessage::ShellExecution {
                    command,
                    output,
                    exit_code,
                } => {
                    let index = facts.start_command(command);
                    let code = exit_code.map(i64::from);
                    facts.end_command(index, code, output, false);
                }
            }
        }
        // A change whose result is not in this window most likely applied.
        let mut unanswered: Vec<(usize, Call)> = calls.into_values().collect();
        unanswered.sort_by_key(|(made, _)| *made);
        for (_, call) in unanswered {
            if let Call::Change(paths) = call {
                facts.changes.push(paths);
            }
        }
        facts.modified = files.modified();
        facts.read = files.read();
        facts
    }

    fn call(&mut self, name: &str, arguments: &Value) -> Option<Call> {
        let tool = name.rsplit(['.', '/', ':']).next().unwrap_or(name);
        let mut ops = FileOps::default();
        ops.scan_call(name, arguments);
        let changed = ops.modified();
        if tool != "apply_patch"
            && let Some(command) = command_from_args(arguments)
        {
            if command.contains("*** Begin Patch") {
                return (!changed.is_empty()).then_some(Call::Change(changed));
            }
            return Some(Call::Command(self.start_command(&command)));
        }
        (!changed.is_empty()).then_some(Call::Change(changed))
    }

    fn start_command(&mut self, command: &str) -> usize {
        let text = one_line(command, MAX_ITEM_CHARS);
        self.commands.push(Ran {
            key: text.clone(),
            program: last_key(&text).program,
            text,
            status: CommandStatus::Unknown,
            error: None,
        });
        self.commands.len() - 1
    }

    fn end_command(&mut self, index: usize, exit_code: Option<i64>, output: &str, is_error: bool) {
        let Some(ran) = self.commands.get_mut(index) else {
            return;
        };
        let exit_code = exit_code.or_else(|| exit_code_in_text(output));
        let mut status = match (exit_code, is_error) {
            (None, true) => CommandStatus::Failed(None),
            _ => run_status(exit_code, output),
        };
        // grep and rg exit with 1 when nothing matched: an answer, not a failure.
        if status == CommandStatus::Failed(Some(1)) && matches!(ran.program.as_str(), "rg" | "grep")
        {
            status = CommandStatus::Passed;
        }
        ran.status = status;
        if matches!(status, CommandStatus::Failed(_)) {
            ran.error = error_line(output);
            if let Some(error) = &ran.error {
                push_unique(&mut self.errors, error.clone());
            }
        }
    }

    fn finish(&mut self, call: Call, output: &str, is_error: bool) {
        match call {
            Call::Command(index) => self.end_command(index, None, output, is_error),
            Call::Change(paths) => {
                let lower = output.trim_start().to_ascii_lowercase();
                let failed = is_error
                    || exit_code_in_text(output).is_some_and(|code| code != 0)
                    || (!lower.starts_with("success")
                        && (lower.starts_with("error") || lower.contains("failed")));
                if failed {
                    let line = error_line(output).unwrap_or_else(|| "it did not apply".to_owned());
                    self.failed_changes
                        .push(format!("Change to {} failed: {line}", spans(&paths)));
                    push_unique(&mut self.errors, line);
                } else {
                    self.changes.push(paths);
                }
            }
        }
    }

    /// Requests that state work, one line each: not acknowledgements ("ok, go ahead") and not
    /// questions (a pending question is quoted under Critical Context instead). The sentences of
    /// a request that state a rule or a decision are left out (they have their own sections), so
    /// a request that opens with a rule still gives the work it asks for.
    fn goals(&self) -> Vec<String> {
        self.requests
            .iter()
            .map(|r| work_part(r))
            .map(|r| one_line(&r, MAX_ITEM_CHARS))
            .map(|r| without_acknowledgement(&r).to_owned())
            .filter(|r| word_count(r) >= MIN_GOAL_WORDS)
            .filter(|r| {
                let first = first_sentence_of(r);
                !opens_with_question(r)
                    && correction(r).is_none()
                    && !is_user_decision(first)
                    && number_rules(first).is_empty()
                    && read_user_message(first).preferences.is_empty()
            })
            .collect()
    }

    /// For each check, its runs in order.
    fn runs_by_key(&self) -> BTreeMap<&String, Vec<&Ran>> {
        let mut runs: BTreeMap<&String, Vec<&Ran>> = BTreeMap::new();
        for ran in &self.commands {
            if ran.status != CommandStatus::Unknown {
                runs.entry(&ran.key).or_default().push(ran);
            }
        }
        runs
    }

    /// The last failing run of each check whose last run failed.
    fn unresolved(&self) -> Vec<&Ran> {
        let mut out: Vec<&Ran> = self
            .runs_by_key()
            .into_values()
            .filter_map(|runs| runs.last().copied())
            .filter(|ran| matches!(ran.status, CommandStatus::Failed(_)))
            .collect();
        out.sort_by_key(|ran| self.position(ran));
        out
    }

    /// The passing run of each check that failed before and passes last.
    fn fixes(&self) -> Vec<&Ran> {
        let mut out: Vec<&Ran> = self
            .runs_by_key()
            .into_values()
            .filter(|runs| {
                runs.iter()
                    .any(|r| matches!(r.status, CommandStatus::Failed(_)))
                    && runs
                        .last()
                        .is_some_and(|r| r.status == CommandStatus::Passed)
            })
            .filter_map(|runs| runs.last().copied())
            .collect();
        out.sort_by_key(|ran| self.position(ran));
        out
    }

    fn position(&self, ran: &Ran) -> usize {
        self.commands
            .iter()
            .position(|r| std::ptr::eq(r, ran))
            .unwrap_or(usize::MAX)
    }

    /// Steps in order, one line each, for a turn prefix.
    fn progress_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for ran in &self.commands {
            let line = match ran.status {
                CommandStatus::Passed => format!("Ran {} (passed)", code(&ran.text)),
                CommandStatus::Failed(_) => ran.open_item(),
                CommandStatus::Unknown => format!("Ran {}", code(&ran.text)),
            };
            push_unique(&mut lines, line);
        }
        for change in &self.changes {
            push_unique(&mut lines, format!("Changed {}", spans(change)));
        }
        if !self.read.is_empty() {
            lines.push(format!("Read {}", spans(&self.read)));
        }
        lines
    }

    /// Merges the window's facts into `doc` (empty for a first summary).
    fn fill(&self, doc: &mut Doc) {
        for goal in self.goals() {
            push_unique(&mut doc.goal, goal);
        }
        for rule in self.preferences.iter().chain(&self.corrections) {
            push_unique(&mut doc.constraints, rule.clone());
        }

        // Failures fixed in this window move out of open work.
        let passing: Vec<&String> = self
            .runs_by_key()
            .into_iter()
            .filter(|(_, runs)| {
                runs.last()
                    .is_some_and(|r| r.status == CommandStatus::Passed)
            })
            .map(|(key, _)| key)
            .collect();
        let resolved = |item: &String| {
            backticked(item)
                .first()
                .is_some_and(|cmd| passing.contains(&&same_command(cmd)))
        };
        let reopened: Vec<String> = doc
            .in_progress
            .iter()
            .filter(|i| resolved(i))
            .cloned()
            .collect();
        doc.in_progress.retain(|item| !resolved(item));
        doc.blocked.retain(|item| !resolved(item));
        doc.next_steps.retain(|item| !resolved(item));
        doc.failed
            .retain(|cmd| !passing.contains(&&same_command(cmd)));
        let mut reopened_keys: Vec<String> = Vec::new();
        for item in reopened {
            if let Some(cmd) = backticked(&item).first() {
                reopened_keys.push(same_command(cmd));
                push_unique(
                    &mut doc.done,
                    format!("{} passes now (it was failing)", code(cmd)),
                );
            }
        }

        for fix in self.fixes() {
            let before = self
                .commands
                .iter()
                .filter(|r| r.key == fix.key)
                .filter_map(|r| r.error.clone())
                .next_back();
            let mut item = format!("{} passes after failing", code(&fix.text));
            if let Some(error) = before {
                item.push_str(&format!(" (was: {error})"));
            }
            push_unique(&mut doc.done, item);
        }
        let mut reported: Vec<&String> = self.fixes().iter().map(|fix| &fix.key).collect();
        reported.extend(
            passing
                .iter()
                .filter(|key| reopened_keys.iter().any(|reopened| reopened == **key)),
        );
        let mut checks: Vec<&Ran> = Vec::new();
        for ran in self.commands.iter().filter(|r| {
            r.status == CommandStatus::Passed && r.is_check() && !reported.contains(&&r.key)
        }) {
            if !checks.iter().any(|seen| seen.key == ran.key) {
                checks.push(ran);
            }
        }
        // A window's routine passes are one item, so a long stretch of steady work does not
        // push what matters out of Done.
        match checks.as_slice() {
            [] => {}
            [first] => push_unique(&mut doc.done, format!("{} passed", code(&first.text))),
            [first, second] => {
                push_unique(&mut doc.done, format!("{} passed", code(&first.text)));
                push_unique(&mut doc.done, format!("{} passed", code(&second.text)));
            }
            _ => {
                // Only the newest window's routine passes are listed; earlier ones are counted.
                let before = doc.done.len();
                doc.done.retain(|item| !item.ends_with(ROUTINE_CHECKS));
                doc.folded_done += before - doc.done.len();
                push_unique(&mut doc.done, format!("{}{ROUTINE_CHECKS}", checks.len()));
            }
        }
        // Many changes are listed once, under Files modified (folded into folders there as
        // the list grows), not again as Done items.
        if self.changes.len() <= 3 {
            for change in &self.changes {
                let mut shown: Vec<String> = change.iter().take(6).cloned().collect();
                if change.len() > shown.len() {
                    shown.push(format!("{} more", change.len() - shown.len()));
                }
                push_unique(&mut doc.done, format!("Changed {}", spans(&shown)));
            }
        }

        // Failures at the end of each check's runs, after its last pass.
        let failures: BTreeMap<&String, usize> = self
            .runs_by_key()
            .into_iter()
            .map(|(key, runs)| {
                let trailing = runs
                    .iter()
                    .rev()
                    .take_while(|r| matches!(r.status, CommandStatus::Failed(_)))
                    .count();
                (key, trailing)
            })
            .collect();
        for failure in self.unresolved() {
            let runs = failures.get(&failure.key).copied().unwrap_or(1);
            if runs >= BLOCKED_AFTER_FAILURES {
                push_unique(
                    &mut doc.blocked,
                    format!("{} failed {runs} times in a row", failure.open_item()),
                );
            } else {
                push_unique(&mut doc.in_progress, failure.open_item());
            }
        }
        for failed in &self.failed_changes {
            push_unique(&mut doc.in_progress, failed.clone());
        }

        for decision in &self.decisions {
            push_unique(&mut doc.decisions, decision.clone());
        }

        let mut next: Vec<String> = Vec::new();
        for failure in self.unresolved().iter().take(5) {
            let step = match &failure.error {
                Some(error) => format!("Fix {}: {error}", code(&failure.text)),
                None => format!("Fix {}", code(&failure.text)),
            };
            push_unique(&mut next, step);
        }
        if self.pending_question.is_some() {
            push_unique(&mut next, ANSWER_PENDING.to_owned());
        }
        if let Some(last) = &self.last_assistant {
            for step in stated_plan(last) {
                push_unique(&mut next, step);
            }
        }
        let progressed =
            !self.requests.is_empty() || !self.commands.is_empty() || !self.changes.is_empty();
        if next.is_empty()
            && progressed
            && let Some(goal) = self.goals().last().or(doc.goal.last())
        {
            // The newest goal line is right above; naming it again would only repeat it.
            if doc.goal.last() == Some(goal) && doc.goal.len() > 1 {
                next.push(CONTINUE_LATEST.to_owned());
            } else {
                next.push(format!("Continue with: {goal}"));
            }
        }
        if !next.is_empty() || progressed {
            // A window with work in it says where things stand; earlier next steps are stale.
            doc.next_steps = next;
        }

        // The previous summary's pending question: answered when the window opens with a
        // reply, passed over (and carried until a reply takes it up) when it opens with
        // another user message.
        if self.opened_with_reply == Some(false)
            && let Some(previous) = doc.pending_question.take()
            && is_question(&previous)
        {
            push_unique(&mut doc.unanswered, previous);
        }
        doc.unanswered
            .retain(|question| !self.replies.iter().any(|reply| answers(reply, question)));
        for question in &self.passed_over {
            push_unique(&mut doc.unanswered, question.clone());
        }
        match &self.pending_question {
            Some(question) => doc.pending_question = Some(quote_request(question)),
            None if self.last_assistant.is_some() => doc.pending_question = None,
            None => {}
        }
        if doc.pending_question.is_none() && doc.unanswered.is_empty() {
            doc.next_steps.retain(|step| step != ANSWER_PENDING);
        } else if !doc.next_steps.iter().any(|step| step == ANSWER_PENDING) {
            doc.next_steps.push(ANSWER_PENDING.to_owned());
        }
        for error in &self.errors {
            push_recent(&mut doc.errors, error.clone());
        }
        for file in &self.modified {
            push_recent(&mut doc.modified, file.clone());
            doc.read.retain(|read| read != file);
        }
        for file in &self.read {
            if !doc.modified.contains(file) {
                push_recent(&mut doc.read, file.clone());
            }
        }
        for ran in &self.commands {
            match ran.status {
                CommandStatus::Failed(_) => {
                    doc.passed.retain(|cmd| same_command(cmd) != ran.key);
                    push_recent(&mut doc.failed, ran.exit_label());
                }
                CommandStatus::Passed => {
                    doc.failed.retain(|cmd| {
                        same_command(cmd.split(" (exit").next().unwrap_or(cmd)) != ran.key
                    });
                    push_recent(&mut doc.passed, ran.text.clone());
                }
                CommandStatus::Unknown => {}
            }
        }
    }
}

/// The text without a leading acknowledgement sentence of one or two words ("Great.",
/// "Thanks!", "Ok,").
fn without_acknowledgement(text: &str) -> &str {
    let first = first_sentence_of(text);
    if word_count(first) <= 2 && first.len() < text.trim().len() {
        return text
            .trim_start()
            .get(first.len()..)
            .unwrap_or(text)
            .trim_start_matches(['.', '!', ',', ' '])
            .trim_start();
    }
    text
}

/// The first sentence of `text`, through its end mark.
fn first_sentence_of(text: &str) -> &str {
    let text = text.trim_start();
    let mut chars = text.char_indices().peekable();
    while let Some((at, ch)) = chars.next() {
        // The full-width marks of the scripts written without spaces end a sentence (or a
        // clause) with no space after them.
        if matches!(ch, '。' | '？' | '！' | '，')
            || matches!(ch, '.' | '?' | '!' | ',')
                && chars.peek().is_none_or(|(_, next)| next.is_whitespace())
        {
            return text.get(..at + ch.len_utf8()).unwrap_or(text);
        }
    }
    text
}

/// True when the text's first sentence is a question.
fn opens_with_question(text: &str) -> bool {
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        if matches!(ch, '。' | '？' | '！')
            || matches!(ch, '.' | '?' | '!') && chars.peek().is_none_or(|next| next.is_whitespace())
        {
            return matches!(ch, '?' | '？');
        }
    }
    false
}

/// Phrases that open a correction of the agent's work or plan.
const CORRECTION_CUES: [&str; 9] = [
    "no,",
    "no.",
    "no!",
    "nope",
    "that's wrong",
    "that is wrong",
    "that's not right",
    "not like that",
    "actually,",
];

/// Words that make a sentence with a number a requirement (`must stay at 250`).
const REQUIREMENT_WORDS: [&str; 12] = [
    "must",
    "should",
    "has to",
    "have to",
    "needs to",
    "need to",
    "at most",
    "at least",
    "no more than",
    "never",
    "always",
    "limit",
];

/// A user message that corrects the agent, as a rule: `Correction: ` and what follows the
/// cues (`No, that is wrong: use X instead` gives `Correction: use X instead.`).
fn correction(text: &str) -> Option<String> {
    let mut body = text.trim();
    let mut corrected = false;
    loop {
        let lower = body.to_lowercase();
        let Some(cue) = CORRECTION_CUES.iter().find(|cue| lower.starts_with(**cue)) else {
            break;
        };
        corrected = true;
        body = body
            .get(cue.len()..)
            .unwrap_or_default()
            .trim_start_matches([',', '.', ':', ';', '!', '-', ' ']);
    }
    if !corrected || word_count(body) < MIN_GOAL_WORDS {
        return None;
    }
    let rule = ending_a_sentence(one_line(body, MAX_ITEM_CHARS));
    Some(format!("Correction: {rule}"))
}

/// Sentences of a user message that set a number the work must respect (`The limit must stay
/// at 250 requests per minute`), one line each.
fn number_rules(text: &str) -> Vec<String> {
    sentences(text)
        .filter(|sentence| !sentence.ends_with('?'))
        .filter(|sentence| sentence.chars().any(|c| c.is_ascii_digit()))
        .filter(|sentence| {
            let lower = format!(" {} ", sentence.to_lowercase());
            REQUIREMENT_WORDS
                .iter()
                .any(|word| lower.contains(&format!(" {word} ")))
        })
        .map(|sentence| ending_a_sentence(one_line(sentence, MAX_ITEM_CHARS)))
        .collect()
}

/// True when the message asks something: its text ends with, or its first sentence is, a
/// question.
fn is_question(text: &str) -> bool {
    text.trim_end().ends_with('?') || opens_with_question(text)
}

/// True when a reply takes up a question: it shares at least half of the question's content
/// words.
fn answers(reply: &str, question: &str) -> bool {
    let asked: Vec<String> = content_words(question);
    if asked.is_empty() {
        return false;
    }
    let said = content_words(reply);
    let shared = asked.iter().filter(|word| said.contains(word)).count();
    shared * 2 >= asked.len()
}

/// A command as listed in a summary (in backticks, on one line), as a run's key.
fn same_command(listed: &str) -> String {
    one_line(listed, MAX_ITEM_CHARS)
}

/// Moves `value` to the end of `list` (the most recent position), adding it if missing.
fn push_recent(list: &mut Vec<String>, value: String) {
    let key = comparable(&value);
    list.retain(|item| comparable(item) != key);
    list.push(value);
}

/// Sentences of assistant text that record a choice and its reason.
fn decisions(text: &str) -> Vec<String> {
    const MARKERS: [&str; 9] = [
        "instead of",
        "rather than",
        "decided",
        "i chose",
        "choose to",
        "going with",
        "opted",
        " because ",
        "so that",
    ];
    sentences(text)
        .filter(|sentence| {
            let lower = sentence.to_lowercase();
            !sentence.ends_with('?') && MARKERS.iter().any(|m| lower.contains(m))
        })
        .map(|sentence| one_line(sentence, MAX_ITEM_CHARS))
        .collect()
}

/// Openings with which a user records a decision already taken (not a request to act).
const USER_DECISION_OPENINGS: [&str; 6] = [
    "we decided",
    "we have decided",
    "we chose",
    "we agreed",
    "we're going with",
    "decision:",
];

/// Sentences of a user message that record a decision already taken ("We decided to keep X
/// because Y"): Decisions, not the goal.
fn user_decisions(text: &str) -> Vec<String> {
    sentences(text)
        .filter(|sentence| is_user_decision(sentence))
        .map(|sentence| one_line(sentence, MAX_ITEM_CHARS))
        .collect()
}

fn is_user_decision(sentence: &str) -> bool {
    let lower = sentence.to_lowercase();
    USER_DECISION_OPENINGS
        .iter()
        .any(|opening| lower.starts_with(opening))
}

/// A request without its sentences that state a standing rule, a number to respect or a
/// decision already taken; the request as it is when none does, or when nothing else is left.
fn work_part(request: &str) -> String {
    let all: Vec<&str> = sentences(request).collect();
    let work: Vec<&str> = all
        .iter()
        .copied()
        .filter(|sentence| {
            !is_user_decision(sentence)
                && number_rules(sentence).is_empty()
                && read_user_message(sentence).preferences.is_empty()
        })
        .collect();
    if work.len() == all.len() || work.is_empty() {
        return request.to_owned();
    }
    work.iter()
        .map(|sentence| ending_a_sentence(sentence.trim_end_matches('.').to_owned()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Sentences of the assistant's last text that say what it will do next.
fn stated_plan(text: &str) -> Vec<String> {
    const LEADS: [&str; 9] = [
        "next",
        "then ",
        "i'll ",
        "i will ",
        "now i",
        "let me ",
        "remaining",
        "todo",
        "still need",
    ];
    sentences(text)
        .filter(|sentence| {
            let lower = sentence.to_lowercase();
            LEADS.iter().any(|lead| lower.starts_with(lead))
        })
        .take(3)
        .map(|sentence| one_line(sentence, MAX_ITEM_CHARS))
        .collect()
}

fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split(['\n', '!'])
        .flat_map(|line| line.split(". "))
        // The full-width marks end a sentence with no space after them, and stay with it.
        .flat_map(|part| part.split_inclusive(['。', '！']))
        .map(|s| s.trim().trim_start_matches(['-', '*', '>', ' ']).trim())
        .filter(|s| s.chars().count() >= 12 || word_count(s) >= MIN_GOAL_WORDS)
}
