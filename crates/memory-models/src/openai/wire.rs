//! Request bodies and response parsing for the two OpenAI-compatible APIs.

use memory_protocol::model::ReasoningEffort;
use memory_protocol::{ModelError, ModelRequest, ModelResponse, TokenUsage};
use serde_json::{Value, json};

use super::ApiFlavour;
use super::errors::{api_error_in_body, cap_chars};

/// The JSON body of a request in the given API's shape. `reasoning_effort` is sent only when
/// it is `Some`: many models (gpt-4o, gpt-4.1, most local ones) refuse the field.
pub fn request_body(
    model: &str,
    flavour: ApiFlavour,
    request: &ModelRequest,
    reasoning_effort: Option<ReasoningEffort>,
) -> Value {
    // The schema name only labels the format; the task kind's wire name fits its charset.
    let schema_name = request.task.as_str();
    match flavour {
        ApiFlavour::Responses => {
            let mut body = json!({
                "model": model,
                "input": [{
                    "role": "user",
                    "content": [{ "type": "input_text", "text": request.input }]
                }],
                // Memory extraction handles private transcripts: ask the server not to keep them.
                "store": false,
            });
            if !request.instructions.is_empty() {
                body["instructions"] = json!(request.instructions);
            }
            if let Some(schema) = &request.output_schema {
                body["text"] = json!({ "format": {
                    "type": "json_schema",
                    "name": schema_name,
                    "schema": schema,
                    "strict": true
                }});
            }
            if let Some(effort) = reasoning_effort {
                body["reasoning"] = json!({ "effort": effort });
            }
            if let Some(max) = request.max_output_tokens {
                body["max_output_tokens"] = json!(max);
            }
            body
        }
        ApiFlavour::ChatCompletions => {
            let mut messages = Vec::new();
            if !request.instructions.is_empty() {
                messages.push(json!({ "role": "system", "content": request.instructions }));
            }
            messages.push(json!({ "role": "user", "content": request.input }));
            let mut body = json!({ "model": model, "messages": messages });
            if let Some(schema) = &request.output_schema {
                body["response_format"] = json!({
                    "type": "json_schema",
                    "json_schema": { "name": schema_name, "schema": schema, "strict": true }
                });
            }
            if let Some(effort) = reasoning_effort {
                body["reasoning_effort"] = json!(effort);
            }
            if let Some(max) = request.max_output_tokens {
                body["max_completion_tokens"] = json!(max);
            }
            body
        }
    }
}

/// Reads a 2xx body: the output text and token usage.
pub fn parse_success_body(flavour: ApiFlavour, body: &[u8]) -> Result<ModelResponse, ModelError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        if e.is_eof() {
            ModelError::Transient {
                message: format!("response body ended early ({} bytes): {e}", body.len()),
            }
        } else {
            ModelError::InvalidOutput {
                message: format!("response body is not json: {e}"),
            }
        }
    })?;
    if !value.is_object() {
        return Err(ModelError::InvalidOutput {
            message: "response body is not a json object".to_owned(),
        });
    }
    match flavour {
        ApiFlavour::Responses => parse_responses(&value),
        ApiFlavour::ChatCompletions => parse_chat(&value),
    }
}

fn parse_responses(value: &Value) -> Result<ModelResponse, ModelError> {
    let status = value.get("status").and_then(Value::as_str).unwrap_or("");
    if let Some(error) = value.get("error").filter(|e| e.is_object()) {
        return Err(api_error_in_body(error));
    }
    if status == "failed" {
        return Err(ModelError::Other {
            message: "the response failed without an error message".to_owned(),
        });
    }
    if status == "incomplete" {
        let reason = value
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str)
            .unwrap_or("unknown reason");
        return Err(ModelError::InvalidOutput {
            message: format!("response is incomplete: {reason}"),
        });
    }
    let mut text = String::new();
    let mut refusal = None;
    for item in value
        .get("output")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if item.get("type").and_then(Value::as_str) != Some("message") {
            continue;
        }
        for part in item
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match part.get("type").and_then(Value::as_str) {
                Some("output_text") => {
                    text.push_str(part.get("text").and_then(Value::as_str).unwrap_or(""));
                }
                Some("refusal") => {
                    refusal = part
                        .get("refusal")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                }
                _ => {}
            }
        }
    }
    // Some compatible servers also send the SDK's convenience field.
    if text.is_empty()
        && let Some(joined) = value.get("output_text").and_then(Value::as_str)
    {
        text = joined.to_owned();
    }
    let usage = value
        .get("usage")
        .filter(|u| u.is_object())
        .map(|u| TokenUsage {
            input_tokens: number_at(u, "/input_tokens"),
            cached_input_tokens: number_at(u, "/input_tokens_details/cached_tokens"),
            output_tokens: number_at(u, "/output_tokens"),
            reasoning_output_tokens: number_at(u, "/output_tokens_details/reasoning_tokens"),
        });
    finish(text, refusal, usage)
}

fn parse_chat(value: &Value) -> Result<ModelResponse, ModelError> {
    if let Some(error) = value.get("error").filter(|e| e.is_object()) {
        return Err(api_error_in_body(error));
    }
    let Some(choice) = value.pointer("/choices/0") else {
        return Err(ModelError::InvalidOutput {
            message: "response has no choices".to_owned(),
        });
    };
    match choice.get("finish_reason").and_then(Value::as_str) {
        Some("length") => {
            return Err(ModelError::InvalidOutput {
                message: "output stopped at the token limit".to_owned(),
            });
        }
        Some("content_filter") => {
            return Err(ModelError::InvalidOutput {
                message: "output was withheld by the content filter".to_owned(),
            });
        }
        _ => {}
    }
    let text = match choice.pointer("/message/content") {
        Some(Value::String(text)) => text.clone(),
        // Some servers send content parts instead of a string.
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    };
    let refusal = choice
        .pointer("/message/refusal")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let usage = value
        .get("usage")
        .filter(|u| u.is_object())
        .map(|u| TokenUsage {
            input_tokens: number_at(u, "/prompt_tokens"),
            cached_input_tokens: number_at(u, "/prompt_tokens_details/cached_tokens"),
            output_tokens: number_at(u, "/completion_tokens"),
            reasoning_output_tokens: number_at(u, "/completion_tokens_details/reasoning_tokens"),
        });
    finish(text, refusal, usage)
}

fn finish(
    text: String,
    refusal: Option<String>,
    usage: Option<TokenUsage>,
) -> Result<ModelResponse, ModelError> {
    if !text.trim().is_empty() {
        return Ok(ModelResponse { text, usage });
    }
    Err(ModelError::InvalidOutput {
        message: match refusal {
            Some(reason) => format!("the model refused: {}", cap_chars(&reason)),
            None => "response has no output text".to_owned(),
        },
    })
}

pub(super) fn number_at(value: &Value, pointer: &str) -> u64 {
    value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}
