//! `agent-memory run` against a loopback OpenAI-compatible server that fails the way real ones
//! do: a rejected key, a missing key, a rate limit with `Retry-After`, a context overflow. The
//! binary runs as a user would run it; the server is wiremock on 127.0.0.1.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The environment variable the binary reads the key from.
const KEY_ENV: &str = "OPENAI_API_KEY";
const GOOD_KEY: &str = "sk-test-good-key-for-loopback-only";

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rollouts")
}

/// Runs `agent-memory run examples --json` against `server` with `key` (or none).
fn run(home: &Path, server: &MockServer, key: Option<&str>, extra: &[&str]) -> Output {
    run_on(&examples(), home, server, key, extra)
}

/// Runs `agent-memory run DIR --json` against `server` with `key` (or none).
fn run_on(
    rollouts: &Path,
    home: &Path,
    server: &MockServer,
    key: Option<&str>,
    extra: &[&str],
) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-memory"));
    command
        .arg("run")
        .arg(rollouts)
        .arg("--home")
        .arg(home)
        .args(["--model", "openai:test-model", "--base-url"])
        .arg(format!("{}/v1", server.uri()))
        .arg("--json")
        .args(extra)
        .env_remove(KEY_ENV);
    if let Some(key) = key {
        command.env(KEY_ENV, key);
    }
    command.output().unwrap()
}

fn json(output: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "not json ({e}):\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// A server that answers each task with a valid structured output, as a real model would.
struct Answers {
    /// Answer the first this many stage-one requests with this template instead.
    fail_first: usize,
    failure: ResponseTemplate,
    /// Refuse prompts longer than this many bytes as a context overflow.
    max_input_bytes: usize,
    seen: Arc<AtomicUsize>,
}

impl Respond for Answers {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = request.body_json().unwrap_or(Value::Null);
        let task = body
            .pointer("/text/format/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let input = body
            .pointer("/input/0/content/0/text")
            .and_then(Value::as_str)
            .unwrap_or("");
        if task == "stage_one_extraction" {
            let seen = self.seen.fetch_add(1, Ordering::SeqCst);
            if seen < self.fail_first {
                return self.failure.clone();
            }
        }
        if input.len() > self.max_input_bytes {
            return ResponseTemplate::new(400).set_body_json(json!({"error": {
                "message": "This model's maximum context length is 2048 tokens.",
                "type": "invalid_request_error", "code": "context_length_exceeded"}}));
        }
        let output = match task {
            "consolidation" => json!({
                "memory_md": "# Memory\n\n- consolidated by the loopback model\n",
                "memory_summary_md": "v1\nThe loopback model's summary.\n",
                "obsolete": []
            }),
            _ => json!({
                "raw_memory": "---\ndescription: from the loopback model\n---\n- a memory\n",
                "rollout_summary": "# A session\n\nSummary.\n",
                "rollout_slug": "loopback"
            }),
        };
        ResponseTemplate::new(200).set_body_json(json!({
            "status": "completed",
            "output": [{"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": output.to_string()}]}],
            "usage": {"input_tokens": 10, "output_tokens": 5}
        }))
    }
}

fn answers(fail_first: usize, failure: ResponseTemplate) -> Answers {
    Answers {
        fail_first,
        failure,
        max_input_bytes: usize::MAX,
        seen: Arc::new(AtomicUsize::new(0)),
    }
}

