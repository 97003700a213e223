//! `agent-memory run` end to end: secrets never reach the home, and bad settings are clear
//! errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The fake credentials planted in `examples/rollouts` (see its README).
const PLANTED: [&str; 6] = [
    "sk-proj-EXAMPLEonlyNotARealKey0123456789",
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "ghp_EXAMPLEfakeTokenForDocs0123456789abc",
    "EXAMPLE-not-a-real-pass-42",
    "xoxb-000000000000-0000000000000-EXAMPLEfakeSlackBotToken0",
];

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rollouts")
}

fn run(home: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .arg("run")
        .arg(examples())
        .arg("--home")
        .arg(home)
        .args(extra)
        .output()
        .unwrap()
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

#[test]
fn no_planted_secret_reaches_any_file_under_the_home() {
    // The examples really carry every planted secret, so this test can fail.
    let example_bytes: Vec<u8> = files(&examples())
        .iter()
        .flat_map(|path| std::fs::read(path).unwrap())
        .collect();
    for secret in PLANTED {
        assert!(contains(&example_bytes, secret), "{secret} is not planted");
    }

    let home = tempfile::tempdir().unwrap();
    let output = run(home.path(), &["--json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(report["succeeded"].as_u64().unwrap() >= 4, "{report}");
    assert!(
        !contains(&output.stdout, "EXAMPLE"),
        "the report leaks a secret"
    );

    // The database, its WAL and every memory file.
    let written = files(home.path());
    assert!(written.iter().any(|p| p.ends_with("state.sqlite")));
    assert!(written.iter().any(|p| p.ends_with("MEMORY.md")));
    for path in written {
        let bytes = std::fs::read(&path).unwrap();
        for secret in PLANTED {
            assert!(
                !contains(&bytes, secret),
                "{secret} found in {}",
                path.display()
            );
        }
    }
}

#[test]
fn a_bad_config_file_is_an_error_naming_the_key() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "[memories]\nmax_rollout_age_days = \"ten\"\n",
    )
    .unwrap();
    let output = run(home.path(), &[]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("memories.max_rollout_age_days"), "{stderr}");
    assert!(
        !home.path().join("memories").exists(),
        "nothing runs on a bad config"
    );
}

#[test]
fn out_of_range_settings_are_clamped_with_a_warning() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "[memories]\nmin_rollout_idle_hours = 0\n",
    )
    .unwrap();
    let output = run(home.path(), &["--json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("warning: memories.min_rollout_idle_hours = 0"),
        "{stderr}"
    );
}

#[test]
fn an_unknown_model_spec_is_a_clear_error() {
    let home = tempfile::tempdir().unwrap();
    let output = run(home.path(), &["--model", "anthropic:claude-9"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("unknown provider `anthropic` in model spec `anthropic:claude-9`"),
        "{stderr}"
    );
}
