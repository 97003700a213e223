//! Structured output against servers that refuse some output formats, the way
//! llama-cpp-python's server does, and answers that do not match the schema.

use std::time::Duration;

use memory_models::openai::{ApiFlavour, OpenAiClient, OpenAiConfig, RetryPolicy};
use memory_protocol::{
    ModelClient, ModelError, ModelRequest, StageOneOutput, StructuredOutputMode, TaskKind,
};
use serde_json::{Value, json};
use wiremock::matchers::{body_partial_json, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const OUTPUT_JSON: &str = r##"{"raw_memory":"m","rollout_summary":"# s","rollout_slug":null}"##;
/// A variable no test environment sets, so the client has no key.
const UNSET_KEY_VARIABLE: &str = "AGENT_MEMORY_TEST_VARIABLE_THAT_IS_NEVER_SET";

/// A loopback server needs no key: the client is built with an unset key variable.
fn config(server: &MockServer, flavour: ApiFlavour) -> OpenAiConfig {
    let mut config = OpenAiConfig::new("smollm2");
    config.base_url = format!("{}/v1", server.uri());
    config.api_key_env = Some(UNSET_KEY_VARIABLE.to_owned());
    config.flavour = flavour;
    config.request_timeout = Duration::from_secs(10);
    // Retries allowed: a refused format must still not be retried in the same mode.
    config.retry = RetryPolicy {
        max_tries: 7,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(20),
        max_retry_after: Duration::from_secs(1),
    };
    config
}

fn request() -> ModelRequest {
    ModelRequest {
        task: TaskKind::StageOneExtraction,
        instructions: "extract".to_owned(),
        input: "the rollout".to_owned(),
        structured_input: json!({}),
        output_schema: Some(StageOneOutput::output_schema()),
        reasoning_effort: None,
        max_output_tokens: None,
    }
}

fn chat(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}
    }))
}

fn responses(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "status": "completed",
        "output": [{"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": text}]}]
    }))
}

/// llama-cpp-python's answer to `response_format: {"type": "json_schema"}`.
fn llama_cpp_python_refusal() -> ResponseTemplate {
    ResponseTemplate::new(500).set_body_json(json!({
        "error": {
            "message": "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), \
                        'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]",
            "type": "internal_server_error"
        }
    }))
}

/// A Chat Completions server that answers every request with a valid stage-one output.
async fn answering_chat_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(chat(OUTPUT_JSON))
        .mount(&server)
        .await;
    server
}

/// An answering server, and a client of it set to `json_object`.
async fn json_object_client(window: Option<u64>) -> (MockServer, OpenAiClient) {
    let server = answering_chat_server().await;
    let mut config = config(&server, ApiFlavour::ChatCompletions);
    config.structured_output = StructuredOutputMode::JsonObject;
    config.context_window = window;
    let client = OpenAiClient::new(config).unwrap();
    (server, client)
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
async fn a_server_refusing_json_schema_gets_json_object_with_the_schema_and_keeps_it() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_partial_json(
            json!({"response_format": {"type": "json_schema"}}),
        ))
        .respond_with(llama_cpp_python_refusal())
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_partial_json(
            json!({"response_format": {"type": "json_object"}}),
        ))
        .respond_with(chat(OUTPUT_JSON))
        .mount(&server)
        .await;
    let client = OpenAiClient::new(config(&server, ApiFlavour::ChatCompletions)).unwrap();
    assert_eq!(
        client.structured_output(),
        Some(StructuredOutputMode::JsonSchema)
    );

    let response = client.complete(request()).await.unwrap();
    assert_eq!(response.text, OUTPUT_JSON);
    assert_eq!(
        client.structured_output(),
        Some(StructuredOutputMode::JsonObject)
    );
    let sent = bodies(&server).await;
    assert_eq!(
        sent.len(),
        2,
        "one refusal, not retried as transient: {sent:#?}"
    );
    assert_eq!(sent[1]["response_format"]["type"], "json_object");
    assert_eq!(
        sent[1]["response_format"]["schema"],
        StageOneOutput::output_schema()
    );
    let system = sent[1]["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.starts_with("extract") && system.contains("JSON Schema"),
        "{system}"
    );

    client.complete(request()).await.unwrap();
    assert_eq!(bodies(&server).await.len(), 3, "the mode is remembered");
}

