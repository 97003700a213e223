//! `agent-memory hook`: Claude Code's hooks installed, answered and removed through the binary.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn agent_memory(args: &[&str], config_dir: &Path, stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .args(args)
        .env("CLAUDE_CONFIG_DIR", config_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn install_and_uninstall_leave_settings_with_other_hooks_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("claude");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&config).unwrap();
    let theirs = "{\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}]},\n  \"model\": \"opus\"\n}\n";
    let settings = config.join("settings.json");
    std::fs::write(&settings, theirs).unwrap();
    let home_arg = home.to_str().unwrap();

    let output = agent_memory(
        &["hook", "install", "claude-code", "--home", home_arg],
        &config,
        "",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("hooks installed"), "{stdout}");
    let installed = std::fs::read_to_string(&settings).unwrap();
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
        "PreCompact",
        "SessionEnd",
    ] {
        assert!(installed.contains(event), "{event}: {installed}");
    }
    assert!(installed.contains("hook claude-code --home"), "{installed}");

    let output = agent_memory(
        &["hook", "uninstall", "claude-code", "--home", home_arg],
        &config,
        "",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), theirs);
}

#[test]
fn the_hook_answers_session_start_with_the_memory_block() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join("memories")).unwrap();
    std::fs::write(
        home.join("memories/memory_summary.md"),
        "v1\n## User\nPrefers returning errors over panicking in parsers.\n",
    )
    .unwrap();
    let payload = serde_json::json!({
        "session_id": "3f0c2a9e-0000-4000-8000-000000000001",
        "transcript_path": dir.path().join("t.jsonl"),
        "cwd": dir.path(),
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    let args = ["hook", "claude-code", "--home", home.to_str().unwrap()];
    let output = agent_memory(&args, dir.path(), &payload.to_string());
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains("Prefers returning errors"), "{context}");

    let output = agent_memory(&args, dir.path(), "not a payload");
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("hook payload"));
}
