//! The codex drop-in (`--codex`) as codex 0.169.0 meets it: sessions codex stamped
//! `"memory_mode": "disabled"`, codex's own consolidation lease, the read commands on codex's
//! memory root, and codex's `memories.version = "v2"`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rollouts")
}

/// A codex home whose sessions are the examples, the first of them (by path) stamped
/// `"memory_mode": "disabled"` as codex stamps every session while `generate_memories` is false.
fn codex_home_with_sessions(disabled: usize) -> tempfile::TempDir {
    let codex_home = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let mut pending = vec![examples()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    for (index, file) in files.iter().enumerate() {
        let relative = file.strip_prefix(examples()).unwrap();
        let target = codex_home.path().join("sessions").join(relative);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        let mut text = std::fs::read_to_string(file).unwrap();
        if index < disabled {
            text = text.replacen(
                "\"payload\":{",
                "\"payload\":{\"memory_mode\":\"disabled\",",
                1,
            );
        }
        std::fs::write(&target, text).unwrap();
    }
    codex_home
}

/// Codex's memory database as codex 0.169.0 leaves it after a start-up with memories on:
/// its `jobs` table, with its own failed consolidation in back-off.
fn codex_memories_db(codex_home: &Path) -> PathBuf {
    let path = codex_home.join("memories_1.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE jobs (kind TEXT NOT NULL, job_key TEXT NOT NULL, status TEXT NOT NULL,
             worker_id TEXT, ownership_token TEXT, started_at INTEGER, finished_at INTEGER,
             lease_until INTEGER, retry_at INTEGER, retry_remaining INTEGER NOT NULL,
             last_error TEXT, input_watermark INTEGER, last_success_watermark INTEGER,
             PRIMARY KEY (kind, job_key));
         INSERT INTO jobs VALUES ('memory_consolidate_global', 'global', 'error', 'w', 't', 1, 2,
             NULL, 5000, 2, 'failed_agent', 0, 0);",
    )
    .unwrap();
    path
}

fn agent_memory(codex_home: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .args(args)
        .arg("--home")
        .arg(home)
        .env_remove("AGENT_MEMORY_HOME")
        .env("CODEX_HOME", codex_home)
        .output()
        .unwrap()
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

/// `run --codex` over every example, whatever its age.
fn run_codex(codex_home: &Path, home: &Path, json: bool) -> String {
    std::fs::write(
        home.join("config.toml"),
        "[memories]\nmax_rollouts_per_startup = 10\n",
    )
    .unwrap();
    let mut args = vec!["run", "--codex", "--max-age-days", "100000"];
    if json {
        args.push("--json");
    }
    ok(agent_memory(codex_home, home, &args))
}

#[test]
fn sessions_codex_stamped_disabled_are_counted_under_their_own_reason() {
    let codex_home = codex_home_with_sessions(2);
    let home = tempfile::tempdir().unwrap();
    let text = run_codex(codex_home.path(), home.path(), false);
    assert!(
        text.contains("; 2 memory disabled by the session (codex's generate_memories = false)\n"),
        "{text}"
    );
    let home = tempfile::tempdir().unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&run_codex(codex_home.path(), home.path(), true)).unwrap();
    assert_eq!(
        json["skipped_by_reason"],
        serde_json::json!({"disabled_by_session": 2, "excluded": 1}),
        "{json}"
    );
}

#[test]
fn run_codex_holds_codex_s_consolidation_lease() {
    let codex_home = codex_home_with_sessions(0);
    let home = tempfile::tempdir().unwrap();
    // Before codex made its database, the run says what codex's first start-up may do.
    let text = run_codex(codex_home.path(), home.path(), false);
    assert!(
        text.contains("codex's own consolidation: ") && text.contains("does not exist yet"),
        "{text}"
    );
    assert!(!codex_home.path().join("memories_1.sqlite").exists());

    let db = codex_memories_db(codex_home.path());
    let text = run_codex(codex_home.path(), home.path(), false);
    assert!(
        text.contains("codex's own consolidation: held off"),
        "{text}"
    );
    let conn = rusqlite::Connection::open(&db).unwrap();
    let row: (String, String, i64, Option<i64>) = conn
        .query_row(
            "SELECT status, ownership_token, lease_until, retry_at FROM jobs
             WHERE kind = 'memory_consolidate_global' AND job_key = 'global'",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        )
        .unwrap();
    assert_eq!(
        row,
        (
            "running".to_owned(),
            "agent-memory".to_owned(),
            253_402_300_799,
            None
        )
    );
    let json: serde_json::Value =
        serde_json::from_str(&run_codex(codex_home.path(), home.path(), true)).unwrap();
    assert_eq!(json["codex_consolidation"]["lease"], "held", "{json}");
}

#[test]
fn the_read_commands_take_codex_s_root_with_codex() {
    let codex_home = codex_home_with_sessions(0);
    let home = tempfile::tempdir().unwrap();
    run_codex(codex_home.path(), home.path(), false);
    let root = codex_home.path().join("memories");
    let on_codex = |args: &[&str]| {
        let mut args = args.to_vec();
        args.push("--codex");
        ok(agent_memory(codex_home.path(), home.path(), &args))
    };

    let status = on_codex(&["status"]);
    assert!(
        status.contains(&format!("root: {}\n", root.display())),
        "{status}"
    );
    assert!(status.contains("state: ready"), "{status}");
    let list = on_codex(&["list"]);
    assert!(
        list.contains("rollout_summaries/") && list.contains("MEMORY.md"),
        "{list}"
    );
    let memory = on_codex(&["read", "MEMORY.md"]);
    assert!(memory.contains(", rollout_path="), "{memory}");
    let search = on_codex(&["search", "lighthouse"]);
    assert!(search.contains("MEMORY.md:"), "{search}");
    let block = on_codex(&["block"]);
    assert!(block.contains(&root.display().to_string()), "{block}");

    // Without --codex they look at the home's own root, which this run never wrote.
    let status = ok(agent_memory(codex_home.path(), home.path(), &["status"]));
    assert!(
        status.contains(&format!(
            "root: {}\n",
            home.path().join("memories").display()
        )),
        "{status}"
    );
    assert!(status.contains("state: empty"), "{status}");
}

#[test]
fn codex_set_to_memories_v2_is_refused_naming_the_setting() {
    let codex_home = codex_home_with_sessions(0);
    std::fs::write(
        codex_home.path().join("config.toml"),
        "model = \"gpt-5\"\n[memories]\nversion = \"v2\"\n",
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    for args in [
        &["run", "--codex"][..],
        &["status", "--codex"],
        &["list", "--codex"],
    ] {
        let output = agent_memory(codex_home.path(), home.path(), args);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("memories.version = \"v2\"")
                && stderr.contains("config.toml")
                && stderr.contains("set it to \"v1\""),
            "{args:?}: {stderr}"
        );
    }
    assert!(!codex_home.path().join("memories").exists());
    assert!(!codex_home.path().join("memories_v2").exists());
}
