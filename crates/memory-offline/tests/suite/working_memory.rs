//! The offline engine's working-memory answers, through `ModelClient::complete`.

use memory_offline::{OFFLINE_NOTICE, OfflineEngine};
use memory_protocol::compaction::{ConversationEntry, ConversationMessage};
use memory_protocol::working_memory::{
    SectionBody, SectionOp, SectionSizeWarning, WorkingMemoryCreateInput, WorkingMemorySection,
    WorkingMemoryUpdate, WorkingMemoryUpdateInput,
};
use memory_protocol::{ModelClient, ModelRequest, TaskKind};
use proptest::prelude::*;
use serde_json::json;

fn entries(messages: Vec<ConversationMessage>) -> Vec<ConversationEntry> {
    messages
        .into_iter()
        .enumerate()
        .map(|(i, message)| ConversationEntry {
            id: format!("m{i}"),
            message,
        })
        .collect()
}

fn user(text: &str) -> ConversationMessage {
    ConversationMessage::user(text)
}

fn say(text: &str) -> ConversationMessage {
    ConversationMessage::assistant_text(text)
}

fn call(id: &str, name: &str, arguments: serde_json::Value) -> ConversationMessage {
    ConversationMessage::tool_call(id, name, arguments)
}

fn result(id: &str, name: &str, text: &str, is_error: bool) -> ConversationMessage {
    ConversationMessage::tool_result(id, name, text, is_error)
}

/// A session: a failing test, a fix explained, a patch, a pass, a second failure left open,
/// and a question at the end.
fn session() -> Vec<ConversationEntry> {
    entries(vec![
        user("Fix the tide importer for the March tables. Keep the CSV parser strict."),
        call("c1", "shell", json!({"cmd": "pytest tests/test_import.py"})),
        result(
            "c1",
            "shell",
            "FAILED tests/test_import.py::test_march\nValueError: bad time 24:00\nexit code: 1",
            true,
        ),
        say(
            "The station writes midnight as 24:00. I'll normalize it in parse_time instead of loosening the parser, because the format is documented.",
        ),
        call(
            "c2",
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Update File: tides/parse.py\n@@\n-x\n+y\n*** End Patch"}),
        ),
        result("c2", "apply_patch", "Done", false),
        call("c3", "shell", json!({"cmd": "pytest tests/test_import.py"})),
        result("c3", "shell", "3 passed\nexit code: 0", false),
        call("c4", "shell", json!({"cmd": "mypy tides"})),
        result(
            "c4",
            "shell",
            "tides/plot.py:12: error: missing return type\nexit code: 1",
            true,
        ),
        user("Does April use the same format?"),
    ])
}

async fn complete(task: TaskKind, input: serde_json::Value) -> String {
    OfflineEngine::new()
        .complete(ModelRequest {
            task,
            instructions: String::new(),
            input: String::new(),
            structured_input: input,
            output_schema: None,
            reasoning_effort: None,
            max_output_tokens: None,
        })
        .await
        .unwrap()
        .text
}

/// The document the offline engine creates from `messages` with no previous one.
async fn create(messages: Vec<ConversationEntry>) -> String {
    complete(
        TaskKind::WorkingMemoryCreate,
        serde_json::to_value(WorkingMemoryCreateInput {
            messages,
            previous: None,
        })
        .unwrap(),
    )
    .await
}

/// The operations the offline engine answers an update request with.
async fn update(input: &WorkingMemoryUpdateInput) -> WorkingMemoryUpdate {
    let text = complete(
        TaskKind::WorkingMemoryUpdate,
        serde_json::to_value(input).unwrap(),
    )
    .await;
    serde_json::from_str(&text).unwrap()
}

fn section<'a>(document: &'a str, name: &str) -> &'a str {
    let start = document.find(&format!("## {name}\n")).unwrap() + name.len() + 4;
    let rest = &document[start..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    rest[..end].trim()
}

