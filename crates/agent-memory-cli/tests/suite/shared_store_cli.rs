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

/// A fresh database named after `name` (see [`fresh_database`]) on the test server, when
/// `AGENT_MEMORY_TEST_PG_URL` names one; else says the test is skipped.
fn fresh_shared_store(name: &str) -> Option<String> {
    pg_server().map(|server| fresh_database(&server, name))
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
    let Some(url) = fresh_shared_store("cli_shared") else {
        return;
    };
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
        stderr.contains("state store: cannot reach postgres://127.0.0.1:1/memory"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

/// Fails the test, showing both streams, unless the command succeeded.
fn succeeded(output: &Output) {
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The standard output of a command that must succeed.
fn stdout_of(output: Output) -> String {
    succeeded(&output);
    String::from_utf8(output.stdout).unwrap()
}

/// The JSON a command that must succeed printed.
fn json_of(output: Output) -> Value {
    succeeded(&output);
    json(&output)
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

/// One machine of a fleet sharing the store at `url`: a home of its own and a machine id.
struct Machine<'a> {
    home: tempfile::TempDir,
    url: &'a str,
    id: &'a str,
}

impl<'a> Machine<'a> {
    fn new(url: &'a str, id: &'a str) -> Machine<'a> {
        let home = tempfile::tempdir().unwrap();
        Machine { home, url, id }
    }

    fn path(&self) -> &Path {
        self.home.path()
    }

    /// Runs `agent-memory run ARGS --store URL --machine-id ID <examples>` in this machine's home.
    fn run_examples(&self, args: &[&str]) -> Output {
        let examples = examples().to_string_lossy().into_owned();
        let mut all = vec!["run"];
        all.extend(args);
        all.push(&examples);
        self.run(&all)
    }

    /// Runs `agent-memory ARGS --store URL --machine-id ID` in this machine's home.
    fn run(&self, args: &[&str]) -> Output {
        let mut all = args.to_vec();
        all.extend(["--store", self.url, "--machine-id", self.id]);
        agent_memory(self.path(), &all)
    }
}

/// The user story of a fleet: migrate once, one machine runs and notes something, a host on a
/// second machine that never ran reads the same memory summary and finds the note by search.
#[test]
fn a_second_machine_reads_the_summary_and_finds_a_note_written_on_the_first() {
    let Some(url) = fresh_shared_store("cli_fleet") else {
        return;
    };
    let (laptop, sandbox) = (Machine::new(&url, "laptop"), Machine::new(&url, "sandbox"));

    let migrated = agent_memory(laptop.path(), &["migrate", "--json", "--store", &url]);
    succeeded(&migrated);
    let report = json(&migrated);
    assert_eq!(report["backend"], "postgres", "{report}");
    assert_eq!(report["owners"][0]["owner"], "memory-write", "{report}");
    assert!(
        report["owners"][0]["version"].as_i64().unwrap() >= 2,
        "{report}"
    );

    succeeded(&laptop.run_examples(&[]));
    let fact = "the staging database is read-only on Fridays";
    succeeded(&laptop.run(&["note", fact]));

    let found = sandbox.run(&["search", "staging Fridays", "--json"]);
    succeeded(&found);
    let hits = json(&found);
    let text = hits.to_string();
    assert!(text.contains("notes/"), "{text}");
    assert!(text.contains("read-only on Fridays"), "{text}");
    let summary =
        |home: &Path| std::fs::read_to_string(home.join("memories/memory_summary.md")).unwrap();
    assert_eq!(summary(sandbox.path()), summary(laptop.path()));
    assert!(!sandbox.path().join("state.sqlite").exists());

    // The daily note budget is each machine's: the laptop's note is read on the sandbox but
    // spends none of the sandbox's budget.
    let notes = |machine: &Machine| json_of(machine.run(&["status", "--json"]))["notes"].clone();
    let on_sandbox = notes(&sandbox);
    assert_eq!(
        (on_sandbox["files"].as_u64(), on_sandbox["today"].as_u64()),
        (Some(1), Some(0)),
        "{on_sandbox}"
    );
    let on_laptop = notes(&laptop);
    assert_eq!(on_laptop["today"].as_u64(), Some(1), "{on_laptop}");
}

/// Goals, the MCP server and citations on a shared store: a goal set on the laptop is charged
/// from the sandbox; an MCP server on the sandbox (which never ran) serves the fleet's memory
/// and goal, and a note saved through it is found from the laptop; a citation recorded on the
/// sandbox counts in the shared store.
#[test]
fn goals_the_mcp_server_and_citations_are_the_fleets_on_a_shared_store() {
    let Some(url) = fresh_shared_store("cli_fleet_goals") else {
        return;
    };
    let (laptop, sandbox) = (Machine::new(&url, "laptop"), Machine::new(&url, "sandbox"));
    json_of(laptop.run_examples(&["--json"]));

    let thread = "billing-migration";
    let set = json_of(agent_memory(
        laptop.path(),
        &[
            "goal",
            "set",
            thread,
            "move billing to the new ledger",
            "--budget",
            "5000",
            "--json",
            "--store",
            &url,
        ],
    ));
    let charged = json_of(agent_memory(
        sandbox.path(),
        &[
            "goal",
            "account",
            thread,
            "--turn",
            "fleet-turn-1",
            "--tokens",
            "1200",
            "--tool-calls",
            "2",
            "--json",
            "--store",
            &url,
        ],
    ));
    assert_eq!(charged["goal"]["tokensUsed"], 1200, "{charged}");
    assert_eq!(charged["goal"]["goalId"], set["goalId"], "{charged}");
    let shown = json_of(agent_memory(
        laptop.path(),
        &["goal", "show", thread, "--json", "--store", &url],
    ));
    assert_eq!(shown["tokensUsed"], 1200, "{shown}");
    assert_eq!(
        shown["objective"], "move billing to the new ledger",
        "{shown}"
    );

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        use rmcp::ServiceExt;
        use rmcp::model::CallToolRequestParams;
        use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
        let (transport, stderr) = TokioChildProcess::builder(
            tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-memory")).configure(|command| {
                command
                    .args(["mcp", "--home"])
                    .arg(sandbox.path())
                    .args([
                        "--store",
                        &url,
                        "--machine-id",
                        "sandbox",
                        "--thread",
                        thread,
                    ])
                    .env_remove("AGENT_MEMORY_STORE");
            }),
        )
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
        let client = ().serve(transport).await.unwrap();
        let call = |tool: &str, arguments: Value| {
            let Value::Object(arguments) = arguments else {
                panic!("arguments must be an object");
            };
            client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        };
        let goal = call("get_goal", serde_json::json!({})).await.unwrap();
        let goal = goal.structured_content.unwrap();
        assert_eq!(goal["goal"]["tokensUsed"], 1200, "{goal}");
        // The sandbox never ran: the summary it serves is the laptop's consolidation.
        let read = call(
            "memory_read",
            serde_json::json!({"path": "memory_summary.md"}),
        )
        .await
        .unwrap();
        assert_eq!(read.is_error, Some(false), "{read:?}");
        let laptop_summary =
            std::fs::read_to_string(laptop.path().join("memories/memory_summary.md")).unwrap();
        let served = read.structured_content.unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            laptop_summary.starts_with(served.lines().next().unwrap()),
            "{served}"
        );
        let note = call(
            "memory_note",
            serde_json::json!({"text": "The canary deploy needs two approvals."}),
        )
        .await
        .unwrap();
        assert_eq!(note.is_error, Some(false), "{note:?}");
        client.cancel().await.unwrap();
        // The server shut down cleanly: nothing on its stderr (a panic would be there).
        let mut errors = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut stderr.unwrap(), &mut errors)
            .await
            .unwrap();
        assert!(errors.is_empty(), "{errors}");
    });

    let found = json_of(laptop.run(&["search", "canary approvals", "--json"]));
    assert!(found.to_string().contains("two approvals"), "{found}");

    // A citation recorded on the sandbox, which has no state file of its own.
    let memory = std::fs::read_to_string(laptop.path().join("memories/MEMORY.md")).unwrap();
    let mut cite = Command::new(env!("CARGO_BIN_EXE_agent-memory"));
    cite.args(["cite", "--json", "--store", &url, "--home"])
        .arg(sandbox.path())
        .env_remove("AGENT_MEMORY_STORE");
    let output = super::run_with_input(cite, &super::citing_message(&memory));
    let report = json_of(output);
    assert_eq!(report["recorded"], 2, "{report}");
    assert!(!sandbox.path().join("state.sqlite").exists());
}

