//! `agent-memory compact` end to end: the JSON report, repeated compactions through `--out`
//! and `--previous`, and failures that write nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn rollout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../examples/rollouts/2025/11/03/rollout-2025-11-03T09-12-40-019a4c1e-7d2a-7b31-9f0e-3c5a8e21b001.jsonl",
    )
}

fn compact(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .arg("compact")
        .args(args)
        .output()
        .unwrap()
}

fn json(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

const PLAN_KEYS: [&str; 11] = [
    "messages_total",
    "messages_summarized",
    "messages_kept",
    "first_kept_entry_id",
    "split_turn",
    "windows",
    "tokens_before",
    "tokens_after",
    "dropped_useless",
    "truncated_tool_results",
    "redactions",
];

#[test]
fn plan_only_prints_the_plan_and_calls_no_model() {
    let file = rollout();
    let out = compact(&[
        file.to_str().unwrap(),
        "--keep-recent",
        "400",
        "--plan-only",
        "--json",
    ]);
    let report = json(&out);
    let plan = report["plan"].as_object().unwrap();
    let mut keys: Vec<&str> = plan.keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut expected = PLAN_KEYS.to_vec();
    expected.sort_unstable();
    assert_eq!(keys, expected);
    assert!(report["entry"].is_null() && report["short_summary"].is_null());
    assert!(plan["tokens_after"].is_null());
    assert!(plan["messages_summarized"].as_u64().unwrap() > 0);
    assert_eq!(
        plan["messages_summarized"].as_u64().unwrap() + plan["messages_kept"].as_u64().unwrap(),
        plan["messages_total"].as_u64().unwrap()
    );
    // The planted OpenAI key in the first request is counted as redacted.
    assert_eq!(plan["redactions"], 1);
}

#[test]
fn compactions_repeat_through_out_and_previous() {
    let dir = tempfile::tempdir().unwrap();
    let first_out = dir.path().join("first.jsonl");
    let file = rollout();
    let first = json(&compact(&[
        file.to_str().unwrap(),
        "--keep-recent",
        "400",
        "--out",
        first_out.to_str().unwrap(),
        "--json",
    ]));
    let entry = &first["entry"];
    assert_eq!(entry["engine"], "offline");
    assert!(entry["tokens_after"].as_u64().unwrap() < entry["tokens_before"].as_u64().unwrap());
    assert_eq!(first["short_summary"], entry["short_summary"]);
    assert_eq!(first["plan"]["tokens_after"], entry["tokens_after"]);
    let written = std::fs::read_to_string(&first_out).unwrap();
    let last: Value = serde_json::from_str(written.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "compaction");
    assert_eq!(last["id"], entry["id"]);
    // Messages are the conversation and are copied as they are; what compaction wrote carries
    // no secret.
    assert!(written.contains("sk-proj-EXAMPLEonly"));
    assert!(
        !written
            .lines()
            .last()
            .unwrap()
            .contains("sk-proj-EXAMPLEonly")
    );

    // The session file compacts again on its own, continuing from its summary.
    let second = json(&compact(&[
        first_out.to_str().unwrap(),
        "--keep-recent",
        "150",
        "--json",
    ]));
    assert!(
        second["entry"]["summary"]
            .as_str()
            .unwrap()
            .contains("## Goal")
    );

    // And the rollout continues from the earlier session with --previous.
    let continued_out = dir.path().join("continued.jsonl");
    let continued = json(&compact(&[
        file.to_str().unwrap(),
        "--previous",
        first_out.to_str().unwrap(),
        "--keep-recent",
        "150",
        "--out",
        continued_out.to_str().unwrap(),
        "--json",
    ]));
    assert_eq!(
        continued["plan"]["messages_total"], first["plan"]["messages_kept"],
        "the span starts at the first compaction's first kept entry"
    );
    let text = std::fs::read_to_string(&continued_out).unwrap();
    assert_eq!(text.matches("\"type\":\"compaction\"").count(), 2);
}

#[test]
fn nothing_to_summarize_is_not_an_error() {
    let out = compact(&[rollout().to_str().unwrap()]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("nothing to summarize in "), "{stdout}");
}

/// codex #40619: two one-line turns summarized offline would leave the context larger, so no
/// entry is written and the report says why.
#[test]
fn a_compaction_that_would_not_shrink_the_context_writes_no_entry() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("tiny.jsonl");
    std::fs::write(
        &session,
        concat!(
            r#"{"type":"message","id":"m1","message":{"role":"user","text":"Step 1."}}"#,
            "\n",
            r#"{"type":"message","id":"m2","message":{"role":"assistant","content":[{"type":"text","text":"Done 1."}]}}"#,
            "\n",
            r#"{"type":"message","id":"m3","message":{"role":"user","text":"Step 2."}}"#,
            "\n",
        ),
    )
    .unwrap();
    let file = session.to_str().unwrap();
    let out = compact(&[
        file,
        "--keep-recent",
        "1",
        "--home",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("not compacted: "), "{stdout}");
    assert!(stdout.contains("no fewer than the"), "{stdout}");
    let report = json(&compact(&[
        file,
        "--keep-recent",
        "1",
        "--home",
        dir.path().to_str().unwrap(),
        "--json",
    ]));
    assert!(report["entry"].is_null(), "{report}");
    let plan = &report["plan"];
    assert!(
        plan["tokens_after"].as_u64() >= plan["tokens_before"].as_u64(),
        "{report}"
    );
}

#[test]
fn a_file_with_no_conversation_is_an_error_not_nothing_to_summarize() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.jsonl");
    std::fs::write(&junk, "hello\nnot json\n{\"foo\": 1}\n").unwrap();
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    for (file, lines) in [(&junk, 3), (&empty, 0)] {
        let file = file.to_str().unwrap();
        for extra in [&[][..], &["--check"][..], &["--plan-only"][..]] {
            let out = compact(&[&[file][..], extra].concat());
            assert_eq!(out.status.code(), Some(1), "{file} {extra:?}");
            assert!(out.stdout.is_empty(), "{file} {extra:?}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains(&format!(
                    "holds no conversation: none of its {lines} line(s) is a message"
                )),
                "{stderr}"
            );
        }
        let out = compact(&[file, "--json"]);
        assert_eq!(out.status.code(), Some(1));
        let error: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(error["error"]["code"], "failed", "{error}");
    }
}