#[tokio::test]
async fn create_reads_every_section_from_the_structure() {
    let input = WorkingMemoryCreateInput {
        messages: session(),
        previous: None,
    };
    let document = complete(
        TaskKind::WorkingMemoryCreate,
        serde_json::to_value(&input).unwrap(),
    )
    .await;
    assert!(document.starts_with("# Working Memory\n"), "{document}");
    assert_eq!(
        section(&document, "Session Title"),
        "Fix the tide importer for the March tables"
    );
    let state = section(&document, "Current State");
    assert!(
        state.contains("Latest request: Does April use the same format"),
        "{state}"
    );
    assert!(state.contains("`mypy tides` failed"), "{state}");
    assert!(state.ends_with(OFFLINE_NOTICE));
    let goals = section(&document, "Task & Goals");
    assert!(goals.contains("- Fix the tide importer for the March tables"));
    let facts = section(&document, "Key Facts & Decisions");
    assert!(
        facts.contains("User rule: Keep the CSV parser strict."),
        "{facts}"
    );
    assert!(facts.contains("Decision: "), "{facts}");
    assert!(facts.contains("`pytest tests/test_import.py` passes after the fix"));
    assert!(section(&document, "Files & Context").contains("`tides/parse.py`: updated"));
    let errors = section(&document, "Errors & Corrections");
    assert!(
        errors.contains(
            "`pytest tests/test_import.py` failed: ValueError: bad time 24:00; a later run passed"
        ),
        "{errors}"
    );
    assert!(errors.contains("`mypy tides` failed: tides/plot.py:12: error: missing return type"));
    let open = section(&document, "Open Issues");
    assert!(
        open.contains("[new] `mypy tides` failed and has not passed since"),
        "{open}"
    );
    assert!(
        open.contains("[new] Unanswered question: Does April use the same format?"),
        "{open}"
    );
    assert!(
        !open.contains("pytest"),
        "a fixed failure is not open: {open}"
    );
}

fn bodies(pairs: &[(WorkingMemorySection, &str)]) -> Vec<SectionBody> {
    WorkingMemorySection::ALL
        .into_iter()
        .map(|section| SectionBody {
            section,
            body: pairs
                .iter()
                .find(|(s, _)| *s == section)
                .map(|(_, b)| (*b).to_owned())
                .unwrap_or_default(),
        })
        .collect()
}

#[tokio::test]
async fn update_appends_what_is_new_and_settles_what_passed() {
    let input = WorkingMemoryUpdateInput {
        sections: bodies(&[
            (WorkingMemorySection::SessionTitle, "Tide importer fixes"),
            (
                WorkingMemorySection::FilesAndContext,
                "- `tides/parse.py`: updated",
            ),
            (
                WorkingMemorySection::OpenIssues,
                "- [new] `mypy tides` failed and has not passed since: missing return type\n- plotting colours",
            ),
        ]),
        messages: entries(vec![
            user("Now fix the type error."),
            call("c1", "edit_file", json!({"path": "tides/plot.py"})),
            result("c1", "edit_file", "ok", false),
            call("c2", "shell", json!({"cmd": "mypy tides"})),
            result(
                "c2",
                "shell",
                "Success: no issues found\nexit code: 0",
                false,
            ),
        ]),
        warnings: Vec::new(),
    };
    let ops = update(&input).await.sections;
    assert_eq!(ops.session_title, SectionOp::Keep);
    assert!(matches!(ops.current_state, SectionOp::Update { .. }));
    assert_eq!(
        ops.files_and_context,
        SectionOp::Append {
            items: vec!["`tides/plot.py`: edited with `edit_file`".into()]
        }
    );
    assert_eq!(
        ops.open_issues,
        SectionOp::Update {
            content:
                "- [resolved] `mypy tides` failed and has not passed since: missing return type\n- plotting colours"
                    .into()
        }
    );
    assert_eq!(ops.errors_and_corrections, SectionOp::Keep);
}

