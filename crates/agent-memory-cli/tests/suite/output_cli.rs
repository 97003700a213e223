//! Output rules every printing command meets: a reader that goes away (`... | head -1`) ends
//! the command quietly with exit 141 (128 + SIGPIPE), never a panic.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const ROLLOUT: &str = "rollout-2025-11-03T09-12-40-019a4c1e-7d2a-7b31-9f0e-3c5a8e21b001.jsonl";
const WORKING_MEMORY: &str = "# Working Memory\n\n## Session Title\nTide importer\n\n## Current State\nParser fixed.\n\n## Task & Goals\n\n## Key Facts & Decisions\n\n## Files & Context\n\n## Errors & Corrections\n\n## Open Issues\n";
const OPS: &str = r#"{"sections": {"Session Title": {"op": "KEEP"}, "Current State": {"op": "UPDATE", "content": "Checking April."}, "Task & Goals": {"op": "KEEP"}, "Key Facts & Decisions": {"op": "KEEP"}, "Files & Context": {"op": "KEEP"}, "Errors & Corrections": {"op": "KEEP"}, "Open Issues": {"op": "KEEP"}}}"#;
const CITATION: &str = "Done.\n\n<memory-citation>\n<citation_entries>\nMEMORY.md:1-1|note=[a rule]\n</citation_entries>\n<rollout_ids>\n019a4c1e-7d2a-7b31-9f0e-3c5a8e21b001\n</rollout_ids>\n</memory-citation>\n";

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-memory"));
    command
        .env_remove("AGENT_MEMORY_HOME")
        .env_remove("CODEX_HOME")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL");
    command
}

/// Runs `args` with standard output a pipe whose reading end is already closed, so the first
/// write fails with EPIPE whatever the timing; `stdin` is written to standard input.
fn run_into_closed_pipe(args: &[String], stdin: &str) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = binary()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // The command may not read its input at all: a refused write is not the point here.
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    let output = child.wait_with_output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|arg| (*arg).to_owned()).collect()
}

#[test]
fn every_printing_command_ends_quietly_when_its_reader_goes_away() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    let home = home.to_str().unwrap();
    let rollouts = examples().join("rollouts");
    let rollouts = rollouts.to_str().unwrap();
    let status = binary()
        .args(["run", rollouts, "--home", home])
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    let rollout = examples().join("rollouts/2025/11/03").join(ROLLOUT);
    let rollout = rollout.to_str().unwrap();
    let session = temp.path().join("tidewater");
    std::fs::create_dir(&session).unwrap();
    std::fs::copy(
        examples().join("sessions/tidewater/messages.jsonl"),
        session.join("messages.jsonl"),
    )
    .unwrap();
    let session = session.to_str().unwrap();
    let old = temp.path().join("old.md");
    std::fs::write(&old, WORKING_MEMORY).unwrap();
    let old = old.to_str().unwrap();
    let ops = temp.path().join("ops.json");
    std::fs::write(&ops, OPS).unwrap();
    let ops = ops.to_str().unwrap();
    let fresh = |name: &str| temp.path().join(name).to_str().unwrap().to_owned();
    let (run_home, run_json_home, goal_home, forget_home) = (
        fresh("run-home"),
        fresh("run-json-home"),
        fresh("goal-home"),
        fresh("forget-home"),
    );
    let goal_set = strings(&["goal", "set", "t1", "ship it", "--home", &goal_home]);
    assert!(binary().args(&goal_set).output().unwrap().status.success());

    // `mcp` is left out: it answers JSON-RPC requests and prints nothing unasked.
    let cases: Vec<(Vec<String>, &str)> = vec![
        (strings(&["run", rollouts, "--home", &run_home]), ""),
        (
            strings(&["run", rollouts, "--home", &run_json_home, "--json"]),
            "",
        ),
        (strings(&["consolidate", "--home", home]), ""),
        (strings(&["compact", rollout, "--plan-only"]), ""),
        (strings(&["compact", rollout, "--json"]), ""),
        (strings(&["show", "--home", home]), ""),
        (strings(&["show", "MEMORY.md", "--home", home]), ""),
        (
            strings(&["redact"]),
            "token sk-abcdefghijklmnopqrstuvwxyz012345\n",
        ),
        (strings(&["goal", "show", "t1", "--home", &goal_home]), ""),
        (strings(&["goal", "show", "--home", &goal_home]), ""),
        (
            strings(&["goal", "show", "t1", "--json", "--home", &goal_home]),
            "",
        ),
        (strings(&["cite", "--home", home]), CITATION),
        (
            strings(&["forget", "--all", "--yes", "--home", &forget_home]),
            "",
        ),
        (strings(&["wm", "merge", "--old", old, "--ops", ops]), ""),
        (strings(&["wm", "recover", ops]), ""),
        (strings(&["wm", "show", session]), ""),
        (
            strings(&["wm", "assemble", session, "--budget", "30000"]),
            "",
        ),
        (strings(&["wm", "commit", session]), ""),
        (strings(&["status", "--home", home]), ""),
        (strings(&["status", "--json", "--home", home]), ""),
        (strings(&["search", "cargo", "--home", home]), ""),
        (strings(&["list", "--home", home]), ""),
        (strings(&["list", "--json", "--home", home]), ""),
        (strings(&["read", "MEMORY.md", "--home", home]), ""),
        (
            strings(&["note", "use the staging key", "--home", home]),
            "",
        ),
        (strings(&["block", "--home", home]), ""),
        (strings(&["migrate", "--home", home]), ""),
    ];
    let mut failures = Vec::new();
    for (args, stdin) in &cases {
        let (code, stderr) = run_into_closed_pipe(args, stdin);
        if code != Some(141) || !stderr.is_empty() {
            failures.push(format!(
                "{}: exit {code:?}, stderr {stderr:?}",
                args.join(" ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Issue 34: an error whose cause is also quoted in its own message (a missing config file, a
/// summarizer call to a server that is not there) printed the cause twice, `X: X`.
#[test]
fn an_error_prints_each_cause_once() {
    let home = tempfile::tempdir().unwrap();
    let rollout = examples().join("rollouts/2025/11/03").join(ROLLOUT);
    let cases: [(Vec<String>, &str); 2] = [
        (
            strings(&["status", "--config", "/nonexistent/agent-memory.toml"]),
            "No such file or directory",
        ),
        (
            vec![
                "compact".to_owned(),
                rollout.display().to_string(),
                "--keep-recent".to_owned(),
                "0".to_owned(),
                "--model".to_owned(),
                "openai:gpt-test".to_owned(),
                "--base-url".to_owned(),
                "http://127.0.0.1:9/v1".to_owned(),
            ],
            "connection refused",
        ),
    ];
    for (args, cause) in cases {
        let output = binary()
            .args(&args)
            .arg("--home")
            .arg(home.path())
            .env("OPENAI_API_KEY", "test-key")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        assert_eq!(stderr.matches(cause).count(), 1, "{args:?}: {stderr}");
    }
}
