//! The session as a codex-format rollout, written as it goes.
//!
//! Every line is a `memory_protocol::RolloutLine` in the envelope form codex writes
//! (`{"timestamp", "type", "payload"}`), appended and flushed as soon as the host knows it, so
//! a host that dies mid-session leaves a readable rollout of everything up to that point. The
//! write path reads this file back with the same reader it uses for codex's own sessions.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use memory_protocol::rollout::{
    Compacted, FunctionCallItem, FunctionCallOutputItem, MessageItem, SessionSource, ToolOutput,
    TurnContext,
};
use memory_protocol::{ContentItem, ResponseItem, RolloutItem, RolloutLine, SessionMeta};

use crate::error::{HostError, Result};

/// An open rollout file.
#[derive(Debug)]
pub struct RolloutWriter {
    path: PathBuf,
    file: File,
}

impl RolloutWriter {
    /// Creates `path` (its folder too) and writes the `session_meta` line: the thread id, the
    /// working directory and an interactive source, which the write path requires before it
    /// extracts a session.
    pub fn create(path: &Path, thread_id: &str, cwd: &Path) -> Result<RolloutWriter> {
        let io = |error| HostError::Io {
            path: path.to_owned(),
            error,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        let mut writer = RolloutWriter {
            path: path.to_owned(),
            file,
        };
        writer.append(RolloutItem::SessionMeta(SessionMeta {
            id: Some(thread_id.to_owned()),
            timestamp: Some(now()),
            cwd: Some(cwd.to_string_lossy().into_owned()),
            originator: Some("reference_host".to_owned()),
            cli_version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            source: Some(SessionSource::Named("cli".to_owned())),
            ..SessionMeta::default()
        }))?;
        Ok(writer)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A `turn_context` line: the turn's working directory and model.
    pub fn turn_context(&mut self, cwd: &Path, model: &str) -> Result<()> {
        self.append(RolloutItem::TurnContext(TurnContext {
            cwd: Some(cwd.to_string_lossy().into_owned()),
            model: Some(model.to_owned()),
            ..TurnContext::default()
        }))
    }

    /// A user-side message (the user's words or hidden host context).
    pub fn user_message(&mut self, text: &str) -> Result<()> {
        self.message(
            "user",
            ContentItem::InputText {
                text: text.to_owned(),
            },
        )
    }

    /// An assistant message.
    pub fn assistant_message(&mut self, text: &str) -> Result<()> {
        self.message(
            "assistant",
            ContentItem::OutputText {
                text: text.to_owned(),
            },
        )
    }

    /// A `function_call` item.
    pub fn function_call(&mut self, call_id: &str, name: &str, arguments: &str) -> Result<()> {
        self.append(RolloutItem::ResponseItem(ResponseItem::FunctionCall(
            FunctionCallItem {
                id: None,
                name: name.to_owned(),
                namespace: None,
                arguments: arguments.to_owned(),
                call_id: call_id.to_owned(),
            },
        )))
    }

    /// A `function_call_output` item.
    pub fn function_output(&mut self, call_id: &str, output: &str) -> Result<()> {
        self.append(RolloutItem::ResponseItem(ResponseItem::FunctionCallOutput(
            FunctionCallOutputItem {
                id: None,
                call_id: call_id.to_owned(),
                output: ToolOutput::Text(output.to_owned()),
            },
        )))
    }

    /// A `compacted` line carrying the summary that replaced earlier history.
    pub fn compacted(&mut self, summary: &str) -> Result<()> {
        self.append(RolloutItem::Compacted(Compacted {
            message: summary.to_owned(),
            ..Compacted::default()
        }))
    }

    fn message(&mut self, role: &str, content: ContentItem) -> Result<()> {
        self.append(RolloutItem::ResponseItem(ResponseItem::Message(
            MessageItem {
                id: None,
                role: role.to_owned(),
                content: vec![content],
                phase: None,
            },
        )))
    }

    fn append(&mut self, item: RolloutItem) -> Result<()> {
        let line = RolloutLine {
            timestamp: Some(now()),
            ordinal: None,
            metadata: None,
            item,
        };
        let mut text =
            serde_json::to_string(&line).map_err(|error| HostError::Rollout(error.to_string()))?;
        text.push('\n');
        self.file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|error| HostError::Io {
                path: self.path.clone(),
                error,
            })
    }
}

/// Now, as codex writes it (RFC 3339, milliseconds, UTC).
fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}
