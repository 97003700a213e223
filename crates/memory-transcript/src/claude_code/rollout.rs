//! A transcript in the form the write path reads codex rollouts in.

use std::collections::BTreeMap;

use memory_protocol::rollout::{
    Compacted, ContentItem, FunctionCallItem, FunctionCallOutputItem, GitInfo, MessageItem,
    SessionSource, ToolOutput, UnknownRolloutItem,
};
use memory_protocol::{ResponseItem, RolloutItem, RolloutLine, SessionMeta};
use serde_json::{Map, Value};

use super::{AnswerBlock, Entry, ORIGINATOR, Transcript, UserOrigin};
use crate::filter::INTER_AGENT_ITEM_TYPE;
use crate::reader::RolloutRead;

/// Claude Code's name for the branch outside a git repository.
const NO_BRANCH: &str = "HEAD";

impl Transcript {
    /// The session as rollout lines: a `session_meta` (the session id, cwd, branch; source
    /// `cli`, or `subagent` for a subagent's file), the user's prompts, the answers (text as one
    /// assistant message, each tool call a `function_call`), tool results as
    /// `function_call_output`s (`{"content", "success"}`), compaction summaries as `compacted`
    /// lines. Injected context, bookkeeping and unknown lines have no item. A subagent's lines
    /// follow the result of the Agent call that started it (else the end), its prompt as a
    /// message between agents.
    pub fn to_rollout(&self) -> RolloutRead {
        let mut lines = vec![RolloutLine {
            timestamp: self.started_at.clone(),
            ordinal: None,
            metadata: None,
            item: RolloutItem::SessionMeta(self.session_meta()),
        }];
        let mut placed = vec![false; self.sidechains.len()];
        for entry in &self.entries {
            push_entry(&mut lines, entry);
            if let Entry::ToolResult(result) = entry
                && let Some(agent) = result
                    .structured
                    .as_ref()
                    .and_then(|s| s.get("agentId"))
                    .and_then(Value::as_str)
            {
                for (index, sidechain) in self.sidechains.iter().enumerate() {
                    if !placed[index] && sidechain.agent_id.as_deref() == Some(agent) {
                        placed[index] = true;
                        push_sidechain(&mut lines, sidechain);
                    }
                }
            }
        }
        for (index, sidechain) in self.sidechains.iter().enumerate() {
            if !placed[index] {
                push_sidechain(&mut lines, sidechain);
            }
        }
        RolloutRead {
            lines,
            diagnostics: self.diagnostics.clone(),
        }
    }

    /// The session's metadata as a codex `session_meta`.
    pub fn session_meta(&self) -> SessionMeta {
        let mut extra = BTreeMap::new();
        if let Some(entrypoint) = &self.entrypoint {
            extra.insert("entrypoint".to_owned(), Value::String(entrypoint.clone()));
        }
        if let Some(agent) = &self.agent_id {
            extra.insert("agent_id".to_owned(), Value::String(agent.clone()));
        }
        // A subagent's file carries its parent's session id: its own id keeps the two apart.
        let id = match (&self.session_id, &self.agent_id) {
            (Some(session), Some(agent)) => Some(format!("{session}/agent-{agent}")),
            (session, _) => session.clone(),
        };
        let source = if self.is_sidechain() {
            "subagent"
        } else {
            "cli"
        };
        SessionMeta {
            id,
            timestamp: self.started_at.clone(),
            cwd: self.cwd.clone(),
            originator: Some(ORIGINATOR.to_owned()),
            cli_version: self.version.clone(),
            source: Some(SessionSource::Named(source.to_owned())),
            git: self
                .git_branch
                .as_ref()
                .filter(|branch| branch.as_str() != NO_BRANCH)
                .map(|branch| GitInfo {
                    branch: Some(branch.clone()),
                    ..GitInfo::default()
                }),
            extra,
            ..SessionMeta::default()
        }
    }
}

