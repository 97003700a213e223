//! The offline engine, end to end through `ModelClient::complete`, on built transcripts and on
//! the checked-in rollout fixtures.

use std::path::PathBuf;

use memory_offline::{
    MAX_RAW_MEMORY_CHARS, MAX_SLUG_CHARS, MAX_SUMMARY_CHARS, OFFLINE_NOTICE, OfflineEngine,
};
use memory_protocol::memory_format::{self, RawMemory, TaskOutcome};
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
        summary.starts_with("# Make the widget tests pass (success)\n"),
        "{summary}"
    );
    // The offline notice is said once, in the summary's context line, never per task.
    assert_eq!(summary.matches(OFFLINE_NOTICE).count(), 1, "{summary}");
    assert!(!raw.contains(OFFLINE_NOTICE), "{raw}");
    assert!(
        !summary.contains("environment_context") && !summary.contains("<cwd>"),
        "{summary}"
    );
    // The failure, its error, and the difference that made the next run pass.
    let lesson = "`cargo nextest run` failed (exit 101: `error[E0308]: mismatched types`); \
                  `cargo nextest run --all` passed after adding `--all`, running \
                  `cd crates/widget && cargo fmt` first, changing `0u8` in src/lib.rs to `0usize`.";
    assert!(summary.contains(lesson), "{summary}");
    assert!(raw.contains(lesson), "{raw}");
    // Preferences, phrased as rules; the task request is not one.
    assert!(raw.contains("Preference signals:\n- Use cargo nextest, not cargo test.\n- Never edit generated files.\n"), "{raw}");
    // rg finding nothing is an answer, not a failure; looking around is merged in the steps.
    assert!(
        summary.contains("- looked at: `rg -n fn\\ size src`\n"),
        "{summary}"
    );
    assert!(
        summary.contains("- edited: updated src/lib.rs\n"),
        "{summary}"
    );
    assert!(
        summary.contains(
            "Outcome: success (`cd crates/widget && cargo fmt`, `cargo nextest run --all` passed \
             after the last change)"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("- Rollout: /sessions/rollout-1.jsonl\n"),
        "{summary}"
    );
    // Looking around is not a working command worth remembering.
    assert!(raw.contains("- Commands that passed here: `cd crates/widget && cargo fmt`, `cargo nextest run --all`\n"), "{raw}");
    // Codex's front matter keys, in order, then the task blocks.
    let memory = RawMemory::parse(raw);
    assert_eq!(memory.front.task, "Make the widget tests pass");
    assert_eq!(memory.front.task_group, "widget");
    assert_eq!(memory.front.task_outcome, Some(TaskOutcome::Success));
    assert_eq!(memory.front.cwd, "/home/dev/widget");
    assert_eq!(
        memory.front.keywords,
        [
            "widget",
            "tests",
            "pass",
            "cargo nextest",
            "E0308",
            "lib.rs",
            "cargo fmt"
        ]
    );
    let keys: Vec<&str> = raw
        .lines()
        .skip(1)
        .take(6)
        .filter_map(|line| line.split_once(':').map(|(key, _)| key))
        .collect();
    assert_eq!(keys, memory_format::keys::ALL);
    assert_eq!(memory.tasks.len(), 1);
    assert!(
        raw.contains("\n### Task 1: Make the widget tests pass\ntask_outcome: success\n"),
        "{raw}"
    );
    assert_eq!(out.rollout_slug.as_deref(), Some("make-widget-tests-pass"));
}

