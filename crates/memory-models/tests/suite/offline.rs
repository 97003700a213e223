//! The offline engine, end to end through `ModelClient::complete`, on built transcripts and on
//! the checked-in rollout fixtures.

use std::path::PathBuf;

use memory_models::offline::{
    MAX_RAW_MEMORY_CHARS, MAX_SLUG_CHARS, MAX_SUMMARY_CHARS, OFFLINE_NOTICE, OfflineEngine,
};
use memory_protocol::stage_one::StageOneInput;
use memory_protocol::{
    ModelClient, ModelError, ModelRequest, ResponseItem, RolloutItem, RolloutLine, StageOneOutput,
    TaskKind,
};
use proptest::prelude::*;
use serde_json::{Value, json};

fn item(value: Value) -> ResponseItem {
    serde_json::from_value(value).unwrap()
}

fn user(text: &str) -> ResponseItem {
    item(
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}),
    )
}

fn assistant(text: &str) -> ResponseItem {
    item(
        json!({"type": "message", "role": "assistant", "phase": "final_answer",
        "content": [{"type": "output_text", "text": text}]}),
    )
}

fn exec(call_id: &str, cmd: &str) -> ResponseItem {
    let arguments = json!({ "cmd": cmd }).to_string();
    item(
        json!({"type": "function_call", "name": "exec_command", "arguments": arguments, "call_id": call_id}),
    )
}

fn output(call_id: &str, text: &str) -> ResponseItem {
    item(json!({"type": "function_call_output", "call_id": call_id, "output": text}))
}

fn patch(call_id: &str, body: &str) -> Vec<ResponseItem> {
    vec![
        item(
            json!({"type": "custom_tool_call", "call_id": call_id, "name": "apply_patch",
            "input": format!("*** Begin Patch\n{body}\n*** End Patch")}),
        ),
        item(
            json!({"type": "custom_tool_call_output", "call_id": call_id,
            "output": "Success. Updated the following files:\nM src/lib.rs"}),
        ),
    ]
}

fn input(items: Vec<ResponseItem>) -> StageOneInput {
    StageOneInput {
        thread_id: "thread-1".to_owned(),
        rollout_path: "/sessions/rollout-1.jsonl".to_owned(),
        rollout_cwd: Some("/home/dev/widget".to_owned()),
        items,
        truncated: false,
    }
}

fn request(task: TaskKind, structured_input: Value) -> ModelRequest {
    ModelRequest {
        task,
        instructions: "ignored by the offline engine".to_owned(),
        input: "ignored by the offline engine".to_owned(),
        structured_input,
        output_schema: Some(StageOneOutput::output_schema()),
        reasoning_effort: None,
        max_output_tokens: None,
    }
}

/// Runs the engine through the trait and parses its answer as strictly as phase 1 does.
async fn run(input: &StageOneInput) -> StageOneOutput {
    let request = request(
        TaskKind::StageOneExtraction,
        serde_json::to_value(input).unwrap(),
    );
    let response = OfflineEngine::new().complete(request).await.unwrap();
    assert_eq!(response.usage, None);
    serde_json::from_str(&response.text).unwrap()
}

fn fixture_items(name: &str) -> (Option<String>, Vec<ResponseItem>) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/rollouts")
        .join(name);
    let text = std::fs::read_to_string(path).unwrap();
    let mut cwd = None;
    let mut items = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match RolloutLine::parse(line).unwrap().item {
            RolloutItem::SessionMeta(meta) => cwd = cwd.or(meta.cwd),
            // What phase 1's filter drops: developer messages and reasoning.
            RolloutItem::ResponseItem(ResponseItem::Message(m)) if m.role == "developer" => {}
            RolloutItem::ResponseItem(ResponseItem::Reasoning(_)) => {}
            RolloutItem::ResponseItem(item) => items.push(item),
            _ => {}
        }
    }
    (cwd, items)
}

fn fixed_failure_session() -> Vec<ResponseItem> {
    let mut items = vec![
        user("<environment_context>\n  <cwd>/home/dev/widget</cwd>\n</environment_context>"),
        user(
            "Make the widget tests pass. Please use cargo nextest, not cargo test. Never edit generated files.",
        ),
        exec("c1", "cargo nextest run"),
        output(
            "c1",
            "Chunk ID: 7\nWall time: 3.1 seconds\nProcess exited with code 101\nOutput:\n   Compiling widget\nerror[E0308]: mismatched types\n --> src/lib.rs:4:5",
        ),
        exec("c2", "rg -n fn\\ size src"),
        output("c2", "Process exited with code 1\nOutput:\n"),
    ];
    items.extend(patch(
        "p1",
        "*** Update File: src/lib.rs\n@@\n-    0u8\n+    0usize",
    ));
    items.extend([
        exec("c3", "cd crates/widget && cargo fmt"),
        output("c3", "Process exited with code 0\nOutput:\n"),
        exec("c4", "cargo nextest run --all"),
        output(
            "c4",
            "Process exited with code 0\nOutput:\n 12 tests passed",
        ),
        assistant("The size type was u8; it is usize now and all 12 tests pass."),
    ]);
    items
}

