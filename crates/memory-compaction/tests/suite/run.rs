//! Running a compaction against scripted summarizers: windows, the fold, overflow recovery,
//! atomic failure, and what the entry records.

use memory_compaction::compaction::{
    CompactionError, CompactionOptions, CompactionOutcome, CompactionReason, CompactionSettings,
    Dialect, Session, compact, plan_compaction,
};
use memory_protocol::compaction::summary_sections::TURN_CONTEXT;
use memory_protocol::{ModelError, TaskKind};
use memory_sanitize::{ByteEstimate, TokenCounter};

use super::support::{
    Scripted, call, chat, extend, input_of, numbered, result, say, session, shell_call, turns, user,
};

fn options(window: u64, keep: u64) -> CompactionOptions {
    CompactionOptions {
        settings: CompactionSettings {
            keep_recent_tokens: keep,
            ..CompactionSettings::default()
        },
        window_tokens: window,
        ..CompactionOptions::default()
    }
}

async fn run(
    session: &Session,
    model: &dyn memory_protocol::ModelClient,
    options: &CompactionOptions,
) -> Result<CompactionOutcome, CompactionError> {
    compact(session, model, options, &ByteEstimate).await
}

fn compacted(outcome: CompactionOutcome) -> memory_compaction::compaction::Compaction {
    match outcome {
        CompactionOutcome::Compacted(compaction) => *compaction,
        other => panic!("expected a compaction, got {other:?}"),
    }
}

fn conversation_of(request: &memory_protocol::ModelRequest) -> &str {
    let start = request.input.find("<conversation>\n").unwrap() + "<conversation>\n".len();
    let end = request.input.find("\n</conversation>").unwrap();
    &request.input[start..end]
}

#[tokio::test]
async fn a_conversation_that_fits_is_summarized_in_one_call_then_a_short_summary() {
    let s = session(chat(6, 400));
    let model = numbered();
    let c = compacted(run(&s, &model, &options(200_000, 1_000)).await.unwrap());
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].task, TaskKind::CompactionSummary);
    assert!(!requests[0].input.contains("<previous-summary>"));
    assert_eq!(requests[1].task, TaskKind::ShortSummary);
    assert!(
        requests[1]
            .input
            .contains("<previous-summary>\n## Goal\n- summary 1\n</previous-summary>")
    );
    assert_eq!(c.entry.summary, "## Goal\n- summary 1");
    assert_eq!(
        c.entry.short_summary.as_deref(),
        Some("## Goal\n- summary 2")
    );
    assert_eq!(c.entry.engine, "scripted");
    assert_eq!(c.plan.windows, 1);
    assert_eq!(c.entry.messages_summarized, c.plan.messages_summarized);
    // From the end, 1,000 tokens are reached at the fourth request (m7): the cut.
    assert_eq!(c.plan.messages_summarized, 6);
    assert_eq!(c.plan.messages_summarized + c.plan.messages_kept, 12);
    assert!(!c.plan.split_turn);
    assert_eq!(c.entry.first_kept_entry_id.as_deref(), Some("m7"));
    // The request carries the structured input the prompt was rendered from.
    let input = input_of(&requests[0]);
    assert_eq!(input.max_output_tokens, 16_384);
    assert_eq!(requests[0].max_output_tokens, Some(16_384));
    assert!(requests[0].output_schema.is_none());
    assert!(
        requests[0]
            .instructions
            .contains("Never continue the conversation")
    );
}

