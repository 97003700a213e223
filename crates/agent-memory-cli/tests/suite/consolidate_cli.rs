//! `agent-memory run`, `consolidate` and `show` on the example rollouts, offline.

use std::path::Path;
use std::process::{Command, Output};

fn agent_memory(home: &Path, args: &[&str]) -> Output {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rollouts");
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-memory"));
    for arg in args {
        command.arg(if *arg == "EXAMPLES" {
            examples.as_os_str()
        } else {
            arg.as_ref()
        });
    }
    command.arg("--home").arg(home);
    command.output().unwrap()
}

fn json(output: &Output) -> serde_json::Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn run_ends_with_phase_two_and_a_second_run_makes_no_model_call() {
    let home = tempfile::tempdir().unwrap();
    let first = json(&agent_memory(home.path(), &["run", "EXAMPLES", "--json"]));
    let phase2 = &first["phase2"];
    assert_eq!(phase2["ran"], true, "{first}");
    assert_eq!(phase2["model_calls"], 1);
    let stored = first["succeeded"].as_u64().unwrap();
    assert!(stored >= 1);
    assert_eq!(phase2["selected"].as_u64(), Some(stored));
    let root = home.path().join("memories");
    for file in ["MEMORY.md", "memory_summary.md", "raw_memories.md"] {
        assert!(root.join(file).is_file(), "{file} missing");
    }
    let summaries = std::fs::read_dir(root.join("rollout_summaries"))
        .unwrap()
        .count();
    assert_eq!(
        summaries as u64, stored,
        "one rollout summary per remembered rollout"
    );
    let summary = std::fs::read_to_string(root.join("memory_summary.md")).unwrap();
    assert!(summary.starts_with("v1\n") && summary.contains("without a language model"));

    let second = json(&agent_memory(home.path(), &["run", "EXAMPLES", "--json"]));
    assert_eq!(second["phase2"]["model_calls"], 0, "{second}");
    let keys: Vec<&String> = second["phase2"].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "files_written",
            "model_calls",
            "pending",
            "ran",
            "selected",
            "skipped"
        ]
    );

    // Consolidating alone right after: nothing new, so the cooldown holds.
    let alone = json(&agent_memory(home.path(), &["consolidate", "--json"]));
    assert_eq!(alone["model_calls"], 0);
    let reason = alone["skipped"].as_str().unwrap();
    assert!(
        reason.starts_with("cooling down after a recent success until "),
        "{reason}"
    );
}

