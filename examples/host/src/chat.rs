//! The conversation model on an OpenAI-compatible server: one Chat Completions request per
//! step, the host's tools offered as function tools.
//!
//! The library crates' own model calls (compaction summaries, extraction, consolidation) go
//! through `memory_protocol::ModelClient` and stay with the offline engine unless the host
//! picks another; this client carries only the agent's conversation.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use crate::error::{HostError, Result};
use crate::model::{HostModel, HostRequest, ModelReply, ToolCall};

/// How long one request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// A chat model behind `base_url` (`http://127.0.0.1:8080/v1`, say).
#[derive(Debug, Clone)]
pub struct ChatModel {
    http: reqwest::Client,
    endpoint: String,
    model: String,
    api_key: Option<String>,
}

impl ChatModel {
    /// A client for `model` at `base_url`; `api_key` is sent as a bearer token when set.
    pub fn new(base_url: &str, model: &str, api_key: Option<String>) -> Result<ChatModel> {
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|error| HostError::Model(format!("cannot build the HTTP client: {error}")))?;
        Ok(ChatModel {
            http,
            endpoint: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            model: model.to_owned(),
            api_key,
        })
    }
}

#[async_trait]
impl HostModel for ChatModel {
    fn name(&self) -> String {
        self.model.clone()
    }

    async fn respond(&self, request: &HostRequest) -> Result<ModelReply> {
        let mut body = request.chat_body();
        if let Some(object) = body.as_object_mut() {
            object.insert("model".to_owned(), Value::String(self.model.clone()));
        }
        let mut call = self.http.post(&self.endpoint).json(&body);
        if let Some(key) = &self.api_key {
            call = call.bearer_auth(key);
        }
        let response = call
            .send()
            .await
            .map_err(|error| HostError::Model(format!("{}: {error}", self.endpoint)))?;
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|error| HostError::Model(format!("{}: {error}", self.endpoint)))?;
        if !status.is_success() {
            let shown: String = text.chars().take(500).collect();
            return Err(HostError::Model(format!(
                "{} answered {status}: {shown}",
                self.endpoint
            )));
        }
        parse_reply(&text)
    }
}

/// Reads a Chat Completions answer: the first choice's text and tool calls (arguments are a
/// JSON string; one that is not JSON is passed on as a string for the tool to refuse).
pub fn parse_reply(text: &str) -> Result<ModelReply> {
    let body: Value = serde_json::from_str(text)
        .map_err(|error| HostError::Model(format!("the answer is not JSON: {error}")))?;
    let message = body
        .pointer("/choices/0/message")
        .ok_or_else(|| HostError::Model("the answer has no choices[0].message".to_owned()))?;
    let tool_calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .enumerate()
                .map(|(index, call)| {
                    let arguments = call
                        .pointer("/function/arguments")
                        .and_then(Value::as_str)
                        .unwrap_or("{}");
                    ToolCall {
                        call_id: call
                            .get("id")
                            .and_then(Value::as_str)
                            .map_or_else(|| format!("call_{index}"), str::to_owned),
                        name: call
                            .pointer("/function/name")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                        arguments: serde_json::from_str(arguments)
                            .unwrap_or_else(|_| Value::String(arguments.to_owned())),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(ModelReply {
        text: message
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        tool_calls,
        output_tokens: body
            .pointer("/usage/completion_tokens")
            .and_then(Value::as_u64),
    })
}