#[tokio::test]
async fn a_long_span_is_folded_window_by_window_into_a_running_summary() {
    // Twelve turns of about 4k tokens each on a 40k window: several windows.
    let s = session(turns(12, 16_000));
    let model = numbered();
    let c = compacted(run(&s, &model, &options(40_000, 4_000)).await.unwrap());
    let requests = model.requests();
    let summaries: Vec<_> = requests
        .iter()
        .filter(|r| r.task != TaskKind::ShortSummary)
        .collect();
    assert!(summaries.len() > 1, "{}", summaries.len());
    assert_eq!(summaries[0].task, TaskKind::CompactionSummary);
    assert!(!summaries[0].input.contains("<previous-summary>"));
    for (i, request) in summaries.iter().enumerate().skip(1) {
        assert_eq!(request.task, TaskKind::CompactionUpdate);
        assert!(
            request.input.contains(&format!(
                "<previous-summary>\n## Goal\n- summary {i}\n</previous-summary>"
            )),
            "window {} updates the summary so far",
            i + 1
        );
    }
    let budget =
        memory_compaction::compaction::Budgets::new(40_000, &CompactionSettings::default(), 0)
            .input;
    for request in &summaries {
        assert!(ByteEstimate.count(conversation_of(request)) as u64 <= budget);
        assert!(
            request.input.len() < 40_000 * 4,
            "every prompt fits the window"
        );
    }
    assert!(conversation_of(summaries[0]).contains("request 0:"));
    let last = summaries.len();
    assert!(
        c.entry
            .summary
            .starts_with(&format!("## Goal\n- summary {last}"))
    );
    assert_eq!(c.plan.windows as usize, last);
}

#[tokio::test]
async fn a_caller_supplied_previous_summary_goes_into_the_first_window() {
    let mut s = session(turns(2, 400));
    super::support::extend(&mut s, chat(4, 400));
    let model = numbered();
    let first = compacted(run(&s, &model, &options(200_000, 1_000)).await.unwrap());
    assert!(
        first.entry.summary.contains("<files>"),
        "{}",
        first.entry.summary
    );
    s.push_compaction(first.entry.clone()).unwrap();
    super::support::extend(&mut s, chat(3, 400));
    let model = numbered();
    let second = compacted(run(&s, &model, &options(200_000, 1_000)).await.unwrap());
    let requests = model.requests();
    assert_eq!(requests[0].task, TaskKind::CompactionUpdate);
    assert!(
        requests[0]
            .input
            .contains("<previous-summary>\n## Goal\n- summary 1\n</previous-summary>")
    );
    assert!(
        !requests[0].input.contains("<files>"),
        "the files block is stripped"
    );
    assert_eq!(second.entry.summary.matches("<files>").count(), 1);
}

#[tokio::test]
async fn context_overflow_halves_what_was_sent_and_replans() {
    let s = session(chat(60, 2_000));
    // The provider accepts at most 35k tokens of conversation, though the window says 400k.
    let model = Scripted::new(|call, request| {
        if request.task != TaskKind::ShortSummary && conversation_of(request).len() > 140_000 {
            return Err(ModelError::ContextOverflow {
                message: "prompt is too long".to_owned(),
            });
        }
        Ok(format!("## Goal\n- summary {call}"))
    });
    let c = compacted(run(&s, &model, &options(400_000, 2_000)).await.unwrap());
    let requests = model.requests();
    let rejected = requests
        .iter()
        .filter(|r| conversation_of(r).len() > 140_000 && r.task != TaskKind::ShortSummary)
        .count();
    assert!((1..4).contains(&rejected), "{rejected} rejections");
    let sent: String = requests
        .iter()
        .filter(|r| conversation_of(r).len() <= 140_000 && r.task != TaskKind::ShortSummary)
        .map(|r| conversation_of(r).to_owned())
        .collect();
    assert!(sent.contains("request 0:") && sent.contains("request 58:"));
    assert_eq!(c.entry.first_kept_entry_id.as_deref(), Some("m119"));
    assert!(c.entry.summary.contains("summary"));
}

