//! One test per problem users of other agents reported, on our own inputs.

use std::collections::HashMap;

use memory_compaction::compaction::{
    CompactionOptions, CompactionOutcome, CompactionSettings, ContextSize, Session, compact,
    should_compact,
};
use memory_protocol::REDACTED_SECRET;
use memory_protocol::compaction::summary_sections::{DONE, IN_PROGRESS, section_items};
use memory_protocol::compaction::{CompactionEntry, ConversationMessage, SessionEntry};
use memory_protocol::{ModelError, ModelRequest, TaskKind};
use memory_sanitize::{ByteEstimate, TokenCounter};
use serde_json::json;

use super::support::{
    Scripted, call, chat, extend, input_of, numbered, result, session, shell_call, user,
};

fn options(keep: u64) -> CompactionOptions {
    CompactionOptions {
        settings: CompactionSettings {
            keep_recent_tokens: keep,
            ..CompactionSettings::default()
        },
        window_tokens: 200_000,
        ..CompactionOptions::default()
    }
}

async fn compact_into(
    session: &mut Session,
    model: &dyn memory_protocol::ModelClient,
    options: &CompactionOptions,
) -> CompactionEntry {
    match compact(session, model, options, &ByteEstimate)
        .await
        .unwrap()
    {
        CompactionOutcome::Compacted(compaction) => {
            session.push_compaction(compaction.entry.clone()).unwrap();
            compaction.entry
        }
        other => panic!("{other:?}"),
    }
}

/// The texts of the user messages a summarizer received in history or turn-prefix windows.
fn summarized_requests(requests: &[ModelRequest]) -> Vec<String> {
    requests
        .iter()
        .filter(|r| r.task != TaskKind::ShortSummary)
        .flat_map(|r| input_of(r).messages)
        .filter_map(|m| match m {
            ConversationMessage::User { text } => Some(text),
            _ => None,
        })
        .collect()
}

/// pi #2608: the messages one compaction kept were neither summarized nor kept by the next.
/// Here the second compaction's span starts at the first one's first kept entry.
#[tokio::test]
async fn messages_kept_by_one_compaction_are_summarized_or_kept_by_the_next_pi_2608() {
    let mut s = session(chat(8, 300));
    let first_model = numbered();
    let first = compact_into(&mut s, &first_model, &options(1_000)).await;
    let kept_by_first: Vec<String> = s.live().messages.iter().map(|e| e.id.clone()).collect();
    assert_eq!(
        first.first_kept_entry_id.as_deref(),
        Some(kept_by_first[0].as_str())
    );
    assert!(kept_by_first.len() >= 4);

    extend(&mut s, chat(8, 300));
    let second_model = numbered();
    compact_into(&mut s, &second_model, &options(1_000)).await;
    let summarized = summarized_requests(&second_model.requests());
    let live_after: Vec<String> = s.live().messages.iter().map(|e| e.id.clone()).collect();
    for id in &kept_by_first {
        let entry = s
            .entries()
            .iter()
            .find_map(|e| match e {
                SessionEntry::Message(m) if &m.id == id => Some(m),
                _ => None,
            })
            .unwrap();
        let was_summarized = match &entry.message {
            ConversationMessage::User { text } => summarized.contains(text),
            _ => true,
        };
        assert!(
            was_summarized || live_after.contains(id),
            "{id} was kept by the first compaction and lost by the second"
        );
    }
    // The first compaction's summary is carried into the second as the previous summary.
    assert!(
        second_model.requests()[0]
            .input
            .contains("<previous-summary>\n## Goal\n- summary 1")
    );
}

/// pi #9945: file lists were re-appended at every compaction until one summary held 528 K
/// characters, and compactions ran 13 times in 15 minutes. Here each round touches new files:
/// the files block appears once and lists at most 20, and the trigger does not fire again
/// until the context has grown.
#[tokio::test]
async fn file_lists_do_not_grow_and_compaction_does_not_thrash_pi_9945() {
    let mut s = session(vec![user("start")]);
    let mut sizes = Vec::new();
    for round in 0..13 {
        let mut messages = vec![user(&format!("round {round}: edit the next batch"))];
        for f in 0..15 {
            let id = format!("r{round}f{f}");
            messages.push(call(
                &id,
                "edit",
                json!({"path": format!("src/batch{round}/file{f}.rs")}),
            ));
            messages.push(result(&id, "ok"));
        }
        messages.extend(chat(3, 300));
        extend(&mut s, messages);
        let model = numbered();
        let entry = compact_into(&mut s, &model, &options(800)).await;
        assert_eq!(
            entry.summary.matches("<files>").count(),
            1,
            "{}",
            entry.summary
        );
        let listed = entry.details.read_files.len() + entry.details.modified_files.len();
        assert!(listed <= 20);
        assert!(entry.details.elided_files >= ((round as u64 + 1) * 15).saturating_sub(20));
        sizes.push(entry.summary.len());
        for request in model.requests() {
            assert!(
                !request.input.contains("<files>") || request.task == TaskKind::ShortSummary,
                "a files block was sent back to the summarizer"
            );
        }
    }
    let largest = sizes.iter().max().unwrap();
    assert!(*largest < 2_000, "{sizes:?}");

    // A compaction that left the context above the re-arm band does not run again at the
    // next step: the context must grow first.
    let settings = CompactionSettings::default();
    let after = 165_000;
    let mut compactions = 0;
    let mut context = after;
    for _step in 0..30 {
        context += 500;
        if should_compact(
            200_000,
            &ContextSize {
                provider_tokens: None,
                estimated_tokens: context,
                tokens_after_last_compaction: Some(after),
            },
            &settings,
        ) {
            compactions += 1;
        }
    }
    assert_eq!(compactions, 0, "no compaction for 15k tokens of growth");
}