#[tokio::test]
async fn an_unfixed_failure_is_a_warning_and_a_fail() {
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
        "`make deploy` still failed at the end (exit 2: `fatal: permission denied (publickey)`); nothing in the session made it pass."
    ), "{}", out.rollout_summary);
    assert!(
        out.rollout_summary
            .starts_with("# Deploy the site (fail)\n")
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
async fn an_editor_preamble_gives_neither_title_nor_keywords() {
    let preamble = "# Context from my IDE setup:\n\n## Active file: src/components/Navbar.tsx\n\n\
                    ## Open tabs:\n- Navbar.tsx: src/components/Navbar.tsx\n- globals.css: src/styles/globals.css\n\n\
                    ## My request for Codex:\nMake the navbar sticky on scroll.";
    let mut items = vec![user(preamble)];
    items.extend(patch(
        "p1",
        "*** Update File: src/components/Navbar.tsx\n@@\n-<nav>\n+<nav className=\"sticky top-0\">",
    ));
    items.extend([
        exec("c1", "pnpm lint"),
        output("c1", "Process exited with code 0\nOutput:\n"),
        assistant("The navbar is sticky now."),
    ]);
    let out = run(&input(items)).await;
    let memory = RawMemory::parse(&out.raw_memory);
    assert_eq!(memory.tasks[0].title, "Make the navbar sticky on scroll");
    assert!(
        out.rollout_summary
            .starts_with("# Make the navbar sticky on scroll (success)\n")
    );
    for word in ["context", "ide", "setup", "tabs", "globals"] {
        assert!(
            !memory.front.keywords.iter().any(|k| k.contains(word)),
            "{word}: {:?}",
            memory.front.keywords
        );
    }
    assert!(!out.rollout_summary.contains("Context from my IDE"));
}

#[tokio::test]
async fn looking_around_only_is_uncertain_and_not_knowledge() {
    let items = vec![
        user("What is in the migrations folder?"),
        exec("c1", "ls migrations"),
        output(
            "c1",
            "Process exited with code 0\nOutput:\n0001_init.sql\n0002_users.sql",
        ),
        exec("c2", "git remote -v"),
        output(
            "c2",
            "Process exited with code 0\nOutput:\norigin git@x:y.git (fetch)",
        ),
        assistant("Two migrations: 0001_init.sql and 0002_users.sql."),
    ];
    let out = run(&input(items)).await;
    assert!(
        out.raw_memory.contains("task_outcome: uncertain\n"),
        "{}",
        out.raw_memory
    );
    assert!(
        !out.raw_memory.contains("Commands that passed"),
        "{}",
        out.raw_memory
    );
    assert!(
        !out.raw_memory.contains("`ls migrations`"),
        "{}",
        out.raw_memory
    );
}

#[tokio::test]
async fn every_segment_of_a_passing_chain_resolves_its_failures() {
    let mut items = vec![
        user("The migration fails on a fresh database."),
        exec("c1", "uv run alembic upgrade head"),
        output(
            "c1",
            "Process exited with code 1\nOutput:\nERROR Multiple head revisions are present",
        ),
    ];
    items.extend(patch("p1", "*** Update File: migrations/versions/8b2e.py\n@@\n-down_revision = 'a91c'\n+down_revision = '3f1d'"));
    items.extend([
        exec("c2", "uv run alembic upgrade head && uv run pytest -q"),
        output("c2", "Process exited with code 0\nOutput:\n40 passed"),
        assistant("Re-pointed the migration; the upgrade applies and the tests pass."),
    ]);
    let out = run(&input(items)).await;
    assert!(
        out.raw_memory.contains("task_outcome: success\n"),
        "{}",
        out.raw_memory
    );
    assert!(out.raw_memory.contains(
        "`uv run alembic upgrade head` failed (exit 1: `ERROR Multiple head revisions are present`); \
         `uv run alembic upgrade head && uv run pytest -q` passed after changing `down_revision = 'a91c'` \
         in migrations/versions/8b2e.py to `down_revision = '3f1d'`."
    ), "{}", out.raw_memory);
}

#[tokio::test]
async fn a_quoting_fix_is_stated_as_the_difference() {
    let items = vec![
        user("Why does the login page crash?"),
        exec("c1", "cat src/app/(auth)/login/page.tsx"),
        output(
            "c1",
            "Process exited with code 2\nOutput:\nbash: -c: line 1: syntax error near unexpected token `('",
        ),
        exec("c2", "cat 'src/app/(auth)/login/page.tsx'"),
        output(
            "c2",
            "Process exited with code 0\nOutput:\nexport default function Login() {}",
        ),
        assistant("The page reads `session.user` before the session loads."),
    ];
    let out = run(&input(items)).await;
    let lessons = RawMemory::parse(&out.raw_memory).tasks[0]
        .items(memory_format::sections::FAILURES)
        .to_vec();
    assert_eq!(lessons.len(), 1, "{lessons:?}");
    assert!(
        lessons[0].contains("syntax error near unexpected token"),
        "{lessons:?}"
    );
    assert!(
        lessons[0].contains(
            "after quoting `src/app/(auth)/login/page.tsx` (it has shell metacharacters)"
        ),
        "{lessons:?}"
    );
    assert!(!lessons[0].to_lowercase().contains("sandbox"));
}

#[tokio::test]
async fn preferences_come_from_how_to_work_questions_included() {
    let items = vec![
        user(
            "The CSV export writes dates as 03/04/2025 instead of ISO dates. Fix it so it uses ISO 8601 instead.",
        ),
        exec("c1", "cargo test -p export"),
        output("c1", "Process exited with code 0\nOutput:\nok"),
        assistant("Dates are ISO 8601 now."),
        user(
            "Thanks. Can you always run the whole workspace tests before you finish, not just one crate?",
        ),
    ];
    let out = run(&input(items)).await;
    let memory = RawMemory::parse(&out.raw_memory);
    assert_eq!(
        memory.tasks[0].items(memory_format::sections::PREFERENCE_SIGNALS),
        ["Always run the whole workspace tests before you finish, not just one crate."]
    );
}

#[tokio::test]
async fn two_requests_make_two_tasks_and_dropped_work_fails() {
    let mut items = vec![user("Bump the crate version to 1.4.0.")];
    items.extend(patch(
        "p1",
        "*** Update File: Cargo.toml\n@@\n-version = \"1.3.2\"\n+version = \"1.4.0\"",
    ));
    items.extend([
        exec("c1", "cargo build"),
        output("c1", "Process exited with code 0\nOutput:\n"),
        assistant("Bumped to 1.4.0."),
        user("Thanks! Next, migrate the CI cache to the new actions/cache version."),
        exec("c2", "cat .github/workflows/ci.yml"),
        output(
            "c2",
            "Process exited with code 0\nOutput:\nuses: actions/cache@v3",
        ),
        assistant("The workflow pins actions/cache@v3; v4 changes the key format."),
        user("Never mind, leave the CI alone for now."),
    ]);
    let out = run(&input(items)).await;
    let memory = RawMemory::parse(&out.raw_memory);
    let tasks: Vec<(&str, Option<TaskOutcome>)> = memory
        .tasks
        .iter()
        .map(|t| (t.title.as_str(), t.outcome))
        .collect();
    assert_eq!(
        tasks,
        [
            (
                "Bump the crate version to 1.4.0",
                Some(TaskOutcome::Success)
            ),
            (
                "Migrate the CI cache to the new actions/cache version",
                Some(TaskOutcome::Fail)
            ),
        ]
    );
    assert_eq!(memory.front.task_outcome, Some(TaskOutcome::Partial));
    assert!(
        out.rollout_summary
            .starts_with("# Bump the crate version to 1.4.0 (success), then 1 more task\n")
    );
}

/// Outcomes from what happened: a change the agent could not check is uncertain until the
/// user approves it; a task the user drops before any answer leaves nothing to remember; a
/// question asked beside real work is a task of its own.
#[tokio::test]
async fn unverified_changes_dropped_runs_and_side_questions_are_judged_from_evidence() {
    let mut items = vec![user("Raise the worker pool to 16 in config/prod.toml.")];
    items.extend(patch(
        "p1",
        "*** Update File: config/prod.toml\n@@\n-workers = 8\n+workers = 16",
    ));
    items.extend([
        exec("c1", "docker compose up -d app"),
        output(
            "c1",
            "Process exited with code 1\nOutput:\nCannot connect to the Docker daemon at unix:///var/run/docker.sock",
        ),
        assistant("Set `workers = 16`. I couldn't verify it: there is no Docker daemon here."),
    ]);
    let unverified = RawMemory::parse(&run(&input(items.clone())).await.raw_memory);
    assert_eq!(unverified.tasks[0].outcome, Some(TaskOutcome::Uncertain));

    items.extend([
        user("Tried it on staging myself, looks good."),
        user("Unrelated: what does the --frozen flag of cargo do?"),
        assistant("`--frozen` means `--locked` plus `--offline`: no lockfile changes, no network."),
    ]);
    let memory = RawMemory::parse(&run(&input(items)).await.raw_memory);
    let outcomes: Vec<_> = memory.tasks.iter().map(|t| t.outcome).collect();
    assert_eq!(
        outcomes,
        [Some(TaskOutcome::Success), Some(TaskOutcome::Uncertain)],
        "{:?}",
        memory.tasks.iter().map(|t| &t.title).collect::<Vec<_>>()
    );

    // Dropped while the command still ran: no answer, no change, no memory.
    let dropped = vec![
        user("Run the full benchmark suite for the parser."),
        exec("c1", "cargo bench -p parser"),
        output(
            "c1",
            "Process exited with code 130\nOutput:\nBenchmarking parse/large: Warming up",
        ),
        user("nvm, wrong project. ignore me"),
        assistant("Stopped."),
    ];
    assert!(run(&input(dropped)).await.raw_memory.is_empty());
}

/// A task left unfinished with no check failing at its end (the agent put its change back)
/// keeps what the agent found as its lesson.
#[tokio::test]
async fn an_unfinished_task_keeps_what_the_agent_found_as_its_lesson() {
    let mut items = vec![user(
        "The e2e test checkout.spec.ts times out. Please fix it.",
    )];
    items.extend(patch(
        "p1",
        "*** Update File: playwright.config.ts\n@@\n-timeout: 30000\n+timeout: 90000",
    ));
    items.extend([
        exec("c1", "pnpm playwright test checkout.spec.ts"),
        output(
            "c1",
            "Process exited with code 1\nOutput:\n1 failed: checkout.spec.ts timed out",
        ),
    ]);
    items.extend(patch(
        "p2",
        "*** Update File: playwright.config.ts\n@@\n-timeout: 90000\n+timeout: 30000",
    ));
    items.push(assistant(
        "I couldn't make checkout.spec.ts pass: the Pay button never renders because STRIPE_KEY is unset in the test build. I put the timeout back.",
    ));
    let memory = RawMemory::parse(&run(&input(items)).await.raw_memory);
    let task = &memory.tasks[0];
    assert_eq!(task.outcome, Some(TaskOutcome::Fail));
    let lessons = task
        .sections
        .iter()
        .find(|section| section.heading == memory_format::sections::FAILURES)
        .map(|section| section.items.clone())
        .unwrap_or_default();
    assert!(
        lessons
            .iter()
            .any(|lesson| lesson.starts_with("Left unresolved") && lesson.contains("STRIPE_KEY")),
        "{lessons:?}"
    );
}

#[tokio::test]
async fn the_reference_fixture_reads_commands_patches_and_searches() {
    let (cwd, items) = fixture_items("codex-reference-example.jsonl");
    let mut input = input(items);
    input.rollout_cwd = cwd;
    let out = run(&input).await;
    let summary = &out.rollout_summary;
    // The failing run was never repeated after the patch: no pass is claimed, and the
    // failure before the change is the bug, not a lesson.
    assert!(
        summary.starts_with("# Fix the failing parser test (uncertain)\n"),
        "{summary}"
    );
    assert!(
        summary.contains("Outcome: uncertain (changes were made but nothing verified them)"),
        "{summary}"
    );
    assert!(
        summary.contains(
            "- ran `cargo test -p parser`: failed (exit 101: `test parse_empty ... FAILED`)\n"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("- edited: updated src/parser.rs\n"),
        "{summary}"
    );
    assert!(
        summary.contains("- searched the web: nom parser empty input\n"),
        "{summary}"
    );
    assert!(
        summary.contains("- Result as the agent reported it: Fixed parse_empty; tests pass.\n"),
        "{summary}"
    );
    // AGENTS.md and environment blocks and the goal steering message are not requests.
    assert!(summary.contains("1 task(s)"), "{summary}");
    assert!(!summary.contains("INSTRUCTIONS") && !summary.contains("codex_internal_context"));
    let memory = RawMemory::parse(&out.raw_memory);
    assert_eq!(memory.front.cwd, "/home/alice/proj");
    // An id-like run of letters and digits is not a keyword.
    assert_eq!(
        memory.front.keywords,
        ["failing", "parser", "test", "cargo test", "parser.rs"]
    );
    assert_eq!(out.rollout_slug.as_deref(), Some("fix-failing-parser-test"));
}

/// A call of one of Claude Code's tools and its result, as its transcript reader gives them.
fn claude_tool(
    call_id: &str,
    name: &str,
    input: Value,
    output: &str,
    ok: bool,
) -> Vec<ResponseItem> {
    vec![
        item(
            json!({"type": "function_call", "name": name, "call_id": call_id,
            "arguments": input.to_string()}),
        ),
        item(json!({"type": "function_call_output", "call_id": call_id,
            "output": {"content": output, "success": ok}})),
    ]
}

#[tokio::test]
async fn a_claude_code_edit_between_a_failure_and_the_pass_is_the_fix() {
    let check = json!({"command": "python3 check.py"});
    let ledger = "/home/dev/ledger/ledger.py";
    let mut items = vec![user("The ledger parser crashes on an empty file; fix it.")];
    items.extend(claude_tool(
        "t1",
        "Bash",
        check.clone(),
        "Exit code 1\nTraceback (most recent call last):\nIndexError: list index out of range",
        false,
    ));
    items.extend(claude_tool(
        "t2",
        "Read",
        json!({"file_path": ledger}),
        "1\tdef parse(text):",
        true,
    ));
    items.extend(claude_tool(
        "t3",
        "Edit",
        json!({"file_path": ledger,
        "old_string": "    header = lines[0]\n",
        "new_string": "    if not lines:\n        return []\n    header = lines[0]\n"}),
        "The file has been updated successfully.",
        true,
    ));
    items.extend(claude_tool("t4", "Bash", check, "check passed", true));
    items.extend(claude_tool(
        "t5",
        "Write",
        json!({"file_path": "/home/dev/ledger/NOTES.md",
        "content": "empty files parse to []"}),
        "File created successfully",
        true,
    ));
    items.push(assistant("Fixed: an empty file parses to an empty list."));
    let out = run(&input(items)).await;
    let memory = &out.raw_memory;
    assert!(!memory.contains("likely flaky"), "{memory}");
    assert!(
        memory.contains(
            "it passed after adding `if not lines:` / `return []` to /home/dev/ledger/ledger.py."
        ),
        "{memory}"
    );
    let summary = &out.rollout_summary;
    assert!(
        summary.contains("updated /home/dev/ledger/ledger.py")
            && summary.contains("written /home/dev/ledger/NOTES.md"),
        "{summary}"
    );
}

#[tokio::test]
async fn the_claude_code_fixture_counts_its_edit_as_the_change_that_made_the_test_pass() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../fixtures/claude-code/projects/-home-dev-tidewater/7c3e0a52-1f4b-4d1e-9a60-2b8f5d0c9e11.jsonl",
    );
    let transcript =
        memory_transcript::claude_code::parse_transcript(&std::fs::read_to_string(path).unwrap());
    let items: Vec<ResponseItem> = transcript
        .to_rollout()
        .items()
        .filter_map(|item| match item {
            RolloutItem::ResponseItem(item) => Some(item),
            _ => None,
        })
        .collect();
    let out = run(&input(items)).await;
    let memory = &out.raw_memory;
    assert!(!memory.contains("likely flaky"), "{memory}");
    assert!(
        memory.contains(
            "it passed after changing `lines[0]` in /home/dev/tidewater/src/ledger.rs to \
             `lines.first().ok_or(ParseError::Empty)?`."
        ),
        "{memory}"
    );
}