#[tokio::test]
async fn a_fixed_failure_becomes_a_lesson() {
    let out = run(&input(fixed_failure_session())).await;
    let summary = &out.rollout_summary;
    let raw = &out.raw_memory;

    assert!(
        summary.starts_with(
            "# Make the widget tests pass (success; 1 file(s) changed; 1 failure(s) fixed)\n"
        ),
        "{summary}"
    );
    assert!(summary.contains(OFFLINE_NOTICE) && raw.contains(OFFLINE_NOTICE));
    assert!(
        !summary.contains("environment_context") && !summary.contains("<cwd>"),
        "{summary}"
    );
    // The failure, its error, and what made the next run pass.
    let lesson = "`cargo nextest run` failed (exit 101: `error[E0308]: mismatched types`); \
                  `cargo nextest run --all` passed after running `cd crates/widget && cargo fmt` \
                  and changing src/lib.rs.";
    assert!(summary.contains(lesson), "{summary}");
    assert!(raw.contains(lesson), "{raw}");
    // Preferences, phrased as rules.
    assert!(
        raw.contains("- Use cargo nextest, not cargo test.\n"),
        "{raw}"
    );
    assert!(raw.contains("- Never edit generated files.\n"), "{raw}");
    // rg finding nothing is an answer, not a failure.
    assert!(
        summary.contains("ran `rg -n fn\\ size src`: ok"),
        "{summary}"
    );
    assert!(summary.contains("patched: updated src/lib.rs"), "{summary}");
    assert!(
        summary.contains("Final answer: The size type was u8; it is usize now"),
        "{summary}"
    );
    assert!(
        summary.contains("- rollout: /sessions/rollout-1.jsonl"),
        "{summary}"
    );
    // Front matter first, in the raw-memory format.
    assert!(
        raw.starts_with("---\ndescription: Make the widget tests pass; success: `cargo nextest"),
        "{raw}"
    );
    // Looking around is not a working command worth remembering.
    assert!(raw.contains("Commands that ran cleanly here: `cd crates/widget && cargo fmt`, `cargo nextest run --all`\n"), "{raw}");
    for line in [
        "task_outcome: success\n",
        "task_group: widget\n",
        "cwd: /home/dev/widget\n",
        "keywords: make, widget, tests, pass, cargo nextest, cargo fmt, lib.rs\n",
        "### Task 1: Make the widget tests pass\n",
        "- thread: thread-1\n",
    ] {
        assert!(raw.contains(line), "missing {line:?} in {raw}");
    }
    assert_eq!(out.rollout_slug.as_deref(), Some("make-widget-tests-pass"));
}

#[tokio::test]
async fn an_unfixed_failure_is_reported_as_such() {
    let items = vec![
        user("Deploy the site"),
        exec("c1", "make deploy"),
        output(
            "c1",
            "Exit code: 2\nWall time: 1 seconds\nOutput:\nfatal: permission denied (publickey)",
        ),
        assistant("I could not deploy: the SSH key is rejected."),
    ];
    let out = run(&input(items)).await;
    assert!(
        out.raw_memory.contains("task_outcome: fail\n"),
        "{}",
        out.raw_memory
    );
    assert!(out.rollout_summary.contains(
        "`make deploy` failed (exit 2: `fatal: permission denied (publickey)`) and nothing later in the session made it pass."
    ), "{}", out.rollout_summary);
    assert!(
        out.rollout_summary
            .starts_with("# Deploy the site (fail; 1 unresolved)\n")
    );
}

#[tokio::test]
async fn chit_chat_is_the_no_op_answer() {
    let items = vec![
        user("<environment_context><cwd>/x</cwd></environment_context>"),
        user("hi! what is a monad?"),
        assistant("A monad is a way to chain computations."),
        user("thanks"),
    ];
    let out = run(&input(items)).await;
    assert_eq!(out.raw_memory, "");
    assert_eq!(out.rollout_summary, "");
    assert_eq!(out.rollout_slug.as_deref(), Some(""));
    assert!(out.is_no_output());
    assert!(run(&input(Vec::new())).await.is_no_output());
}

