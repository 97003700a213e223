//! The offline engine's compaction answers: the structured sections filled from the window's
//! messages, updates that keep finished work, and output within its cap.

use memory_offline::{OFFLINE_NOTICE, OfflineEngine};
use memory_protocol::compaction::summary_sections::{
    BLOCKED, CONSTRAINTS, CONTEXT_FOR_SUFFIX, CRITICAL_CONTEXT, DONE, EARLY_PROGRESS, GOAL,
    IN_PROGRESS, KEY_DECISIONS, NEXT_STEPS, ORIGINAL_REQUEST, folded_done_count, section_items,
};
use memory_protocol::compaction::{AssistantBlock, ConversationMessage, SummaryInput};
use memory_protocol::{ModelClient, ModelRequest, TaskKind};
use proptest::prelude::*;
use serde_json::json;

fn user(text: &str) -> ConversationMessage {
    ConversationMessage::user(text)
}

fn say(text: &str) -> ConversationMessage {
    ConversationMessage::assistant_text(text)
}

fn call(id: &str, name: &str, arguments: serde_json::Value) -> ConversationMessage {
    ConversationMessage::tool_call(id, name, arguments)
}

fn result(id: &str, text: &str) -> ConversationMessage {
    ConversationMessage::tool_result(id, "exec_command", text, false)
}

fn shell(id: &str, cmd: &str, output: &str) -> Vec<ConversationMessage> {
    vec![
        call(id, "exec_command", json!({ "cmd": cmd })),
        result(id, output),
    ]
}

async fn ask(task: TaskKind, input: &SummaryInput) -> String {
    let request = ModelRequest {
        task,
        instructions: String::new(),
        input: String::new(),
        structured_input: serde_json::to_value(input).unwrap(),
        output_schema: None,
        reasoning_effort: None,
        max_output_tokens: Some(input.max_output_tokens),
    };
    OfflineEngine::new().complete(request).await.unwrap().text
}

fn input(messages: Vec<ConversationMessage>, previous: Option<&str>) -> SummaryInput {
    SummaryInput {
        messages,
        previous_summary: previous.map(str::to_owned),
        focus: None,
        additional_context: Vec::new(),
        max_output_tokens: 13_107,
    }
}

/// A session: a request with a preference, a failing test, a decision, a patch, a pass, and a
/// question nobody answered yet.
fn session() -> Vec<ConversationMessage> {
    let mut messages = vec![user(
        "The `tide parse` command panics on an empty CSV. Fix it so it prints a clear error. \
         Never add dependencies without asking.",
    )];
    messages.extend(shell(
        "c1",
        "cargo test -p tide",
        "Process exited with code 101\nthread 'main' panicked at src/table.rs:41:38:\nindex out of bounds",
    ));
    messages.push(call("c2", "read_file", json!({ "path": "src/table.rs" })));
    messages.push(result("c2", "pub fn parse_table(...)"));
    messages.push(say(
        "I'll return `ParseError::Empty` instead of indexing `rows[0]`, because the header may be missing.",
    ));
    messages.push(call(
        "c3",
        "apply_patch",
        json!({ "input": "*** Begin Patch\n*** Update File: src/table.rs\n@@\n-x\n+y\n*** End Patch" }),
    ));
    messages.push(result(
        "c3",
        "Success. Updated the following files:\nM src/table.rs",
    ));
    messages.extend(shell(
        "c4",
        "cargo test -p tide",
        "Process exited with code 0\ntest result: ok. 12 passed",
    ));
    messages.extend(shell(
        "c5",
        "cargo clippy --all-targets",
        "Process exited with code 1\nerror: unused import `std::io`",
    ));
    messages.push(say("Next I'll remove the unused import flagged by clippy."));
    messages.push(user(
        "Does the April file use the same format?\nIt has 24:00 timestamps.",
    ));
    messages
}