#[tokio::test]
async fn overflow_below_the_floor_is_a_clear_error() {
    let s = session(turns(8, 8_000));
    let model = Scripted::new(|_, _| {
        Err(ModelError::ContextOverflow {
            message: "nothing fits".to_owned(),
        })
    });
    let err = run(&s, &model, &options(40_000, 1_000)).await.unwrap_err();
    assert!(
        matches!(err, CompactionError::BelowFloor { floor: 5_000, .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("below the floor of 5000 tokens"),
        "{err}"
    );
    assert!(model.requests().len() < 8, "halving converges fast");
}

#[tokio::test]
async fn other_errors_propagate_after_one_call_without_shrinking() {
    let s = session(turns(8, 8_000));
    let model = Scripted::new(|_, _| {
        Err(ModelError::Authentication {
            message: "bad key".to_owned(),
        })
    });
    let err = run(&s, &model, &options(40_000, 1_000)).await.unwrap_err();
    assert!(
        matches!(
            err,
            CompactionError::Model {
                window: 1,
                source: ModelError::Authentication { .. },
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(model.requests().len(), 1);
}

/// A model failing on window 2 of 3 leaves the session unchanged: no entry, no partial summary.
#[tokio::test]
async fn a_failure_in_any_window_writes_nothing() {
    let s = session(turns(12, 16_000));
    let before = s.to_jsonl().unwrap();
    let model = Scripted::new(|call, _| {
        if call == 2 {
            Err(ModelError::Transient {
                message: "HTTP 503".to_owned(),
            })
        } else {
            Ok(format!("## Goal\n- summary {call}"))
        }
    });
    let err = run(&s, &model, &options(40_000, 4_000)).await.unwrap_err();
    assert!(
        matches!(
            err,
            CompactionError::Model {
                stage: "summary",
                window: 2,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().starts_with("summary window 2 of"), "{err}");
    assert_eq!(s.to_jsonl().unwrap(), before);
    assert!(s.latest_compaction().is_none());
}

#[tokio::test]
async fn an_empty_answer_is_an_error_not_an_empty_summary() {
    let s = session(turns(6, 400));
    let model = Scripted::new(|_, _| Ok("  \n ".to_owned()));
    let err = run(&s, &model, &options(200_000, 300)).await.unwrap_err();
    assert!(
        matches!(err, CompactionError::EmptySummary { stage: "summary" }),
        "{err}"
    );
    let files_only = Scripted::new(|_, _| Ok("<files>\n- a\n</files>".to_owned()));
    let err = run(&s, &files_only, &options(200_000, 300))
        .await
        .unwrap_err();
    assert!(matches!(err, CompactionError::EmptySummary { .. }), "{err}");
}

#[tokio::test]
async fn nothing_to_summarize_calls_no_model_and_keeps_the_previous_summary() {
    let s = session(turns(2, 100));
    let model = numbered();
    let outcome = run(&s, &model, &options(200_000, 20_000)).await.unwrap();
    match outcome {
        CompactionOutcome::NothingToSummarize(plan) => {
            assert_eq!(plan.messages_summarized, 0);
            assert_eq!(plan.messages_kept, 8);
            assert_eq!(plan.windows, 0);
        }
        other => panic!("{other:?}"),
    }
    assert!(model.requests().is_empty());
}

/// codex #40619: a summary longer than the few short messages it would replace is refused,
/// with both figures in the plan, instead of leaving the context larger.
#[tokio::test]
async fn a_summary_that_would_not_shrink_the_context_is_refused() {
    let s = session(chat(6, 20));
    let wordy = Scripted::new(|_, _| Ok(format!("## Goal\n- {}", "detail ".repeat(400))));
    let outcome = run(&s, &wordy, &options(200_000, 30)).await.unwrap();
    let CompactionOutcome::WouldNotShrink(plan) = outcome else {
        panic!("expected a refusal, got {outcome:?}");
    };
    let after = plan.tokens_after.unwrap();
    assert_eq!(plan.tokens_before, s.context_tokens(&ByteEstimate));
    assert!(
        after >= plan.tokens_before,
        "{after} < {}",
        plan.tokens_before
    );
    assert!(plan.messages_summarized > 0);
    // The same session with a terse summary is compacted, and smaller.
    let c = compacted(run(&s, &numbered(), &options(200_000, 30)).await.unwrap());
    assert!(c.entry.tokens_after < c.entry.tokens_before);
}

#[tokio::test]
async fn a_split_turn_gets_its_own_turn_prefix_summary() {
    let mut messages = vec![user("first request"), say("done with the first")];
    messages.push(user("second request: refactor the parser"));
    for i in 0..20 {
        messages.push(shell_call(
            &format!("c{i}"),
            &format!("cargo test -p parser case_{i}"),
        ));
        messages.push(result(&format!("c{i}"), &"ok ".repeat(400)));
    }
    messages.push(say("all cases pass"));
    messages.push(user("third request"));
    messages.push(say(&"reply ".repeat(600)));
    let s = session(messages);
    let model = numbered();
    let c = compacted(run(&s, &model, &options(200_000, 3_000)).await.unwrap());
    assert!(c.plan.split_turn);
    let tasks: Vec<TaskKind> = model.requests().iter().map(|r| r.task).collect();
    assert_eq!(
        tasks,
        [
            TaskKind::CompactionSummary,
            TaskKind::TurnPrefixSummary,
            TaskKind::ShortSummary
        ]
    );
    let prefix = &model.requests()[1];
    assert!(conversation_of(prefix).starts_with("[User]: second request: refactor the parser"));
    assert!(
        c.entry.summary.contains(&format!(
            "\n\n---\n\n{TURN_CONTEXT}\n\n## Goal\n- summary 2"
        )),
        "{}",
        c.entry.summary
    );
    assert_eq!(c.entry.pinned_entry_id, None);
}

/// The case: compacting a 180-call single turn three times gave three turn contexts;
/// the earlier prefix was never folded in and the summary grew with every compaction.
#[tokio::test]
async fn three_compactions_of_one_long_turn_give_one_turn_context() {
    let mut calls = Vec::new();
    for i in 0..180 {
        calls.push(shell_call(
            &format!("c{i}"),
            &format!("cargo check -p crate{i}"),
        ));
        calls.push(result(&format!("c{i}"), &"checked ".repeat(150)));
    }
    let mut chunks = calls.chunks(120);
    let mut first = vec![user("move every crate to the 2024 edition")];
    first.extend(chunks.next().unwrap().iter().cloned());
    let mut s = session(first);
    let model = Scripted::new(|call, request: &memory_protocol::ModelRequest| {
        Ok(match request.task {
            TaskKind::TurnPrefixSummary => {
                format!("## Original Request\nedition\n\n## Early Progress\n- part {call}")
            }
            _ => format!("## Goal\n- summary {call}"),
        })
    });
    let mut summaries = Vec::new();
    for round in 0..3 {
        if round > 0 {
            extend(&mut s, chunks.next().unwrap().to_vec());
        }
        let c = compacted(run(&s, &model, &options(200_000, 2_000)).await.unwrap());
        assert!(c.plan.split_turn, "round {round}");
        summaries.push(c.entry.summary.clone());
        s.push_compaction(c.entry).unwrap();
    }
    let last = summaries.last().unwrap();
    assert_eq!(last.matches(TURN_CONTEXT).count(), 1, "{last}");
    // Each later turn prefix started from the one before it.
    let prefixes: Vec<_> = model
        .requests()
        .into_iter()
        .filter(|r| r.task == TaskKind::TurnPrefixSummary)
        .collect();
    assert!(prefixes.len() >= 3);
    for request in prefixes.iter().skip(1) {
        assert!(
            input_of(request)
                .previous_summary
                .is_some_and(|p| p.contains("## Early Progress"))
        );
    }
}

#[tokio::test]
async fn disabled_settings_produce_no_plan_whatever_the_reason_pi_6472() {
    let s = session(turns(12, 16_000));
    for reason in [
        CompactionReason::Manual,
        CompactionReason::Threshold,
        CompactionReason::Overflow,
    ] {
        let mut opts = options(40_000, 1_000);
        opts.settings.enabled = false;
        opts.reason = reason;
        let model = numbered();
        let err = run(&s, &model, &opts).await.unwrap_err();
        assert!(
            matches!(err, CompactionError::Disabled),
            "{reason:?}: {err}"
        );
        assert!(model.requests().is_empty());
        let plan = plan_compaction(&s, &opts, 40_000, Dialect::Generic, &ByteEstimate);
        assert!(matches!(plan, Err(CompactionError::Disabled)));
    }
}

#[tokio::test]
async fn the_model_window_wins_over_the_configured_one() {
    let s = session(chat(12, 4_000));
    let mut model = numbered();
    model.window = Some(1_000_000);
    let c = compacted(run(&s, &model, &options(40_000, 4_000)).await.unwrap());
    assert_eq!(
        c.plan.windows, 1,
        "a 1M-token summarizer takes the span in one window"
    );
    let small = numbered();
    let c = compacted(run(&s, &small, &options(40_000, 4_000)).await.unwrap());
    assert!(c.plan.windows > 1);
}

#[tokio::test]
async fn the_plan_reports_what_cleaning_did() {
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let mut messages = turns(3, 5_000);
    messages.push(shell_call("s", &format!("export GITHUB_TOKEN={token}")));
    messages.push(
        memory_protocol::compaction::ConversationMessage::ToolResult {
            tool_call_id: "s".to_owned(),
            tool_name: "exec_command".to_owned(),
            text: String::new(),
            is_error: false,
            useless: true,
        },
    );
    messages.extend(turns(2, 400));
    let s = session(messages);
    let planned = plan_compaction(
        &s,
        &options(200_000, 100),
        200_000,
        Dialect::Generic,
        &ByteEstimate,
    )
    .unwrap();
    let plan = &planned.plan;
    assert_eq!(plan.truncated_tool_results, 3);
    assert_eq!(plan.dropped_useless, 1);
    assert_eq!(
        plan.redactions, 0,
        "the useless call with the secret is dropped before it is read"
    );
    assert_eq!(plan.windows, 1);
    assert_eq!(plan.tokens_after, None);
    assert_eq!(plan.tokens_before, s.context_tokens(&ByteEstimate));
    assert_eq!(plan.first_kept_entry_id.as_deref(), Some("m20"));
    assert!(
        !plan.split_turn,
        "the turn of m20 starts at the pinned latest request"
    );
}

/// A pinet review (#705): read and modified files were dropped after the first compaction.
/// Here the files of the first compaction's span are still listed after two more compactions
/// whose spans touch no file, in the entry's details and in the summary's files block.
#[tokio::test]
async fn files_of_the_first_compaction_survive_the_next_ones_pinet_705() {
    let mut s = session(vec![
        user("make the lexer accept raw strings"),
        call("r1", "read", serde_json::json!({"path": "src/parser.rs"})),
        result("r1", &"fn parse() {}\n".repeat(200)),
        call(
            "e1",
            "edit",
            serde_json::json!({"path": "src/lexer.rs", "old_string": "a", "new_string": "b"}),
        ),
        result("e1", "applied"),
        say(&"the lexer now reads raw strings ".repeat(200)),
    ]);
    let model = numbered();
    for round in 0..3 {
        if round > 0 {
            extend(
                &mut s,
                vec![
                    user(&format!("round {round}: run the tests again")),
                    shell_call(&format!("t{round}"), "cargo test -p lexer"),
                    result(&format!("t{round}"), &"test ok\n".repeat(300)),
                    say(&"all green again ".repeat(300)),
                ],
            );
        }
        let c = compacted(run(&s, &model, &options(200_000, 500)).await.unwrap());
        assert_eq!(
            c.entry.details.modified_files,
            ["src/lexer.rs"],
            "round {round}"
        );
        assert_eq!(
            c.entry.details.read_files,
            ["src/parser.rs"],
            "round {round}"
        );
        for path in ["src/lexer.rs", "src/parser.rs"] {
            assert!(
                c.entry.summary.contains(path),
                "round {round}: {}",
                c.entry.summary
            );
        }
        s.push_compaction(c.entry).unwrap();
    }
}
