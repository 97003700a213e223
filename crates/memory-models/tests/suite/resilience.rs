//! The HTTP client against a loopback server that fails the way real servers do: rate limits
//! with `Retry-After`, runs of 5xx answers, rejected keys, unknown models, refused parameters;
//! and the context window a server reports.

use std::time::{Duration, Instant};

use memory_models::openai::{ApiFlavour, OpenAiClient, OpenAiConfig, RetryPolicy};
use memory_protocol::model::ReasoningEffort;
use memory_protocol::{
    ContextWindowSource, ModelClient, ModelError, ModelRequest, StageOneOutput, TaskKind,
};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Cargo sets this variable for the test process, so it stands in for an API key.
const KEY_VARIABLE: &str = "CARGO_PKG_NAME";
const OUTPUT_JSON: &str = r##"{"raw_memory":"m","rollout_summary":"# s","rollout_slug":null}"##;

/// Retries with waits short enough for a test, long enough to be real waits.
fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        max_tries: 7,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(40),
        max_retry_after: Duration::from_secs(2),
    }
}

fn config(server: &MockServer, flavour: ApiFlavour) -> OpenAiConfig {
    let mut config = OpenAiConfig::new("test-model");
    config.base_url = format!("{}/v1", server.uri());
    config.api_key_env = Some(KEY_VARIABLE.to_owned());
    config.flavour = flavour;
    config.request_timeout = Duration::from_secs(10);
    config.retry = fast_retries();
    config
}

fn request(effort: Option<ReasoningEffort>) -> ModelRequest {
    ModelRequest {
        task: TaskKind::StageOneExtraction,
        instructions: "system".to_owned(),
        input: "user".to_owned(),
        structured_input: json!({}),
        output_schema: Some(StageOneOutput::output_schema()),
        reasoning_effort: effort,
        max_output_tokens: None,
    }
}

fn success() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "status": "completed",
        "output": [{"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": OUTPUT_JSON}]}]
    }))
}

fn chat_success() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": OUTPUT_JSON}}]
    }))
}

/// Answers `first` for the first `times` requests to `route`, then `then`.
async fn failing_then(
    server: &MockServer,
    route: &str,
    first: ResponseTemplate,
    times: u64,
    then: ResponseTemplate,
) {
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(first)
        .up_to_n_times(times)
        .with_priority(1)
        .mount(server)
        .await;
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(then)
        .with_priority(2)
        .mount(server)
        .await;
}

async fn always(server: &MockServer, route: &str, answer: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(answer)
        .mount(server)
        .await;
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.body_json().unwrap_or(Value::Null))
        .collect()
}

#[tokio::test]
async fn a_429_with_retry_after_is_waited_out_inside_the_call() {
    let server = MockServer::start().await;
    let limited = ResponseTemplate::new(429)
        .insert_header("retry-after", "1")
        .set_body_json(json!({"error": {"message": "slow down", "code": "rate_limit_exceeded"}}));
    failing_then(&server, "/v1/responses", limited, 1, success()).await;
    let client = OpenAiClient::new(config(&server, ApiFlavour::Responses)).unwrap();
    let started = Instant::now();
    let response = client.complete(request(None)).await.unwrap();
    assert_eq!(response.text, OUTPUT_JSON);
    assert_eq!(bodies(&server).await.len(), 2);
    // The server asked for one second; the client waited at least that long.
    assert!(started.elapsed() >= Duration::from_secs(1));
}

#[tokio::test]
async fn five_503s_then_success_succeed() {
    let server = MockServer::start().await;
    failing_then(
        &server,
        "/v1/chat/completions",
        ResponseTemplate::new(503).set_body_string("upstream busy"),
        5,
        chat_success(),
    )
    .await;
    let client = OpenAiClient::new(config(&server, ApiFlavour::ChatCompletions)).unwrap();
    let response = client.complete(request(None)).await.unwrap();
    assert_eq!(response.text, OUTPUT_JSON);
    assert_eq!(bodies(&server).await.len(), 6);
}