#[tokio::test]
async fn first_summary_fills_every_section_from_the_transcript() {
    let text = ask(TaskKind::CompactionSummary, &input(session(), None)).await;
    let goal = section_items(&text, GOAL).join("\n");
    assert!(
        goal.contains("`tide parse` command panics on an empty CSV"),
        "{text}"
    );
    let constraints = section_items(&text, CONSTRAINTS).join("\n");
    assert!(
        constraints.contains("Never add dependencies without asking"),
        "{text}"
    );
    let done = section_items(&text, DONE).join("\n");
    assert!(
        done.contains("`cargo test -p tide` passes after failing"),
        "{text}"
    );
    assert!(done.contains("Changed `src/table.rs`"), "{text}");
    let open = section_items(&text, IN_PROGRESS).join("\n");
    assert!(
        open.contains("`cargo clippy --all-targets` fails: error: unused import"),
        "{text}"
    );
    assert!(!open.contains("cargo test -p tide"), "{text}");
    let decisions = section_items(&text, KEY_DECISIONS).join("\n");
    assert!(decisions.contains("instead of indexing"), "{text}");
    let next = section_items(&text, NEXT_STEPS).join("\n");
    assert!(next.contains("Fix `cargo clippy --all-targets`"), "{text}");
    assert!(next.contains("remove the unused import"), "{text}");
    let context = section_items(&text, CRITICAL_CONTEXT).join("\n");
    assert!(
        context
            .contains("  > Does the April file use the same format?\n  > It has 24:00 timestamps."),
        "the pending question is quoted verbatim:\n{text}"
    );
    assert!(context.contains("Files modified: `src/table.rs`"), "{text}");
    assert!(
        context.contains("Commands that failed: `cargo clippy --all-targets (exit 1)`"),
        "{text}"
    );
    assert!(context.contains("Commands that passed:"), "{text}");
    assert!(text.contains(OFFLINE_NOTICE));
}

#[tokio::test]
async fn an_update_keeps_done_items_and_moves_fixed_work_to_done() {
    let first = ask(TaskKind::CompactionSummary, &input(session(), None)).await;
    let mut later = vec![say(
        "The April file uses the same format; the fix covers it.",
    )];
    later.push(call(
        "d1",
        "apply_patch",
        json!({ "input": "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-use std::io;\n*** End Patch" }),
    ));
    later.push(result(
        "d1",
        "Success. Updated the following files:\nM src/lib.rs",
    ));
    later.extend(shell(
        "d2",
        "cargo clippy --all-targets",
        "Process exited with code 0",
    ));
    later.extend(shell(
        "d3",
        "cat README.md",
        "Process exited with code 0\n# tide",
    ));
    let text = ask(TaskKind::CompactionUpdate, &input(later, Some(&first))).await;
    let done = section_items(&text, DONE).join("\n");
    for earlier in section_items(&first, DONE) {
        assert!(
            done.contains(earlier.trim_start_matches("- [x] ")),
            "lost {earlier}:\n{text}"
        );
    }
    assert!(
        done.contains("`cargo clippy --all-targets` passes now (it was failing)"),
        "{text}"
    );
    assert!(section_items(&text, IN_PROGRESS).is_empty(), "{text}");
    let next = section_items(&text, NEXT_STEPS).join("\n");
    assert!(
        !next.contains("clippy"),
        "fixed work is not a next step:\n{text}"
    );
    let context = section_items(&text, CRITICAL_CONTEXT).join("\n");
    assert!(
        !context.contains("Pending user question"),
        "answered:\n{text}"
    );
    assert!(
        context.contains("Files modified: `src/table.rs`, `src/lib.rs`"),
        "{text}"
    );
    assert!(context.contains("Files read: `README.md`"), "{text}");
    assert!(!context.contains("Commands that failed"), "{text}");
    let goal = section_items(&text, GOAL).join("\n");
    assert!(goal.contains("panics on an empty CSV"), "{text}");
    assert_eq!(text.matches(OFFLINE_NOTICE).count(), 1, "{text}");
}

