//! A transcript's timeline: user and assistant messages, command runs with how they ended,
//! patches and web searches, in order, with every tool call paired with its output. A file
//! tool's change (Claude Code's `Edit`, `Write`, `MultiEdit`) counts as a patch: the files
//! come from [`memory_transcript::file_ops`], the rule every reader of tool calls shares.

use std::collections::BTreeMap;

use memory_protocol::rollout::{ContentItem, ResponseItem, ToolOutput};
use memory_transcript::file_ops::FileOps;
use memory_transcript::strip_injected;
use serde_json::Value;

use super::patches::{
    ChangeKind, FileChange, SmallEdit, is_patch, patch_changes, replacement_edit, small_edit,
};
use super::text::{MAX_LINE_CHARS, one_line};
use super::tool_output::{RunStatus, error_line, exit_code_and_text, run_status};
use memory_transcript::shell::{CommandLine, command_from_args, command_from_argv};

/// One command run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Run {
    /// The command line, on one line.
    pub text: String,
    /// The parsed command line.
    pub line: CommandLine,
    /// The folder the tool call named (`workdir`), when it named one.
    pub workdir: Option<String>,
    /// How it ended.
    pub status: RunStatus,
    /// The most telling error line, when it failed.
    pub error: Option<String>,
}

/// One patch that applied.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Patch {
    /// The files it touched.
    pub changes: Vec<FileChange>,
    /// The exact change, when it is small.
    pub edit: Option<SmallEdit>,
}

/// One event of the timeline.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Event {
    /// A user message, injected blocks removed (never empty).
    User(String),
    /// An assistant message; `final_answer` when the session marked it so.
    Assistant { text: String, final_answer: bool },
    /// A command run (index into [`Transcript::runs`]).
    Run(usize),
    /// A patch that applied (index into [`Transcript::patches`]).
    Patch(usize),
    /// A patch that failed, with its error line.
    FailedPatch(String),
    /// A web search, with its query.
    Search(String),
}

/// The timeline of one transcript.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Transcript {
    /// Everything, in order.
    pub events: Vec<Event>,
    /// The command runs.
    pub runs: Vec<Run>,
    /// The patches that applied.
    pub patches: Vec<Patch>,
}

/// What a tool call is, for pairing it with its output.
enum Pending {
    Run(usize),
    Patch(String),
    /// A file tool's call: what it changes once it succeeds.
    FileEdit(Patch),
}