#[tokio::test]
async fn retries_are_bounded_and_the_last_error_returned() {
    let server = MockServer::start().await;
    failing_then(
        &server,
        "/v1/responses",
        ResponseTemplate::new(502),
        100,
        success(),
    )
    .await;
    let client = OpenAiClient::new(config(&server, ApiFlavour::Responses)).unwrap();
    let err = client.complete(request(None)).await.unwrap_err();
    assert!(matches!(err, ModelError::Transient { .. }), "{err}");
    assert_eq!(bodies(&server).await.len(), 7, "max_tries tries in all");
}

#[tokio::test]
async fn a_retry_after_beyond_the_cap_ends_the_call_at_once() {
    let server = MockServer::start().await;
    let limited = ResponseTemplate::new(429).insert_header("retry-after", "3600");
    failing_then(&server, "/v1/responses", limited, 1, success()).await;
    let client = OpenAiClient::new(config(&server, ApiFlavour::Responses)).unwrap();
    let err = client.complete(request(None)).await.unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(3600)));
    assert_eq!(bodies(&server).await.len(), 1);
}

#[tokio::test]
async fn what_no_retry_can_fix_fails_at_once_and_is_fatal() {
    for (status, body, expected) in [
        (
            401,
            json!({"error": {"message": "Incorrect API key provided"}}),
            "authentication failed",
        ),
        (
            404,
            json!({"error": {"message": "The model `test-model` does not exist", "code": "model_not_found"}}),
            "does not know model `test-model`",
        ),
    ] {
        let server = MockServer::start().await;
        failing_then(
            &server,
            "/v1/responses",
            ResponseTemplate::new(status).set_body_json(body),
            1,
            success(),
        )
        .await;
        let client = OpenAiClient::new(config(&server, ApiFlavour::Responses)).unwrap();
        let err = client.complete(request(None)).await.unwrap_err();
        assert!(err.is_fatal(), "{err}");
        assert!(err.to_string().contains(expected), "{err}");
        assert_eq!(bodies(&server).await.len(), 1, "{status} is not retried");
    }
}

#[tokio::test]
async fn a_malformed_base_url_is_a_configuration_error() {
    let mut config = OpenAiConfig::new("m");
    config.base_url = "localhost:8000/v1".to_owned();
    let err = OpenAiClient::new(config).unwrap_err();
    assert!(err.is_fatal(), "{err}");
}

/// A loopback port with nothing listening: bound, then released.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test]
async fn a_refused_connection_fails_at_once_naming_the_url() {
    let mut config = OpenAiConfig::new("m");
    let base_url = format!("http://127.0.0.1:{}/v1", closed_port());
    config.base_url = base_url.clone();
    config.retry = RetryPolicy {
        // Long waits: a retried refusal would show in the elapsed time.
        initial_backoff: Duration::from_secs(5),
        ..fast_retries()
    };
    let client = OpenAiClient::new(config).unwrap();
    let started = Instant::now();
    let err = client.complete(request(None)).await.unwrap_err();
    assert!(err.is_fatal(), "{err}");
    assert!(err.to_string().contains(&base_url), "{err}");
    assert!(err.to_string().contains("connection refused"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5), "retried: {err}");
}

#[tokio::test]
async fn reasoning_effort_is_sent_only_when_configured() {
    for flavour in [ApiFlavour::Responses, ApiFlavour::ChatCompletions] {
        let route = match flavour {
            ApiFlavour::Responses => "/v1/responses",
            ApiFlavour::ChatCompletions => "/v1/chat/completions",
        };
        let answer = match flavour {
            ApiFlavour::Responses => success(),
            ApiFlavour::ChatCompletions => chat_success(),
        };
        let server = MockServer::start().await;
        always(&server, route, answer).await;
        let plain = OpenAiClient::new(config(&server, flavour)).unwrap();
        plain.complete(request(None)).await.unwrap();
        let mut with_effort = config(&server, flavour);
        with_effort.reasoning_effort = Some(ReasoningEffort::High);
        let configured = OpenAiClient::new(with_effort).unwrap();
        configured.complete(request(None)).await.unwrap();
        let sent = bodies(&server).await;
        assert!(sent[0].get("reasoning").is_none() && sent[0].get("reasoning_effort").is_none());
        match flavour {
            ApiFlavour::Responses => assert_eq!(sent[1]["reasoning"], json!({"effort": "high"})),
            ApiFlavour::ChatCompletions => assert_eq!(sent[1]["reasoning_effort"], "high"),
        }
    }
}

