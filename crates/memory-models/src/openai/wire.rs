//! Request bodies and response parsing for the two OpenAI-compatible APIs.

use memory_protocol::model::ReasoningEffort;
use memory_protocol::{ModelError, ModelRequest, ModelResponse, StructuredOutputMode, TokenUsage};
use serde_json::{Value, json};

use super::ApiFlavour;
use super::errors::{api_error_in_body, cap_chars};
use super::structured::bounded_for_grammar;

/// The JSON body of a request in the given API's shape. `reasoning_effort` is sent only when
/// it is `Some`: many models (gpt-4o, gpt-4.1, most local ones) refuse the field. A request
/// with an output schema asks for it the way `mode` says; below
/// [`StructuredOutputMode::JsonSchema`] the schema is also written into the instructions, since
/// the server no longer enforces it. `answer_chars`, the room left for the answer in the
/// model's window, bounds the schema given to a grammar-constrained server (Chat Completions'
/// `json_object` with a schema) so that its answer ends within the window.
pub fn request_body(
    model: &str,
    flavour: ApiFlavour,
    request: &ModelRequest,
    reasoning_effort: Option<ReasoningEffort>,
    mode: StructuredOutputMode,
    answer_chars: Option<u64>,
) -> Value {
    // The schema name only labels the format; the task kind's wire name fits its charset.
    let schema_name = request.task.as_str();
    let instructions = match &request.output_schema {
        Some(schema) if mode != StructuredOutputMode::JsonSchema => {
            with_schema_instructions(&request.instructions, schema)
        }
        _ => request.instructions.clone(),
    };
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
            if !instructions.is_empty() {
                body["instructions"] = json!(instructions);
            }
            if let Some(schema) = &request.output_schema {
                match mode {
                    StructuredOutputMode::JsonSchema => {
                        body["text"] = json!({ "format": {
                            "type": "json_schema",
                            "name": schema_name,
                            "schema": schema,
                            "strict": true
                        }});
                    }
                    StructuredOutputMode::JsonObject => {
                        body["text"] = json!({ "format": { "type": "json_object" } });
                    }
                    StructuredOutputMode::Instructions => {}
                }
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
            if !instructions.is_empty() {
                messages.push(json!({ "role": "system", "content": instructions }));
            }
            messages.push(json!({ "role": "user", "content": request.input }));
            let mut body = json!({ "model": model, "messages": messages });
            if let Some(schema) = &request.output_schema {
                match mode {
                    StructuredOutputMode::JsonSchema => {
                        body["response_format"] = json!({
                            "type": "json_schema",
                            "json_schema": { "name": schema_name, "schema": schema, "strict": true }
                        });
                    }
                    // llama.cpp's servers constrain the output with a schema given here.
                    StructuredOutputMode::JsonObject => {
                        let schema = match answer_chars {
                            Some(room) => bounded_for_grammar(schema, room),
                            None => schema.clone(),
                        };
                        body["response_format"] =
                            json!({ "type": "json_object", "schema": schema });
                    }
                    StructuredOutputMode::Instructions => {}
                }
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

/// The instructions with a paragraph asking for one JSON object matching `schema`.
fn with_schema_instructions(instructions: &str, schema: &Value) -> String {
    let mut text = instructions.trim_end().to_owned();
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(
        "Answer with one JSON object and nothing else: no prose, no code fence. \
         It must validate against this JSON Schema:\n",
    );
    text.push_str(&schema.to_string());
    text
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
