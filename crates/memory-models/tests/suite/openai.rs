//! The OpenAI-compatible client against loopback servers: wiremock, and a raw TCP server for
//! bodies cut short at the transport level.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use memory_models::openai::{ApiFlavour, OpenAiClient, OpenAiConfig, RetryPolicy};
use memory_protocol::model::ReasoningEffort;
use memory_protocol::{
    ModelClient, ModelError, ModelRequest, ModelResponse, StageOneOutput, TaskKind, TokenUsage,
};
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Cargo sets this variable for the test process, so it stands in for an API key without
/// touching the environment (setting variables is unsafe in edition 2024).
const KEY_VARIABLE: &str = "CARGO_PKG_NAME";
const KEY: &str = env!("CARGO_PKG_NAME");
const OUTPUT_JSON: &str = r##"{"raw_memory":"m","rollout_summary":"# s","rollout_slug":null}"##;

fn config(base_url: &str, flavour: ApiFlavour) -> OpenAiConfig {
    let mut config = OpenAiConfig::new("test-model");
    config.base_url = format!("{base_url}/v1");
    config.api_key_env = Some(KEY_VARIABLE.to_owned());
    config.flavour = flavour;
    config.request_timeout = Duration::from_secs(5);
    // One try per call: these tests check how a single answer maps to an error; the retry
    // tests in `resilience.rs` set their own policy.
    config.retry = RetryPolicy::none();
    config
}

fn client(server: &MockServer, flavour: ApiFlavour) -> OpenAiClient {
    OpenAiClient::new(config(&server.uri(), flavour)).unwrap()
}

fn stage_one_request() -> ModelRequest {
    ModelRequest {
        task: TaskKind::StageOneExtraction,
        instructions: "system words".to_owned(),
        input: "user words".to_owned(),
        structured_input: json!({"not": "sent"}),
        output_schema: Some(StageOneOutput::output_schema()),
        reasoning_effort: Some(ReasoningEffort::Low),
        max_output_tokens: Some(777),
    }
}

fn responses_body(text: &str) -> Value {
    json!({
        "id": "resp_1", "object": "response", "status": "completed", "model": "test-model",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": text, "annotations": []}]}
        ],
        "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 40},
                  "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 5},
                  "total_tokens": 120}
    })
}

fn chat_body(text: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text, "refusal": null}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60,
                  "prompt_tokens_details": {"cached_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": 0}}
    })
}

async fn mount(server: &MockServer, route: &str, response: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(response)
        .mount(server)
        .await;
}

async fn error_for(status: u16, body: Value, extra_header: Option<(&str, &str)>) -> ModelError {
    let server = MockServer::start().await;
    let mut response = ResponseTemplate::new(status).set_body_json(body);
    if let Some((name, value)) = extra_header {
        response = response.insert_header(name, value);
    }
    mount(&server, "/v1/responses", response).await;
    client(&server, ApiFlavour::Responses)
        .complete(stage_one_request())
        .await
        .unwrap_err()
}

#[tokio::test]
async fn responses_success_sends_the_strict_schema_and_reads_usage() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(responses_body(OUTPUT_JSON)))
        .expect(1)
        .mount(&server)
        .await;
    let model = client(&server, ApiFlavour::Responses);
    assert_eq!(model.name(), "openai:test-model");
    let response = model.complete(stage_one_request()).await.unwrap();
    assert_eq!(
        response,
        ModelResponse {
            text: OUTPUT_JSON.to_owned(),
            usage: Some(TokenUsage {
                input_tokens: 100,
                cached_input_tokens: 40,
                output_tokens: 20,
                reasoning_output_tokens: 5
            }),
        }
    );
    let sent: Value = server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap();
    assert_eq!(
        sent,
        json!({
            "model": "test-model",
            "instructions": "system words",
            "input": [{"role": "user", "content": [{"type": "input_text", "text": "user words"}]}],
            "store": false,
            "text": {"format": {"type": "json_schema", "name": "stage_one_extraction",
                                "schema": StageOneOutput::output_schema(), "strict": true}},
            "reasoning": {"effort": "low"},
            "max_output_tokens": 777
        })
    );
}

