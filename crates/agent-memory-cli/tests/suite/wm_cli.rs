//! `agent-memory wm`: merge, recover, commit, assemble and show, offline, on the example
//! session and on failure cases.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn wm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .arg("wm")
        .args(args)
        .output()
        .unwrap()
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_str(&ok(output)).unwrap()
}

/// A copy of the example session (commits write into the folder).
fn example_session() -> (tempfile::TempDir, PathBuf) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sessions/tidewater");
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("tidewater");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(source.join("messages.jsonl"), dir.join("messages.jsonl")).unwrap();
    (temp, dir)
}

const OLD: &str = "# Working Memory\n\n## Session Title\nTide importer fixes\n\n## Current State\nParser fixed.\n\n## Task & Goals\n\n## Key Facts & Decisions\n\n## Files & Context\n- tides/parse.py: the parser\n\n## Errors & Corrections\n- `pytest` failed on 24:00\n\n## Open Issues\n- April format unknown\n";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn merge_prints_the_document_and_the_guards_exactly_as_specified() {
    let temp = tempfile::tempdir().unwrap();
    let old = write(temp.path(), "old.md", OLD);
    let ops = write(
        temp.path(),
        "ops.json",
        r#"{"sections": {"Session Title": {"op": "KEEP"}, "Current State": {"op": "update", "content": "Checking April."}, "Task & Goals": {"op": "KEEP"}, "Key Facts & Decisions": {"op": "APPEND", "items": ["times are UTC"]}, "Files & Context": {"op": "UPDATE", "content": "- tides/april.py"}, "Errors & Corrections": {"op": "KEEP"}, "Open Issues": {"op": "KEEP"}}}"#,
    );
    let result = json(&wm(&["merge", "--old", &old, "--ops", &ops, "--json"]));
    let keys: Vec<&String> = result.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["document", "guards"]);
    let document = result["document"].as_str().unwrap();
    assert!(document.contains("## Current State\nChecking April.\n"));
    assert!(document.contains("- tides/parse.py: the parser\n- tides/april.py\n"));
    let guards = result["guards"].as_array().unwrap();
    assert_eq!(guards.len(), 1, "{guards:?}");
    let guard = guards[0].as_object().unwrap();
    let fields: Vec<&String> = guard.keys().collect();
    assert_eq!(fields, ["guard", "op_in", "op_out", "reason", "section"]);
    assert_eq!(guard["section"], "Files & Context");
    assert_eq!(guard["guard"], "files_no_regression");
    assert_eq!(guard["op_in"], "UPDATE");
    assert_eq!(guard["op_out"], "APPEND");

    // Without --json: the document on stdout, the guards on stderr.
    let plain = wm(&["merge", "--old", &old, "--ops", &ops]);
    assert_eq!(ok(&plain), document);
    let stderr = String::from_utf8_lossy(&plain.stderr);
    assert!(stderr.contains("guard Files & Context: UPDATE -> APPEND (files_no_regression)"));
}

#[test]
fn merge_repairs_malformed_arguments_and_refuses_empty_ones() {
    let temp = tempfile::tempdir().unwrap();
    let old = write(temp.path(), "old.md", OLD);
    let broken = write(
        temp.path(),
        "broken.json",
        "```json\n{\"sections\": {\"Open Issues\": {\"op\": \"APPEND\", \"items\": [\"check May\", \"check Ju",
    );
    let output = wm(&["merge", "--old", &old, "--ops", &broken]);
    assert!(ok(&output).ends_with("- April format unknown\n- check May\n"));
    assert!(String::from_utf8_lossy(&output.stderr).contains("read as repaired"));
    let empty = write(temp.path(), "empty.json", "I would rather not.");
    let refused = wm(&["merge", "--old", &old, "--ops", &empty]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("holds no readable section operation")
    );
}