#[tokio::test]
async fn a_warned_section_is_consolidated_keeping_every_word() {
    let facts: Vec<String> = (1..=30).map(|i| format!("- fact {i}")).collect();
    let input = WorkingMemoryUpdateInput {
        sections: bodies(&[(
            WorkingMemorySection::KeyFactsAndDecisions,
            &facts.join("\n"),
        )]),
        messages: Vec::new(),
        warnings: vec![SectionSizeWarning {
            section: WorkingMemorySection::KeyFactsAndDecisions,
            bullets: 30,
            tokens: 120,
        }],
    };
    let text = complete(
        TaskKind::WorkingMemoryUpdate,
        serde_json::to_value(&input).unwrap(),
    )
    .await;
    let update: WorkingMemoryUpdate = serde_json::from_str(&text).unwrap();
    let SectionOp::Update { content } = update.sections.key_facts_and_decisions else {
        panic!("not consolidated: {text}");
    };
    assert_eq!(content.lines().count(), 10);
    for i in 1..=30 {
        assert!(content.contains(&format!("fact {i}")), "{i}");
    }
    assert_eq!(
        update.sections.current_state,
        SectionOp::Keep,
        "no messages, nothing to say"
    );
}

fn any_message() -> impl Strategy<Value = ConversationMessage> {
    prop_oneof![
        "\\PC{0,60}".prop_map(|text| user(&text)),
        "\\PC{0,60}".prop_map(|text| say(&text)),
        ("[a-c]", "\\PC{0,40}").prop_map(|(id, cmd)| call(&id, "shell", json!({"cmd": cmd}))),
        ("[a-c]", "\\PC{0,60}", any::<bool>())
            .prop_map(|(id, text, e)| result(&id, "shell", &text, e)),
        (
            "\\PC{0,30}",
            "\\PC{0,60}",
            proptest::option::of(any::<i32>())
        )
            .prop_map(|(command, output, exit_code)| {
                ConversationMessage::ShellExecution {
                    command,
                    output,
                    exit_code,
                }
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..ProptestConfig::default() })]

    #[test]
    fn any_messages_give_a_document_and_readable_operations(
        messages in proptest::collection::vec(any_message(), 0..12),
        body in "\\PC{0,80}",
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let created = runtime.block_on(complete(
            TaskKind::WorkingMemoryCreate,
            serde_json::to_value(WorkingMemoryCreateInput { messages: entries(messages.clone()), previous: None }).unwrap(),
        ));
        for section in WorkingMemorySection::ALL {
            let header = format!("\n## {}\n", section.header());
            prop_assert!(created.contains(&header), "{}", created);
        }
        let updated = runtime.block_on(complete(
            TaskKind::WorkingMemoryUpdate,
            serde_json::to_value(WorkingMemoryUpdateInput {
                sections: bodies(&[(WorkingMemorySection::OpenIssues, &body)]),
                messages: entries(messages),
                warnings: Vec::new(),
            }).unwrap(),
        ));
        prop_assert!(serde_json::from_str::<WorkingMemoryUpdate>(&updated).is_ok(), "{}", updated);
    }
}

/// Issue 27: a command whose call never got a result (the conversation went on) is noted as
/// unanswered, not taken as run.
#[tokio::test]
async fn an_abandoned_command_is_noted_as_unanswered() {
    let messages = entries(vec![
        user("Build the release."),
        call(
            "c1",
            "exec_command",
            json!({"cmd": "cargo build --release"}),
        ),
        user("Never mind, run the tests instead."),
        call("c2", "exec_command", json!({"cmd": "cargo test"})),
        result(
            "c2",
            "exec_command",
            "Process exited with code 0\ntest result: ok",
            false,
        ),
    ]);
    let document = create(messages).await;
    let errors = section(&document, "Errors & Corrections");
    assert!(
        errors.contains("`cargo build --release` got no answer"),
        "{document}"
    );
    assert!(!errors.contains("`cargo test` got no answer"));
}

