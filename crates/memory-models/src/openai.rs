//! An OpenAI-compatible HTTP model client: the Responses API or Chat Completions, with strict
//! JSON-schema output. Works with OpenAI and with servers that speak the same protocol (vLLM,
//! llama.cpp, Ollama, ...).
//!
//! How failures map to [`ModelError`]:
//!
//! | what happened | error |
//! |---|---|
//! | no API key in the configured environment variable | `Authentication` (at call time) |
//! | 401, 403 | `Authentication` |
//! | 429 | `RateLimited`, with `retry-after-ms` or `retry-after` (seconds or an HTTP date) |
//! | 429 whose code is `insufficient_quota` | `Other`: waiting does not refill a quota |
//! | 400 / 413 saying the context length is exceeded | `ContextOverflow` |
//! | 408, 5xx, timeouts, connection errors | `Transient` |
//! | a body cut short (the connection dropped, or JSON that ends early) | `Transient` |
//! | a complete body that is not JSON, has no output text, was refused or stopped at the token limit, or is not JSON when a schema was asked for | `InvalidOutput` |
//! | anything else | `Other` |
//!
//! Unknown fields in responses are ignored. No response, however malformed, makes it panic.

use std::time::Duration;

use async_trait::async_trait;
use memory_protocol::{ModelClient, ModelError, ModelRequest, ModelResponse, TokenUsage};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

/// The OpenAI API.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The environment variable the API key is read from by default.
pub const DEFAULT_API_KEY_ENV: &str = "OPENAI_API_KEY";
/// Largest response body read; a bigger one is an error rather than unbounded memory use.
const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;
/// Longest server message quoted in an error.
const MAX_ERROR_MESSAGE_CHARS: usize = 500;
/// Longest wait a `retry-after` header may ask for; longer values are clamped.
const MAX_RETRY_AFTER_MS: u64 = 24 * 60 * 60 * 1000;

pub use crate::spec::ApiFlavour;

/// Settings of an [`OpenAiClient`].
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiConfig {
    /// Base URL, such as `https://api.openai.com/v1` or `http://localhost:11434/v1`.
    pub base_url: String,
    /// Environment variable holding the API key; `None` sends no key (local servers).
    pub api_key_env: Option<String>,
    /// Model name sent with each request.
    pub model: String,
    /// Which API to call.
    pub flavour: ApiFlavour,
    /// Limit on a whole request, response body included.
    pub request_timeout: Duration,
    /// Limit on establishing the connection.
    pub connect_timeout: Duration,
    /// The model's input window in tokens, when known.
    pub context_window: Option<u64>,
}

impl OpenAiConfig {
    /// Defaults for `model`: OpenAI's base URL, the key from `OPENAI_API_KEY`, the Responses
    /// API, a 5-minute request timeout (reasoning models are slow) and a 10-second connect
    /// timeout.
    pub fn new(model: impl Into<String>) -> OpenAiConfig {
        OpenAiConfig {
            base_url: DEFAULT_BASE_URL.to_owned(),
            api_key_env: Some(DEFAULT_API_KEY_ENV.to_owned()),
            model: model.into(),
            flavour: ApiFlavour::Responses,
            request_timeout: Duration::from_secs(300),
            connect_timeout: Duration::from_secs(10),
            context_window: None,
        }
    }
}

/// A [`ModelClient`] that calls an OpenAI-compatible server over HTTP.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    config: OpenAiConfig,
    endpoint: reqwest::Url,
    http: reqwest::Client,
}