async fn serve(server: &MockServer, answers: Answers) {
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(answers)
        .mount(server)
        .await;
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn stage_one_requests(runtime: &tokio::runtime::Runtime, server: &MockServer) -> Vec<Value> {
    runtime
        .block_on(server.received_requests())
        .unwrap_or_default()
        .iter()
        .filter_map(|r| r.body_json::<Value>().ok())
        .filter(|body| body.pointer("/text/format/name") == Some(&json!("stage_one_extraction")))
        .collect()
}

#[test]
fn a_rejected_key_stops_the_run_at_once_and_a_rerun_with_a_good_key_does_all_the_work() {
    let runtime = runtime();
    let server = runtime.block_on(MockServer::start());
    let rejected = ResponseTemplate::new(401).set_body_json(json!({"error": {
        "message": "Incorrect API key provided: sk-bad.", "type": "invalid_request_error",
        "code": "invalid_api_key"}}));
    runtime.block_on(serve(&server, answers(usize::MAX, rejected)));
    let home = tempfile::tempdir().unwrap();
    let output = run(home.path(), &server, Some("sk-bad"), &[]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("authentication failed"), "{stderr}");
    assert!(
        stderr.contains("given back without spending an attempt"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("error:").count(),
        1,
        "one clear error: {stderr}"
    );
    let report = json(&output);
    assert_eq!(report["failed"], 0, "{report}");
    assert!(report["released"].as_u64().unwrap() >= 1, "{report}");
    assert_eq!(report["phase2"]["model_calls"], 0, "{report}");
    let calls = stage_one_requests(&runtime, &server).len();
    assert!(
        calls <= 8,
        "claims stop at the first rejection: {calls} calls"
    );

    let fixed = runtime.block_on(MockServer::start());
    runtime.block_on(serve(&fixed, answers(0, ResponseTemplate::new(500))));
    let output = run(home.path(), &fixed, Some(GOOD_KEY), &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = json(&output);
    assert_eq!(
        report["succeeded"], 5,
        "every rollout extracted at once: {report}"
    );
    assert_eq!(report["failed"], 0);
    assert_eq!(report["phase2"]["model_calls"], 1);
    assert!(home.path().join("memories/MEMORY.md").is_file());
}

#[test]
fn a_loopback_server_needs_no_key() {
    let runtime = runtime();
    let server = runtime.block_on(MockServer::start());
    runtime.block_on(serve(&server, answers(0, ResponseTemplate::new(500))));
    let home = tempfile::tempdir().unwrap();
    let output = run(home.path(), &server, None, &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(json(&output)["succeeded"], 5);
    let requests = runtime.block_on(server.received_requests()).unwrap();
    assert!(!requests.is_empty());
    assert!(
        requests
            .iter()
            .all(|r| !r.headers.contains_key("authorization"))
    );
}

/// A Chat Completions server that behaves like llama-cpp-python's: `json_schema` refused with
/// a 500 validation error, `json_object` with a schema answered.
struct LlamaCppPython;

impl Respond for LlamaCppPython {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = request.body_json().unwrap_or(Value::Null);
        match body
            .pointer("/response_format/type")
            .and_then(Value::as_str)
        {
            Some("json_object") => {}
            Some(other) => {
                return ResponseTemplate::new(500).set_body_json(json!({"error": {
                    "message": format!("[{{'type': 'literal_error', 'loc': ('body', \
                        'response_format', 'type'), 'msg': \"Input should be 'text' or \
                        'json_object'\", 'input': '{other}'}}]"),
                    "type": "internal_server_error"}}));
            }
            None => return ResponseTemplate::new(400),
        }
        let consolidation = body
            .pointer("/response_format/schema/properties/memory_md")
            .is_some();
        let output = if consolidation {
            json!({
                "memory_md": "# Memory\n\n- consolidated by the loopback model\n",
                "memory_summary_md": "v1\nThe loopback model's summary.\n",
                "obsolete": []
            })
        } else {
            json!({
                "raw_memory": "---\ndescription: from the loopback model\n---\n- a memory\n",
                "rollout_summary": "# A session\n\nSummary.\n",
                "rollout_slug": "loopback"
            })
        };
        ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": output.to_string()}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}
        }))
    }
}

/// Runs `agent-memory ARGS --home HOME` with no API key in the environment.
fn agent_memory(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .args(args)
        .arg("--home")
        .arg(home)
        .env_remove(KEY_ENV)
        .output()
        .unwrap()
}