/// oh-my-pi #275, #9921: a failed compaction still applied a stale summary, and entries were
/// written without `tokens_after`. Here a failure returns an error and the session is
/// untouched; every entry carries `tokens_after`, the size of the summary plus what is kept.
#[tokio::test]
async fn failures_apply_nothing_and_every_entry_has_tokens_after_oh_my_pi_275_9921() {
    let mut s = session(chat(8, 300));
    let good = numbered();
    let entry = compact_into(&mut s, &good, &options(1_000)).await;
    let kept: u64 = s
        .live()
        .messages
        .iter()
        .map(|e| memory_compaction::compaction::message_tokens(&e.message, &ByteEstimate))
        .sum();
    assert_eq!(
        entry.tokens_after,
        ByteEstimate.count(&entry.summary) as u64 + kept
    );
    assert!(entry.tokens_after < entry.tokens_before);
    assert_eq!(entry.tokens_after, s.context_tokens(&ByteEstimate));

    extend(&mut s, chat(8, 300));
    let before = s.to_jsonl().unwrap();
    let failing = Scripted::new(|_, request: &ModelRequest| {
        if request.task == TaskKind::ShortSummary {
            Err(ModelError::Transient {
                message: "timeout".to_owned(),
            })
        } else {
            Ok("## Goal\n- a summary that must not be applied".to_owned())
        }
    });
    let err = compact(&s, &failing, &options(1_000), &ByteEstimate)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("short summary window 1 of 1 failed"),
        "{err}"
    );
    assert_eq!(s.to_jsonl().unwrap(), before);
    assert_eq!(s.latest_compaction().unwrap().1, &entry);

    // An entry without tokens_after is not a valid session line.
    let mut value = serde_json::to_value(SessionEntry::Compaction(entry)).unwrap();
    value.as_object_mut().unwrap().remove("tokens_after");
    assert!(Session::from_jsonl(&value.to_string()).is_err());
}

/// codex #38931: finished work came back as open work after compaction. Here a summarizer that
/// drops Done items and lists one as In Progress again is corrected.
#[tokio::test]
async fn finished_work_stays_done_through_an_update_codex_38931() {
    let mut s = session(chat(6, 300));
    let first = Scripted::new(|_, _| {
        Ok("## Goal\n- ship the parser\n\n## Progress\n### Done\n- [x] Fixed the empty-input panic in `src/table.rs`.\n- [x] Added `tests/empty.rs`.\n### In Progress\n- [ ] Wire the CLI flag.".to_owned())
    });
    compact_into(&mut s, &first, &options(800)).await;
    extend(&mut s, chat(6, 300));
    let forgetful = Scripted::new(|_, request: &ModelRequest| {
        if request.task == TaskKind::ShortSummary {
            return Ok("I fixed the parser.".to_owned());
        }
        Ok("## Goal\n- ship the parser\n\n## Progress\n### Done\n- [x] Wired the CLI flag.\n### In Progress\n- [ ] Fixed the empty-input panic in `src/table.rs`\n- [ ] Write the changelog.\n\n## Next Steps\n1. Added `tests/empty.rs`.".to_owned())
    });
    let entry = compact_into(&mut s, &forgetful, &options(800)).await;
    let done = section_items(&entry.summary, DONE).join("\n");
    assert!(
        done.contains("Fixed the empty-input panic in `src/table.rs`."),
        "{}",
        entry.summary
    );
    assert!(
        done.contains("Added `tests/empty.rs`."),
        "{}",
        entry.summary
    );
    assert!(done.contains("Wired the CLI flag."), "{}", entry.summary);
    let open = section_items(&entry.summary, IN_PROGRESS).join("\n");
    assert!(!open.contains("empty-input panic"), "{}", entry.summary);
    assert!(open.contains("Write the changelog"), "{}", entry.summary);
    assert!(
        !entry.summary.contains("1. Added `tests/empty.rs`"),
        "{}",
        entry.summary
    );
}