impl OpenAiClient {
    /// Builds a client. Fails on a base URL that is not an `http(s)` URL, or when the TLS
    /// stack cannot start; a missing API key is reported by each call instead.
    pub fn new(config: OpenAiConfig) -> Result<OpenAiClient, ModelError> {
        let path = match config.flavour {
            ApiFlavour::Responses => "responses",
            ApiFlavour::ChatCompletions => "chat/completions",
        };
        let base = config.base_url.trim_end_matches('/');
        let endpoint =
            reqwest::Url::parse(&format!("{base}/{path}")).map_err(|e| ModelError::Other {
                message: format!("invalid base url `{}`: {e}", config.base_url),
            })?;
        if !matches!(endpoint.scheme(), "http" | "https") {
            return Err(ModelError::Other {
                message: format!("base url `{}` is not http or https", config.base_url),
            });
        }
        let http = reqwest::Client::builder()
            .timeout(config.request_timeout)
            .connect_timeout(config.connect_timeout)
            .build()
            .map_err(|e| ModelError::Other {
                message: format!("cannot build the http client: {}", error_chain(&e)),
            })?;
        Ok(OpenAiClient {
            config,
            endpoint,
            http,
        })
    }

    /// The settings this client was built with.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    fn api_key(&self) -> Result<Option<String>, ModelError> {
        let Some(var) = &self.config.api_key_env else {
            return Ok(None);
        };
        match std::env::var(var) {
            Ok(key) if !key.trim().is_empty() => Ok(Some(key.trim().to_owned())),
            Ok(_) | Err(std::env::VarError::NotPresent) => Err(ModelError::Authentication {
                message: format!(
                    "environment variable {var} is not set: export your API key there \
                     (any value works for a local server that needs none), or use the offline model"
                ),
            }),
            Err(std::env::VarError::NotUnicode(_)) => Err(ModelError::Authentication {
                message: format!("environment variable {var} is not valid unicode"),
            }),
        }
    }

    /// Sends `body` and returns the status, headers and the whole response body.
    async fn post(&self, body: &Value) -> Result<(StatusCode, HeaderMap, Vec<u8>), ModelError> {
        let mut request = self.http.post(self.endpoint.clone()).json(body);
        if let Some(key) = self.api_key()? {
            request = request.bearer_auth(key);
        }
        let mut response = request.send().await.map_err(|e| self.transport_error(&e))?;
        let status = response.status();
        let headers = response.headers().clone();
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport_error(&e))?
        {
            if bytes.len().saturating_add(chunk.len()) > MAX_RESPONSE_BYTES {
                return Err(ModelError::InvalidOutput {
                    message: format!("response body exceeds {MAX_RESPONSE_BYTES} bytes"),
                });
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok((status, headers, bytes))
    }

    fn transport_error(&self, err: &reqwest::Error) -> ModelError {
        let detail = error_chain(err);
        if err.is_timeout() {
            let secs = self.config.request_timeout.as_secs_f64();
            ModelError::Transient {
                message: format!(
                    "request to {} timed out after {secs}s: {detail}",
                    self.endpoint
                ),
            }
        } else if err.is_builder() {
            ModelError::Other { message: detail }
        } else if err.is_connect() {
            ModelError::Transient {
                message: format!("cannot connect to {}: {detail}", self.endpoint),
            }
        } else {
            ModelError::Transient {
                message: format!("request to {} failed: {detail}", self.endpoint),
            }
        }
    }
}

#[async_trait]
impl ModelClient for OpenAiClient {
    fn name(&self) -> String {
        let prefix = match self.config.flavour {
            ApiFlavour::Responses => "openai",
            ApiFlavour::ChatCompletions => "openai-chat",
        };
        format!("{prefix}:{}", self.config.model)
    }

    fn context_window(&self) -> Option<u64> {
        self.config.context_window
    }

    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let body = request_body(&self.config.model, self.config.flavour, &request);
        let (status, headers, bytes) = self.post(&body).await?;
        if !status.is_success() {
            return Err(status_error(
                status,
                &headers,
                &bytes,
                jiff::Timestamp::now(),
            ));
        }
        let response = parse_success_body(self.config.flavour, &bytes)?;
        if request.output_schema.is_some()
            && let Err(e) = serde_json::from_str::<Value>(&response.text)
        {
            return Err(ModelError::InvalidOutput {
                message: format!("output is not the JSON the schema asked for: {e}"),
            });
        }
        Ok(response)
    }
}

