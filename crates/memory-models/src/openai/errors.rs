//! How failed responses map to [`ModelError`], and the headers a response carries about
//! waiting and quota.

use memory_protocol::{ModelError, RateLimitSnapshot};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::Value;

/// Longest server message quoted in an error.
pub(super) const MAX_ERROR_MESSAGE_CHARS: usize = 500;
/// Longest wait a `retry-after` header may ask for; longer values are clamped.
pub(super) const MAX_RETRY_AFTER_MS: u64 = 24 * 60 * 60 * 1000;

/// What a failed request was, for error messages that say what to change.
#[derive(Debug, Clone, Copy)]
pub struct Attempted<'a> {
    /// The model name sent.
    pub model: &'a str,
    /// The URL posted to.
    pub endpoint: &'a str,
    /// True when the body carried a reasoning effort.
    pub sent_reasoning_effort: bool,
}

/// Maps a non-2xx response to an error.
///
/// Failures no retry can fix become [`ModelError::Authentication`] (401, 403) or
/// [`ModelError::Configuration`] (404: no such model or endpoint; a model-not-found or
/// unsupported-parameter answer, including a refused reasoning effort; an exhausted quota).
pub fn status_error(
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    now: jiff::Timestamp,
    attempted: Attempted<'_>,
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
    let lower = server_message.to_ascii_lowercase();
    let model = attempted.model;
    match status.as_u16() {
        429 if code == "insufficient_quota" => ModelError::Configuration {
            message: format!(
                "the account's quota is exhausted ({message}); add credit or use another key"
            ),
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
        400 | 422 if attempted.sent_reasoning_effort && lower.contains("reasoning") => {
            ModelError::Configuration {
                message: format!(
                    "the server refused the reasoning effort for model `{model}` ({message}); \
                     remove --reasoning-effort / model_reasoning_effort for this model"
                ),
            }
        }
        400 | 404 | 422 if says_model_not_found(&code, &lower) => ModelError::Configuration {
            message: format!(
                "the server does not know model `{model}` ({message}); check the model name"
            ),
        },
        400 | 422
            if matches!(code.as_str(), "unsupported_parameter" | "unknown_parameter")
                || lower.contains("unsupported parameter")
                || lower.contains("unknown parameter") =>
        {
            ModelError::Configuration {
                message: format!("the server refused a request parameter ({message})"),
            }
        }
        404 => ModelError::Configuration {
            message: format!(
                "{} does not exist on this server ({message}); check --base-url (it usually \
                 ends in /v1) and the API flavour (openai: for the Responses API, openai-chat: \
                 for Chat Completions)",
                attempted.endpoint
            ),
        },
        408 | 500..=599 => ModelError::Transient { message },
        _ => ModelError::Other { message },
    }
}

/// An error object inside a 200 response.
pub(super) fn api_error_in_body(error: &Value) -> ModelError {
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

/// True when an error code or (lower-cased) message says the model does not exist, in the
/// words of OpenAI, vLLM and Ollama.
fn says_model_not_found(code: &str, lower_message: &str) -> bool {
    code == "model_not_found"
        || (lower_message.contains("model")
            && (lower_message.contains("does not exist")
                || lower_message.contains("not found")
                || lower_message.contains("unknown model")))
}

/// The rate-limit figures of a response's `x-ratelimit-*` headers, when it has any.
pub fn rate_limit_snapshot(headers: &HeaderMap, now: jiff::Timestamp) -> Option<RateLimitSnapshot> {
    let number = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|text| text.trim().parse::<u64>().ok())
    };
    let snapshot = RateLimitSnapshot {
        limit_requests: number("x-ratelimit-limit-requests"),
        remaining_requests: number("x-ratelimit-remaining-requests"),
        limit_tokens: number("x-ratelimit-limit-tokens"),
        remaining_tokens: number("x-ratelimit-remaining-tokens"),
        observed_at: now.as_second(),
    };
    let any = snapshot.limit_requests.is_some()
        || snapshot.remaining_requests.is_some()
        || snapshot.limit_tokens.is_some()
        || snapshot.remaining_tokens.is_some();
    any.then_some(snapshot)
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

pub(super) fn cap_chars(text: &str) -> String {
    match text.char_indices().nth(MAX_ERROR_MESSAGE_CHARS) {
        Some((end, _)) => format!("{}…", text.get(..end).unwrap_or(text)),
        None => text.to_owned(),
    }
}

/// An error and its sources, joined: reqwest's own message rarely says what went wrong.
pub(super) fn error_chain(err: &dyn std::error::Error) -> String {
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