#[tokio::test]
async fn chat_completions_success_sends_messages_and_response_format() {
    let server = MockServer::start().await;
    mount(
        &server,
        "/v1/chat/completions",
        ResponseTemplate::new(200).set_body_json(chat_body(OUTPUT_JSON)),
    )
    .await;
    let model = client(&server, ApiFlavour::ChatCompletions);
    assert_eq!(model.name(), "openai-chat:test-model");
    let response = model.complete(stage_one_request()).await.unwrap();
    assert_eq!(response.text, OUTPUT_JSON);
    assert_eq!(
        response.usage.map(|u| (u.input_tokens, u.output_tokens)),
        Some((50, 10))
    );
    let sent: Value = server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap();
    assert_eq!(
        sent,
        json!({
            "model": "test-model",
            "messages": [{"role": "system", "content": "system words"},
                         {"role": "user", "content": "user words"}],
            "response_format": {"type": "json_schema", "json_schema": {
                "name": "stage_one_extraction", "schema": StageOneOutput::output_schema(), "strict": true}},
            "reasoning_effort": "low",
            "max_completion_tokens": 777
        })
    );
}

#[tokio::test]
async fn plain_text_requests_send_no_schema() {
    let server = MockServer::start().await;
    mount(
        &server,
        "/v1/responses",
        ResponseTemplate::new(200).set_body_json(responses_body("plain words")),
    )
    .await;
    let mut request = stage_one_request();
    request.output_schema = None;
    request.reasoning_effort = None;
    request.max_output_tokens = None;
    let response = client(&server, ApiFlavour::Responses)
        .complete(request)
        .await
        .unwrap();
    assert_eq!(response.text, "plain words");
    let sent: Value = server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap();
    for absent in ["text", "reasoning", "max_output_tokens"] {
        assert!(sent.get(absent).is_none(), "{absent} in {sent}");
    }
}

#[tokio::test]
async fn unknown_fields_are_tolerated() {
    let server = MockServer::start().await;
    let mut body = responses_body(OUTPUT_JSON);
    body["brand_new_field"] = json!({"nested": [1, 2]});
    body["output"][1]["content"][0]["logprobs"] = json!([]);
    body["output"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "future_item", "x": 1}));
    body["usage"]["future_tokens"] = json!(9);
    mount(
        &server,
        "/v1/responses",
        ResponseTemplate::new(200).set_body_json(body),
    )
    .await;
    let response = client(&server, ApiFlavour::Responses)
        .complete(stage_one_request())
        .await
        .unwrap();
    assert_eq!(response.text, OUTPUT_JSON);
}

#[tokio::test]
async fn rate_limits_carry_the_retry_delay() {
    let body = json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}});
    let err = error_for(429, body.clone(), Some(("retry-after", "2"))).await;
    assert_eq!(
        err,
        ModelError::RateLimited {
            retry_after_ms: Some(2000),
            message: "http 429 Too Many Requests: Rate limit reached".to_owned()
        }
    );
    assert!(err.is_retryable());
    let err = error_for(429, body.clone(), Some(("retry-after-ms", "150"))).await;
    assert_eq!(err.retry_after(), Some(Duration::from_millis(150)));
    let err = error_for(429, body, None).await;
    assert!(
        matches!(
            err,
            ModelError::RateLimited {
                retry_after_ms: None,
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn server_errors_are_transient() {
    let err = error_for(
        500,
        json!({"error": {"message": "The server had an error"}}),
        None,
    )
    .await;
    assert!(
        matches!(&err, ModelError::Transient { message } if message.contains("500")),
        "{err}"
    );
    let err = error_for(503, json!("overloaded"), None).await;
    assert!(err.is_retryable(), "{err}");
}

#[tokio::test]
async fn context_overflow_is_recognised() {
    let body = json!({"error": {
        "message": "Your input exceeds the context window of this model.",
        "type": "invalid_request_error", "param": "input", "code": "context_length_exceeded"}});
    let err = error_for(400, body, None).await;
    assert!(matches!(err, ModelError::ContextOverflow { .. }), "{err}");
    // vLLM words it without a code.
    let body = json!({"object": "error", "message": "This model's maximum context length is 4096 tokens.", "code": 400});
    let err = error_for(400, json!({"error": body}), None).await;
    assert!(matches!(err, ModelError::ContextOverflow { .. }), "{err}");
}

#[tokio::test]
async fn rejected_keys_are_authentication_errors() {
    let err = error_for(
        401,
        json!({"error": {"message": "Incorrect API key provided"}}),
        None,
    )
    .await;
    assert!(matches!(err, ModelError::Authentication { .. }), "{err}");
}

#[tokio::test]
async fn a_missing_key_fails_before_any_request_to_a_remote_server() {
    // `.invalid` never resolves: the key check must fail before any connection is tried.
    let mut config = config("http://memory-test.invalid", ApiFlavour::Responses);
    config.api_key_env = Some("AGENT_MEMORY_TEST_VARIABLE_THAT_IS_NEVER_SET".to_owned());
    let err = OpenAiClient::new(config)
        .unwrap()
        .complete(stage_one_request())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ModelError::Authentication { message }
        if message.contains("AGENT_MEMORY_TEST_VARIABLE_THAT_IS_NEVER_SET is not set")),
        "{err}"
    );
}

#[tokio::test]
async fn servers_without_keys_get_no_authorization_header() {
    let server = MockServer::start().await;
    mount(
        &server,
        "/v1/responses",
        ResponseTemplate::new(200).set_body_json(responses_body(OUTPUT_JSON)),
    )
    .await;
    let mut config = config(&server.uri(), ApiFlavour::Responses);
    config.api_key_env = None;
    OpenAiClient::new(config)
        .unwrap()
        .complete(stage_one_request())
        .await
        .unwrap();
    let requests = server.received_requests().await.unwrap();
    assert!(!requests[0].headers.contains_key("authorization"));
}

#[tokio::test]
async fn a_slow_server_times_out_as_transient() {
    let server = MockServer::start().await;
    let slow = ResponseTemplate::new(200)
        .set_body_json(responses_body(OUTPUT_JSON))
        .set_delay(Duration::from_secs(3));
    mount(&server, "/v1/responses", slow).await;
    let mut config = config(&server.uri(), ApiFlavour::Responses);
    config.request_timeout = Duration::from_millis(200);
    let err = OpenAiClient::new(config)
        .unwrap()
        .complete(stage_one_request())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ModelError::Transient { message } if message.contains("timed out")),
        "{err}"
    );
}