#[tokio::test]
async fn the_legacy_fixture_reads_shell_argv_and_object_outputs() {
    let (_, items) = fixture_items("codex-legacy-format.jsonl");
    let out = run(&input(items)).await;
    assert!(
        out.rollout_summary
            .contains("- looked at: `rg --old-flag`\n"),
        "{}",
        out.rollout_summary
    );
    assert!(
        out.raw_memory.contains("task_outcome: uncertain"),
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
        out.rollout_summary.contains("more steps"),
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
            prop_assert!(!out.raw_memory.contains(OFFLINE_NOTICE));
            let memory = RawMemory::parse(&out.raw_memory);
            prop_assert!(!memory.tasks.is_empty());
            prop_assert!(memory.front.task_outcome.is_some());
            prop_assert!(out.raw_memory.chars().count() <= MAX_RAW_MEMORY_CHARS);
            prop_assert!(out.rollout_summary.chars().count() <= MAX_SUMMARY_CHARS);
        }
        let slug = out.rollout_slug.unwrap_or_default();
        prop_assert!(slug.chars().count() <= MAX_SLUG_CHARS);
        prop_assert!(slug.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'), "{}", slug);
    }
}

/// Issue 31's case: tests failed, `pip install -e .` fixed them, and the final answer explains
/// the cause with "could not" before saying they pass.
#[tokio::test]
async fn a_failure_the_answer_explains_as_fixed_is_a_success() {
    let items = vec![
        user("Run the test suite and fix whatever breaks."),
        exec("c1", "python -m pytest"),
        output(
            "c1",
            "Process exited with code 2\nOutput:\nE   ModuleNotFoundError: No module named 'tally'\n1 error during collection",
        ),
        exec("c2", "pip install -e ."),
        output(
            "c2",
            "Process exited with code 0\nOutput:\nSuccessfully installed tally-0.3.0",
        ),
        exec("c3", "python -m pytest"),
        output(
            "c3",
            "Process exited with code 0\nOutput:\n41 passed in 2.13s",
        ),
        assistant(
            "The tests could not import the package because it was not installed; after `pip install -e .` all 41 tests pass.",
        ),
    ];
    let out = run(&input(items)).await;
    assert!(
        out.raw_memory.contains("task_outcome: success\n"),
        "{}",
        out.raw_memory
    );
}