#[tokio::test]
async fn a_stated_preference_alone_is_worth_keeping() {
    let out = run(&input(vec![user("From now on, always answer in French.")])).await;
    assert!(!out.is_no_output());
    assert!(
        out.raw_memory
            .contains("- From now on, always answer in French.\n"),
        "{}",
        out.raw_memory
    );
    assert!(
        out.raw_memory.contains("task_outcome: uncertain"),
        "{}",
        out.raw_memory
    );
}

#[tokio::test]
async fn the_reference_fixture_reads_commands_patches_and_searches() {
    let (cwd, items) = fixture_items("codex-reference-example.jsonl");
    let mut input = input(items);
    input.rollout_cwd = cwd;
    let out = run(&input).await;
    let summary = &out.rollout_summary;
    assert!(
        summary.starts_with(
            "# Fix the failing parser test (partial; 1 file(s) changed; 1 unresolved)\n"
        ),
        "{summary}"
    );
    // The run was never repeated after the patch: the engine does not claim a pass it did not see.
    assert!(summary.contains("`cargo test -p parser` failed (exit 101: `test parse_empty ... FAILED`) and nothing later"), "{summary}");
    assert!(
        summary.contains("patched: updated src/parser.rs"),
        "{summary}"
    );
    assert!(
        summary.contains("searched the web: nom parser empty input"),
        "{summary}"
    );
    assert!(
        summary.contains("ran `ls`: no result recorded"),
        "{summary}"
    );
    assert!(
        summary.contains("Final answer: Fixed parse_empty; tests pass."),
        "{summary}"
    );
    // AGENTS.md and environment blocks and the goal steering message are not requests.
    assert!(summary.contains("1 user request(s)"), "{summary}");
    assert!(!summary.contains("INSTRUCTIONS") && !summary.contains("codex_internal_context"));
    assert!(
        out.raw_memory
            .contains("task_outcome: partial\ncwd: /home/alice/proj\n"),
        "{}",
        out.raw_memory
    );
    assert!(
        out.raw_memory.contains(
            "description: Fix the failing parser test; partial: `cargo test -p parser` kept failing"
        ),
        "{}",
        out.raw_memory
    );
    // An id-like run of letters and digits is not a keyword.
    assert!(
        out.raw_memory
            .contains("keywords: failing, parser, test, cargo test, parser.rs\n"),
        "{}",
        out.raw_memory
    );
    assert_eq!(out.rollout_slug.as_deref(), Some("fix-failing-parser-test"));
}

#[tokio::test]
async fn the_legacy_fixture_reads_shell_argv_and_object_outputs() {
    let (_, items) = fixture_items("codex-legacy-format.jsonl");
    let out = run(&input(items)).await;
    assert!(
        out.rollout_summary.contains("ran `rg --old-flag`: ok"),
        "{}",
        out.rollout_summary
    );
    assert!(
        out.raw_memory.contains("task_outcome: success"),
        "{}",
        out.raw_memory
    );
    assert_eq!(out.rollout_slug.as_deref(), Some("rename-config-flag"));
}

#[tokio::test]
async fn the_variants_fixture_has_nothing_reusable() {
    // Outputs without calls, unknown items, an audio part: nothing the engine can use.
    let (_, items) = fixture_items("codex-version-variants.jsonl");
    assert!(run(&input(items)).await.is_no_output());
}

#[tokio::test]
async fn output_is_deterministic() {
    let input = input(fixed_failure_session());
    assert_eq!(run(&input).await, run(&input).await);
}

#[tokio::test]
async fn a_huge_session_stays_within_the_caps() {
    let mut items = vec![user(&"Refactor everything. ".repeat(500))];
    for i in 0..3000 {
        items.push(exec(
            &format!("c{i}"),
            &format!("tool{i} --flag {}", "x".repeat(30)),
        ));
        items.push(output(
            &format!("c{i}"),
            &format!("Process exited with code {}\nerror: e{i}", i % 2),
        ));
        items.extend(patch(
            &format!("p{i}"),
            &format!("*** Add File: src/f{i}.rs\n+x"),
        ));
    }
    let out = run(&input(items)).await;
    assert!(out.raw_memory.chars().count() <= MAX_RAW_MEMORY_CHARS);
    assert!(out.rollout_summary.chars().count() <= MAX_SUMMARY_CHARS);
    assert!(
        out.rollout_summary.contains("and 5980 more"),
        "{}",
        out.rollout_summary
    );
    assert!(out.rollout_slug.unwrap().chars().count() <= MAX_SLUG_CHARS);
}