#[tokio::test]
async fn a_server_refusing_the_reasoning_field_is_a_clear_fatal_error() {
    let server = MockServer::start().await;
    let refused = ResponseTemplate::new(400).set_body_json(json!({"error": {
        "message": "Unsupported parameter: 'reasoning.effort' is not supported with this model.",
        "type": "invalid_request_error", "param": "reasoning.effort", "code": "unsupported_parameter"}}));
    failing_then(&server, "/v1/responses", refused, 1, success()).await;
    let mut with_effort = config(&server, ApiFlavour::Responses);
    with_effort.reasoning_effort = Some(ReasoningEffort::Low);
    let client = OpenAiClient::new(with_effort).unwrap();
    let err = client.complete(request(None)).await.unwrap_err();
    assert!(err.is_fatal(), "{err}");
    assert!(err.to_string().contains("reasoning effort"), "{err}");
}

#[tokio::test]
async fn the_window_comes_from_the_servers_model_list() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "object": "list",
            "data": [{"id": "test-model", "object": "model", "max_model_len": 32768}]
        })))
        .mount(&server)
        .await;
    let mut client = OpenAiClient::new(config(&server, ApiFlavour::Responses)).unwrap();
    assert_eq!(client.window().source, ContextWindowSource::Default);
    let window = client.resolve_context_window().await;
    assert_eq!(window.tokens, Some(32_768));
    assert_eq!(window.source, ContextWindowSource::Server);
    assert_eq!(client.context_window(), Some(32_768));
}

#[tokio::test]
async fn the_window_comes_from_llama_cpp_props_and_a_configured_one_wins() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/props"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "default_generation_settings": {"n_ctx": 8192}
        })))
        .mount(&server)
        .await;
    let mut client = OpenAiClient::new(config(&server, ApiFlavour::ChatCompletions)).unwrap();
    let window = client.resolve_context_window().await;
    assert_eq!(
        (window.tokens, window.source),
        (Some(8_192), ContextWindowSource::Server)
    );

    let mut configured = config(&server, ApiFlavour::ChatCompletions);
    configured.context_window = Some(4_000);
    let mut client = OpenAiClient::new(configured).unwrap();
    let window = client.resolve_context_window().await;
    assert_eq!(
        (window.tokens, window.source),
        (Some(4_000), ContextWindowSource::Configured)
    );
}

#[tokio::test]
async fn a_silent_server_leaves_the_known_model_table_or_the_default() {
    let server = MockServer::start().await;
    let mut known = config(&server, ApiFlavour::Responses);
    known.model = "gpt-4.1-mini".to_owned();
    let mut client = OpenAiClient::new(known).unwrap();
    let window = client.resolve_context_window().await;
    assert_eq!(
        (window.tokens, window.source),
        (Some(1_047_576), ContextWindowSource::KnownModel)
    );
    let mut client = OpenAiClient::new(config(&server, ApiFlavour::Responses)).unwrap();
    let window = client.resolve_context_window().await;
    assert_eq!(
        (window.tokens, window.source),
        (None, ContextWindowSource::Default)
    );
}

#[tokio::test]
async fn the_last_rate_limit_headers_are_kept() {
    let server = MockServer::start().await;
    let answer = success()
        .insert_header("x-ratelimit-limit-requests", "500")
        .insert_header("x-ratelimit-remaining-requests", "25")
        .insert_header("x-ratelimit-limit-tokens", "200000")
        .insert_header("x-ratelimit-remaining-tokens", "180000");
    always(&server, "/v1/responses", answer).await;
    let client = OpenAiClient::new(config(&server, ApiFlavour::Responses)).unwrap();
    assert_eq!(client.rate_limit(), None);
    client.complete(request(None)).await.unwrap();
    let snapshot = client.rate_limit().unwrap();
    assert_eq!(snapshot.remaining_requests, Some(25));
    assert_eq!(snapshot.remaining_percent(), Some(5.0));
}