#[test]
fn show_prints_the_root_and_refuses_paths_outside_it() {
    let home = tempfile::tempdir().unwrap();
    let missing = agent_memory(home.path(), &["show"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no memory root"));

    json(&agent_memory(home.path(), &["run", "EXAMPLES", "--json"]));
    let all = agent_memory(home.path(), &["show"]);
    assert!(all.status.success());
    let text = String::from_utf8_lossy(&all.stdout);
    for file in [
        "memory_summary.md",
        "MEMORY.md",
        "raw_memories.md",
        "rollout_summaries/",
    ] {
        assert!(
            text.contains(&format!("==> memories/{file}")),
            "{file} not shown"
        );
    }
    let one = agent_memory(home.path(), &["show", "MEMORY.md"]);
    assert!(String::from_utf8_lossy(&one.stdout).starts_with("# Task Group: "));
    let injection = agent_memory(home.path(), &["show", "--injection"]);
    assert!(injection.status.success());
    assert!(String::from_utf8_lossy(&injection.stdout).contains("## What's in Memory"));
    let escape = agent_memory(home.path(), &["show", "../state.sqlite"]);
    assert!(!escape.status.success());
    assert!(String::from_utf8_lossy(&escape.stderr).contains("not a path inside the memory root"));
}

#[test]
fn a_note_from_the_cli_is_the_users_and_new_input_for_the_next_consolidation() {
    let home = tempfile::tempdir().unwrap();
    json(&agent_memory(home.path(), &["run", "EXAMPLES", "--json"]));
    // Right after a pass, with nothing new, the cooldown holds.
    let idle = json(&agent_memory(home.path(), &["consolidate", "--json"]));
    assert_eq!(idle["ran"], false, "{idle}");
    let saved = agent_memory(
        home.path(),
        &["note", "I prefer tabs over spaces", "--json"],
    );
    let saved = json(&saved);
    let path = home
        .path()
        .join("memories")
        .join(saved["path"].as_str().unwrap());
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.contains("\nwritten_by: the user, with agent-memory note\n"),
        "{text}"
    );
    let after = json(&agent_memory(home.path(), &["consolidate", "--json"]));
    assert_eq!(after["ran"], true, "the new note is new input: {after}");
    assert_eq!(after["skipped"], serde_json::Value::Null, "{after}");
}

/// codex #23129, #37097: stage one succeeded, the consolidation stayed pending with no lease,
/// retry or error, and the memory files were never written.
#[test]
fn codex_23129_37097_after_extraction_the_files_are_written_or_the_skip_says_why() {
    let home = tempfile::tempdir().unwrap();
    let first = json(&agent_memory(home.path(), &["run", "EXAMPLES", "--json"]));
    assert!(first["succeeded"].as_u64().unwrap() >= 1, "{first}");
    assert_eq!(first["phase2"]["ran"], true, "{first}");
    assert_eq!(first["phase2"]["pending"], false, "{first}");
    let root = home.path().join("memories");
    for file in ["MEMORY.md", "memory_summary.md"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(!text.trim().is_empty(), "{file} is empty");
    }
    // A pass that does not run names its reason and when it will run.
    let again = json(&agent_memory(home.path(), &["consolidate", "--json"]));
    assert_eq!(again["ran"], false, "{again}");
    assert_eq!(again["pending"], false, "{again}");
    let reason = again["skipped"].as_str().unwrap();
    assert!(
        reason.contains("cooling down") && reason.contains(" until 20"),
        "{reason}"
    );
}

/// codex #27121: no way to say "consolidate now", and no reason shown for skipped rollouts.
#[test]
fn codex_27121_consolidate_now_runs_in_the_cooldown_and_skips_are_counted_by_reason() {
    let home = tempfile::tempdir().unwrap();
    json(&agent_memory(home.path(), &["run", "EXAMPLES", "--json"]));
    let second = json(&agent_memory(home.path(), &["run", "EXAMPLES", "--json"]));
    let by_reason = second["skipped_by_reason"].as_object().unwrap();
    assert!(by_reason["up_to_date"].as_u64().unwrap() >= 1, "{second}");
    let text = agent_memory(home.path(), &["run", "EXAMPLES"]);
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains(" up to date"), "{stdout}");
    let now = json(&agent_memory(
        home.path(),
        &["consolidate", "--now", "--json"],
    ));
    assert_eq!(now["ran"], true, "{now}");
    assert!(now["selected"].as_u64().unwrap() >= 1, "{now}");
}

/// OpenViking #4580, mem0 #3009: extraction reported success while it stored nothing.
#[test]
fn openviking_4580_mem0_3009_a_session_that_stores_nothing_is_not_a_success() {
    let home = tempfile::tempdir().unwrap();
    let rollouts = tempfile::tempdir().unwrap();
    let day = rollouts.path().join("2025/11/03");
    std::fs::create_dir_all(&day).unwrap();
    let meta = r#"{"timestamp":"2025-11-03T09:12:40.000Z","type":"session_meta","payload":{"id":"019a4c1e-7d2a-7b31-9f0e-3c5a8e21b0ff","timestamp":"2025-11-03T09:12:40.000Z","cwd":"/home/dev/hello","originator":"codex_cli_rs","cli_version":"0.148.0","source":"cli","model_provider":"openai"}}"#;
    let user = r#"{"timestamp":"2025-11-03T09:12:41.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}"#;
    let reply = r#"{"timestamp":"2025-11-03T09:12:42.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello! How can I help?"}]}}"#;
    std::fs::write(
        day.join("rollout-2025-11-03T09-12-40-019a4c1e-7d2a-7b31-9f0e-3c5a8e21b0ff.jsonl"),
        format!("{meta}\n{user}\n{reply}\n"),
    )
    .unwrap();
    let folder = rollouts.path().to_str().unwrap();
    let run = json(&agent_memory(home.path(), &["run", folder, "--json"]));
    assert_eq!(run["claimed"], 1, "{run}");
    assert_eq!(run["succeeded"], 0, "{run}");
    assert_eq!(run["no_output"], 1, "{run}");
    assert_eq!(run["phase2"]["ran"], false, "{run}");
    let text = agent_memory(home.path(), &["status"]);
    let status = String::from_utf8_lossy(&text.stdout);
    assert!(status.contains("state: empty"), "{status}");
}