/// Forgetting on a shared store: a session forgotten from the sandbox leaves the memory files
/// the laptop reads next; `forget --all` there resets the fleet, and the next run extracts
/// every session again.
#[test]
fn forget_on_one_machine_reaches_the_fleets_memory() {
    let Some(url) = fresh_shared_store("cli_fleet_forget") else {
        return;
    };
    let (laptop, sandbox) = (Machine::new(&url, "laptop"), Machine::new(&url, "sandbox"));
    let forgotten = "019a5210-33c8-7e10-a4d1-92b7f0c4d002";
    stdout_of(laptop.run_examples(&[]));
    let memory = |home: &Path| std::fs::read_to_string(home.join("memories/MEMORY.md")).unwrap();
    assert!(memory(laptop.path()).contains(forgotten));

    let said = stdout_of(sandbox.run(&["forget", "019a5210"]));
    assert!(said.contains(&format!("forgot {forgotten}")), "{said}");
    // The laptop's next read syncs the files the sandbox's consolidation published.
    stdout_of(laptop.run(&["read", "MEMORY.md"]));
    assert!(!memory(laptop.path()).contains(forgotten));
    assert!(memory(laptop.path()).contains("019a4c1e-7d2a-7b31-9f0e-3c5a8e21b001"));

    let said = stdout_of(sandbox.run(&["forget", "--all", "--yes"]));
    assert!(
        said.contains("forgot everything: 3 stored memories"),
        "{said}"
    );
    assert!(said.contains("other machines keep their copies"), "{said}");
    let rerun = stdout_of(laptop.run_examples(&["--json"]));
    let rerun: Value = serde_json::from_str(&rerun).unwrap();
    // Every session but the forgotten one is extracted again.
    assert_eq!(rerun["succeeded"], 3, "{rerun}");
    assert!(!memory(laptop.path()).contains(forgotten));
}