/// A small model under a grammar may never close its string and fill the window (SmolLM2-135M
/// did on consolidation, stopped at the token limit); with a known window, the schema the
/// grammar is compiled from bounds every string and array so the answer ends within it.
#[tokio::test]
async fn with_a_known_window_the_grammar_schema_ends_the_answer_within_it() {
    let (server, client) = json_object_client(Some(8_192)).await;
    let mut request = request();
    request.input = "x".repeat(22_000);
    client.complete(request).await.unwrap();
    let sent = bodies(&server).await;
    let schema = &sent[0]["response_format"]["schema"];
    // 8,192 tokens less about 7,335 for the request, at two characters a token, over the
    // three strings of the answer (below the 1,000 characters a grammar engine accepts).
    let room = (8_192 - (22_000 + "extract".len()) as u64 / 3) * 2;
    for field in ["raw_memory", "rollout_summary"] {
        assert_eq!(
            schema["properties"][field]["maxLength"],
            room / 3,
            "{schema:#}"
        );
    }
    assert_eq!(
        schema["required"],
        StageOneOutput::output_schema()["required"]
    );
}

#[tokio::test]
async fn a_server_refusing_every_format_gets_the_schema_in_the_instructions() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .and(body_partial_json(json!({"text": {}})))
        .respond_with(ResponseTemplate::new(400).set_body_json(
            json!({"error": {"message": "Unsupported parameter: 'text.format'", "code": "unsupported_parameter"}}),
        ))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(responses(&format!("```json\n{OUTPUT_JSON}\n```")))
        .with_priority(2)
        .mount(&server)
        .await;
    let client = OpenAiClient::new(config(&server, ApiFlavour::Responses)).unwrap();
    let response = client.complete(request()).await.unwrap();
    assert_eq!(response.text, OUTPUT_JSON, "the fence is taken off");
    assert_eq!(
        client.structured_output(),
        Some(StructuredOutputMode::Instructions)
    );
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[0]["text"]["format"]["type"], "json_schema");
    assert_eq!(sent[1]["text"]["format"]["type"], "json_object");
    assert!(sent[2].get("text").is_none(), "{:#}", sent[2]);
    assert!(
        sent[2]["instructions"]
            .as_str()
            .unwrap()
            .contains("\"rollout_summary\"")
    );
}

#[tokio::test]
async fn an_answer_that_misses_the_schema_is_repaired_once() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(chat(r#"{"raw_memory": 5}"#))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(chat(OUTPUT_JSON))
        .with_priority(2)
        .mount(&server)
        .await;
    let client = OpenAiClient::new(config(&server, ApiFlavour::ChatCompletions)).unwrap();
    let response = client.complete(request()).await.unwrap();
    assert_eq!(response.text, OUTPUT_JSON);
    let usage = response.usage.unwrap();
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (20, 10),
        "both calls counted"
    );
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 2);
    let repair = sent[1]["messages"][1]["content"].as_str().unwrap();
    assert!(
        repair.starts_with("the rollout")
            && repair.contains("rejected")
            && repair.contains("raw_memory"),
        "{repair}"
    );
}

#[tokio::test]
async fn an_answer_still_wrong_after_the_repair_is_invalid_output_not_transient() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(chat(r#"{"title": "not the schema"}"#))
        .mount(&server)
        .await;
    let client = OpenAiClient::new(config(&server, ApiFlavour::ChatCompletions)).unwrap();
    let err = client.complete(request()).await.unwrap_err();
    assert!(
        matches!(&err, ModelError::InvalidOutput { message }
            if message.contains("does not match the output schema") && message.contains("repair")),
        "{err}"
    );
    assert!(!err.is_retryable());
    assert_eq!(bodies(&server).await.len(), 2);
}

#[tokio::test]
async fn the_configured_mode_is_where_a_client_starts() {
    let (server, client) = json_object_client(None).await;
    client.complete(request()).await.unwrap();
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["response_format"]["type"], "json_object");
}

#[tokio::test]
async fn a_loopback_server_needs_no_key_and_gets_no_authorization_header() {
    let server = answering_chat_server().await;
    for host in ["127.0.0.1", "localhost"] {
        let mut config = config(&server, ApiFlavour::ChatCompletions);
        config.base_url = config.base_url.replace("127.0.0.1", host);
        OpenAiClient::new(config)
            .unwrap()
            .complete(request())
            .await
            .unwrap();
    }
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2);
    assert!(
        requests
            .iter()
            .all(|r| !r.headers.contains_key("authorization"))
    );
}