#[tokio::test]
async fn an_update_reads_a_summary_a_model_wrote() {
    let previous = "## Goal\nMigrate the CLI to clap 4.\n\n## Progress\n### Done\n- [x] Ported `src/args.rs`.\n\
                    - [x] Removed the `structopt` dependency.\n### In Progress\n- [ ] Port `src/main.rs`.\n\n\
                    ## Critical Context\n- The `--verbose` flag must keep its short form `-v`.\n\n\
                    ## Turn Context (split turn)\n- Found three subcommands left.";
    let messages = shell("e1", "cargo build", "Process exited with code 0");
    let text = ask(TaskKind::CompactionUpdate, &input(messages, Some(previous))).await;
    let done = section_items(&text, DONE).join("\n");
    assert!(done.contains("Ported `src/args.rs`"), "{text}");
    assert!(
        done.contains("Removed the `structopt` dependency"),
        "{text}"
    );
    assert!(
        section_items(&text, GOAL)
            .join("\n")
            .contains("Migrate the CLI to clap 4"),
        "{text}"
    );
    assert!(
        section_items(&text, IN_PROGRESS)
            .join("\n")
            .contains("Port `src/main.rs`"),
        "{text}"
    );
    assert!(text.contains("must keep its short form `-v`"), "{text}");
    assert!(
        text.contains("Found three subcommands left"),
        "unknown sections are kept:\n{text}"
    );
    assert!(done.contains("`cargo build` passed"), "{text}");
}

/// The case: a previous summary with no `##` headers (codex's own `compacted` prose)
/// vanished at the next offline compaction.
#[tokio::test]
async fn a_header_less_previous_summary_is_carried_as_prose() {
    let previous = "We were migrating the billing service to the new queue.\n\
                    The retry limit must stay at 5 because the vendor throttles us.\n\n\
                    - `src/queue.rs` was rewritten\n- the integration test still fails";
    let messages = shell("e1", "cargo build", "Process exited with code 0");
    let text = ask(TaskKind::CompactionUpdate, &input(messages, Some(previous))).await;
    let context = section_items(&text, CRITICAL_CONTEXT).join("\n");
    assert!(
        context.contains(
            "migrating the billing service to the new queue. The retry limit must stay at 5"
        ),
        "{text}"
    );
    assert!(context.contains("`src/queue.rs` was rewritten"), "{text}");
    assert!(
        context.contains("the integration test still fails"),
        "{text}"
    );
    // Carried once, not again at every update.
    let again = ask(TaskKind::CompactionUpdate, &input(Vec::new(), Some(&text))).await;
    assert_eq!(
        again.matches("retry limit must stay at 5").count(),
        1,
        "{again}"
    );
}

/// The case: `## Goal` listed every user request of the session, one line each, and
/// the summary grew with every compaction. The goal is the first request and its newest
/// changes; every section has a cap.
#[tokio::test]
async fn the_goal_is_the_goal_and_its_changes_and_sections_stay_capped() {
    let mut summary: Option<String> = None;
    let mut sizes = Vec::new();
    for round in 0..12 {
        let mut messages = vec![user(&format!(
            "now please port the module number {round} to the new storage layer"
        ))];
        for step in 0..4 {
            messages.extend(shell(
                &format!("r{round}s{step}"),
                &format!("cargo test -p storage case_{round}_{step}"),
                "test result: ok. Process exited with code 0",
            ));
        }
        let task = if summary.is_some() {
            TaskKind::CompactionUpdate
        } else {
            TaskKind::CompactionSummary
        };
        let text = ask(task, &input(messages, summary.as_deref())).await;
        sizes.push(text.len());
        summary = Some(text);
    }
    let text = summary.unwrap();
    let goal = section_items(&text, GOAL);
    assert!(goal.len() <= 5, "{text}");
    assert!(
        goal.iter().any(|g| g.contains("module number 0 ")),
        "the first goal stays: {text}"
    );
    assert!(
        goal.iter().any(|g| g.contains("module number 11 ")),
        "the newest change: {text}"
    );
    assert!(section_items(&text, DONE).len() <= 25, "{text}");
    // Steady work: the size levels off instead of growing with every round.
    assert!(sizes[11] * 10 <= sizes[7] * 11, "{sizes:?}");
}

