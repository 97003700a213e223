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
