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