fn push_sidechain(lines: &mut Vec<RolloutLine>, sidechain: &Transcript) {
    let mut entries = sidechain.entries.iter();
    // The first typed text of a subagent's file is the prompt its parent gave it.
    for entry in entries.by_ref() {
        if let Entry::User(user) = entry
            && user.origin == UserOrigin::Typed
        {
            let mut payload = Map::new();
            payload.insert("author".to_owned(), Value::String("parent".to_owned()));
            if let Some(agent) = &sidechain.agent_id {
                payload.insert("recipient".to_owned(), Value::String(agent.clone()));
            }
            payload.insert("content".to_owned(), Value::String(user.text.clone()));
            lines.push(line(
                user.timestamp.clone(),
                RolloutItem::Other(UnknownRolloutItem {
                    item_type: INTER_AGENT_ITEM_TYPE.to_owned(),
                    payload: Value::Object(payload),
                }),
            ));
            break;
        }
        push_entry(lines, entry);
    }
    for entry in entries {
        push_entry(lines, entry);
    }
}

fn push_entry(lines: &mut Vec<RolloutLine>, entry: &Entry) {
    match entry {
        Entry::User(user) if user.origin == UserOrigin::Typed && !user.text.trim().is_empty() => {
            lines.push(line(
                user.timestamp.clone(),
                RolloutItem::ResponseItem(ResponseItem::Message(MessageItem {
                    id: user.uuid.clone(),
                    role: "user".to_owned(),
                    content: vec![ContentItem::InputText {
                        text: user.text.clone(),
                    }],
                    phase: None,
                })),
            ));
        }
        Entry::Answer(answer) => {
            let mut text: Vec<&str> = Vec::new();
            let flush = |lines: &mut Vec<RolloutLine>, text: &mut Vec<&str>| {
                if text.is_empty() {
                    return;
                }
                lines.push(line(
                    answer.timestamp.clone(),
                    RolloutItem::ResponseItem(ResponseItem::Message(MessageItem {
                        id: answer.message_id.clone(),
                        role: "assistant".to_owned(),
                        content: vec![ContentItem::OutputText {
                            text: text.join("\n\n"),
                        }],
                        phase: None,
                    })),
                ));
                text.clear();
            };
            for block in &answer.blocks {
                match block {
                    AnswerBlock::Text(part) => text.push(part),
                    AnswerBlock::ToolUse(call) => {
                        flush(lines, &mut text);
                        lines.push(line(
                            answer.timestamp.clone(),
                            RolloutItem::ResponseItem(ResponseItem::FunctionCall(
                                FunctionCallItem {
                                    id: None,
                                    name: call.name.clone(),
                                    namespace: None,
                                    arguments: call.input.to_string(),
                                    call_id: call.id.clone(),
                                },
                            )),
                        ));
                    }
                }
            }
            flush(lines, &mut text);
        }
        Entry::ToolResult(result) => {
            let mut output = Map::new();
            output.insert("content".to_owned(), Value::String(result.content.clone()));
            output.insert("success".to_owned(), Value::Bool(!result.is_error));
            lines.push(line(
                result.timestamp.clone(),
                RolloutItem::ResponseItem(ResponseItem::FunctionCallOutput(
                    FunctionCallOutputItem {
                        id: None,
                        call_id: result.tool_use_id.clone(),
                        output: ToolOutput::Object(output),
                    },
                )),
            ));
        }
        Entry::CompactSummary { text, timestamp } => lines.push(line(
            timestamp.clone(),
            RolloutItem::Compacted(Compacted {
                message: text.clone(),
                extra: BTreeMap::new(),
            }),
        )),
        Entry::User(_)
        | Entry::CompactBoundary { .. }
        | Entry::Attachment { .. }
        | Entry::System { .. }
        | Entry::Bookkeeping { .. }
        | Entry::Unknown { .. } => {}
    }
}

fn line(timestamp: Option<String>, item: RolloutItem) -> RolloutLine {
    RolloutLine {
        timestamp,
        ordinal: None,
        metadata: None,
        item,
    }
}
