//! `agent-memory` under interruption and hostile input: Ctrl-C gives the work back, failed jobs
//! set the exit code, terminal escapes never reach the terminal, secrets in paths never reach
//! the home.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use agent_memory::protocol::stage_one::JobStatus;
use agent_memory::write::StateStore;
use agent_memory::write::store::WriteStore;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rollouts")
}

fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agent-memory"))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not json ({e}): {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[test]
fn run_exits_1_after_its_summary_when_a_job_failed() {
    let dir = tempfile::tempdir().unwrap();
    let rollouts = dir.path().join("rollouts");
    copy_dir(&examples(), &rollouts);
    // A rollout, idle for long, with no readable line: its job fails.
    let broken = r#"{"timestamp":"2025-01-01T00:00:00Z","type":"response_item","payload":"bad"}"#;
    std::fs::write(rollouts.join("rollout-broken.jsonl"), format!("{broken}\n")).unwrap();
    let home = dir.path().join("home");
    let output = binary()
        .arg("run")
        .arg(&rollouts)
        .arg("--home")
        .arg(&home)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report = stdout_json(&output);
    assert_eq!(report["failed"], 1, "{report}");
    assert_eq!(report["succeeded"], 4, "{report}");
    assert_eq!(
        report["phase2"]["ran"], true,
        "the rest was consolidated: {report}"
    );
    // The text summary is printed too, then the same code.
    let output = binary()
        .arg("run")
        .arg(&rollouts)
        .arg("--home")
        .arg(dir.path().join("home2"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stdout).contains("1 failed"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("error: 1 job(s) failed: `agent-memory status` lists them"),
        "{stderr}"
    );
    // A clean run exits 0; a bad command line exits 2.
    let clean = binary()
        .arg("run")
        .arg(examples())
        .arg("--home")
        .arg(dir.path().join("home3"))
        .output()
        .unwrap();
    assert_eq!(clean.status.code(), Some(0));
    let usage = binary().args(["run", "--limit", "0"]).output().unwrap();
    assert_eq!(usage.status.code(), Some(2));
}

/// Answers every request after `delay`, as a slow model would.
struct Slow(Duration);

impl Respond for Slow {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = request.body_json().unwrap_or(Value::Null);
        let task = body
            .pointer("/text/format/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let output = match task {
            "consolidation" => json!({
                "memory_md": "# Memory\n\n- from the loopback model\n",
                "memory_summary_md": "v1\nsummary\n",
                "obsolete": []
            }),
            _ => json!({
                "raw_memory": "- a memory\n",
                "rollout_summary": "# A session\n",
                "rollout_slug": "loopback"
            }),
        };
        ResponseTemplate::new(200)
            .set_delay(self.0)
            .set_body_json(json!({
                "status": "completed",
                "output": [{"type": "message", "role": "assistant",
                            "content": [{"type": "output_text", "text": output.to_string()}]}],
                "usage": {"input_tokens": 10, "output_tokens": 5}
            }))
    }
}

fn model_run(home: &Path, server: &MockServer) -> Command {
    let mut command = binary();
    command
        .arg("run")
        .arg(examples())
        .arg("--home")
        .arg(home)
        .args(["--model", "openai:test-model", "--base-url"])
        .arg(format!("{}/v1", server.uri()))
        .arg("--json")
        .env("OPENAI_API_KEY", "sk-test-loopback-only");
    command
}