/// The case: a correction, a number, a standing rule and a question nobody answered,
/// then rounds of steady work (read, patch, passing test, six times, and a reply). After five
/// summaries every planted fact is still there and the summary is no more than 30% larger
/// than the first (which holds the facts and one round of work).
#[tokio::test]
async fn planted_facts_survive_five_rounds_of_steady_work_and_the_summary_stays_bounded() {
    let planting = vec![
        user(
            "We need to rework the billing retry loop. Always run `cargo fmt --all` before you commit anything.",
        ),
        say("I'll start by calling the old billing endpoint."),
        user("No, that is wrong: do not call the old endpoint, use /api/v2/invoices instead."),
        say("I'll use a BTreeMap instead of a HashMap because the report must come out sorted."),
        user("The limit must stay at 250 requests per minute whatever you change."),
        user("Should we also move the billing CLI onto the new client?"),
    ];
    let work = |round: usize| {
        let mut messages = vec![user(&format!(
            "Next, port part {round} of the billing retry loop to the new client, module by module."
        ))];
        for step in 0..6 {
            let module = format!("src/billing/part{round}/module{step}.rs");
            messages.push(call(
                &format!("r{round}s{step}"),
                "read",
                json!({ "path": module }),
            ));
            messages.push(result(&format!("r{round}s{step}"), "fn port() {}"));
            messages.push(call(
                &format!("p{round}s{step}"),
                "apply_patch",
                json!({ "input": format!("*** Begin Patch\n*** Update File: {module}\n@@\n-a\n+b\n*** End Patch") }),
            ));
            messages.push(result(
                &format!("p{round}s{step}"),
                "Success. Updated the following files:",
            ));
            messages.extend(shell(
                &format!("t{round}s{step}"),
                &format!("cargo test -p billing part{round}_module{step}"),
                "test result: ok. 3 passed\nProcess exited with code 0",
            ));
        }
        messages.push(say(&format!("Part {round} is ported and its tests pass.")));
        messages
    };
    let mut first_window = planting;
    first_window.extend(work(1));
    let mut summary = ask(TaskKind::CompactionSummary, &input(first_window, None)).await;
    let first = summary.len();
    for round in 2..=5 {
        summary = ask(
            TaskKind::CompactionUpdate,
            &input(work(round), Some(&summary)),
        )
        .await;
    }
    for fact in [
        "cargo fmt --all",
        "Correction: do not call the old endpoint, use /api/v2/invoices instead",
        "250 requests per minute",
        "BTreeMap",
        "> Should we also move the billing CLI onto the new client?",
        "billing retry loop",
    ] {
        assert!(summary.contains(fact), "lost {fact:?}:\n{summary}");
    }
    assert_eq!(
        summary.matches("use /api/v2/invoices instead").count(),
        1,
        "a correction is listed once:\n{summary}"
    );
    assert!(
        summary.len() * 10 <= first * 13,
        "{first} bytes after one round, {} after five:\n{summary}",
        summary.len()
    );
}

#[tokio::test]
async fn repeated_failures_are_blocked() {
    let mut messages = vec![user("Make the integration tests pass on CI please.")];
    for i in 0..3 {
        messages.extend(shell(
            &format!("f{i}"),
            "cargo test --test integration",
            "Process exited with code 101\nerror: could not connect to database",
        ));
    }
    let text = ask(TaskKind::CompactionSummary, &input(messages, None)).await;
    let blocked = section_items(&text, BLOCKED).join("\n");
    assert!(
        blocked.contains(
            "`cargo test --test integration` fails: error: could not connect to database"
        ),
        "{text}"
    );
    assert!(blocked.contains("failed 3 times in a row"), "{text}");
}

