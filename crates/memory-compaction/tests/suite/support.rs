//! Builders for sessions and scripted summarizers.

use std::sync::Mutex;

use async_trait::async_trait;
use memory_compaction::compaction::Session;
use memory_protocol::compaction::{
    AssistantBlock, ConversationEntry, ConversationMessage, SessionEntry, SummaryInput,
};
use memory_protocol::{ModelClient, ModelError, ModelRequest, ModelResponse};
use serde_json::{Value, json};

pub(super) fn user(text: &str) -> ConversationMessage {
    ConversationMessage::user(text)
}

pub(super) fn say(text: &str) -> ConversationMessage {
    ConversationMessage::assistant_text(text)
}

pub(super) fn think(text: &str) -> AssistantBlock {
    AssistantBlock::Thinking {
        thinking: text.to_owned(),
    }
}

pub(super) fn call(id: &str, name: &str, arguments: Value) -> ConversationMessage {
    ConversationMessage::tool_call(id, name, arguments)
}

pub(super) fn result(id: &str, text: &str) -> ConversationMessage {
    ConversationMessage::tool_result(id, "exec_command", text, false)
}

pub(super) fn shell_call(id: &str, cmd: &str) -> ConversationMessage {
    call(id, "exec_command", json!({ "cmd": cmd }))
}

/// A session of these messages, with ids `m1`, `m2`, ...
pub(super) fn session(messages: Vec<ConversationMessage>) -> Session {
    Session::new(
        messages
            .into_iter()
            .enumerate()
            .map(|(i, message)| {
                SessionEntry::Message(ConversationEntry {
                    id: format!("m{}", i + 1),
                    message,
                })
            })
            .collect(),
    )
    .unwrap()
}

/// Appends messages with ids continuing after the session's entries.
pub(super) fn extend(session: &mut Session, messages: Vec<ConversationMessage>) {
    for message in messages {
        let id = session.fresh_id("m");
        session
            .push_message(ConversationEntry { id, message })
            .unwrap();
    }
}

/// `turns` turns of a request, a tool call, a result of about `result_bytes` bytes and a reply.
pub(super) fn turns(turns: usize, result_bytes: usize) -> Vec<ConversationMessage> {
    let mut out = Vec::new();
    for t in 0..turns {
        out.push(user(&format!("request {t}: look at module {t}")));
        out.push(shell_call(&format!("t{t}"), &format!("cat src/m{t}.rs")));
        let body: String = format!("line {t} ").repeat(result_bytes / 8 + 1);
        out.push(result(&format!("t{t}"), &body));
        out.push(say(&format!("module {t} looks fine")));
    }
    out
}

/// `n` exchanges of a long request (about `tokens` tokens) and a short reply: a cut always
/// lands on a request, so no turn is split.
pub(super) fn chat(n: usize, tokens: usize) -> Vec<ConversationMessage> {
    let mut out = Vec::new();
    for t in 0..n {
        out.push(user(&format!(
            "request {t}: {}",
            "word ".repeat(tokens * 4 / 5)
        )));
        out.push(say(&format!("reply {t}")));
    }
    out
}

/// A summarizer that answers from a script and records every request.
pub(super) struct Scripted<F> {
    answer: F,
    pub(super) requests: Mutex<Vec<ModelRequest>>,
    pub(super) window: Option<u64>,
}

impl<F> Scripted<F>
where
    F: Fn(usize, &ModelRequest) -> Result<String, ModelError> + Send + Sync,
{
    pub(super) fn new(answer: F) -> Self {
        Scripted {
            answer,
            requests: Mutex::new(Vec::new()),
            window: None,
        }
    }

    pub(super) fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().unwrap().clone()
    }
}

#[async_trait]
impl<F> ModelClient for Scripted<F>
where
    F: Fn(usize, &ModelRequest) -> Result<String, ModelError> + Send + Sync,
{
    fn name(&self) -> String {
        "scripted".to_owned()
    }

    fn context_window(&self) -> Option<u64> {
        self.window
    }

    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let call = {
            let mut requests = self.requests.lock().unwrap();
            requests.push(request.clone());
            requests.len()
        };
        (self.answer)(call, &request).map(|text| ModelResponse { text, usage: None })
    }
}

/// A summarizer that writes `summary N` for the N-th call, in the hand-off format.
pub(super) fn numbered() -> Scripted<impl Fn(usize, &ModelRequest) -> Result<String, ModelError>> {
    Scripted::new(|call, _| Ok(format!("## Goal\n- summary {call}")))
}

/// The structured input of a request.
pub(super) fn input_of(request: &ModelRequest) -> SummaryInput {
    serde_json::from_value(request.structured_input.clone()).unwrap()
}
