//! An OpenAI-compatible HTTP model client: the Responses API or Chat Completions, with strict
//! JSON-schema output. Works with OpenAI and with servers that speak the same protocol (vLLM,
//! llama.cpp, Ollama, ...).
//!
//! How failures map to [`ModelError`], and what the client does about them:
//!
//! | what happened | error | inside the call |
//! |---|---|---|
//! | no API key in the configured environment variable | `Authentication` | fails at once |
//! | 401, 403 | `Authentication` | fails at once |
//! | 404, an unknown model, a refused parameter (a reasoning effort the model does not take) | `Configuration` | fails at once |
//! | 429 whose code is `insufficient_quota` | `Configuration`: waiting does not refill a quota | fails at once |
//! | 429 | `RateLimited`, with `retry-after-ms` or `retry-after` (seconds or an HTTP date) | retried, waiting as asked up to a cap |
//! | 400 / 413 saying the context length is exceeded | `ContextOverflow` | returned: the caller sends less |
//! | a refused connection (nothing listens at the base URL) | `Configuration`, naming the URL | fails at once |
//! | 408, 5xx, timeouts, dropped connections, other connect failures (DNS) | `Transient` | retried with backoff |
//! | a body cut short (the connection dropped, or JSON that ends early) | `Transient` | retried with backoff |
//! | a complete body that is not JSON, has no output text, was refused or stopped at the token limit | `InvalidOutput` | returned |
//! | a 4xx, or a 5xx, whose body refuses the output-format parameter (`response_format`, `text.format`) | none: the next [`StructuredOutputMode`] | the same request again in that mode, kept for later calls |
//! | an answer that does not validate against the output schema | `InvalidOutput` | asked once to repair it, then returned |
//! | anything else | `Other` | returned |
//!
//! Structured output starts as a strict `json_schema` (or the configured mode) and steps down
//! to `json_object` with the schema beside it, then to the schema in the instructions, each
//! time a server refuses the parameter; a refusal is never retried as transient. Whatever the
//! mode, every answer is validated against the schema.
//!
//! No API key is needed for a server on a loopback address: one is sent when the variable is
//! set.
//!
//! `Authentication` and `Configuration` are [fatal](ModelError::is_fatal): a caller holding many
//! jobs stops and gives them back. Retries follow a [`RetryPolicy`]. The client remembers the
//! last `x-ratelimit-*` headers it saw ([`ModelClient::rate_limit`]).
//!
//! Unknown fields in responses are ignored. No response, however malformed, makes it panic.

mod errors;
mod retry;
mod structured;
mod window;
mod wire;

use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use memory_protocol::model::ReasoningEffort;
use memory_protocol::{
    ContextWindow, ContextWindowSource, ModelClient, ModelError, ModelRequest, ModelResponse,
    RateLimitSnapshot, StructuredOutputMode, TokenUsage,
};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::Value;

pub use self::errors::{Attempted, rate_limit_snapshot, retry_after_ms, status_error};
pub use self::retry::RetryPolicy;
pub use self::window::{known_context_window, window_from_llama_props, window_from_models_list};
pub use self::wire::{parse_success_body, request_body};
pub use crate::spec::ApiFlavour;

use self::errors::error_chain;

/// The OpenAI API.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The environment variable the API key is read from by default.
pub const DEFAULT_API_KEY_ENV: &str = "OPENAI_API_KEY";
/// Largest response body read; a bigger one is an error rather than unbounded memory use.
const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;
/// Limit on each request that asks a server for its context window.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(10);

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
    /// The model's input window in tokens, when the user set it; otherwise
    /// [`OpenAiClient::resolve_context_window`] asks the server and a table of known models.
    pub context_window: Option<u64>,
    /// Reasoning effort sent with every request; `None` sends no reasoning field at all (many
    /// models refuse it). A request's own effort wins over this one.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// How a call retries failures a wait can fix.
    pub retry: RetryPolicy,
    /// The structured-output mode to start with; the client steps down from it when the server
    /// refuses it.
    pub structured_output: StructuredOutputMode,
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
            reasoning_effort: None,
            retry: RetryPolicy::default(),
            structured_output: StructuredOutputMode::JsonSchema,
        }
    }
}