#[cfg(unix)]
#[test]
fn ctrl_c_gives_every_held_job_back_and_the_next_run_does_the_work_at_once() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let hanging = runtime.block_on(MockServer::start());
    runtime.block_on(
        Mock::given(method("POST"))
            .and(path("/v1/responses"))
            .respond_with(Slow(Duration::from_secs(600)))
            .mount(&hanging),
    );
    let home = tempfile::tempdir().unwrap();
    let mut child = model_run(home.path(), &hanging)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the five eligible jobs are leased to the run (a hang guard, not a timing).
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let running = StateStore::open_home(home.path())
            .and_then(|store| runtime.block_on(store.stage_one_jobs()))
            .map(|jobs| {
                jobs.iter()
                    .filter(|j| j.status == JobStatus::Running)
                    .count()
            })
            .unwrap_or(0);
        if running == 5 {
            break;
        }
        assert!(Instant::now() < deadline, "the jobs were never claimed");
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exited = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < exited, "Ctrl-C did not stop the run");
        std::thread::sleep(Duration::from_millis(10));
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("gave back 5 job(s)"), "{stderr}");
    let store = StateStore::open_home(home.path()).unwrap();
    for job in runtime.block_on(store.stage_one_jobs()).unwrap() {
        assert_eq!(
            (job.status, job.attempts),
            (JobStatus::Pending, 0),
            "{job:?}"
        );
    }
    drop(store);

    // The next run takes all five at once: no lease to wait out.
    let fast = runtime.block_on(MockServer::start());
    runtime.block_on(
        Mock::given(method("POST"))
            .and(path("/v1/responses"))
            .respond_with(Slow(Duration::ZERO))
            .mount(&fast),
    );
    let output = model_run(home.path(), &fast).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report = stdout_json(&output);
    assert_eq!(report["succeeded"], 5, "{report}");
    assert_eq!(report["phase2"]["ran"], true, "{report}");
}

#[test]
fn show_never_prints_terminal_escapes_or_bidi_controls() {
    let home = tempfile::tempdir().unwrap();
    let memories = home.path().join("memories");
    std::fs::create_dir_all(memories.join("rollout_summaries")).unwrap();
    std::fs::write(
        memories.join("MEMORY.md"),
        "# Memory\n\u{1b}]0;pwned\u{7}\u{1b}[2J ok \u{202E}gnp.exe\u{9b}1m\r\n",
    )
    .unwrap();
    std::fs::write(memories.join("memory_summary.md"), "v1\nsum\u{1b}[31mred\n").unwrap();
    for args in [
        vec!["show"],
        vec!["show", "memory_summary.md"],
        vec!["show", "--injection"],
    ] {
        let output = binary()
            .args(&args)
            .arg("--home")
            .arg(home.path())
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {output:?}");
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(
            !text
                .chars()
                .any(agent_memory::sanitize::safe_text::is_unsafe_for_display),
            "{args:?}: {text:?}"
        );
        assert!(text.contains("sum␛[31mred"), "{args:?}: {text}");
    }
}

#[test]
fn a_secret_in_the_rollout_path_or_cwd_never_reaches_the_home_or_the_report() {
    let secret = "ghp_EXAMPLEfakeTokenForDocs0123456789abc";
    let dir = tempfile::tempdir().unwrap();
    let rollouts = dir.path().join(format!("token-{secret}"));
    copy_dir(&examples(), &rollouts);
    // One session's working directory carries a secret too.
    let with_cwd = std::fs::read_dir(&rollouts)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"));
    if let Some(file) = with_cwd {
        let text = std::fs::read_to_string(&file).unwrap();
        let text = text.replacen("\"cwd\":\"", &format!("\"cwd\":\"/work/{secret}/"), 1);
        std::fs::write(&file, text).unwrap();
    }
    let home = dir.path().join("home");
    let output = binary()
        .arg("run")
        .arg(&rollouts)
        .arg("--home")
        .arg(&home)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report = stdout_json(&output);
    assert_eq!(report["succeeded"], 4, "jobs open the real files: {report}");
    assert!(
        !report.to_string().contains(secret),
        "the report leaks it: {report}"
    );
    let mut pending = vec![home.clone()];
    let mut checked = 0;
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "secret in {}",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 5);
    let raw = std::fs::read_to_string(home.join("memories/raw_memories.md")).unwrap();
    assert!(
        raw.contains("rollout_path: ") && raw.contains("[REDACTED_SECRET]"),
        "{raw}"
    );
}