/// Found committing a session of our own with `wm commit`: the working-memory writer split
/// sentences at every period, so the title and goal read "... in src/predict" and the rule
/// "M2_PERIOD is 12.4206 hours" was stored twice, once as "M2_PERIOD is 12.".
#[tokio::test]
async fn periods_inside_paths_and_numbers_end_no_sentence() {
    let messages = entries(vec![user(
        "Port the tide predictor to the harmonic model in src/predict.rs. Keep every public \
         signature as it is; the constant M2_PERIOD is 12.4206 hours.",
    )]);
    let document = create(messages).await;
    let title = section(&document, "Session Title");
    assert!(title.ends_with("in src/predict.rs"), "{document}");
    let goals = section(&document, "Task & Goals");
    assert!(goals.contains("in src/predict.rs"), "{document}");
    let facts = section(&document, "Key Facts & Decisions");
    assert!(facts.contains("M2_PERIOD is 12.4206 hours"), "{document}");
    assert_eq!(facts.matches("M2_PERIOD").count(), 1, "{document}");
}

/// Found running the reference host in working-memory mode: Task & Goals took every request of
/// the session, so after 136 steps it held one 12,000-character line and each commit was
/// refused as growing the context. It holds the first goal and the newest three, however many
/// rounds there are.
#[tokio::test]
async fn task_and_goals_keeps_the_first_goal_and_the_newest_three() {
    let document = create(entries(vec![user(
        "Port the ledger importer to the new bank format.",
    )]))
    .await;
    let mut goals = section(&document, "Task & Goals").to_owned();
    for step in 1..=40 {
        let input = WorkingMemoryUpdateInput {
            sections: bodies(&[(WorkingMemorySection::TaskAndGoals, &goals)]),
            messages: entries(vec![user(&format!(
                "Step {step}: add the parser for field {step} to src/fields/f{step}.rs."
            ))]),
            warnings: Vec::new(),
        };
        match update(&input).await.sections.task_and_goals {
            SectionOp::Update { content } => goals = content,
            SectionOp::Keep => {}
            other => panic!("Task & Goals is rewritten or kept, not {other:?}"),
        }
    }
    let items: Vec<&str> = goals.lines().collect();
    assert_eq!(
        items,
        [
            "- Port the ledger importer to the new bank format",
            "- Step 38: add the parser for field 38 to src/fields/f38.rs",
            "- Step 39: add the parser for field 39 to src/fields/f39.rs",
            "- Step 40: add the parser for field 40 to src/fields/f40.rs",
        ],
        "{goals}"
    );
}

/// A Chinese request and reply end their sentences with `。` and `！`: the document adds no `.`
/// after them (it once wrote `Last reply: ...！.`), and the request is the session's title and
/// goal (both were empty: a request needed three words separated by spaces).
#[tokio::test]
async fn a_chinese_request_keeps_its_own_full_stop() {
    let document = create(entries(vec![
        user("请把潮汐表导入器迁移到新格式，并保留所有公共接口。"),
        say("好的，迁移已经完成！接下来更新文档。"),
    ]))
    .await;
    for doubled in ["。.", "！.", "？."] {
        assert!(!document.contains(doubled), "{doubled:?} in {document}");
    }
    assert!(
        document.contains("新格式，并保留所有公共接口。"),
        "{document}"
    );
    // The reply's first sentence ends at its `！`.
    assert!(
        section(&document, "Current State").contains("Last reply: 好的，迁移已经完成！ "),
        "{document}"
    );
    // The request is read as one (it has no spaces to count words by).
    assert!(
        section(&document, "Session Title").starts_with("请把潮汐表导入器迁移到新格式"),
        "{document}"
    );
    assert!(
        section(&document, "Task & Goals").contains("请把潮汐表导入器迁移到新格式"),
        "{document}"
    );
}