#[tokio::test]
async fn an_answer_that_ends_on_what_still_fails_is_not_a_success() {
    let items = vec![
        user("Run the test suite and fix whatever breaks."),
        exec("c1", "python -m pytest"),
        output(
            "c1",
            "Process exited with code 0\nOutput:\n41 passed in 2.13s",
        ),
        assistant(
            "The suite passes here, but I could not reproduce the crash you reported, so it is not fixed.",
        ),
    ];
    let out = run(&input(items)).await;
    assert!(
        !out.raw_memory.contains("task_outcome: success\n"),
        "{}",
        out.raw_memory
    );
}

/// Found running `agent-memory run` on a Chinese session: the task title kept its `。`, so the
/// memory read `description: 把潮汐表导入器迁移到新格式。: uncertain` and the summary
/// `...: 把潮汐表导入器迁移到新格式。.`. A title drops the full stop of any script, as it drops `.`.
#[tokio::test]
async fn a_chinese_task_title_drops_its_full_stop() {
    let out = run(&input(vec![
        user("把潮汐表导入器迁移到新格式。"),
        exec("c1", "cargo test"),
        output("c1", "Process exited with code 0"),
        assistant("迁移完成。"),
    ]))
    .await;
    assert!(
        out.raw_memory
            .contains("task: 把潮汐表导入器迁移到新格式\n"),
        "{}",
        out.raw_memory
    );
    for doubled in ["。:", "。.", "。;"] {
        assert!(
            !out.raw_memory.contains(doubled),
            "{doubled:?} in {}",
            out.raw_memory
        );
        assert!(
            !out.rollout_summary.contains(doubled),
            "{doubled:?} in {}",
            out.rollout_summary
        );
    }
}