#[tokio::test]
async fn malformed_json_is_invalid_output() {
    let server = MockServer::start().await;
    mount(
        &server,
        "/v1/responses",
        ResponseTemplate::new(200).set_body_string("<html>not json</html>"),
    )
    .await;
    let err = client(&server, ApiFlavour::Responses)
        .complete(stage_one_request())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ModelError::InvalidOutput { message } if message.contains("not json")),
        "{err}"
    );
}

#[tokio::test]
async fn output_text_that_is_not_json_is_invalid_when_a_schema_was_asked() {
    let server = MockServer::start().await;
    mount(
        &server,
        "/v1/chat/completions",
        ResponseTemplate::new(200).set_body_json(chat_body("Sure! Here is the JSON")),
    )
    .await;
    let err = client(&server, ApiFlavour::ChatCompletions)
        .complete(stage_one_request())
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::InvalidOutput { .. }), "{err}");
}

#[tokio::test]
async fn a_response_without_output_is_invalid() {
    let server = MockServer::start().await;
    let body = json!({"id": "resp", "status": "completed", "output": []});
    mount(
        &server,
        "/v1/responses",
        ResponseTemplate::new(200).set_body_json(body),
    )
    .await;
    let err = client(&server, ApiFlavour::Responses)
        .complete(stage_one_request())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ModelError::InvalidOutput { message } if message.contains("no output text")),
        "{err}"
    );
}

#[tokio::test]
async fn json_that_ends_early_is_transient() {
    let server = MockServer::start().await;
    let full = responses_body(OUTPUT_JSON).to_string();
    let cut = full.get(..full.len() / 2).unwrap().to_owned();
    mount(
        &server,
        "/v1/responses",
        ResponseTemplate::new(200).set_body_raw(cut, "application/json"),
    )
    .await;
    let err = client(&server, ApiFlavour::Responses)
        .complete(stage_one_request())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ModelError::Transient { message } if message.contains("ended early")),
        "{err}"
    );
}

/// Serves one request, answering with headers that promise more body than is sent.
fn serve_truncated_once(listener: TcpListener) {
    let Ok((mut stream, _)) = listener.accept() else {
        return;
    };
    let mut request = Vec::new();
    let mut buffer = [0u8; 4096];
    // Read the whole request (headers, then Content-Length bytes) so closing does not reset.
    loop {
        let Ok(n) = stream.read(&mut buffer) else {
            return;
        };
        if n == 0 {
            return;
        }
        request.extend_from_slice(&buffer[..n]);
        let text = String::from_utf8_lossy(&request);
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().to_owned())
                })
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
            if request.len() >= end + 4 + length {
                break;
            }
        }
    }
    let partial = r#"{"id":"resp_1","status":"completed","output":[{"type":"mess"#;
    let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 5000\r\n\
                connection: close\r\n\r\n";
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(partial.as_bytes());
    let _ = stream.flush();
}

#[tokio::test]
async fn a_body_cut_by_the_connection_is_transient() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || serve_truncated_once(listener));
    let model = OpenAiClient::new(config(
        &format!("http://127.0.0.1:{port}"),
        ApiFlavour::Responses,
    ))
    .unwrap();
    let err = model.complete(stage_one_request()).await.unwrap_err();
    assert!(matches!(err, ModelError::Transient { .. }), "{err}");
    server.join().unwrap();
}
