//! The CLI on a PostgreSQL store shared by "machines" (homes): a rollout is extracted once,
//! wherever it was registered; every machine reads the same memory files and notes.
//! Runs when `AGENT_MEMORY_TEST_PG_URL` names a server (CI starts one); skipped, saying so,
//! otherwise.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn examples() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/rollouts"
    ))
}

fn run(home: &Path, store: Option<&str>, env_store: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-memory"));
    command
        .args(["run", "--json", "--home"])
        .arg(home)
        .arg(examples());
    command.env_remove("AGENT_MEMORY_STORE");
    if let Some(url) = store {
        command.args(["--store", url]);
    }
    if let Some(url) = env_store {
        command.env("AGENT_MEMORY_STORE", url);
    }
    command.output().unwrap()
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not json ({e}): {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// The test server, when `AGENT_MEMORY_TEST_PG_URL` names one; else says the test is skipped.
fn pg_server() -> Option<String> {
    let server = std::env::var("AGENT_MEMORY_TEST_PG_URL")
        .ok()
        .filter(|url| !url.is_empty());
    if server.is_none() {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: shared-store CLI test (AGENT_MEMORY_TEST_PG_URL is not set)"
        );
    }
    server
}

/// A fresh database on the test server, named after the test and this process.
fn fresh_database(server: &str, name: &str) -> String {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let database = format!("{name}_{}", std::process::id());
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(server, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
            .batch_execute(&format!("DROP DATABASE IF EXISTS {database}"))
            .await
            .unwrap();
        client
            .batch_execute(&format!("CREATE DATABASE {database}"))
            .await
            .unwrap();
    });
    let base = server.rsplit_once('/').map_or(server, |(base, _)| base);
    format!("{base}/{database}")
}

#[test]
fn two_homes_on_one_postgres_store_extract_each_rollout_once() {
    let Some(server) = pg_server() else {
        return;
    };
    let url = fresh_database(&server, "cli_shared");
    let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());

    let output = run(first.path(), Some(&url), None);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = json(&output);
    assert!(report["succeeded"].as_u64().unwrap() >= 4, "{report}");
    assert_eq!(report["phase2"]["ran"], true, "{report}");
    // The state lives on the server, not in the home.
    assert!(!first.path().join("state.sqlite").exists());
    assert!(first.path().join("memories/MEMORY.md").is_file());

    // The second machine, pointed at the store by the environment, finds nothing to extract
    // and writes its own copy of the memory files from the shared outputs.
    let output = run(second.path(), None, Some(&url));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = json(&output);
    assert_eq!(report["claimed"], 0, "{report}");
    assert!(!second.path().join("state.sqlite").exists());
    let memory = |home: &Path| std::fs::read_to_string(home.join("memories/MEMORY.md")).unwrap();
    assert_eq!(memory(first.path()), memory(second.path()));

    // `--store sqlite` overrides the environment: back to the home's own file.
    let output = run(second.path(), Some("sqlite"), Some(&url));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(json(&output)["succeeded"].as_u64().unwrap() >= 4);
    assert!(second.path().join("state.sqlite").is_file());
}

#[test]
fn an_unreachable_store_is_a_clear_error_without_the_password() {
    let home = tempfile::tempdir().unwrap();
    let output = run(
        home.path(),
        Some("postgres://agent:hunter2@127.0.0.1:1/memory"),
        None,
    );
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot reach the state store at postgres://127.0.0.1:1/memory"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

fn agent_memory(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .args(args)
        .arg("--home")
        .arg(home)
        .env_remove("AGENT_MEMORY_STORE")
        .env_remove("AGENT_MEMORY_MACHINE_ID")
        .output()
        .unwrap()
}

/// The user story of a fleet: migrate once, one machine runs and notes something, a host on a
/// second machine that never ran reads the same memory summary and finds the note by search.
#[test]
fn a_second_machine_reads_the_summary_and_finds_a_note_written_on_the_first() {
    let Some(server) = pg_server() else {
        return;
    };
    let url = fresh_database(&server, "cli_fleet");
    let (laptop, sandbox) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ok = |output: &Output| {
        assert!(
            output.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    };

    let migrated = agent_memory(laptop.path(), &["migrate", "--json", "--store", &url]);
    ok(&migrated);
    let report = json(&migrated);
    assert_eq!(report["backend"], "postgres", "{report}");
    assert_eq!(report["owners"][0]["owner"], "memory-write", "{report}");
    assert!(
        report["owners"][0]["version"].as_i64().unwrap() >= 2,
        "{report}"
    );

    let store = ["--store", url.as_str(), "--machine-id"];
    let mut args = vec!["run"];
    args.extend(store);
    args.push("laptop");
    let examples = examples().to_string_lossy().into_owned();
    args.push(&examples);
    ok(&agent_memory(laptop.path(), &args));
    let fact = "the staging database is read-only on Fridays";
    ok(&agent_memory(
        laptop.path(),
        &["note", fact, "--store", &url, "--machine-id", "laptop"],
    ));

    let found = agent_memory(
        sandbox.path(),
        &[
            "search",
            "staging Fridays",
            "--json",
            "--store",
            &url,
            "--machine-id",
            "sandbox",
        ],
    );
    ok(&found);
    let hits = json(&found);
    let text = hits.to_string();
    assert!(text.contains("notes/"), "{text}");
    assert!(text.contains("read-only on Fridays"), "{text}");
    let summary =
        |home: &Path| std::fs::read_to_string(home.join("memories/memory_summary.md")).unwrap();
    assert_eq!(summary(sandbox.path()), summary(laptop.path()));
    assert!(!sandbox.path().join("state.sqlite").exists());
}