/// hermes-agent #12734, ironclaw #6853: secrets from tool output and from the previous summary
/// leaked into summaries, and a redaction hit treated as fatal jammed compaction. Here nothing
/// secret reaches a request or the entry, and compaction completes.
#[tokio::test]
async fn secrets_never_reach_the_summarizer_or_the_entry_hermes_12734_ironclaw_6853() {
    const KEY: &str = "sk-proj-EXAMPLEonlyNotARealKey0123456789abcdefghijklmnopqrstuvwxyzAB";
    const TOKEN: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let mut messages = vec![user(&format!("deploy with OPENAI_API_KEY={KEY}"))];
    messages.push(shell_call("c1", "env | grep TOKEN"));
    messages.push(result("c1", &format!("GITHUB_TOKEN={TOKEN}")));
    messages.extend(chat(4, 300));
    let mut s = session(messages);
    // A previous summary that itself holds a secret (written by a careless engine).
    let mut previous = CompactionEntry {
        id: "c0".to_owned(),
        summary: format!("## Goal\n- deploy\n\n## Critical Context\n- token {TOKEN}"),
        short_summary: None,
        first_kept_entry_id: Some("m1".to_owned()),
        pinned_entry_id: None,
        tokens_before: 0,
        tokens_after: 0,
        messages_summarized: 0,
        engine: "careless".to_owned(),
        details: Default::default(),
    };
    previous.tokens_after = 10;
    s.push_compaction(previous).unwrap();
    extend(&mut s, chat(2, 300));
    // The summarizer echoes a secret back; the answer is redacted before it is stored.
    let model = Scripted::new(|_, request: &ModelRequest| {
        assert!(!request.input.contains(KEY) && !request.input.contains(TOKEN));
        assert!(!request.structured_input.to_string().contains(TOKEN));
        Ok(format!(
            "## Goal\n- deploy\n\n## Critical Context\n- use {KEY}"
        ))
    });
    let mut opts = options(800);
    opts.focus = Some(format!("keep GITHUB_TOKEN={TOKEN} handy"));
    let outcome = compact(&s, &model, &opts, &ByteEstimate).await.unwrap();
    let CompactionOutcome::Compacted(compaction) = outcome else {
        panic!("expected a compaction");
    };
    let entry = &compaction.entry;
    let stored = serde_json::to_string(entry).unwrap();
    assert!(!stored.contains(KEY) && !stored.contains(TOKEN), "{stored}");
    assert!(entry.summary.contains(REDACTED_SECRET));
    assert!(
        compaction.plan.redactions >= 5,
        "{}",
        compaction.plan.redactions
    );
}

/// claude-code #63162: text pasted just before compaction was lost. The latest user message is
/// kept verbatim even when the cut falls after it, and stays in context after the compaction.
#[tokio::test]
async fn text_pasted_just_before_compaction_is_kept_verbatim_claude_code_63162() {
    let pasted = format!(
        "Here is the full log:\n{}",
        "2026-01-01 ERROR disk full\n".repeat(400)
    );
    let mut messages = chat(4, 300);
    messages.push(user(&pasted));
    for i in 0..12 {
        messages.push(shell_call(&format!("c{i}"), "df -h"));
        messages.push(result(&format!("c{i}"), &"x".repeat(1_600)));
    }
    let mut s = session(messages);
    let model = numbered();
    let entry = compact_into(&mut s, &model, &options(1_500)).await;
    assert_eq!(entry.pinned_entry_id.as_deref(), Some("m9"));
    let live = s.live();
    assert_eq!(live.messages[0].id, "m9");
    assert_eq!(
        live.messages[0].message,
        ConversationMessage::User {
            text: pasted.clone()
        }
    );
    let by_id: HashMap<&str, usize> = live
        .messages
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.as_str(), i))
        .collect();
    assert!(by_id.contains_key(entry.first_kept_entry_id.as_deref().unwrap()));
    // The paste was not sent whole to be summarized away (only the short summary, written
    // for display from the kept messages, sees it whole).
    for request in model.requests() {
        if request.task != TaskKind::ShortSummary {
            assert!(!request.input.contains(&pasted));
        }
    }
}

/// `--context` and hosts' notes: additional context reaches every summarizer request, in its
/// template slot and in the structured input, redacted like the rest.
#[tokio::test]
async fn additional_context_reaches_every_request_redacted() {
    const TOKEN: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let mut s = session(chat(6, 300));
    let model = Scripted::new(|_, request: &ModelRequest| {
        assert!(
            request.input.contains("<additional-context>"),
            "{}",
            request.input
        );
        assert!(
            request.input.contains("plan mode is on"),
            "{}",
            request.input
        );
        assert!(!request.input.contains(TOKEN));
        let input = input_of(request);
        assert_eq!(input.additional_context.len(), 1, "{input:?}");
        assert!(input.additional_context[0].contains("plan mode is on"));
        assert!(!input.additional_context[0].contains(TOKEN));
        Ok("## Goal\n- ship".to_owned())
    });
    let mut opts = options(800);
    opts.additional_context = vec![
        format!("plan mode is on; GITHUB_TOKEN={TOKEN}"),
        "   ".to_owned(),
    ];
    let entry = compact_into(&mut s, &model, &opts).await;
    assert!(entry.summary.contains("ship"));
}