/// The JSON body of a request in the given API's shape.
pub fn request_body(model: &str, flavour: ApiFlavour, request: &ModelRequest) -> Value {
    // The schema name only labels the format; the task kind's wire name fits its charset.
    let schema_name = serde_json::to_value(request.task)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "output".to_owned());
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
            if let Some(effort) = request.reasoning_effort {
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

fn number_at(value: &Value, pointer: &str) -> u64 {
    value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

/// Maps a non-2xx response to an error.
pub fn status_error(
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    now: jiff::Timestamp,
) -> ModelError {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let error = parsed.as_ref().and_then(|v| v.get("error"));
    let code = error.and_then(error_code).unwrap_or_default();
    let server_message = match error {
        Some(Value::Object(e)) => e.get("message").and_then(Value::as_str).map(str::to_owned),
        // Some servers answer `{"error": "text"}`.
        Some(Value::String(text)) => Some(text.clone()),
        _ => None,
    }
    .unwrap_or_else(|| String::from_utf8_lossy(body).trim().to_owned());
    let message = if server_message.is_empty() {
        format!("http {status}")
    } else {
        format!("http {status}: {}", cap_chars(&server_message))
    };
    match status.as_u16() {
        429 if code == "insufficient_quota" => ModelError::Other {
            message: format!("quota exhausted ({message})"),
        },
        429 => ModelError::RateLimited {
            retry_after_ms: retry_after_ms(headers, now),
            message,
        },
        401 | 403 => ModelError::Authentication { message },
        400 | 413 | 422 if says_context_overflow(&code, &server_message) => {
            ModelError::ContextOverflow { message }
        }
        413 => ModelError::ContextOverflow { message },
        408 | 500..=599 => ModelError::Transient { message },
        _ => ModelError::Other { message },
    }
}

/// An error object inside a 200 response.
fn api_error_in_body(error: &Value) -> ModelError {
    let code = error_code(error).unwrap_or_default();
    let text = error.get("message").and_then(Value::as_str).unwrap_or("");
    let message = if text.is_empty() {
        format!("the server reported error `{code}`")
    } else {
        cap_chars(text)
    };
    if says_context_overflow(&code, text) {
        ModelError::ContextOverflow { message }
    } else if code == "rate_limit_exceeded" {
        ModelError::RateLimited {
            retry_after_ms: None,
            message,
        }
    } else if code == "server_error" {
        ModelError::Transient { message }
    } else {
        ModelError::Other { message }
    }
}

/// The error's `code` (else `type`), as text.
fn error_code(error: &Value) -> Option<String> {
    let code = error
        .get("code")
        .filter(|c| !c.is_null())
        .or(error.get("type"))?;
    Some(match code {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

/// True when an error code or message says the input did not fit the context window, in the
/// words of OpenAI, vLLM, llama.cpp and Ollama.
fn says_context_overflow(code: &str, message: &str) -> bool {
    const PHRASES: [&str; 8] = [
        "context_length_exceeded",
        "context length",
        "context window",
        "context size",
        "maximum context",
        "too many tokens",
        "prompt is too long",
        "input is too long",
    ];
    let message = message.to_ascii_lowercase();
    code == "context_length_exceeded" || PHRASES.iter().any(|p| message.contains(p))
}

/// Milliseconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date),
/// clamped to a day.
pub fn retry_after_ms(headers: &HeaderMap, now: jiff::Timestamp) -> Option<u64> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let from_number = |text: &str, scale: f64| {
        let n: f64 = text.parse().ok()?;
        (n.is_finite() && n >= 0.0)
            .then(|| (n * scale).ceil().min(MAX_RETRY_AFTER_MS as f64) as u64)
    };
    if let Some(ms) = header("retry-after-ms").and_then(|t| from_number(t, 1.0)) {
        return Some(ms);
    }
    let text = header("retry-after")?;
    if let Some(ms) = from_number(text, 1000.0) {
        return Some(ms);
    }
    let at = jiff::fmt::rfc2822::DateTimeParser::new()
        .parse_timestamp(text)
        .ok()?;
    let wait = at
        .as_millisecond()
        .saturating_sub(now.as_millisecond())
        .max(0);
    Some(u64::try_from(wait).unwrap_or(0).min(MAX_RETRY_AFTER_MS))
}

fn cap_chars(text: &str) -> String {
    match text.char_indices().nth(MAX_ERROR_MESSAGE_CHARS) {
        Some((end, _)) => format!("{}…", text.get(..end).unwrap_or(text)),
        None => text.to_owned(),
    }
}

/// An error and its sources, joined: reqwest's own message rarely says what went wrong.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn retry_after_reads_milliseconds_seconds_and_dates() {
        let now: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        assert_eq!(
            retry_after_ms(&headers(&[("retry-after-ms", "250.5")]), now),
            Some(251)
        );
        assert_eq!(
            retry_after_ms(&headers(&[("retry-after", "7")]), now),
            Some(7000)
        );
        assert_eq!(
            retry_after_ms(&headers(&[("retry-after", "1.5")]), now),
            Some(1500)
        );
        let date = headers(&[("retry-after", "Thu, 01 Jan 2026 00:00:30 GMT")]);
        assert_eq!(retry_after_ms(&date, now), Some(30_000));
        let past = headers(&[("retry-after", "Wed, 31 Dec 2025 23:00:00 GMT")]);
        assert_eq!(retry_after_ms(&past, now), Some(0));
        let both = headers(&[("retry-after-ms", "20"), ("retry-after", "9")]);
        assert_eq!(retry_after_ms(&both, now), Some(20));
        assert_eq!(
            retry_after_ms(&headers(&[("retry-after", "soon")]), now),
            None
        );
        assert_eq!(
            retry_after_ms(&headers(&[("retry-after", "-3")]), now),
            None
        );
        assert_eq!(
            retry_after_ms(&headers(&[("retry-after", "1e300")]), now),
            Some(MAX_RETRY_AFTER_MS)
        );
        assert_eq!(retry_after_ms(&HeaderMap::new(), now), None);
    }

    #[test]
    fn status_errors_map_to_kinds() {
        let now = jiff::Timestamp::UNIX_EPOCH;
        let none = HeaderMap::new();
        let overflow = br#"{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":null}}"#;
        assert!(matches!(
            status_error(StatusCode::BAD_REQUEST, &none, overflow, now),
            ModelError::ContextOverflow { .. }
        ));
        let by_code = br#"{"error":{"message":"too big","code":"context_length_exceeded"}}"#;
        assert!(matches!(
            status_error(StatusCode::BAD_REQUEST, &none, by_code, now),
            ModelError::ContextOverflow { .. }
        ));
        let other_400 = br#"{"error":{"message":"unknown parameter: foo"}}"#;
        let err = status_error(StatusCode::BAD_REQUEST, &none, other_400, now);
        assert_eq!(
            err,
            ModelError::Other {
                message: "http 400 Bad Request: unknown parameter: foo".to_owned()
            }
        );
        let quota = br#"{"error":{"message":"out of credit","code":"insufficient_quota"}}"#;
        let err = status_error(StatusCode::TOO_MANY_REQUESTS, &none, quota, now);
        assert!(
            matches!(&err, ModelError::Other { message } if message.contains("quota")),
            "{err}"
        );
        assert!(matches!(
            status_error(StatusCode::FORBIDDEN, &none, b"", now),
            ModelError::Authentication { .. }
        ));
        assert!(matches!(
            status_error(
                StatusCode::BAD_GATEWAY,
                &none,
                b"<html>bad gateway</html>",
                now
            ),
            ModelError::Transient { .. }
        ));
        let plain = br#"{"error":"the request exceeds the available context size"}"#;
        assert!(matches!(
            status_error(StatusCode::BAD_REQUEST, &none, plain, now),
            ModelError::ContextOverflow { .. }
        ));
    }

    #[test]
    fn errors_inside_a_200_body_are_classified() {
        let failed = br#"{"status":"failed","error":{"code":"server_error","message":"boom"}}"#;
        assert!(matches!(
            parse_success_body(ApiFlavour::Responses, failed),
            Err(ModelError::Transient { .. })
        ));
        let incomplete =
            br#"{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}"#;
        let err = parse_success_body(ApiFlavour::Responses, incomplete).unwrap_err();
        assert!(err.to_string().contains("max_output_tokens"), "{err}");
        let refused =
            br#"{"choices":[{"message":{"content":null,"refusal":"no"},"finish_reason":"stop"}]}"#;
        let err = parse_success_body(ApiFlavour::ChatCompletions, refused).unwrap_err();
        assert!(err.to_string().contains("refused"), "{err}");
        let cut = br#"{"choices":[{"message":{"content":"{\"a\":"},"finish_reason":"length"}]}"#;
        assert!(matches!(
            parse_success_body(ApiFlavour::ChatCompletions, cut),
            Err(ModelError::InvalidOutput { .. })
        ));
    }

    #[test]
    fn chat_content_parts_are_joined() {
        let body = br#"{"choices":[{"message":{"content":[{"type":"text","text":"ab"},{"type":"text","text":"c"}]}}]}"#;
        let response = parse_success_body(ApiFlavour::ChatCompletions, body).unwrap();
        assert_eq!(response.text, "abc");
        assert_eq!(response.usage, None);
    }

    #[test]
    fn bad_base_urls_are_rejected() {
        for url in ["not a url", "ftp://example.com/v1"] {
            let mut config = OpenAiConfig::new("m");
            config.base_url = url.to_owned();
            let err = OpenAiClient::new(config).unwrap_err();
            assert!(err.to_string().contains(url), "{err}");
        }
    }

    proptest! {
        #[test]
        fn any_success_body_parses_or_errors(body in proptest::collection::vec(any::<u8>(), 0..256)) {
            for flavour in [ApiFlavour::Responses, ApiFlavour::ChatCompletions] {
                if let Ok(response) = parse_success_body(flavour, &body) {
                    prop_assert!(!response.text.trim().is_empty());
                }
            }
        }

        #[test]
        fn any_json_body_parses_or_errors(text in "[{}\\[\\]\":,a-z0-9 ]{0,120}") {
            for flavour in [ApiFlavour::Responses, ApiFlavour::ChatCompletions] {
                let _ = parse_success_body(flavour, text.as_bytes());
            }
            let err = status_error(StatusCode::BAD_REQUEST, &HeaderMap::new(), text.as_bytes(),
                jiff::Timestamp::UNIX_EPOCH);
            prop_assert!(err.to_string().contains("400"));
        }

        #[test]
        fn any_retry_after_header_is_bounded(value in "[ -~]{0,40}") {
            let Ok(header) = HeaderValue::from_str(&value) else { return Ok(()) };
            for name in ["retry-after", "retry-after-ms"] {
                let mut map = HeaderMap::new();
                map.insert(name, header.clone());
                if let Some(ms) = retry_after_ms(&map, jiff::Timestamp::UNIX_EPOCH) {
                    prop_assert!(ms <= MAX_RETRY_AFTER_MS);
                }
            }
        }

        #[test]
        fn long_server_messages_are_capped(message in "\\PC{0,1200}") {
            let capped = cap_chars(&message);
            prop_assert!(capped.chars().count() <= MAX_ERROR_MESSAGE_CHARS + 1);
            prop_assert!(message.starts_with(capped.trim_end_matches('…')));
        }
    }
}
