//! `cargo xtask bench pipeline`: phase 1 over 1,000 generated rollouts against a loopback
//! OpenAI-compatible server that answers each request after 50 ms, through the facade's HTTP
//! client. The ideal wall time is jobs / 8 x 50 ms (eight jobs in flight); the ratio shows
//! what reading, filtering, redaction, token counting, prompts, HTTP and the store add on top.
//! It also measures claims per second on the store (claim + record, one transaction each).
//!
//! The measured code must be optimized: when xtask itself is a debug build, the benchmark
//! re-runs itself with `cargo run --release`.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use memory_models::openai::{ApiFlavour, OpenAiClient, OpenAiConfig};
use memory_protocol::StageOneOutput;
use memory_write::phase_one::{CONCURRENCY_LIMIT, PhaseOneHooks};
use memory_write::store::{ClaimParams, SharedStore, StageOneSuccess, WriteStore, now_unix};
use memory_write::{PhaseOneOptions, ScanOptions, StateStore, run_phase_one, scan_rollouts};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub(super) const JOBS: usize = 1000;
pub(super) const SERVER_DELAY: Duration = Duration::from_millis(50);

pub(crate) fn run() -> Result<()> {
    if cfg!(debug_assertions) {
        let status = std::process::Command::new(env!("CARGO"))
            .args([
                "run",
                "--release",
                "-q",
                "-p",
                "xtask",
                "--",
                "bench",
                "pipeline",
            ])
            .current_dir(crate::project_root())
            .status()
            .context("cannot re-run the benchmark in release mode")?;
        if !status.success() {
            bail!("the release benchmark failed ({status})");
        }
        return Ok(());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(measure())
}

async fn measure() -> Result<()> {
    let work = tempfile::tempdir()?;
    let rollouts = work.path().join("rollouts");
    let bytes = generate_rollouts(&rollouts, JOBS)?;
    println!(
        "generated {JOBS} rollouts, {:.1} MB",
        bytes as f64 / 1_000_000.0
    );

    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let server = tokio::spawn(serve(listener));

    let store: SharedStore = Arc::new(StateStore::open_home(&work.path().join("home"))?);
    let scan_started = Instant::now();
    let scan = scan_rollouts(
        store.as_ref(),
        &rollouts,
        &ScanOptions::default(),
        now_unix(),
    )
    .await?;
    let scan_s = scan_started.elapsed().as_secs_f64();
    println!("scan: {} files in {scan_s:.2} s", scan.files);

    let model = Arc::new(bench_model(&address.to_string())?);
    let options = PhaseOneOptions {
        claim: ClaimParams {
            min_idle_hours: 1,
            max_age_days: None,
            rollout_prefix: Some(scan.rollout_prefix()),
            ..ClaimParams::default()
        },
        max_claims: None,
        ..PhaseOneOptions::default()
    };
    let started = Instant::now();
    let report = run_phase_one(&store, model, &options, PhaseOneHooks::default()).await?;
    let wall_s = started.elapsed().as_secs_f64();
    server.abort();
    if report.succeeded != JOBS {
        let first = report.jobs.iter().find_map(|j| j.message.clone());
        bail!(
            "expected {JOBS} stored outputs, got {} ({} failed; first message: {first:?})",
            report.succeeded,
            report.failed
        );
    }
    let ideal_s = JOBS as f64 / CONCURRENCY_LIMIT as f64 * SERVER_DELAY.as_secs_f64();
    let ratio = wall_s / ideal_s;
    println!("phase 1: {JOBS} jobs in {wall_s:.2} s; ideal {ideal_s:.2} s; ratio {ratio:.3}");

    let claims_per_s = measure_claims(&rollouts, &work.path().join("claims-home")).await?;
    println!("store: {claims_per_s:.0} claims/s (claim + record success, one transaction each)");
    println!(
        "BENCH pipeline jobs={JOBS} wall_s={wall_s:.3} ideal_s={ideal_s:.3} \
         wall_vs_ideal={ratio:.3} claims_per_s={claims_per_s:.0}"
    );
    Ok(())
}

/// Claims and records every job of a freshly scanned store, one at a time.
pub(super) async fn measure_claims(rollouts: &Path, home: &Path) -> Result<f64> {
    let store = StateStore::open_home(home)?;
    let now = now_unix();
    scan_rollouts(&store, rollouts, &ScanOptions::default(), now).await?;
    let params = ClaimParams {
        min_idle_hours: 1,
        max_age_days: None,
        ..ClaimParams::default()
    };
    let success = StageOneSuccess {
        now,
        output: StageOneOutput {
            raw_memory: "m".to_owned(),
            rollout_summary: "s".to_owned(),
            rollout_slug: None,
        },
    };
    let started = Instant::now();
    let mut claims = 0usize;
    while let Some(job) = store.claim_next_stage_one_job(&params, now).await? {
        store.mark_stage_one_succeeded(&job, &success).await?;
        claims += 1;
    }
    if claims != JOBS {
        bail!("claimed {claims} jobs, expected {JOBS}");
    }
    Ok(claims as f64 / started.elapsed().as_secs_f64())
}

/// The facade's HTTP client, pointed at the benchmark's server (`HOST:PORT`).
pub(super) fn bench_model(server: &str) -> Result<OpenAiClient> {
    let mut config = OpenAiConfig::new("bench-model");
    config.base_url = format!("http://{server}/v1");
    config.api_key_env = None;
    config.flavour = ApiFlavour::ChatCompletions;
    Ok(OpenAiClient::new(config)?)
}

/// A minimal HTTP/1.1 server: every request gets a Chat Completions answer after the delay.
pub(super) async fn serve(listener: TcpListener) {
    while let Ok((stream, _)) = listener.accept().await {
        tokio::spawn(async move {
            let _ = answer_requests(stream).await;
        });
    }
}

async fn answer_requests(mut stream: TcpStream) -> std::io::Result<()> {
    let output = serde_json::json!({
        "raw_memory": "---\ndescription: bench\n---\n- the build needs `make gen` first",
        "rollout_summary": "# bench rollout\nRan the tests; fixed the build.",
        "rollout_slug": "bench-rollout",
    });
    let body = serde_json::json!({
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "choices": [{
            "index": 0,
            "finish_reason": "stop",
            "message": { "role": "assistant", "content": output.to_string() }
        }],
        "usage": { "prompt_tokens": 900, "completion_tokens": 60, "total_tokens": 960 }
    })
    .to_string();
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        // Read one request: headers, then a body of content-length bytes.
        let header_end = loop {
            if let Some(end) = find(&buffer, b"\r\n\r\n") {
                break end + 4;
            }
            let read = stream.read(&mut chunk).await?;
            if read == 0 {
                return Ok(());
            }
            buffer.extend_from_slice(&chunk[..read]);
        };
        let headers = String::from_utf8_lossy(&buffer[..header_end]).to_ascii_lowercase();
        let length = headers
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(0);
        while buffer.len() < header_end + length {
            let read = stream.read(&mut chunk).await?;
            if read == 0 {
                return Ok(());
            }
            buffer.extend_from_slice(&chunk[..read]);
        }
        buffer.drain(..header_end + length);
        tokio::time::sleep(SERVER_DELAY).await;
        stream.write_all(response.as_bytes()).await?;
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Writes `count` rollouts of a realistic shape (session meta, AGENTS.md block, developer
/// message, a task, shell calls with logs, a patch, reasoning, events, a final answer), a few
/// KB each. Returns the bytes written.
pub(super) fn generate_rollouts(dir: &Path, count: usize) -> Result<u64> {
    let mut total = 0u64;
    for index in 0..count {
        let day = 1 + index % 28;
        let folder = dir.join(format!("2025/09/{day:02}"));
        std::fs::create_dir_all(&folder)?;
        let id = format!("0198{index:04x}-0000-7000-8000-{index:012x}");
        let ts = |second: usize| {
            format!(
                "2025-09-{day:02}T08:{:02}:{:02}.000Z",
                second / 60 % 60,
                second % 60
            )
        };
        let mut lines = vec![
            serde_json::json!({"timestamp": ts(0), "type": "session_meta", "payload": {
                "id": id, "cwd": format!("/home/dev/project-{}", index % 37), "source": "cli",
                "originator": "codex_cli_rs", "cli_version": "0.148.0"}}),
            serde_json::json!({"timestamp": ts(1), "type": "response_item", "payload": {
                "type": "message", "role": "developer", "content": [{"type": "input_text",
                "text": "<permissions instructions>workspace-write</permissions instructions>"}]}}),
            serde_json::json!({"timestamp": ts(2), "type": "response_item", "payload": {
                "type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "# AGENTS.md instructions for /home/dev\n\n<INSTRUCTIONS>\nRun the tests before finishing.\n</INSTRUCTIONS>"},
                    {"type": "input_text", "text": format!("Task {index}: the nightly build fails in module m{}; fix it. token=ghp_{:036}", index % 11, index)}]}}),
        ];
        for step in 0..6 {
            let second = 10 + step * 7;
            lines.push(serde_json::json!({"timestamp": ts(second), "type": "response_item", "payload": {
                "type": "reasoning", "summary": [{"type": "summary_text", "text": "**Checking the build**"}],
                "encrypted_content": "gAAAAB".repeat(40)}}));
            lines.push(serde_json::json!({"timestamp": ts(second + 1), "type": "response_item", "payload": {
                "type": "function_call", "name": "exec_command", "call_id": format!("c{step}"),
                "arguments": serde_json::json!({"cmd": format!("make test MODULE=m{step}")}).to_string()}}));
            let log: String = (0..12)
                .map(|line| format!("test m{step}::case_{line} ... ok\n"))
                .collect();
            let exit = if step == 2 { 2 } else { 0 };
            lines.push(serde_json::json!({"timestamp": ts(second + 3), "type": "response_item", "payload": {
                "type": "function_call_output", "call_id": format!("c{step}"),
                "output": format!("{log}Process exited with code {exit}")}}));
            lines.push(serde_json::json!({"timestamp": ts(second + 3), "type": "event_msg", "payload": {
                "type": "token_count", "info": {"total_token_usage": {"input_tokens": 1000 * step}}}}));
        }
        lines.push(serde_json::json!({"timestamp": ts(60), "type": "response_item", "payload": {
            "type": "custom_tool_call", "name": "apply_patch", "call_id": "p1", "status": "completed",
            "input": "*** Begin Patch\n*** Update File: src/build.rs\n@@\n-    gen();\n+    gen()?;\n*** End Patch"}}));
        lines.push(serde_json::json!({"timestamp": ts(61), "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "phase": "final_answer", "content": [
                {"type": "output_text", "text": "Fixed: the generator error is now propagated; tests pass."}]}}));
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        total += text.len() as u64;
        std::fs::write(
            folder.join(format!("rollout-2025-09-{day:02}T08-00-00-{id}.jsonl")),
            text,
        )?;
    }
    Ok(total)
}