#[tokio::test]
async fn a_turn_prefix_quotes_its_request_and_says_what_the_rest_depends_on() {
    let mut messages = vec![user("Rename `Table::rows` to `Table::records` everywhere.")];
    messages.extend(shell(
        "t1",
        "rg -l 'rows' src",
        "Process exited with code 0\nsrc/table.rs\nsrc/csv.rs",
    ));
    messages.push(call(
        "t2",
        "apply_patch",
        json!({ "input": "*** Begin Patch\n*** Update File: src/table.rs\n*** Update File: src/csv.rs\n*** End Patch" }),
    ));
    messages.push(result("t2", "Success."));
    messages.extend(shell(
        "t3",
        "cargo check",
        "Process exited with code 101\nerror[E0609]: no field `rows` on type `Table`",
    ));
    let mut prefix = input(messages, None);
    prefix.max_output_tokens = 8_192;
    let text = ask(TaskKind::TurnPrefixSummary, &prefix).await;
    assert!(
        text.starts_with(&format!(
            "{ORIGINAL_REQUEST}\nRename `Table::rows` to `Table::records` everywhere.\n"
        )),
        "{text}"
    );
    let progress = section_items(&text, EARLY_PROGRESS).join("\n");
    assert!(
        progress.contains("Changed `src/table.rs`, `src/csv.rs`"),
        "{text}"
    );
    assert!(
        progress.contains("Ran `rg -l 'rows' src` (passed)"),
        "{text}"
    );
    let context = section_items(&text, CONTEXT_FOR_SUFFIX).join("\n");
    assert!(
        context.contains("`cargo check` fails: error[E0609]: no field `rows`"),
        "{text}"
    );

    // A later stretch of the same turn keeps the request and the earlier steps.
    let mut next = input(
        shell("t4", "cargo check", "Process exited with code 0"),
        Some(&text),
    );
    next.max_output_tokens = 8_192;
    let folded = ask(TaskKind::TurnPrefixSummary, &next).await;
    assert!(
        folded.contains("Rename `Table::rows` to `Table::records` everywhere."),
        "{folded}"
    );
    assert!(
        folded.contains("Changed `src/table.rs`, `src/csv.rs`"),
        "{folded}"
    );
    assert!(folded.contains("Ran `cargo check` (passed)"), "{folded}");
}

#[tokio::test]
async fn a_short_summary_is_a_few_first_person_sentences() {
    let summary = ask(TaskKind::CompactionSummary, &input(session(), None)).await;
    let mut short = input(
        shell(
            "s1",
            "cargo clippy --all-targets",
            "Process exited with code 0",
        ),
        Some(&summary),
    );
    short.max_output_tokens = 512;
    let text = ask(TaskKind::ShortSummary, &short).await;
    assert!(
        text.starts_with("I worked on: The `tide parse` command panics on an empty CSV"),
        "{text}"
    );
    assert!(text.contains("I changed `src/table.rs`."), "{text}");
    assert!(text.len() <= 512 * 3, "{text}");
    assert!(!text.contains('\n'), "{text}");
}

#[tokio::test]
async fn output_stays_within_its_cap_and_folds_done_items_last() {
    let mut messages = vec![user(
        "Port every module of the legacy importer to the new API, one by one.",
    )];
    for i in 0..400 {
        messages.push(call(
            &format!("p{i}"),
            "apply_patch",
            json!({ "input": format!("*** Begin Patch\n*** Update File: src/importer/module_{i:03}.rs\n*** End Patch") }),
        ));
        messages.push(result(&format!("p{i}"), "Success."));
        messages.extend(shell(
            &format!("c{i}"),
            &format!("cargo test -p importer module_{i:03}"),
            "Process exited with code 0",
        ));
    }
    let mut big = input(messages, None);
    big.max_output_tokens = 1_000;
    let text = ask(TaskKind::CompactionSummary, &big).await;
    assert!(text.len() <= 3_000, "{} bytes", text.len());
    let done = section_items(&text, DONE);
    let folded: usize = done.iter().filter_map(|item| folded_done_count(item)).sum();
    assert!(
        done.iter().any(|item| item.contains("400 checks passed")),
        "routine passes are one item:\n{text}"
    );
    let context = section_items(&text, CRITICAL_CONTEXT).join("\n");
    assert!(
        context.contains("Commands that passed: `cargo test -p importer *`"),
        "400 runs of one check fold into one entry:\n{text}"
    );
    assert!(
        context.contains("`src/importer/*`"),
        "400 changed files fold into their folder:\n{text}"
    );
    assert!(
        section_items(&text, GOAL)
            .join("")
            .contains("legacy importer"),
        "{text}"
    );

    // The next update counts what was folded before and drops nothing silently.
    let mut update = input(
        shell("z", "cargo build", "Process exited with code 0"),
        Some(&text),
    );
    update.max_output_tokens = 1_000;
    let again = ask(TaskKind::CompactionUpdate, &update).await;
    let done_again = section_items(&again, DONE);
    let folded_again: usize = done_again
        .iter()
        .filter_map(|item| folded_done_count(item))
        .sum();
    let listed_before = done.len() - usize::from(folded > 0);
    let listed_now = done_again.len() - usize::from(folded_again > 0);
    assert!(
        folded_again + listed_now > folded + listed_before,
        "{again}"
    );
}

