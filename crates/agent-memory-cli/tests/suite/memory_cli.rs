//! The per-user home, `run --codex` (codex's layout), `cite`, `forget` and the read path's
//! `use_memories`, end to end through the binary on the example rollouts, offline.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The lighthouse session of the examples.
const LIGHTHOUSE: &str = "019a5733-0b9e-7f52-8c66-1d2e3f4a5003";

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rollouts")
}

fn agent_memory(args: &[&str], env: &[(&str, &Path)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-memory"));
    command
        .args(args)
        .env_remove("AGENT_MEMORY_HOME")
        .env_remove("CODEX_HOME");
    for (key, value) in env {
        command.env(key, value);
    }
    command
}

fn ok(output: Output) -> String {
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn run_examples(home: &Path) {
    let examples = examples();
    ok(agent_memory(
        &[
            "run",
            examples.to_str().unwrap(),
            "--home",
            home.to_str().unwrap(),
        ],
        &[],
    )
    .output()
    .unwrap());
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn first_line(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .next()
        .unwrap_or("")
        .to_owned()
}

#[test]
fn the_default_home_is_per_user_never_the_current_folder() {
    let user_home = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let examples = examples();
    let output = agent_memory(
        &["run", examples.to_str().unwrap()],
        &[("HOME", user_home.path())],
    )
    .current_dir(elsewhere.path())
    .output()
    .unwrap();
    let stdout = ok(output);
    let home = user_home.path().join(".agent-memory");
    assert!(home.join("state.sqlite").is_file(), "{stdout}");
    assert!(home.join("memories/MEMORY.md").is_file());
    assert!(!elsewhere.path().join(".agent-memory").exists());
    // $AGENT_MEMORY_HOME wins over the default.
    let chosen = tempfile::tempdir().unwrap();
    ok(agent_memory(
        &["run", examples.to_str().unwrap()],
        &[
            ("HOME", user_home.path()),
            ("AGENT_MEMORY_HOME", chosen.path()),
        ],
    )
    .output()
    .unwrap());
    assert!(chosen.path().join("state.sqlite").is_file());
}

#[test]
fn run_codex_writes_codex_s_layout_into_codex_home() {
    let codex_home = tempfile::tempdir().unwrap();
    copy_tree(&examples(), &codex_home.path().join("sessions"));
    let home = tempfile::tempdir().unwrap();
    // The examples are from 2025: lift codex's startup limits so all of them qualify (the
    // per-run limit also caps jobs running at once, so it is raised in the config).
    std::fs::write(
        home.path().join("config.toml"),
        "[memories]\nmax_rollouts_per_startup = 10\n",
    )
    .unwrap();
    let stdout = ok(agent_memory(
        &[
            "run",
            "--codex",
            "--home",
            home.path().to_str().unwrap(),
            "--max-age-days",
            "100000",
        ],
        &[("CODEX_HOME", codex_home.path())],
    )
    .output()
    .unwrap());
    let root = codex_home.path().join("memories");
    assert!(
        stdout.contains(&format!("memory root: {}", root.display())),
        "{stdout}"
    );
    assert!(
        !home.path().join("memories").exists(),
        "the memory root is codex's"
    );
    assert!(
        home.path().join("state.sqlite").is_file(),
        "the state stays in the home"
    );

    // Codex's file names and first lines.
    assert_eq!(first_line(&root.join("memory_summary.md")), "v1");
    assert!(first_line(&root.join("MEMORY.md")).starts_with("# Task Group: "));
    assert_eq!(first_line(&root.join("raw_memories.md")), "# Raw Memories");
    let raw = std::fs::read_to_string(root.join("raw_memories.md")).unwrap();
    assert!(
        raw.contains(&format!("## Thread `{LIGHTHOUSE}`\nupdated_at: ")),
        "{raw}"
    );
    let mut summaries: Vec<String> = std::fs::read_dir(root.join("rollout_summaries"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    summaries.sort();
    assert_eq!(summaries.len(), 4, "{summaries:?}");
    for name in &summaries {
        // <YYYY-MM-DDTHH-MM-SS>-<4 base-62 chars>[-<slug>].md
        let bytes = name.as_bytes();
        assert!(name.ends_with(".md") && bytes.len() > 24, "{name}");
        assert_eq!(&name[4..5], "-");
        assert_eq!(&name[10..11], "T");
        assert_eq!(&name[19..20], "-");
        assert!(
            name[20..24].chars().all(|c| c.is_ascii_alphanumeric()),
            "{name}"
        );
        let path = root.join("rollout_summaries").join(name);
        assert!(first_line(&path).starts_with("thread_id: "), "{name}");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("\ngit_branch: "),
            "the examples record a branch: {text}"
        );
        assert!(
            raw.contains(&format!("rollout_summary_file: {name}\n")),
            "{name}"
        );
    }
    // codex's read path keeps reading the same root: the summary is what it injects.
    let summary = std::fs::read_to_string(root.join("memory_summary.md")).unwrap();
    assert!(
        summary.contains("## User preferences") && summary.contains("real deploy"),
        "{summary}"
    );
}

#[test]
fn forget_removes_a_session_from_the_memory_files_and_keeps_the_rest() {
    let home = tempfile::tempdir().unwrap();
    run_examples(home.path());
    let root = home.path().join("memories");
    let memory = std::fs::read_to_string(root.join("MEMORY.md")).unwrap();
    assert!(memory.contains(LIGHTHOUSE) && memory.contains("scheduler_test.go"));

    let stdout = ok(agent_memory(
        &[
            "forget",
            "019a5733",
            "--home",
            home.path().to_str().unwrap(),
        ],
        &[],
    )
    .output()
    .unwrap());
    assert!(stdout.contains(&format!("forgot {LIGHTHOUSE}")), "{stdout}");
    assert!(stdout.contains("1 removed"), "{stdout}");
    let memory = std::fs::read_to_string(root.join("MEMORY.md")).unwrap();
    assert!(
        !memory.contains(LIGHTHOUSE) && !memory.contains("scheduler_test.go"),
        "{memory}"
    );
    assert!(
        memory.contains("vite.config.ts"),
        "other sessions stay: {memory}"
    );
    let raw = std::fs::read_to_string(root.join("raw_memories.md")).unwrap();
    assert!(!raw.contains(LIGHTHOUSE));
    let summary = std::fs::read_to_string(root.join("memory_summary.md")).unwrap();
    assert!(!summary.contains("lighthouse"), "{summary}");
    assert_eq!(
        std::fs::read_dir(root.join("rollout_summaries"))
            .unwrap()
            .count(),
        3
    );

    // A later run does not bring it back.
    run_examples(home.path());
    let memory = std::fs::read_to_string(root.join("MEMORY.md")).unwrap();
    assert!(!memory.contains(LIGHTHOUSE));

    let unknown = agent_memory(
        &[
            "forget",
            "ffffffff",
            "--home",
            home.path().to_str().unwrap(),
        ],
        &[],
    )
    .output()
    .unwrap();
    assert!(!unknown.status.success());
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("no known session matches `ffffffff`")
    );
}

#[test]
fn forget_all_needs_a_yes_and_then_resets_everything() {
    let home = tempfile::tempdir().unwrap();
    run_examples(home.path());
    let home_arg = home.path().to_str().unwrap();
    let refused = agent_memory(&["forget", "--all", "--home", home_arg], &[])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("without --yes"));
    assert!(
        home.path().join("memories/MEMORY.md").is_file(),
        "nothing was removed"
    );

    let stdout = ok(
        agent_memory(&["forget", "--all", "--yes", "--home", home_arg], &[])
            .output()
            .unwrap(),
    );
    assert!(
        stdout.contains("forgot everything: 4 stored memories"),
        "{stdout}"
    );
    let root = home.path().join("memories");
    assert!(root.is_dir());
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    // The next run extracts the sessions again.
    run_examples(home.path());
    assert!(root.join("MEMORY.md").is_file());
}

#[test]
fn cite_records_usage_from_an_assistant_message() {
    let home = tempfile::tempdir().unwrap();
    run_examples(home.path());
    let memory = std::fs::read_to_string(home.path().join("memories/MEMORY.md")).unwrap();
    // The MEMORY.md lines of the harbor-web task, as an agent would cite them.
    let message = super::citing_message(&memory);
    let cite = agent_memory(
        &["cite", "--json", "--home", home.path().to_str().unwrap()],
        &[],
    );
    let output = super::run_with_input(cite, &message);
    let report: serde_json::Value = serde_json::from_str(&ok(output)).unwrap();
    assert_eq!(report["blocks"], 1);
    assert_eq!(report["recorded"], 2);
    assert_eq!(
        report["cited_threads"],
        serde_json::json!([
            "019a4c1e-7d2a-7b31-9f0e-3c5a8e21b001",
            "019a5210-33c8-7e10-a4d1-92b7f0c4d002"
        ])
    );
}

#[test]
fn use_memories_false_injects_nothing() {
    let home = tempfile::tempdir().unwrap();
    run_examples(home.path());
    let home_arg = home.path().to_str().unwrap();
    let block = ok(
        agent_memory(&["show", "--injection", "--home", home_arg], &[])
            .output()
            .unwrap(),
    );
    assert!(
        block.contains("<memory") && block.contains("<memory-citation>"),
        "{block}"
    );
    std::fs::write(
        home.path().join("config.toml"),
        "[memories]\nuse_memories = false\n",
    )
    .unwrap();
    // Disabled by the user: nothing of memory is injected.
    let off = ok(
        agent_memory(&["show", "--injection", "--home", home_arg], &[])
            .output()
            .unwrap(),
    );
    assert!(!off.contains("<memory"), "{off}");
}
