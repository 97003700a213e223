//! Running the model's tool calls: the shell, the memory tools and the goal tools.
//!
//! Each call answers with text for the conversation; a refused or failed call is an answer the
//! model reads (and can act on), never an error that stops the host.

use std::path::Path;
use std::process::Command;

use goal_steering::{GoalStore, GoalToolContext};
use memory_introspect::{Introspector, ToolOutcome};
use memory_sanitize::{DEFAULT_TOOL_RESULT_CHARS, redact_secrets, truncate_tool_result};
use serde_json::Value;

use crate::context::SHELL_TOOL;
use crate::model::ToolCall;

/// Where the tools act: the project folder, its memory and the thread's goal.
pub struct ToolBox<'a> {
    /// The working directory the shell runs in.
    pub cwd: &'a Path,
    /// The project's memory.
    pub memory: &'a Introspector,
    /// The goal store.
    pub goals: &'a mut GoalStore,
    /// The thread the calls belong to.
    pub thread_id: &'a str,
}

/// What a call came to.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolAnswer {
    /// The text the model receives: redacted, and cut to
    /// [`memory_sanitize::DEFAULT_TOOL_RESULT_CHARS`] keeping head and tail, as codex does, so
    /// no single output can fill the window.
    pub output: String,
    /// True for a goal tool (goal accounting counts the other calls).
    pub goal_tool: bool,
}

impl ToolBox<'_> {
    /// Runs `call`.
    pub fn run(&mut self, call: &ToolCall) -> ToolAnswer {
        let is_goal_tool = memory_protocol::tools::goal_tools()
            .iter()
            .any(|tool| tool.name == call.name);
        let output = if call.name == SHELL_TOOL {
            self.shell(&call.arguments)
        } else if is_goal_tool {
            let context = GoalToolContext::thread(self.thread_id);
            match self
                .goals
                .call_goal_tool(&context, &call.name, &call.arguments)
            {
                Ok(outcome) => outcome.to_json().to_string(),
                Err(error) => format!("the goal tool failed: {error}"),
            }
        } else {
            match self.memory.call_tool(&call.name, call.arguments.clone()) {
                Some(ToolOutcome::Ok(value)) => value.to_string(),
                Some(ToolOutcome::Failed(failure)) => {
                    serde_json::to_string(&failure).unwrap_or_else(|error| error.to_string())
                }
                None => format!("unknown tool {:?}", call.name),
            }
        };
        let output = redact_secrets(&output);
        ToolAnswer {
            output: truncate_tool_result(&output, DEFAULT_TOOL_RESULT_CHARS).into_owned(),
            goal_tool: is_goal_tool,
        }
    }

    /// `sh -c COMMAND` in the project folder: the exit code, then stdout and stderr.
    fn shell(&self, arguments: &Value) -> String {
        let Some(command) = arguments.get("command").and_then(Value::as_str) else {
            return "invalid arguments: `command` (a string) is required".to_owned();
        };
        match Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(self.cwd)
            .output()
        {
            Ok(output) => format!(
                "exit code: {}\n{}{}",
                output
                    .status
                    .code()
                    .map_or_else(|| "none (killed by a signal)".to_owned(), |c| c.to_string()),
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ),
            Err(error) => format!("the command could not start: {error}"),
        }
    }
}
