//! The `--json` rule every command meets: on failure, one object on stdout,
//! `{"error": {"code", "message", "action"}}`, and an exit code that says it failed.

use std::process::{Command, Stdio};

use serde_json::Value;

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|arg| (*arg).to_owned()).collect()
}

/// Checks `stdout` is exactly one error object; the reason it is not, otherwise.
fn error_object(stdout: &str) -> Result<(), String> {
    let mut lines = stdout.lines();
    let line = lines.next().ok_or("nothing on stdout")?;
    if lines.next().is_some() {
        return Err(format!("more than one line: {stdout:?}"));
    }
    let value: Value = serde_json::from_str(line).map_err(|error| format!("{error}: {line}"))?;
    let object = value.as_object().ok_or(format!("not an object: {line}"))?;
    let keys: Vec<&String> = object.keys().collect();
    if keys != ["error"] {
        return Err(format!("keys {keys:?}: {line}"));
    }
    let error = &value["error"];
    let fields: Vec<&String> = error
        .as_object()
        .map(|map| map.keys().collect())
        .unwrap_or_default();
    if fields != ["action", "code", "message"] {
        return Err(format!("error fields {fields:?}: {line}"));
    }
    let code = error["code"].as_str().unwrap_or("");
    if code.is_empty()
        || code
            .chars()
            .any(|ch| !(ch.is_ascii_lowercase() || ch == '_'))
    {
        return Err(format!("code is not snake_case: {line}"));
    }
    if error["message"].as_str().is_none_or(str::is_empty) {
        return Err(format!("no message: {line}"));
    }
    if !(error["action"].is_null() || error["action"].is_string()) {
        return Err(format!("action is neither text nor null: {line}"));
    }
    Ok(())
}

/// The subcommand paths (`["goal", "show"]`) whose `--help` offers `--json`, found by walking
/// each help's `Commands:` list.
fn commands_with_json(path: &[String]) -> Vec<Vec<String>> {
    let output = Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .args(path)
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut found = Vec::new();
    if help.contains("--json") {
        found.push(path.to_vec());
    }
    let names: Vec<String> = help
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect();
    for name in names {
        let mut sub = path.to_vec();
        sub.push(name);
        found.extend(commands_with_json(&sub));
    }
    found
}

