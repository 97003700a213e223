//! `agent-memory run` over Claude Code transcripts (`fixtures/claude-code`, see its README):
//! the session is extracted, its subagent read with it, and nothing Claude Code or a hook
//! injected reaches a memory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Markers on every injected text in the fixture.
const INJECTED_MARKERS: [&str; 4] = ["INJECTED-", "RECALLED-", "SUMMARY-TEXT", "system-reminder"];

fn config_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/claude-code")
}

fn agent_memory(home: &Path, args: &[&str], config_dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .args(args)
        .arg("--home")
        .arg(home)
        .env("CLAUDE_CONFIG_DIR", config_dir)
        .output()
        .unwrap()
}

/// The bytes of every file under `dir`.
fn all_bytes(dir: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                bytes.extend(std::fs::read(&path).unwrap());
            }
        }
    }
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

#[test]
fn a_claude_code_session_is_extracted_without_any_injected_text() {
    // The fixture really carries every marker, so this test can fail.
    let fixture = all_bytes(&config_dir());
    for marker in INJECTED_MARKERS {
        assert!(contains(&fixture, marker), "{marker} is not planted");
    }
    let home = tempfile::tempdir().unwrap();
    let projects = config_dir().join("projects");
    let output = agent_memory(
        home.path(),
        &["run", projects.to_str().unwrap(), "--json"],
        &config_dir(),
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["succeeded"], 1, "{report}");
    // The subagent's file is found, registered as a subagent session and read with its parent.
    assert_eq!(report["scanned"], 2, "{report}");
    assert_eq!(report["skipped_by_reason"]["excluded"], 1, "{report}");

    let raw = std::fs::read_to_string(home.path().join("memories/raw_memories.md")).unwrap();
    // The session's lesson is there: the failing run and the fix.
    assert!(raw.contains("ledger"), "{raw}");
    let written = all_bytes(home.path());
    for marker in INJECTED_MARKERS {
        assert!(
            !contains(&written, marker),
            "{marker} reached the home:\n{raw}"
        );
    }
}

#[test]
fn run_claude_reads_the_config_folder_with_the_startup_limits() {
    let home = tempfile::tempdir().unwrap();
    // The fixture's session is from 2025: too old for the startup age rule.
    let output = agent_memory(home.path(), &["run", "--claude", "--json"], &config_dir());
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["succeeded"], 0, "{report}");
    assert!(
        report.to_string().contains("too_old"),
        "the age rule applies: {report}"
    );
    let output = agent_memory(
        home.path(),
        &["run", "--claude", "--json", "--max-age-days", "100000"],
        &config_dir(),
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["succeeded"], 1, "{report}");

    let missing = home.path().join("no-such-config");
    let output = agent_memory(home.path(), &["run", "--claude"], &missing);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no Claude Code sessions"), "{stderr}");
}

#[test]
fn a_session_the_hook_marked_ended_is_extracted_without_the_idle_wait() {
    const SESSION: &str = "7c3e0a52-1f4b-4d1e-9a60-2b8f5d0c9e11";
    let home = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let folder = config.path().join("projects/-home-dev-tidewater");
    std::fs::create_dir_all(&folder).unwrap();
    // The fixture's session as if it had just run: without its timestamps the file's time is its
    // last activity.
    let fixture = config_dir().join(format!("projects/-home-dev-tidewater/{SESSION}.jsonl"));
    let lines: Vec<String> = std::fs::read_to_string(fixture)
        .unwrap()
        .lines()
        .map(
            |line| match serde_json::from_str::<serde_json::Value>(line) {
                Ok(serde_json::Value::Object(mut entry)) => {
                    entry.remove("timestamp");
                    serde_json::Value::Object(entry).to_string()
                }
                _ => line.to_owned(),
            },
        )
        .collect();
    let transcript = folder.join(format!("{SESSION}.jsonl"));
    std::fs::write(&transcript, lines.join("\n") + "\n").unwrap();
    let projects = config.path().join("projects");
    let run = || {
        let output = agent_memory(
            home.path(),
            &["run", projects.to_str().unwrap(), "--json"],
            config.path(),
        );
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()
    };
    let report = run();
    assert_eq!(report["succeeded"], 0, "{report}");
    assert_eq!(report["skipped_by_reason"]["not_idle"], 1, "{report}");

    let mut hook = Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .args(["hook", "claude-code", "--home"])
        .arg(home.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let payload = serde_json::json!({"session_id": SESSION, "hook_event_name": "SessionEnd",
        "transcript_path": transcript, "cwd": "/home/dev/tidewater", "reason": "other"});
    std::io::Write::write_all(
        &mut hook.stdin.take().unwrap(),
        payload.to_string().as_bytes(),
    )
    .unwrap();
    assert!(hook.wait_with_output().unwrap().status.success());
    let report = run();
    assert_eq!(report["succeeded"], 1, "{report}");

    // Resumed after its end, the session is active again: it waits for its next end.
    let resumed = serde_json::json!({"type": "user", "sessionId": SESSION, "uuid": "u-900",
        "parentUuid": null, "timestamp": "2999-01-01T00:00:00.000Z", "cwd": "/home/dev/tidewater",
        "message": {"role": "user", "content": "One more thing: add a test for a blank line."}});
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    std::io::Write::write_all(&mut file, format!("{resumed}\n").as_bytes()).unwrap();
    let report = run();
    assert_eq!(report["succeeded"], 0, "{report}");
    assert_eq!(report["skipped_by_reason"]["not_idle"], 1, "{report}");
}