#[test]
fn a_server_refusing_json_schema_gets_json_object_and_every_job_succeeds() {
    let runtime = runtime();
    let server = runtime.block_on(MockServer::start());
    runtime.block_on(
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(LlamaCppPython)
            .mount(&server),
    );
    let home = tempfile::tempdir().unwrap();
    let examples = examples();
    let base_url = format!("{}/v1", server.uri());
    let output = agent_memory(
        home.path(),
        &[
            "run",
            examples.to_str().unwrap(),
            "--model",
            "openai-chat:smollm2",
            "--base-url",
            &base_url,
            "--json",
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = json(&output);
    assert_eq!(report["succeeded"], 5, "{report}");
    assert_eq!(report["failed"], 0, "{report}");
    assert_eq!(report["invalid_output"], 0, "{report}");
    assert_eq!(
        report["structured_output"],
        json!({"extract": "json_object", "consolidate": "json_object"}),
        "{report}"
    );
    assert_eq!(report["phase2"]["model_calls"], 1, "{report}");
    let memory = std::fs::read_to_string(home.path().join("memories/MEMORY.md")).unwrap();
    assert!(
        memory.contains("consolidated by the loopback model"),
        "{memory}"
    );
    let refused = runtime
        .block_on(server.received_requests())
        .unwrap()
        .iter()
        .filter(|r| {
            r.body_json::<Value>().ok().and_then(|b| {
                b.pointer("/response_format/type")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            }) == Some("json_schema".to_owned())
        })
        .count();
    // Jobs run concurrently, so each may send json_schema once before the first refusal comes
    // back; retried as transient, each would be refused seven times.
    assert!(
        (1..=5).contains(&refused),
        "a refusal is learned, not retried as transient: {refused} refused requests"
    );
}

#[test]
fn base_url_is_for_the_http_model_and_consolidate_falls_back_to_extract_model() {
    let runtime = runtime();
    let server = runtime.block_on(MockServer::start());
    runtime.block_on(
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(LlamaCppPython)
            .mount(&server),
    );
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "[memories]\nextract_model = \"openai-chat:smollm2\"\nconsolidation_model = \"offline\"\n",
    )
    .unwrap();
    let base_url = format!("{}/v1", server.uri());
    let examples = examples();
    let output = agent_memory(
        home.path(),
        &[
            "run",
            examples.to_str().unwrap(),
            "--base-url",
            &base_url,
            "--json",
        ],
    );
    assert!(
        output.status.success(),
        "an offline consolidation model takes no --base-url: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = json(&output);
    assert_eq!(report["succeeded"], 5, "{report}");
    assert_eq!(
        report["structured_output"],
        json!({"extract": "json_object", "consolidate": null}),
        "{report}"
    );

    std::fs::write(
        home.path().join("config.toml"),
        "[memories]\nextract_model = \"openai-chat:smollm2\"\n",
    )
    .unwrap();
    let output = agent_memory(
        home.path(),
        &["consolidate", "--base-url", &base_url, "--json"],
    );
    let report = json(&output);
    assert_eq!(
        report["model"], "openai-chat:smollm2",
        "consolidate uses extract_model when no consolidation_model is set"
    );
    assert_eq!(report["ran"], false, "cooling down: {report}");

    let posts = || {
        runtime
            .block_on(server.received_requests())
            .unwrap()
            .iter()
            .filter(|r| r.method.as_str() == "POST")
            .count()
    };
    let before = posts();
    let output = agent_memory(
        home.path(),
        &["consolidate", "--now", "--base-url", &base_url, "--json"],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = json(&output);
    assert_eq!(report["ran"], true, "--now ignores the cooldown: {report}");
    assert_eq!(report["model_calls"], 1, "{report}");
    // A new process starts at json_schema again: one refused request, then json_object.
    assert_eq!(
        posts(),
        before + 2,
        "the consolidation went to the extraction model's server"
    );
}

#[test]
fn a_rate_limit_with_retry_after_costs_no_attempt() {
    let runtime = runtime();
    let server = runtime.block_on(MockServer::start());
    let limited = ResponseTemplate::new(429)
        .insert_header("retry-after", "1")
        .set_body_json(
            json!({"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}),
        );
    runtime.block_on(serve(&server, answers(1, limited)));
    let home = tempfile::tempdir().unwrap();
    let output = run(home.path(), &server, Some(GOOD_KEY), &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = json(&output);
    assert_eq!(report["succeeded"], 5, "{report}");
    assert_eq!(report["failed"], 0, "{report}");
    assert_eq!(stage_one_requests(&runtime, &server).len(), 6, "one retry");
    // Nothing is waiting out a back-off: a second run has nothing left to do.
    let again = json(&run(home.path(), &server, Some(GOOD_KEY), &[]));
    assert_eq!(again["claimed"], 0, "{again}");
}

#[test]
fn a_context_overflow_answer_leads_to_a_smaller_second_request() {
    let runtime = runtime();
    let server = runtime.block_on(MockServer::start());
    // The server refuses prompts over 40 KB; the one rollout holds a ~150 KB build log.
    let mut refusing = answers(0, ResponseTemplate::new(500));
    refusing.max_input_bytes = 40_000;
    runtime.block_on(serve(&server, refusing));
    let rollouts = tempfile::tempdir().unwrap();
    write_long_rollout(rollouts.path());
    let home = tempfile::tempdir().unwrap();
    let output = run_on(
        rollouts.path(),
        home.path(),
        &server,
        Some(GOOD_KEY),
        &["--context-window", "100000"],
    );
    let report = json(&output);
    assert_eq!(
        report["context_window"],
        json!({"tokens": 100000, "source": "configured"})
    );
    assert_eq!(report["failed"], 0, "{report}");
    assert_eq!(report["succeeded"], 1, "{report}");
    let sizes: Vec<usize> = stage_one_requests(&runtime, &server)
        .iter()
        .map(|body| {
            body.pointer("/input/0/content/0/text")
                .and_then(Value::as_str)
                .unwrap_or("")
                .len()
        })
        .collect();
    assert!(sizes.len() >= 2, "{sizes:?}");
    assert!(sizes[0] > 40_000, "{sizes:?}");
    for pair in sizes.windows(2) {
        assert!(
            pair[1] < pair[0],
            "each request smaller than the last: {sizes:?}"
        );
    }
    assert!(*sizes.last().unwrap() <= 40_000, "{sizes:?}");
}

/// One codex rollout whose command printed a long build log.
fn write_long_rollout(dir: &Path) {
    let folder = dir.join("2025/10/01");
    std::fs::create_dir_all(&folder).unwrap();
    let id = "01990000-0000-7000-8000-00000000abcd";
    let ts = "2025-10-01T10:00:00.000Z";
    let log: String = (0..5_000)
        .map(|i| format!("compiling unit {i} of the widget crate\n"))
        .collect();
    let lines = [
        json!({"timestamp": ts, "type": "session_meta",
               "payload": {"id": id, "cwd": "/work/widget", "source": "cli"}}),
        json!({"timestamp": ts, "type": "response_item", "payload": {"type": "message",
               "role": "user", "content": [{"type": "input_text", "text": "Fix the widget build."}]}}),
        json!({"timestamp": ts, "type": "response_item", "payload": {"type": "function_call",
               "name": "exec_command", "arguments": "{\"cmd\":\"cargo build\"}", "call_id": "c1"}}),
        json!({"timestamp": ts, "type": "response_item", "payload": {"type": "function_call_output",
               "call_id": "c1", "output": log}}),
        json!({"timestamp": ts, "type": "response_item", "payload": {"type": "message",
               "role": "assistant", "content": [{"type": "output_text", "text": "The build passes now."}]}}),
    ];
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(
        folder.join(format!("rollout-2025-10-01T10-00-00-{id}.jsonl")),
        text,
    )
    .unwrap();
}

#[test]
fn the_window_is_taken_from_the_servers_model_list_and_reported() {
    let runtime = runtime();
    let server = runtime.block_on(MockServer::start());
    runtime.block_on(
        Mock::given(method("GET"))
            .and(path("/v1/models"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "object": "list",
                "data": [{"id": "test-model", "object": "model", "max_model_len": 65536}]
            })))
            .mount(&server),
    );
    runtime.block_on(serve(&server, answers(0, ResponseTemplate::new(500))));
    let home = tempfile::tempdir().unwrap();
    let output = run(home.path(), &server, Some(GOOD_KEY), &[]);
    assert!(output.status.success());
    let report = json(&output);
    assert_eq!(
        report["context_window"],
        json!({"tokens": 65536, "source": "server"})
    );
    for body in stage_one_requests(&runtime, &server) {
        assert!(
            body.get("reasoning").is_none(),
            "no effort unless configured: {body}"
        );
    }
}

/// A loopback port with nothing listening: bound, then released.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn a_refused_base_url_stops_the_run_at_once_naming_the_url_and_spends_no_attempt() {
    let home = tempfile::tempdir().unwrap();
    let base_url = format!("http://127.0.0.1:{}/v1", closed_port());
    let started = std::time::Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .arg("run")
        .arg(examples())
        .arg("--home")
        .arg(home.path())
        .args(["--model", "openai-chat:llama3", "--base-url", &base_url])
        .env(KEY_ENV, GOOD_KEY)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&base_url), "{stderr}");
    assert!(stderr.contains("connection refused"), "{stderr}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "no retries: {:?}",
        started.elapsed()
    );
    // Nothing backs off: the next run (offline) extracts every rollout at once.
    let next = agent_memory(
        home.path(),
        &["run", examples().to_str().unwrap(), "--json"],
    );
    let report = json(&next);
    assert_eq!(report["succeeded"], 4, "{report}");
    assert_eq!(report["failed"], 0, "{report}");
}

#[test]
fn failed_jobs_are_counted_by_reason_shown_by_status_and_retried_on_request() {
    let runtime = runtime();
    let broken = runtime.block_on(MockServer::start());
    let garbage = ResponseTemplate::new(200).set_body_json(json!({
        "status": "completed",
        "output": [{"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": "not the schema"}]}]
    }));
    runtime.block_on(serve(&broken, answers(usize::MAX, garbage)));
    let home = tempfile::tempdir().unwrap();
    let first = run(home.path(), &broken, Some(GOOD_KEY), &[]);
    assert_eq!(first.status.code(), Some(1), "jobs failed");
    assert_eq!(json(&first)["failed"], 5);

    // The server is fixed, but the jobs back off: the run says so, by reason.
    let fixed = runtime.block_on(MockServer::start());
    runtime.block_on(serve(&fixed, answers(0, ResponseTemplate::new(500))));
    let waiting = json(&run(home.path(), &fixed, Some(GOOD_KEY), &[]));
    assert_eq!(waiting["claimed"], 0, "{waiting}");
    assert_eq!(
        waiting["skipped_by_reason"],
        json!({"excluded": 1, "backing_off": 5}),
        "{waiting}"
    );
    assert!(waiting["next_retry_at"].as_i64().is_some(), "{waiting}");
    let text = Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .arg("run")
        .arg(examples())
        .arg("--home")
        .arg(home.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("skipped 6: 1 never extracted (non_interactive:exec x1); 5 backing off"),
        "{text}"
    );
    assert!(text.contains("--retry-failed retries now"), "{text}");

    let status = agent_memory(home.path(), &["status"]);
    let status_text = String::from_utf8_lossy(&status.stdout);
    assert!(status_text.contains("failed jobs: 5"), "{status_text}");
    assert!(status_text.contains("next retry"), "{status_text}");
    let status_json: Value =
        serde_json::from_slice(&agent_memory(home.path(), &["status", "--json"]).stdout).unwrap();
    assert_eq!(status_json["failed_jobs"].as_array().unwrap().len(), 5);

    let retried = run(home.path(), &fixed, Some(GOOD_KEY), &["--retry-failed"]);
    let report = json(&retried);
    assert_eq!(report["retried_failed"], 5, "{report}");
    assert_eq!(report["succeeded"], 5, "{report}");
    let status = agent_memory(home.path(), &["status"]);
    assert!(!String::from_utf8_lossy(&status.stdout).contains("failed jobs"));
}