#[test]
fn failures_exit_non_zero_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out.jsonl");
    let out = out_path.to_str().unwrap();
    let file = rollout();
    let file = file.to_str().unwrap();

    let missing = compact(&[
        dir.path().join("nope.jsonl").to_str().unwrap(),
        "--out",
        out,
    ]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).starts_with("error: cannot read "));

    let other = dir.path().join("other.jsonl");
    std::fs::write(
        &other,
        "{\"type\":\"message\",\"id\":\"x1\",\"message\":{\"role\":\"user\",\"text\":\"hi\"}}\n",
    )
    .unwrap();
    let mismatch = compact(&[file, "--previous", other.to_str().unwrap(), "--out", out]);
    assert!(!mismatch.status.success());
    let stderr = String::from_utf8_lossy(&mismatch.stderr);
    assert!(
        stderr.contains("does not match this conversation"),
        "{stderr}"
    );

    let bad_session = dir.path().join("bad.jsonl");
    std::fs::write(&bad_session, "{\"type\":\"message\",\"id\":\"x1\"}\n").unwrap();
    let bad = compact(&[bad_session.to_str().unwrap(), "--out", out]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("session line 1"));

    let unknown = compact(&[
        file,
        "--keep-recent",
        "400",
        "--model",
        "gemini:pro",
        "--out",
        out,
    ]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("unknown provider `gemini`"));

    let conflicting = compact(&[file, "--plan-only", "--out", out]);
    assert!(!conflicting.status.success());

    assert!(!out_path.exists(), "a failed compaction wrote {out}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2,
        "no temporary file left"
    );
}

fn compact_in(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .arg("compact")
        .args(args)
        .arg("--home")
        .arg(home)
        .output()
        .unwrap()
}

