//! One model flag set on every command that calls a model (`run`, `consolidate`, `compact`,
//! `wm commit`): specs checked with a suggestion, `--base-url` and `$OPENAI_BASE_URL` reaching
//! the server, and the limits `compact` puts on its window.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn agent_memory(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-memory"));
    command
        .args(args)
        .env_remove("AGENT_MEMORY_HOME")
        .env_remove("OPENAI_BASE_URL")
        .env("OPENAI_API_KEY", "sk-loopback-only");
    command
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn rollout() -> String {
    examples()
        .join("rollouts/2025/11/03/rollout-2025-11-03T09-12-40-019a4c1e-7d2a-7b31-9f0e-3c5a8e21b001.jsonl")
        .to_string_lossy()
        .into_owned()
}

/// A loopback URL with nothing listening: bound, then released.
fn refused_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!(
        "http://127.0.0.1:{}/v1",
        listener.local_addr().unwrap().port()
    )
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// What the command printed on both streams (`wm commit` reports a failed update on stdout).
fn printed(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        stderr(output)
    )
}

#[test]
fn a_near_miss_or_an_unknown_provider_is_refused_with_a_suggestion() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap();
    let examples = examples().join("rollouts");
    let examples = examples.to_str().unwrap();
    for (args, expected) in [
        (
            vec!["run", examples, "--model", "offlin"],
            "unknown model `offlin`: did you mean `offline`?",
        ),
        (
            vec!["run", examples, "--model", "foo:bar"],
            "unknown provider `foo`",
        ),
        (
            vec!["compact", &rollout(), "--model", "opnai:gpt-5"],
            "did you mean `openai:gpt-5`?",
        ),
        (
            vec!["consolidate", "--model", "offlin"],
            "did you mean `offline`?",
        ),
    ] {
        let output = agent_memory(&args).args(["--home", home]).output().unwrap();
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {text}");
        assert!(text.contains(expected), "{args:?}: {text}");
        assert_eq!(text.matches("error:").count(), 1, "one error: {text}");
    }
}

#[test]
fn compact_and_wm_commit_send_to_the_base_url_of_the_flag_or_the_environment() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    let home = home.to_str().unwrap();
    let session = temp.path().join("tidewater");
    std::fs::create_dir(&session).unwrap();
    std::fs::copy(
        examples().join("sessions/tidewater/messages.jsonl"),
        session.join("messages.jsonl"),
    )
    .unwrap();
    let session = session.to_str().unwrap();
    let rollout = rollout();
    let commands: [&[&str]; 2] = [
        &[
            "compact",
            &rollout,
            "--window",
            "4096",
            "--keep-recent",
            "100",
            "--model",
            "openai:m",
        ],
        &[
            "wm", "commit", session, "--keep", "2", "--model", "openai:m",
        ],
    ];
    for args in commands {
        let url = refused_url();
        let flag = agent_memory(args)
            .args(["--home", home, "--base-url", &url])
            .output()
            .unwrap();
        let text = printed(&flag);
        assert_eq!(flag.status.code(), Some(1), "{args:?}: {text}");
        assert!(text.contains(&url), "{args:?} --base-url: {text}");
        let url = refused_url();
        let env = agent_memory(args)
            .args(["--home", home])
            .env("OPENAI_BASE_URL", &url)
            .output()
            .unwrap();
        let text = printed(&env);
        assert!(text.contains(&url), "{args:?} $OPENAI_BASE_URL: {text}");
    }
    // The environment names a server for HTTP models only: offline is not refused for it.
    let offline = agent_memory(&["compact", &rollout, "--home", home])
        .env("OPENAI_BASE_URL", refused_url())
        .output()
        .unwrap();
    assert!(offline.status.success(), "{}", stderr(&offline));
}

#[test]
fn compact_refuses_a_window_too_small_to_hold_a_summary() {
    let output = agent_memory(&["compact", &rollout(), "--window", "100"])
        .output()
        .unwrap();
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(text.contains("--window"), "{text}");
    // In plain words, not clap's range up to u64::MAX.
    assert!(text.contains("must be at least 4096, found 100"), "{text}");
    assert!(!text.contains("18446744073709551615"), "{text}");
    for (flag, value) in [("--context-window", "0"), ("--window", "many")] {
        let output = agent_memory(&["compact", &rollout(), flag, value])
            .output()
            .unwrap();
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{text}");
        assert!(!text.contains("18446744073709551615"), "{text}");
        assert!(text.contains("at least"), "{text}");
    }
}

#[test]
fn mcp_offers_no_json_and_wm_show_prints_one_object() {
    let help = agent_memory(&["mcp", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("--thread"), "{help}");
    assert!(!help.contains("--json"), "{help}");

    let temp = tempfile::tempdir().unwrap();
    let session = temp.path().join("tidewater");
    std::fs::create_dir(&session).unwrap();
    std::fs::copy(
        examples().join("sessions/tidewater/messages.jsonl"),
        session.join("messages.jsonl"),
    )
    .unwrap();
    let session = session.to_str().unwrap();
    assert!(
        agent_memory(&["wm", "commit", session, "--keep", "4"])
            .status()
            .unwrap()
            .success()
    );
    let shown = agent_memory(&["wm", "show", session, "--json"])
        .output()
        .unwrap();
    assert!(shown.status.success(), "{}", stderr(&shown));
    let stdout = String::from_utf8_lossy(&shown.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let value: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(value["archives"].as_array().unwrap().len(), 1, "{value}");
    assert_eq!(value["archives"][0]["status"], "done", "{value}");
    assert!(
        value["working_memory"]["text"]
            .as_str()
            .unwrap()
            .contains("Session Title"),
        "{value}"
    );
}