/// A [`ModelClient`] that calls an OpenAI-compatible server over HTTP.
#[derive(Debug)]
pub struct OpenAiClient {
    config: OpenAiConfig,
    endpoint: reqwest::Url,
    http: reqwest::Client,
    window: ContextWindow,
    rate_limit: Mutex<Option<RateLimitSnapshot>>,
    structured_output: Mutex<StructuredOutputMode>,
}

impl OpenAiClient {
    /// Builds a client. Fails with [`ModelError::Configuration`] on a base URL that is not an
    /// `http(s)` URL, or when the TLS stack cannot start; a missing API key is reported by each
    /// call instead. The context window is the configured one, else the known-model table's;
    /// [`OpenAiClient::resolve_context_window`] can ask the server too.
    pub fn new(config: OpenAiConfig) -> Result<OpenAiClient, ModelError> {
        let path = match config.flavour {
            ApiFlavour::Responses => "responses",
            ApiFlavour::ChatCompletions => "chat/completions",
        };
        let base = config.base_url.trim_end_matches('/');
        let endpoint = reqwest::Url::parse(&format!("{base}/{path}")).map_err(|e| {
            ModelError::Configuration {
                message: format!(
                    "invalid base url `{}`: {e}; write it like http://localhost:8000/v1",
                    config.base_url
                ),
            }
        })?;
        if !matches!(endpoint.scheme(), "http" | "https") {
            return Err(ModelError::Configuration {
                message: format!("base url `{}` is not http or https", config.base_url),
            });
        }
        let http = reqwest::Client::builder()
            .timeout(config.request_timeout)
            .connect_timeout(config.connect_timeout)
            .build()
            .map_err(|e| ModelError::Configuration {
                message: format!("cannot build the http client: {}", error_chain(&e)),
            })?;
        let window = match config.context_window.filter(|&w| w > 0) {
            Some(tokens) => ContextWindow {
                tokens: Some(tokens),
                source: ContextWindowSource::Configured,
            },
            None => match known_context_window(&config.model) {
                Some(tokens) => ContextWindow {
                    tokens: Some(tokens),
                    source: ContextWindowSource::KnownModel,
                },
                None => ContextWindow {
                    tokens: None,
                    source: ContextWindowSource::Default,
                },
            },
        };
        let structured_output = Mutex::new(config.structured_output);
        Ok(OpenAiClient {
            config,
            endpoint,
            http,
            window,
            rate_limit: Mutex::new(None),
            structured_output,
        })
    }

    /// The context window this client reports, and where the figure came from.
    pub fn window(&self) -> ContextWindow {
        self.window
    }

    /// Settles the context window, first that answers: the configured figure; the server's
    /// own report (vLLM's `GET /v1/models` `max_model_len`, llama.cpp's `GET /props` `n_ctx`);
    /// the known-model table; else unknown, so callers use their default budget. A server that
    /// does not answer these requests is not an error.
    pub async fn resolve_context_window(&mut self) -> ContextWindow {
        if self.window.source == ContextWindowSource::Configured {
            return self.window;
        }
        if let Some(tokens) = self.ask_server_for_window().await {
            self.window = ContextWindow {
                tokens: Some(tokens),
                source: ContextWindowSource::Server,
            };
        }
        self.window
    }

    async fn ask_server_for_window(&self) -> Option<u64> {
        let base = self.config.base_url.trim_end_matches('/');
        if let Some(body) = self.get_json(&format!("{base}/models")).await
            && let Some(window) = window_from_models_list(&body, &self.config.model)
        {
            return Some(window);
        }
        let root = base.strip_suffix("/v1").unwrap_or(base);
        let props = self.get_json(&format!("{root}/props")).await?;
        window_from_llama_props(&props)
    }