#[tokio::test]
async fn bad_input_is_a_clear_error_and_unsupported_kinds_say_so() {
    let engine = OfflineEngine::new();
    assert_eq!(engine.name(), "offline");
    // Every kind the library sends, with a structured input no kind accepts: an answered kind
    // says it cannot read the input; a kind without an offline answer says that, naming it.
    let mut answered = Vec::new();
    for task in TaskKind::ALL {
        let err = engine
            .complete(request(task, json!({"items": 3})))
            .await
            .unwrap_err();
        match &err {
            ModelError::InvalidRequest { message } => {
                assert!(
                    message.contains(&format!("structured input of a {} request", task.as_str())),
                    "{err}"
                );
                answered.push(task);
            }
            ModelError::UnsupportedTask { task: named, model } => {
                assert_eq!((*named, model.as_str()), (task, "offline"));
                assert_eq!(
                    err.to_string(),
                    format!(
                        "the offline model does not handle {} requests",
                        task.as_str()
                    )
                );
            }
            other => panic!("{task}: unexpected {other:?}"),
        }
    }
    for task in [
        TaskKind::StageOneExtraction,
        TaskKind::Consolidation,
        TaskKind::CompactionSummary,
        TaskKind::CompactionUpdate,
        TaskKind::ShortSummary,
        TaskKind::TurnPrefixSummary,
    ] {
        assert!(answered.contains(&task), "{task} has no offline answer");
    }
}

fn any_item() -> impl Strategy<Value = ResponseItem> {
    let text = "(\\PC{0,40}|Process exited with code -?[0-9]{1,3}|FAILED|error: x|\\*\\*\\* Update File: [a-z/.]{0,12}|<environment_context>|always use [a-z]{1,8}|\n)";
    let texts = proptest::collection::vec(text, 0..6).prop_map(|parts| parts.concat());
    let call_id = "c[0-3]";
    prop_oneof![
        (prop_oneof!["user", "assistant", "developer"], texts.clone()).prop_map(|(role, text)| {
            json!({"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]})
        }),
        (prop_oneof!["exec_command", "shell", "apply_patch", "read_file"], texts.clone(), call_id)
            .prop_map(|(name, cmd, id)| {
                let arguments = if name == "shell" {
                    json!({"command": ["bash", "-lc", cmd]}).to_string()
                } else {
                    json!({"cmd": cmd, "input": cmd}).to_string()
                };
                json!({"type": "function_call", "name": name, "arguments": arguments, "call_id": id})
            }),
        (texts.clone(), call_id).prop_map(|(text, id)| {
            json!({"type": "function_call_output", "call_id": id, "output": text})
        }),
        (texts.clone(), call_id).prop_map(|(text, id)| {
            json!({"type": "custom_tool_call", "name": "apply_patch", "call_id": id,
                "input": format!("*** Begin Patch\n{text}")})
        }),
        (texts.clone(), call_id).prop_map(|(text, id)| {
            json!({"type": "local_shell_call", "call_id": id, "action": {"type": "exec", "command": [text]}})
        }),
        texts.prop_map(|q| json!({"type": "web_search_call", "action": {"type": "search", "query": q}})),
    ]
    .prop_map(item)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn any_transcript_gives_a_bounded_deterministic_answer(items in proptest::collection::vec(any_item(), 0..30)) {
        let input = input(items);
        let engine = OfflineEngine::new();
        let out = engine.stage_one(&input);
        prop_assert_eq!(&out, &engine.stage_one(&input));
        if out.is_no_output() {
            prop_assert_eq!(&out.raw_memory, "");
            prop_assert_eq!(&out.rollout_summary, "");
        } else {
            prop_assert!(out.rollout_summary.starts_with("# "));
            prop_assert!(out.raw_memory.starts_with("---\ndescription: "));
            prop_assert!(out.rollout_summary.contains(OFFLINE_NOTICE));
            prop_assert!(out.raw_memory.contains(OFFLINE_NOTICE));
            prop_assert!(out.raw_memory.chars().count() <= MAX_RAW_MEMORY_CHARS);
            prop_assert!(out.rollout_summary.chars().count() <= MAX_SUMMARY_CHARS);
        }
        let slug = out.rollout_slug.unwrap_or_default();
        prop_assert!(slug.chars().count() <= MAX_SLUG_CHARS);
        prop_assert!(slug.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'), "{}", slug);
    }
}