#[test]
fn check_says_whether_the_session_is_due_and_why() {
    let home = tempfile::tempdir().unwrap();
    let file = rollout();
    let file = file.to_str().unwrap();
    // Due or not is the answer, printed; "not due" is no error (exit 0 either way).
    let out = compact_in(home.path(), &[file, "--check"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.starts_with("not due: the context holds "), "{text}");
    assert!(
        text.contains(
            "below the threshold (the 200000-token window less the 30000-token reserve: 170000)"
        ),
        "{text}"
    );

    std::fs::write(
        home.path().join("config.toml"),
        "[compaction]\nthreshold_tokens = 100\n",
    )
    .unwrap();
    let out = compact_in(home.path(), &[file, "--check"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.starts_with("due: the context holds "), "{text}");
    assert!(
        text.contains("above the threshold (threshold_tokens 100)"),
        "{text}"
    );
    let out = compact_in(home.path(), &[file, "--check", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["due"], true);
    assert_eq!(report["threshold"], 100);
    assert!(
        report["reason"]
            .as_str()
            .unwrap()
            .contains("threshold_tokens 100")
    );

    std::fs::write(
        home.path().join("config.toml"),
        "[compaction]\nenabled = false\nthreshold_tokens = 100\n",
    )
    .unwrap();
    let out = compact_in(home.path(), &[file, "--check", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["due"],
        false
    );
    let out = compact_in(home.path(), &[file, "--check"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "not due: compaction is disabled ([compaction] enabled = false)\n"
    );

    // A broken setting is an error (exit 1, as on every command), naming the key and the file.
    std::fs::write(
        home.path().join("config.toml"),
        "[compaction]\nthreshold = 5\n",
    )
    .unwrap();
    let out = compact_in(home.path(), &[file, "--check"]);
    assert_eq!(out.status.code(), Some(1));
    let error = String::from_utf8_lossy(&out.stderr);
    assert!(
        error.contains("compaction.threshold") && error.contains("config.toml"),
        "{error}"
    );
}

#[test]
fn the_config_table_sets_keep_recent_and_the_flag_wins() {
    let home = tempfile::tempdir().unwrap();
    let file = rollout();
    let file = file.to_str().unwrap();
    let kept = |args: &[&str]| {
        let mut all = vec![file, "--plan-only", "--json"];
        all.extend_from_slice(args);
        json(&compact_in(home.path(), &all))["plan"]["messages_kept"]
            .as_u64()
            .unwrap()
    };
    let by_default = kept(&[]);
    let by_flag = kept(&["--keep-recent", "400"]);
    assert_ne!(by_default, by_flag);
    std::fs::write(
        home.path().join("config.toml"),
        "[compaction]\nkeep_recent_tokens = 400\n",
    )
    .unwrap();
    assert_eq!(kept(&[]), by_flag);
    assert_eq!(kept(&["--keep-recent", "20000"]), by_default);
}

#[test]
fn context_reaches_the_summarizer_as_text_or_from_a_file() {
    let home = tempfile::tempdir().unwrap();
    let notes = home.path().join("notes.txt");
    std::fs::write(&notes, "The release branch is frozen until Monday.").unwrap();
    let file = rollout();
    let at_notes = format!("@{}", notes.display());
    let out = compact_in(
        home.path(),
        &[
            file.to_str().unwrap(),
            "--keep-recent",
            "100",
            "--context",
            "Plan mode: no edits until the plan is approved.",
            "--context",
            &at_notes,
            "--json",
        ],
    );
    let summary = json(&out)["entry"]["summary"].as_str().unwrap().to_owned();
    assert!(
        summary.contains("Context given: Plan mode: no edits until the plan is approved."),
        "{summary}"
    );
    assert!(
        summary.contains("Context given: The release branch is frozen until Monday."),
        "{summary}"
    );
    let missing = compact_in(
        home.path(),
        &[
            file.to_str().unwrap(),
            "--context",
            "@/nonexistent/notes.txt",
        ],
    );
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/notes.txt"));
}