    /// A JSON answer to a GET, or `None` for any failure (discovery is best effort).
    async fn get_json(&self, url: &str) -> Option<Value> {
        let mut request = self.http.get(url).timeout(DISCOVERY_TIMEOUT);
        if let Ok(Some(key)) = self.api_key() {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let bytes = response.bytes().await.ok()?;
        if bytes.len() > MAX_RESPONSE_BYTES {
            return None;
        }
        serde_json::from_slice(&bytes).ok()
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
            Ok(_) | Err(std::env::VarError::NotPresent) if is_loopback(&self.endpoint) => Ok(None),
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
        } else if err.is_connect() && connection_refused(err) {
            // Nothing listens at the address (a local server not started, a wrong port):
            // retrying within the run cannot help, so the run stops at once and every job goes
            // back unspent.
            ModelError::Configuration {
                message: format!(
                    "nothing is listening at {} (connection refused): start the model server \
                     or fix the base url",
                    self.endpoint
                ),
            }
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

/// True when `err` was caused by a refused TCP connection.
fn connection_refused(err: &reqwest::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(cause) = source {
        if cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        {
            return true;
        }
        source = cause.source();
    }
    false
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
        self.window.tokens
    }

    fn rate_limit(&self) -> Option<RateLimitSnapshot> {
        self.rate_limit.lock().ok().and_then(|guard| *guard)
    }

    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let effort = request.reasoning_effort.or(self.config.reasoning_effort);
        let Some(schema) = request.output_schema.clone() else {
            let mode = self.structured_output_mode();
            return self
                .send(&request, effort, mode)
                .await
                .map_err(Failure::into_error);
        };
        let mut sent = request.clone();
        let mut usage: Option<TokenUsage> = None;
        let mut repaired = false;
        loop {
            let mode = self.structured_output_mode();
            let response = match self.send(&sent, effort, mode).await {
                Ok(response) => response,
                Err(Failure::FormatRefused { message }) => match mode.fallback() {
                    Some(next) => {
                        tracing::info!(from = %mode, to = %next, %message, "the server refused the output format; stepping down");
                        self.set_structured_output_mode(next);
                        continue;
                    }
                    None => return Err(Failure::FormatRefused { message }.into_error()),
                },
                Err(Failure::Model(error)) => return Err(error),
            };
            if let Some(part) = &response.usage {
                usage.get_or_insert_with(TokenUsage::default).add(part);
            }
            match structured::check_answer(&schema, &response.text) {
                Ok(text) => return Ok(ModelResponse { text, usage }),
                Err(problem) if !repaired => {
                    tracing::debug!(%problem, "asking the model to repair its answer");
                    repaired = true;
                    sent.input = structured::repair_input(&request.input, &response.text, &problem);
                }
                Err(problem) => {
                    return Err(ModelError::InvalidOutput {
                        message: format!("{problem} (after one repair attempt, in {mode} mode)"),
                    });
                }
            }
        }
    }

    fn structured_output(&self) -> Option<StructuredOutputMode> {
        Some(self.structured_output_mode())
    }
}

/// Why one send failed: a refusal of the output format, which the caller answers by stepping
/// down, or any other model error.
enum Failure {
    FormatRefused { message: String },
    Model(ModelError),
}

impl Failure {
    fn into_error(self) -> ModelError {
        match self {
            Failure::FormatRefused { message } => ModelError::Configuration {
                message: format!(
                    "the server refused every structured-output mode, the schema in the \
                     instructions included ({message})"
                ),
            },
            Failure::Model(error) => error,
        }
    }
}

impl From<ModelError> for Failure {
    fn from(error: ModelError) -> Self {
        Failure::Model(error)
    }
}

impl OpenAiClient {
    /// The structured-output mode requests use now.
    pub fn structured_output_mode(&self) -> StructuredOutputMode {
        self.structured_output
            .lock()
            .map_or(self.config.structured_output, |mode| *mode)
    }

    fn set_structured_output_mode(&self, next: StructuredOutputMode) {
        if let Ok(mut mode) = self.structured_output.lock() {
            *mode = next;
        }
    }