#[test]
fn recover_reports_each_section() {
    let temp = tempfile::tempdir().unwrap();
    let raw = write(
        temp.path(),
        "raw.txt",
        "{'sections': {'Session Title': {'op': 'keep'}, 'Current State': {'op': 'UPDATE', 'content': 'half",
    );
    let text = ok(&wm(&["recover", &raw]));
    assert!(text.starts_with("read as: repaired\n"), "{text}");
    assert!(text.contains("Session Title: KEEP\n"));
    assert!(text.contains("Current State: not recovered (kept)\n"));
    let value = json(&wm(&["recover", &raw, "--json"]));
    assert_eq!(value["read_as"], "repaired");
    assert_eq!(value["recovered"], serde_json::json!(["Session Title"]));
    assert_eq!(
        value["arguments"]["sections"]["Current State"]["op"],
        "KEEP"
    );
    let missing = wm(&["recover", temp.path().join("nope.txt").to_str().unwrap()]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read"));
}

#[test]
fn commit_assemble_and_show_on_the_example_session() {
    let (_temp, dir) = example_session();
    let session = dir.to_str().unwrap();
    let before = ok(&wm(&["show", session]));
    assert!(before.contains("live messages: 19"), "{before}");
    assert!(before.contains("no working memory yet"));

    let first = json(&wm(&["commit", session, "--keep", "4", "--json"]));
    assert_eq!(first["status"], "done", "{first}");
    assert_eq!(first["model"], "offline");
    assert_eq!(first["archived_messages"], 14);
    assert_eq!(first["sent_messages"], 14);
    let archive = dir.join("history/archive_001");
    for file in [
        "messages.jsonl",
        ".overview.md",
        ".abstract.md",
        ".meta.json",
        ".done",
    ] {
        assert!(archive.join(file).is_file(), "{file}");
    }
    let overview = std::fs::read_to_string(archive.join(".overview.md")).unwrap();
    assert!(
        overview.contains("`src/table.rs`: read, updated"),
        "{overview}"
    );
    assert!(overview.contains("error[E0583]"), "{overview}");
    assert!(
        !overview.contains("sk-proj-"),
        "no secret reaches the working memory"
    );

    // Keeping 4 of the 5 live messages would cut between a tool call and its result.
    let held = ok(&wm(&["commit", session]));
    assert!(
        held.contains("a call is never archived apart from its result"),
        "{held}"
    );
    let second = ok(&wm(&["commit", session, "--keep", "2"]));
    assert!(
        second.starts_with("archive_002: done (offline): 3 message(s) archived, 3 sent"),
        "{second}"
    );
    let nothing = ok(&wm(&["commit", session]));
    assert!(
        nothing.starts_with("nothing to commit: every message is within the keep window"),
        "{nothing}"
    );

    let assembled = json(&wm(&["assemble", session, "--budget", "30000", "--json"]));
    // Below 40,000 tokens the reply's reserve is 15% of the budget.
    assert_eq!(assembled["stats"]["reserved_for_reply"], 4_500);
    assert_eq!(assembled["messages"].as_array().unwrap().len(), 2);
    assert!(
        assembled["instructions"]
            .as_str()
            .unwrap()
            .contains("<working-memory>\n# Working Memory\n")
    );
    let plain = ok(&wm(&["assemble", session, "--budget", "30000"]));
    assert!(plain.starts_with("=== instructions ===\n"));
    assert!(plain.contains("=== messages (2) ==="));

    let after = ok(&wm(&["show", session]));
    assert!(
        after.contains("archive_001: done (14 message(s))"),
        "{after}"
    );
    assert!(after.contains("working memory (from archive_002)"));
    assert!(after.contains("keep recent: 2"));
}

/// Issue 27: assembling the example session at 16,000 tokens once reserved 20,000 for the reply
/// and returned no instructions, no working memory and no messages.
#[test]
fn a_small_budget_still_assembles_the_working_memory_and_the_newest_messages() {
    let (_temp, dir) = example_session();
    let session = dir.to_str().unwrap();
    ok(&wm(&["commit", session, "--keep", "4"]));
    let assembled = json(&wm(&["assemble", session, "--budget", "16000", "--json"]));
    assert_eq!(assembled["stats"]["reserved_for_reply"], 2_400);
    assert!(
        assembled["instructions"]
            .as_str()
            .unwrap()
            .contains("## Session Title")
    );
    let messages = assembled["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5, "{assembled}");
    assert!(assembled["stats"]["estimated_tokens"].as_u64().unwrap() <= 16_000 - 2_400);
    assert_eq!(assembled["left_out"]["messages"], serde_json::json!([]));
    let plain = ok(&wm(&["assemble", session, "--budget", "16000"]));
    assert!(plain.ends_with("left out: nothing\n"), "{plain}");
}

#[test]
fn commands_on_a_missing_session_say_what_is_expected() {
    let temp = tempfile::tempdir().unwrap();
    let missing = temp.path().join("none");
    for args in [
        vec!["show", missing.to_str().unwrap()],
        vec!["commit", missing.to_str().unwrap()],
        vec!["assemble", missing.to_str().unwrap(), "--budget", "1000"],
    ] {
        let output = wm(&args);
        assert!(!output.status.success(), "{args:?}");
        assert!(
            String::from_utf8_lossy(&output.stderr)
                .contains("expected a folder with messages.jsonl")
        );
    }
    let bad = temp.path().join("bad");
    std::fs::create_dir(&bad).unwrap();
    std::fs::write(bad.join("messages.jsonl"), "{\"id\": \"m1\"}\n").unwrap();
    let output = wm(&["show", bad.to_str().unwrap()]);
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("messages.jsonl:1: not a conversation entry")
    );
}

/// Issue 27 (Deliver 7): `wm append SESSION_DIR` adds the messages on standard input.
#[test]
fn append_adds_messages_from_standard_input() {
    use std::io::Write as _;
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("new-session");
    let run = |input: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_agent-memory"))
            .args(["wm", "append", dir.to_str().unwrap()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let first = run(concat!(
        r#"{"id": "u1", "message": {"role": "user", "text": "import the April tides"}}"#,
        "\n",
        r#"{"id": "a1", "message": {"role": "assistant", "content": [{"type": "text", "text": "On it."}]}}"#,
        "\n"
    ));
    assert!(
        ok(&first).starts_with("appended 2 message(s): 2 live"),
        "{}",
        ok(&first)
    );
    let again = run(r#"{"id": "u1", "message": {"role": "user", "text": "again"}}"#);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("u1"));
    let shown = ok(&wm(&["show", dir.to_str().unwrap()]));
    assert!(shown.contains("live messages: 2"), "{shown}");
}

/// Every `wm` output, text and `--json`, goes through the CLI's one redacting, display-safe
/// writer: the example session's fake key and an escape sequence planted in a message reach
/// neither, and `--json` is one line, as on every other command.
#[test]
fn every_wm_output_is_redacted_and_display_safe() {
    const KEY: &str = "sk-proj-EXAMPLEonlyNotARealKey0123456789abcdefghijklmnopqrstuvwxyzAB";
    let (temp, dir) = example_session();
    let session = dir.to_str().unwrap();
    let messages = std::fs::read_to_string(dir.join("messages.jsonl")).unwrap();
    assert!(
        messages.contains(KEY),
        "the example session holds the fake key"
    );
    let planted = serde_json::json!({
        "id": "m99",
        "message": {"role": "user", "text": "clear the screen \u{1b}[2J and use ghp_abcdefghijklmnopqrstuvwxyz0123456789"}
    });
    std::fs::write(dir.join("messages.jsonl"), format!("{messages}{planted}\n")).unwrap();
    let ops = write(
        temp.path(),
        "ops.json",
        &format!(
            r#"{{"sections": {{"Key Facts & Decisions": {{"op": "APPEND", "items": ["the key is {KEY}", "bell \u0007 here"]}}}}}}"#
        ),
    );
    let old = write(temp.path(), "old.md", OLD);
    let runs: Vec<(Vec<&str>, bool)> = vec![
        (vec!["assemble", session, "--budget", "200000"], false),
        (
            vec!["assemble", session, "--budget", "200000", "--json"],
            true,
        ),
        (vec!["merge", "--old", &old, "--ops", &ops], false),
        (vec!["merge", "--old", &old, "--ops", &ops, "--json"], true),
        (vec!["recover", &ops, "--json"], true),
        (vec!["commit", session, "--keep", "2", "--json"], true),
        (vec!["show", session], false),
        (vec!["show", session, "--json"], true),
    ];
    for (args, is_json) in runs {
        let output = wm(&args);
        let stdout = ok(&output);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let shown = args.join(" ");
        for text in [stdout.as_str(), &*stderr] {
            assert!(!text.contains(KEY), "{shown}: the key is printed");
            assert!(
                !text.contains("ghp_abcdef"),
                "{shown}: the token is printed"
            );
            assert!(
                !text.chars().any(|c| c == '\u{1b}' || c == '\u{7}'),
                "{shown}: a control character is printed"
            );
        }
        if is_json {
            assert_eq!(stdout.lines().count(), 1, "{shown}: not one line");
            serde_json::from_str::<serde_json::Value>(&stdout).unwrap();
        }
    }
}
