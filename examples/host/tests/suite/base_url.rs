//! `reference-host --base-url`: the same binary with its replies from a loopback
//! OpenAI-compatible server (wiremock on 127.0.0.1) instead of the script.

use std::process::Command;

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Answers a request whose last message is the user's with a shell call, and one whose last
/// message is a tool result with a final text: a turn is one call, then an answer.
struct ChatServer;

impl Respond for ChatServer {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = request.body_json().unwrap_or(Value::Null);
        let last_role = body
            .pointer("/messages")
            .and_then(Value::as_array)
            .and_then(|messages| messages.last())
            .and_then(|message| message.get("role"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let message = if last_role == "tool" {
            json!({"role": "assistant", "content": "The command printed loopback-ok."})
        } else {
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": format!("call_{}", body["messages"].as_array().map_or(0, Vec::len)),
                "type": "function",
                "function": {"name": "shell", "arguments": "{\"command\":\"echo loopback-ok\"}"}
            }]})
        };
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        }))
    }
}

#[test]
fn base_url_runs_the_loop_against_a_loopback_chat_server() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(MockServer::start());
    runtime.block_on(
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(ChatServer)
            .mount(&server),
    );
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    let unused = json!([{"text": "the server answers instead"}]);
    std::fs::write(
        &script,
        json!({
            "window_tokens": 16000,
            "projects": {"alpha": {"files": {"AGENTS.md": "Pinned: say what each command printed.\n"}}},
            "sessions": [{"project": "alpha", "turns": [
                {"user": "Run echo and tell me what it printed.", "replies": unused},
                {"user": "Once more, please.", "replies": unused}
            ]}]
        })
        .to_string(),
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_reference-host"))
        .arg("--script")
        .arg(&script)
        .arg("--home")
        .arg(dir.path().join("home"))
        .arg("--base-url")
        .arg(format!("{}/v1", server.uri()))
        .args(["--model", "loopback-model"])
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.starts_with("HOST requests=4 compactions=0 goal=none memories="),
        "{stdout}"
    );
    assert!(stdout.trim_end().ends_with(" violations=0"), "{stdout}");

    let bodies: Vec<Value> = runtime
        .block_on(server.received_requests())
        .unwrap()
        .iter()
        .map(|request| request.body_json().unwrap())
        .collect();
    assert_eq!(bodies.len(), 4);
    for body in &bodies {
        assert_eq!(body["model"], "loopback-model");
        assert_eq!(body["messages"][0]["role"], "system");
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(system.contains("Pinned: say what each command printed."));
        let tools: Vec<&str> = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|tool| tool.pointer("/function/name").and_then(Value::as_str))
            .collect();
        for name in ["shell", "memory_search", "update_goal"] {
            assert!(tools.contains(&name), "{tools:?}");
        }
        // Only tools the host runs are offered (it compacts; it keeps no working memory).
        assert!(!tools.contains(&"update_working_memory"), "{tools:?}");
    }
    // The second request carries the call and the shell's real output as its result.
    let second = bodies[1]["messages"].as_array().unwrap();
    let call_id = second[second.len() - 2]["tool_calls"][0]["id"].clone();
    let result = &second[second.len() - 1];
    assert_eq!(result["role"], "tool");
    assert_eq!(result["tool_call_id"], call_id);
    assert!(result["content"].as_str().unwrap().contains("loopback-ok"));
}