    /// The room left for the answer in the model's window, in characters: the window less the
    /// request (at most three bytes a token, so the request is not under-counted), capped by
    /// the request's own output limit, at two characters a token (so the answer is not
    /// over-counted). `None` when the window is not known.
    fn answer_chars(&self, request: &ModelRequest) -> Option<u64> {
        let window = self.window.tokens?;
        let request_bytes = request.instructions.len() + request.input.len();
        let request_tokens = u64::try_from(request_bytes / 3).unwrap_or(u64::MAX);
        let mut answer_tokens = window.saturating_sub(request_tokens);
        if let Some(max) = request.max_output_tokens {
            answer_tokens = answer_tokens.min(u64::from(max));
        }
        Some(answer_tokens.saturating_mul(2))
    }

    /// Sends `request` in `mode`, retrying what a wait can fix.
    async fn send(
        &self,
        request: &ModelRequest,
        effort: Option<ReasoningEffort>,
        mode: StructuredOutputMode,
    ) -> Result<ModelResponse, Failure> {
        let body = request_body(
            &self.config.model,
            self.config.flavour,
            request,
            effort,
            mode,
            self.answer_chars(request),
        );
        let sent_format =
            request.output_schema.is_some() && mode != StructuredOutputMode::Instructions;
        let mut tries = 0;
        loop {
            tries += 1;
            let error = match self.try_once(&body, effort.is_some(), sent_format).await {
                Ok(response) => return Ok(response),
                Err(Failure::Model(error)) => error,
                Err(refused) => return Err(refused),
            };
            match self
                .config
                .retry
                .delay_after(tries, &error, retry::jitter_unit())
            {
                Some(wait) => {
                    tracing::debug!(tries, ?wait, %error, "retrying a model call");
                    tokio::time::sleep(wait).await;
                }
                None => return Err(Failure::Model(error)),
            }
        }
    }
}

impl OpenAiClient {
    /// One HTTP exchange: send, read, classify.
    async fn try_once(
        &self,
        body: &Value,
        sent_reasoning_effort: bool,
        sent_format: bool,
    ) -> Result<ModelResponse, Failure> {
        let (status, headers, bytes) = self.post(body).await?;
        let now = jiff::Timestamp::now();
        if let Some(snapshot) = rate_limit_snapshot(&headers, now)
            && let Ok(mut last) = self.rate_limit.lock()
        {
            *last = Some(snapshot);
        }
        if !status.is_success() {
            if sent_format && structured::refuses_output_format(status, &bytes) {
                return Err(Failure::FormatRefused {
                    message: format!(
                        "http {status}: {}",
                        errors::cap_chars(String::from_utf8_lossy(&bytes).trim())
                    ),
                });
            }
            let attempted = Attempted {
                model: &self.config.model,
                endpoint: self.endpoint.as_str(),
                sent_reasoning_effort,
            };
            return Err(status_error(status, &headers, &bytes, now, attempted).into());
        }
        Ok(parse_success_body(self.config.flavour, &bytes)?)
    }
}

/// True when `url` is on this machine (`localhost` or a loopback address): such a server
/// needs no API key.
fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::errors::*;
    use super::*;
    use proptest::prelude::*;
    use reqwest::header::HeaderValue;