#[test]
fn every_json_command_prints_one_error_object_when_it_fails() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    std::fs::create_dir_all(home.join("memories")).unwrap();
    let home = home.to_str().unwrap();
    let bad_config = temp.path().join("bad.toml");
    std::fs::write(&bad_config, "this is [not toml\n").unwrap();
    let bad = bad_config.to_str().unwrap();
    let missing = temp.path().join("missing");
    let missing = missing.to_str().unwrap();
    let home_args = ["--home", home];
    let with = |args: &[&str], extra: &[&str]| strings(&[args, extra, &home_args].concat());

    let cases: Vec<Vec<String>> = vec![
        with(&["run", missing, "--json"], &[]),
        with(&["consolidate", "--json"], &["--config", bad]),
        strings(&["compact", missing, "--json"]),
        with(&["goal", "show", "nope", "--json"], &[]),
        with(&["goal", "pause", "nope", "--json"], &[]),
        with(&["cite", "--json"], &["--store", "nonsense://x"]),
        strings(&["wm", "merge", "--old", missing, "--ops", missing, "--json"]),
        strings(&["wm", "recover", missing, "--json"]),
        strings(&["wm", "commit", missing, "--json"]),
        strings(&["wm", "assemble", missing, "--budget", "1000", "--json"]),
        with(&["status", "--json"], &["--config", bad]),
        with(&["search", "cargo", "--json"], &["--config", bad]),
        with(&["list", "--json"], &["--config", bad]),
        with(&["read", "nope.md", "--json"], &[]),
        with(&["note", "a note", "--json"], &["--config", bad]),
        with(&["block", "--json"], &["--config", bad]),
        with(&["migrate", "--json"], &["--config", bad]),
        strings(&["wm", "show", missing, "--json"]),
        // A file where the session folder should be.
        strings(&["wm", "append", bad, "--json"]),
        with(
            &["goal", "set", "t", "an objective", "--json"],
            &["--store", "nonsense://x"],
        ),
        with(
            &["goal", "edit", "t", "an objective", "--json"],
            &["--store", "nonsense://x"],
        ),
        with(
            &["goal", "budget", "t", "5", "--json"],
            &["--store", "nonsense://x"],
        ),
        with(
            &["goal", "resume", "t", "--json"],
            &["--store", "nonsense://x"],
        ),
        with(
            &["goal", "clear", "t", "--json"],
            &["--store", "nonsense://x"],
        ),
        with(
            &["goal", "next", "t", "--json"],
            &["--store", "nonsense://x"],
        ),
        with(
            &[
                "goal", "account", "t", "--turn", "a", "--tokens", "5", "--json",
            ],
            &["--store", "nonsense://x"],
        ),
        with(
            &["goal", "update", "t", "--status", "complete", "--json"],
            &["--store", "nonsense://x"],
        ),
    ];
    // Every command whose help offers --json is among the cases, so a new one meets the rule.
    let uncovered: Vec<String> = commands_with_json(&[])
        .into_iter()
        .filter(|path| !cases.iter().any(|case| case.starts_with(path)))
        .map(|path| path.join(" "))
        .collect();
    assert!(
        uncovered.is_empty(),
        "no --json failure case for: {uncovered:?}"
    );
    let mut failures = Vec::new();
    for args in &cases {
        let output = Command::new(env!("CARGO_BIN_EXE_agent-memory"))
            .args(args)
            .env_remove("AGENT_MEMORY_HOME")
            .env_remove("AGENT_MEMORY_STORE")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let code = output.status.code();
        if !matches!(code, Some(1 | 3)) {
            failures.push(format!("{}: exit {code:?}", args.join(" ")));
        } else if let Err(reason) = error_object(&stdout) {
            failures.push(format!("{}: {reason}", args.join(" ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_missing_thing_is_an_error_with_the_code_not_found() {
    let home = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .args(["goal", "show", "nope", "--json", "--home"])
        .arg(home.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value["error"]["code"], "not_found");
    assert_eq!(value["error"]["message"], "thread nope has no goal");
}

/// Every key of `value`, with its path, recursively.
fn keys(value: &Value, path: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                out.push(format!("{path}.{key}"));
                keys(inner, &format!("{path}.{key}"), out);
            }
        }
        Value::Array(items) => {
            for item in items {
                keys(item, &format!("{path}[]"), out);
            }
        }
        _ => {}
    }
}

fn last_key(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

/// The CLI's own `--json` objects use snake_case keys; `goal --json` prints codex's goal wire
/// types, camelCase by that protocol (the README says so). Each command is run to success.
#[test]
fn the_cli_s_own_json_uses_snake_case_keys_and_goal_json_is_codex_s_camel_case() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    let home = home.to_str().unwrap();
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let rollouts = workspace.join("examples/rollouts");
    let rollouts = rollouts.to_str().unwrap();
    let rollout = workspace.join(
        "examples/rollouts/2025/11/03/rollout-2025-11-03T09-12-40-019a4c1e-7d2a-7b31-9f0e-3c5a8e21b001.jsonl",
    );
    let rollout = rollout.to_str().unwrap();
    let session = temp.path().join("session");
    std::fs::create_dir(&session).unwrap();
    std::fs::copy(
        workspace.join("examples/sessions/tidewater/messages.jsonl"),
        session.join("messages.jsonl"),
    )
    .unwrap();
    let session = session.to_str().unwrap();
    let snake: Vec<Vec<String>> = vec![
        strings(&["run", rollouts, "--json", "--home", home]),
        strings(&["consolidate", "--now", "--json", "--home", home]),
        strings(&["status", "--json", "--home", home]),
        strings(&["search", "cargo", "test", "--json", "--home", home]),
        strings(&["list", "--json", "--home", home]),
        strings(&["read", "MEMORY.md", "--json", "--home", home]),
        strings(&["note", "prefer tabs", "--json", "--home", home]),
        strings(&["block", "--query", "deploy", "--json", "--home", home]),
        strings(&["migrate", "--json", "--home", home]),
        strings(&["cite", "--json", "--home", home]),
        strings(&["compact", rollout, "--plan-only", "--json", "--home", home]),
        strings(&["compact", rollout, "--check", "--json", "--home", home]),
        strings(&["wm", "show", session, "--json"]),
        strings(&["wm", "assemble", session, "--budget", "4000", "--json"]),
    ];
    let camel: Vec<Vec<String>> = vec![
        strings(&["goal", "set", "t1", "ship it", "--json", "--home", home]),
        strings(&["goal", "show", "t1", "--json", "--home", home]),
    ];
    let mut failures = Vec::new();
    for (args, camel_case) in snake
        .iter()
        .map(|args| (args, false))
        .chain(camel.iter().map(|args| (args, true)))
    {
        let output = Command::new(env!("CARGO_BIN_EXE_agent-memory"))
            .args(args)
            .env_remove("AGENT_MEMORY_HOME")
            .env_remove("AGENT_MEMORY_STORE")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let shown = args.join(" ");
        if !output.status.success() {
            failures.push(format!(
                "{shown}: exit {:?}: {}",
                output.status.code(),
                String::from_utf8_lossy(&output.stderr)
            ));
            continue;
        }
        let value: Value = match serde_json::from_slice(&output.stdout) {
            Ok(value) => value,
            Err(error) => {
                failures.push(format!("{shown}: not one JSON value: {error}"));
                continue;
            }
        };
        let mut found = Vec::new();
        keys(&value, "", &mut found);
        assert!(!found.is_empty(), "{shown}: no keys");
        for path in found {
            let key = last_key(&path);
            let ok = if camel_case {
                !key.contains('_') && key.starts_with(|ch: char| ch.is_ascii_lowercase())
            } else {
                key.chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_')
            };
            if !ok {
                failures.push(format!("{shown}: key {path}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