impl Transcript {
    /// Reads the timeline from filtered response items.
    pub(crate) fn read(items: &[ResponseItem]) -> Transcript {
        let mut transcript = Transcript::default();
        let mut pending: BTreeMap<String, Pending> = BTreeMap::new();
        for item in items {
            match item {
                ResponseItem::Message(message) => {
                    let text = message_text(&message.content);
                    match message.role.as_str() {
                        "user" => {
                            let cleaned = strip_injected(&text);
                            if !cleaned.trim().is_empty() {
                                transcript
                                    .events
                                    .push(Event::User(cleaned.trim().to_owned()));
                            }
                        }
                        "assistant" if !text.trim().is_empty() => {
                            transcript.events.push(Event::Assistant {
                                text,
                                final_answer: message.phase.as_deref() == Some("final_answer"),
                            });
                        }
                        _ => {}
                    }
                }
                ResponseItem::FunctionCall(call) => {
                    let args: Option<Value> = serde_json::from_str(&call.arguments).ok();
                    let command = args.as_ref().and_then(command_from_args);
                    let patch_text = match &args {
                        Some(args) => args
                            .get("input")
                            .or(args.get("patch"))
                            .and_then(Value::as_str)
                            .or(command.as_deref()),
                        None => Some(call.arguments.as_str()),
                    };
                    let workdir = args
                        .as_ref()
                        .and_then(|a| a.get("workdir").or(a.get("cwd")))
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    match (patch_text, &command) {
                        (Some(patch), _) if call.name == "apply_patch" || is_patch(patch) => {
                            pending.insert(call.call_id.clone(), Pending::Patch(patch.to_owned()));
                        }
                        (_, Some(command)) => {
                            transcript.start_run(&mut pending, &call.call_id, command, workdir);
                        }
                        _ => {
                            if let Some(edit) = args
                                .as_ref()
                                .and_then(|args| file_tool_edit(&call.name, args))
                            {
                                pending.insert(call.call_id.clone(), Pending::FileEdit(edit));
                            }
                        }
                    }
                }
                ResponseItem::LocalShellCall(call) => {
                    let command = command_from_argv(&call.action.command);
                    let call_id = call.call_id.clone().or(call.id.clone()).unwrap_or_default();
                    if is_patch(&command) {
                        pending.insert(call_id, Pending::Patch(command));
                    } else if !command.trim().is_empty() {
                        let workdir = call.action.working_directory.clone();
                        transcript.start_run(&mut pending, &call_id, &command, workdir);
                    }
                }
                ResponseItem::CustomToolCall(call) => {
                    if call.name == "apply_patch" || is_patch(&call.input) {
                        pending.insert(call.call_id.clone(), Pending::Patch(call.input.clone()));
                    }
                }
                ResponseItem::FunctionCallOutput(output) => {
                    transcript.finish(&mut pending, &output.call_id, &output.output);
                }
                ResponseItem::CustomToolCallOutput(output) => {
                    transcript.finish(&mut pending, &output.call_id, &output.output);
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
                        transcript.events.push(Event::Search(query));
                    }
                }
                ResponseItem::Reasoning(_) | ResponseItem::Other(_) => {}
            }
        }
        // A patch whose output was never recorded most likely applied: codex records the call
        // before it runs, and a session can end before the output line is written.
        for call in std::mem::take(&mut pending).into_values() {
            match call {
                Pending::Patch(text) => transcript.apply_patch(&text),
                Pending::FileEdit(edit) => transcript.push_patch(edit),
                Pending::Run(_) => {}
            }
        }
        transcript
    }

    fn start_run(
        &mut self,
        pending: &mut BTreeMap<String, Pending>,
        call_id: &str,
        command: &str,
        workdir: Option<String>,
    ) {
        let index = self.runs.len();
        self.runs.push(Run {
            text: one_line(command, MAX_LINE_CHARS),
            line: CommandLine::parse(command),
            workdir,
            status: RunStatus::Unknown,
            error: None,
        });
        self.events.push(Event::Run(index));
        pending.insert(call_id.to_owned(), Pending::Run(index));
    }

    fn apply_patch(&mut self, text: &str) {
        let changes = patch_changes(text);
        if changes.is_empty() {
            return;
        }
        self.push_patch(Patch {
            changes,
            edit: small_edit(text),
        });
    }

    fn push_patch(&mut self, patch: Patch) {
        self.patches.push(patch);
        self.events.push(Event::Patch(self.patches.len() - 1));
    }

    fn finish(
        &mut self,
        pending: &mut BTreeMap<String, Pending>,
        call_id: &str,
        output: &ToolOutput,
    ) {
        let Some(call) = pending.remove(call_id) else {
            return;
        };
        let (exit_code, text) = exit_code_and_text(output);
        match call {
            Pending::Run(index) => {
                let Some(run) = self.runs.get_mut(index) else {
                    return;
                };
                let mut status = run_status(exit_code, &text);
                // grep and rg exit with 1 when nothing matched: an answer, not a failure.
                let program = run.line.checks().last().map(|s| s.program().to_owned());
                if status == RunStatus::Failed(Some(1))
                    && matches!(program.as_deref(), Some("rg" | "grep" | "egrep" | "fgrep"))
                {
                    status = RunStatus::Passed;
                }
                if matches!(status, RunStatus::Failed(_)) {
                    run.error = error_line(&text);
                }
                run.status = status;
            }
            Pending::Patch(patch) => match change_error(exit_code, &text) {
                Some(error) => self.events.push(Event::FailedPatch(error)),
                None => self.apply_patch(&patch),
            },
            Pending::FileEdit(edit) => match change_error(exit_code, &text) {
                Some(error) => self.events.push(Event::FailedPatch(error)),
                None => self.push_patch(edit),
            },
        }
    }
}