    const ATTEMPTED: Attempted<'static> = Attempted {
        model: "test-model",
        endpoint: "http://127.0.0.1:1/v1/responses",
        sent_reasoning_effort: false,
    };

    #[test]
    fn fatal_answers_name_what_to_change() {
        let now = jiff::Timestamp::UNIX_EPOCH;
        let none = HeaderMap::new();
        let not_found =
            br#"{"error":{"message":"The model `gpt-9` does not exist","code":"model_not_found"}}"#;
        let err = status_error(StatusCode::NOT_FOUND, &none, not_found, now, ATTEMPTED);
        assert!(
            err.is_fatal() && err.to_string().contains("check the model name"),
            "{err}"
        );
        let no_route = b"404 page not found";
        let err = status_error(StatusCode::NOT_FOUND, &none, no_route, now, ATTEMPTED);
        assert!(
            err.is_fatal() && err.to_string().contains("--base-url"),
            "{err}"
        );
        let refused = br#"{"error":{"message":"Unsupported parameter: 'reasoning.effort' is not supported with this model.","code":"unsupported_parameter"}}"#;
        let with_effort = Attempted {
            sent_reasoning_effort: true,
            ..ATTEMPTED
        };
        let err = status_error(StatusCode::BAD_REQUEST, &none, refused, now, with_effort);
        assert!(
            err.is_fatal() && err.to_string().contains("model_reasoning_effort"),
            "{err}"
        );
        let err = status_error(StatusCode::UNAUTHORIZED, &none, b"", now, ATTEMPTED);
        assert!(err.is_fatal(), "{err}");
        let err = status_error(StatusCode::SERVICE_UNAVAILABLE, &none, b"", now, ATTEMPTED);
        assert!(!err.is_fatal() && err.is_retryable(), "{err}");
    }

    #[test]
    fn rate_limit_headers_make_a_snapshot() {
        let now = jiff::Timestamp::from_second(1_000).unwrap();
        let snapshot = rate_limit_snapshot(
            &headers(&[
                ("x-ratelimit-limit-requests", "100"),
                ("x-ratelimit-remaining-requests", "5"),
                ("x-ratelimit-limit-tokens", "1000"),
                ("x-ratelimit-remaining-tokens", "900"),
            ]),
            now,
        )
        .unwrap();
        assert_eq!(snapshot.remaining_percent(), Some(5.0));
        assert_eq!(snapshot.observed_at, 1_000);
        assert_eq!(rate_limit_snapshot(&HeaderMap::new(), now), None);
    }

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
            status_error(StatusCode::BAD_REQUEST, &none, overflow, now, ATTEMPTED),
            ModelError::ContextOverflow { .. }
        ));
        let by_code = br#"{"error":{"message":"too big","code":"context_length_exceeded"}}"#;
        assert!(matches!(
            status_error(StatusCode::BAD_REQUEST, &none, by_code, now, ATTEMPTED),
            ModelError::ContextOverflow { .. }
        ));
        let other_400 = br#"{"error":{"message":"temperature must be at most 2"}}"#;
        let err = status_error(StatusCode::BAD_REQUEST, &none, other_400, now, ATTEMPTED);
        assert_eq!(
            err,
            ModelError::Other {
                message: "http 400 Bad Request: temperature must be at most 2".to_owned()
            }
        );
        let unknown =
            br#"{"error":{"message":"Unknown parameter: 'foo'.","code":"unknown_parameter"}}"#;
        let err = status_error(StatusCode::BAD_REQUEST, &none, unknown, now, ATTEMPTED);
        assert!(
            matches!(&err, ModelError::Configuration { .. }) && err.is_fatal(),
            "{err}"
        );
        let quota = br#"{"error":{"message":"out of credit","code":"insufficient_quota"}}"#;
        let err = status_error(StatusCode::TOO_MANY_REQUESTS, &none, quota, now, ATTEMPTED);
        assert!(
            matches!(&err, ModelError::Configuration { message } if message.contains("quota")),
            "{err}"
        );
        assert!(matches!(
            status_error(StatusCode::FORBIDDEN, &none, b"", now, ATTEMPTED),
            ModelError::Authentication { .. }
        ));
        assert!(matches!(
            status_error(
                StatusCode::BAD_GATEWAY,
                &none,
                b"<html>bad gateway</html>",
                now,
                ATTEMPTED
            ),
            ModelError::Transient { .. }
        ));
        let plain = br#"{"error":"the request exceeds the available context size"}"#;
        assert!(matches!(
            status_error(StatusCode::BAD_REQUEST, &none, plain, now, ATTEMPTED),
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
                jiff::Timestamp::UNIX_EPOCH, ATTEMPTED);
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