/// Found by the property below (seed 8080): changes whose results are not in the window were
/// listed in a hash map's order, so the same window could give two summaries.
#[tokio::test]
async fn changes_without_results_are_listed_in_the_order_they_were_made() {
    let patch = |id: &str, file: &str| {
        call(
            id,
            "apply_patch",
            json!({ "input": format!("*** Begin Patch\n*** Update File: {file}\n*** End Patch") }),
        )
    };
    let messages = vec![
        user("Tidy the three parsers."),
        patch("c3", "src/zeta.rs"),
        patch("c0", "src/alpha.rs"),
        patch("c9", "src/mid.rs"),
    ];
    let request = input(messages, None);
    let first = ask(TaskKind::CompactionSummary, &request).await;
    let order: Vec<usize> = ["zeta", "alpha", "mid"]
        .iter()
        .map(|name| {
            first
                .find(&format!("- [x] Changed `src/{name}.rs`"))
                .expect(name)
        })
        .collect();
    assert!(order.is_sorted(), "{first}");
    for _ in 0..20 {
        assert_eq!(ask(TaskKind::CompactionSummary, &request).await, first);
    }
}

fn any_message() -> impl Strategy<Value = ConversationMessage> {
    let text = "(\\PC{0,30}|Process exited with code -?[0-9]{1,3}|error: x|\\*\\*\\* Update File: [a-z/.]{1,12}|always use [a-z]{1,8}|\n|`|> |## Goal|- \\[x\\] )";
    let texts = proptest::collection::vec(text, 0..5).prop_map(|parts| parts.concat());
    let id = "c[0-3]";
    prop_oneof![
        texts
            .clone()
            .prop_map(|text| ConversationMessage::User { text }),
        texts
            .clone()
            .prop_map(|text| ConversationMessage::Assistant {
                content: vec![AssistantBlock::Text { text }]
            }),
        (
            id,
            prop_oneof!["exec_command", "apply_patch", "read_file", "write"],
            texts.clone()
        )
            .prop_map(|(id, name, arg)| ConversationMessage::Assistant {
                content: vec![AssistantBlock::ToolCall {
                    id,
                    name,
                    arguments: json!({ "cmd": &arg, "path": &arg, "input": &arg }),
                }]
            }),
        (id, texts.clone(), any::<bool>()).prop_map(|(id, text, is_error)| {
            ConversationMessage::ToolResult {
                tool_call_id: id,
                tool_name: "exec_command".to_owned(),
                text,
                is_error,
                useless: false,
            }
        }),
        (texts.clone(), texts, proptest::option::of(-2i32..3)).prop_map(
            |(command, output, exit_code)| ConversationMessage::ShellExecution {
                command,
                output,
                exit_code,
            }
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_answer_is_non_empty_within_its_cap_and_deterministic(
        messages in proptest::collection::vec(any_message(), 0..24),
        previous in proptest::option::of("(\\PC{0,40}|\n|## Done\n|### Done\n- \\[x\\] |- )*"),
        cap in 64u32..2_000,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        for task in [
            TaskKind::CompactionSummary,
            TaskKind::CompactionUpdate,
            TaskKind::TurnPrefixSummary,
            TaskKind::ShortSummary,
        ] {
            let mut request = input(messages.clone(), previous.as_deref());
            request.max_output_tokens = cap;
            let first = runtime.block_on(ask(task, &request));
            let second = runtime.block_on(ask(task, &request));
            prop_assert_eq!(&first, &second);
            prop_assert!(!first.trim().is_empty(), "{:?} answered nothing", task);
            prop_assert!(first.len() <= cap as usize * 3, "{:?}: {} bytes", task, first.len());
        }
    }
}

/// Additional context (`compact --context`) is kept in the summary as a note.
#[tokio::test]
async fn additional_context_is_kept_as_a_note() {
    let mut given = input(session(), None);
    given.additional_context = vec![
        "Plan mode: no edits until the plan is approved.".to_owned(),
        "  ".to_owned(),
    ];
    let text = ask(TaskKind::CompactionSummary, &given).await;
    assert!(
        text.contains("- Context given: Plan mode: no edits until the plan is approved."),
        "{text}"
    );
    assert_eq!(text.matches("Context given:").count(), 1, "{text}");
}

/// A correction that also reads as a rule (`No, do not use X; use Y instead`) is listed once,
/// as the correction.
#[tokio::test]
async fn a_correction_that_reads_as_a_rule_is_listed_once() {
    let messages = vec![
        user("Port the scheduler to the new queue API."),
        say("I'll call the v1 queue endpoint first."),
        user("No, do not use the v1 queue endpoint; use /api/v2/jobs instead."),
    ];
    let text = ask(TaskKind::CompactionSummary, &input(messages, None)).await;
    let constraints = section_items(&text, CONSTRAINTS).join("\n");
    assert!(
        constraints
            .contains("Correction: do not use the v1 queue endpoint; use /api/v2/jobs instead"),
        "{text}"
    );
    assert_eq!(constraints.matches("/api/v2/jobs").count(), 1, "{text}");
}

/// Found compacting a 400-turn rollout of our own five times with `--out` chaining: a first
/// request that opens with standing rules ("Never touch migrations/ ... The test
/// settle::rounding_half_even fails on main; start there.") lost its task with its rules, and
/// the next request, a decision the user reported ("We decided to keep rust_decimal ..."), was
/// taken for the goal. The rules go to Constraints, the work to Goal, the decision to Key
/// Decisions.
#[tokio::test]
async fn a_request_opening_with_rules_keeps_its_task_and_a_reported_decision_is_a_decision() {
    let mut messages = vec![
        user(
            "Never touch migrations/ without asking me first. Settlement batches must stay \
             under 5000 rows. The test settle::rounding_half_even fails on main; start there.",
        ),
        say("Looking at the rounding test first."),
        user(
            "We decided to keep rust_decimal instead of f64 because cents drifted in the \
             March close.",
        ),
    ];
    messages.extend(shell(
        "e1",
        "cargo test -p ledgerd fx::",
        "Process exited with code 0",
    ));
    let text = ask(TaskKind::CompactionSummary, &input(messages, None)).await;
    let goal = section_items(&text, GOAL).join("\n");
    assert!(
        goal.contains("settle::rounding_half_even fails on main"),
        "{text}"
    );
    assert!(!goal.contains("Never touch migrations"), "{text}");
    assert!(!goal.contains("rust_decimal"), "{text}");
    let constraints = section_items(&text, CONSTRAINTS).join("\n");
    assert!(constraints.contains("Never touch migrations/"), "{text}");
    assert!(constraints.contains("under 5000 rows"), "{text}");
    let decisions = section_items(&text, KEY_DECISIONS).join("\n");
    assert!(
        decisions.contains("We decided to keep rust_decimal instead of f64"),
        "{text}"
    );
}

/// Found compacting a Chinese session with the CLI: the short summary read `I worked on:
/// 把潮汐表导入器迁移到新格式。.`, a full stop added after the ideographic one. A sentence that
/// already ends in any script (`。`, `！`, `？`) gets no `.`, in any answer.
#[tokio::test]
async fn a_sentence_ending_in_an_ideographic_full_stop_gets_no_second_one() {
    let mut messages = vec![user("把潮汐表导入器迁移到新格式。不要改动测试目录！")];
    messages.extend(shell("c1", "cargo test", "Process exited with code 0"));
    messages.push(say("迁移完成。下一步：更新文档。"));
    let summary = ask(TaskKind::CompactionSummary, &input(messages.clone(), None)).await;
    let mut short = input(messages, Some(&summary));
    short.max_output_tokens = 512;
    let text = ask(TaskKind::ShortSummary, &short).await;
    assert!(
        text.starts_with("I worked on: 把潮汐表导入器迁移到新格式。"),
        "{text}"
    );
    assert!(
        summary.contains("## Goal\n- 把潮汐表导入器迁移到新格式。"),
        "{summary}"
    );
    assert!(summary.contains("- 不要改动测试目录"), "{summary}");
    for answer in [&summary, &text] {
        for doubled in ["。.", "！.", "？.", "!.", "?."] {
            assert!(!answer.contains(doubled), "{doubled:?} in {answer}");
        }
    }
}