/// Why a change did not apply, when its output says it did not.
fn change_error(exit_code: Option<i64>, text: &str) -> Option<String> {
    let failed = matches!(exit_code, Some(code) if code != 0)
        || text.to_ascii_lowercase().contains("verification failed")
        || (exit_code.is_none() && matches!(run_status(None, text), RunStatus::Failed(_)));
    failed.then(|| error_line(text).unwrap_or_else(|| "the change did not apply".into()))
}

/// What a file tool's call changes, as a patch: the files [`FileOps`] reads as modified by it
/// (none for a read or an unknown tool), and the exact change of a small single replacement.
fn file_tool_edit(tool: &str, arguments: &Value) -> Option<Patch> {
    let mut ops = FileOps::default();
    ops.scan_call(tool, arguments);
    let kind = change_kind(tool);
    let changes: Vec<FileChange> = ops
        .modified()
        .into_iter()
        .map(|path| FileChange {
            path: one_line(&path, MAX_LINE_CHARS),
            kind,
        })
        .collect();
    let edit = match changes.as_slice() {
        [] => return None,
        [only] if kind == ChangeKind::Updated => replacement(&only.path, arguments),
        _ => None,
    };
    Some(Patch { changes, edit })
}

/// The small edit of a replacing call (`old_string` and `new_string`, or `old_str` and
/// `new_str`).
fn replacement(path: &str, arguments: &Value) -> Option<SmallEdit> {
    let text = |keys: [&str; 2]| keys.iter().find_map(|key| arguments.get(*key)?.as_str());
    replacement_edit(
        path,
        text(["old_string", "old_str"])?,
        text(["new_string", "new_str"])?,
    )
}

/// What a file tool does to the files it modifies, by its name (as [`FileOps`] reads it, the
/// last segment of a namespaced name).
fn change_kind(tool: &str) -> ChangeKind {
    let tool = tool.rsplit(['.', '/', ':']).next().unwrap_or(tool);
    match tool.to_ascii_lowercase().as_str() {
        "write" | "write_file" | "create_file" | "create" => ChangeKind::Written,
        "delete_file" => ChangeKind::Deleted,
        _ => ChangeKind::Updated,
    }
}

/// A message's text parts, joined by newlines.
fn message_text(content: &[ContentItem]) -> String {
    content
        .iter()
        .filter_map(ContentItem::text)
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

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
            item(
                serde_json::json!({"type": "custom_tool_call", "name": "apply_patch", "call_id": "3",
                "input": "*** Begin Patch\n*** Delete File: c.rs\n*** End Patch"}),
            ),
        ];
        let transcript = Transcript::read(&items);
        let changed: Vec<&str> = transcript
            .patches
            .iter()
            .flat_map(|p| p.changes.iter().map(|c| c.path.as_str()))
            .collect();
        assert_eq!(changed, ["a.rs", "c.rs"]);
        assert!(transcript.runs.is_empty());
        assert!(transcript.events.iter().any(
            |e| matches!(e, Event::FailedPatch(error) if error.contains("verification failed"))
        ));
    }

    #[test]
    fn user_text_loses_injected_blocks_and_grep_misses_pass() {
        let items = vec![
            item(
                serde_json::json!({"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "<environment_context><cwd>/x</cwd></environment_context>"}]}),
            ),
            item(
                serde_json::json!({"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "# Context from my IDE setup:\n## Active file: a.rs\n## My request for Codex:\nRename the field."}]}),
            ),
            item(
                serde_json::json!({"type": "function_call", "name": "exec_command", "call_id": "c",
                "arguments": "{\"cmd\":\"rg -n nothing\",\"workdir\":\"/x/y\"}"}),
            ),
            item(
                serde_json::json!({"type": "function_call_output", "call_id": "c", "output": "Process exited with code 1\nOutput:\n"}),
            ),
        ];
        let transcript = Transcript::read(&items);
        assert_eq!(
            transcript.events[0],
            Event::User("Rename the field.".into())
        );
        assert_eq!(transcript.runs[0].status, RunStatus::Passed);
        assert_eq!(transcript.runs[0].workdir.as_deref(), Some("/x/y"));
    }
}
