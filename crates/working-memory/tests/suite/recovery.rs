//! Recovery of malformed tool output: every case of the reference's table, including those it
//! does not recover and we do.

use memory_protocol::working_memory::{SectionOp, WorkingMemorySection, WorkingMemorySection::*};
use proptest::prelude::*;
use serde_json::json;
use working_memory::{
    MergeOptions, RecoveryPath, merge_text, read_arguments, read_arguments_value,
};

use super::make_wm;

fn op(raw: &str, section: WorkingMemorySection) -> Option<SectionOp> {
    read_arguments(raw)?
        .ops
        .get(section)
        .map(|read| read.op.clone())
}

fn update(content: &str) -> Option<SectionOp> {
    Some(SectionOp::Update {
        content: content.to_owned(),
    })
}

#[test]
fn exact_arguments_read_as_exact() {
    let raw = r#"{"sections": {"Session Title": {"op": "KEEP"}, "Current State": {"op": "UPDATE", "content": "x"}}}"#;
    let recovery = read_arguments(raw).unwrap();
    assert_eq!(recovery.path, RecoveryPath::Exact);
    assert_eq!(recovery.recovered(), [SessionTitle, CurrentState]);
}

#[test]
fn wrapped_arguments_are_unwrapped() {
    let inner = r#"{"sections": {"Open Issues": {"op": "APPEND", "items": ["flaky"]}}}"#;
    for wrapped in [
        json!({"raw": inner}).to_string(),
        json!({"name": "update_working_memory", "arguments": inner}).to_string(),
        json!(inner).to_string(),
        format!("Here you go:\n```json\n{inner}\n```"),
        format!("Sure! {inner} Let me know."),
        // The wrapper forgotten: the sections at the top level.
        r#"{"Open Issues": {"op": "APPEND", "items": ["flaky"]}}"#.to_owned(),
    ] {
        let recovery = read_arguments(&wrapped).unwrap_or_else(|| panic!("{wrapped}"));
        assert_eq!(recovery.path, RecoveryPath::Unwrapped, "{wrapped}");
        assert_eq!(
            recovery.ops.get(OpenIssues).map(|r| r.op.clone()),
            Some(SectionOp::Append {
                items: vec!["flaky".into()]
            }),
            "{wrapped}"
        );
    }
    let value = json!({"function": {"arguments": inner}});
    assert!(read_arguments_value(&value).is_some());
}

#[test]
fn unescaped_line_breaks_and_escapes_are_decoded() {
    // The reference leaves `\u00e9` as six characters once a raw line break is present.
    let raw = "{\"sections\": {\"Current State\": {\"op\": \"UPDATE\", \"content\": \"caf\\u00e9 open\nline two\"}}}";
    assert_eq!(op(raw, CurrentState), update("café open\nline two"));
}

#[test]
fn a_missing_closing_brace_before_the_next_section() {
    let raw = r#"{"sections": {"Current State": {"op": "UPDATE", "content": "ready", "Task & Goals": {"op": "KEEP"}}}"#;
    assert_eq!(op(raw, CurrentState), update("ready"));
    assert_eq!(op(raw, TaskAndGoals), Some(SectionOp::Keep));
}

#[test]
fn non_text_items_between_strings_split_a_repaired_list() {
    // Truncated, so the tolerant scan reads it; `, 42,` after a quote ends the string there.
    let raw = r#"{"sections": {"Files & Context": {"op": "APPEND", "items": ["src/a.rs", 42, "src/b.rs", true, "he said "no", 5 times", null, "src/c"#;
    let read = read_arguments(raw)
        .unwrap()
        .ops
        .get(FilesAndContext)
        .cloned()
        .unwrap();
    assert_eq!(
        read.op,
        SectionOp::Append {
            items: vec![
                "src/a.rs".into(),
                "src/b.rs".into(),
                "he said \"no\", 5 times".into()
            ]
        }
    );
    assert_eq!(
        read.problem.as_deref(),
        Some("3 item(s) that were not text dropped")
    );
}

#[test]
fn a_truncated_append_keeps_its_complete_items() {
    let raw = r#"{"sections": {"Files & Context": {"op": "APPEND", "items": ["src/a.rs", "src/b.rs", "src/c"#;
    assert_eq!(
        op(raw, FilesAndContext),
        Some(SectionOp::Append {
            items: vec!["src/a.rs".into(), "src/b.rs".into()]
        })
    );
}

#[test]
fn a_truncated_update_is_not_recovered() {
    let raw = r#"{"sections": {"Current State": {"op": "UPDATE", "content": "half a sent"#;
    assert!(read_arguments(raw).is_none());
}

#[test]
fn unescaped_quotes_inside_content() {
    // The reference gives up on this section; a quote that JSON could not continue after is
    // part of the text.
    let raw = r#"{"sections": {"Current State": {"op": "UPDATE", "content": "the user said "ship it" today"}, "Open Issues": {"op": "KEEP"}}}"#;
    assert_eq!(
        op(raw, CurrentState),
        update("the user said \"ship it\" today")
    );
    assert_eq!(op(raw, OpenIssues), Some(SectionOp::Keep));
}

#[test]
fn a_bracket_inside_an_item() {
    // The reference cuts the list at the first `]` and recovers no item.
    let raw = r#"{"sections": {"Key Facts & Decisions": {"op": "APPEND", "items": ["see [1] ref", "x[0] is the seed"]}"#;
    assert_eq!(
        op(raw, KeyFactsAndDecisions),
        Some(SectionOp::Append {
            items: vec!["see [1] ref".into(), "x[0] is the seed".into()]
        })
    );
}

#[test]
fn curly_and_single_quotes_as_delimiters() {
    let curly = "{\u{201C}sections\u{201D}: {\u{201C}Session Title\u{201D}: {\u{201C}op\u{201D}: \u{201C}UPDATE\u{201D}, \u{201C}content\u{201D}: \u{201C}Billing queue migration\u{201D}}}}";
    assert_eq!(op(curly, SessionTitle), update("Billing queue migration"));
    let single =
        "{'sections': {'Open Issues': {'op': 'APPEND', 'items': ['don't retry forever']}}}";
    assert_eq!(
        op(single, OpenIssues),
        Some(SectionOp::Append {
            items: vec!["don't retry forever".into()]
        })
    );
}

#[test]
fn keys_in_any_order() {
    let raw = r#"{"sections": {"Current State": {"content": "ready", "op": "update"} oops"#;
    assert_eq!(op(raw, CurrentState), update("ready"));
}

#[test]
fn arguments_encoded_twice_and_cut_short() {
    let inner = r#"{"sections": {"Session Title": {"op": "KEEP"}, "Current State": {"op": "UPDATE", "content": "a \"b\""}, "Open"#;
    let raw = format!("{{\"raw\": {}", serde_json::to_string(inner).unwrap());
    let raw = &raw[..raw.len() - 3];
    assert_eq!(op(raw, SessionTitle), Some(SectionOp::Keep));
    assert_eq!(op(raw, CurrentState), update("a \"b\""));
}

#[test]
fn recovered_operations_go_through_the_guards() {
    // A recovered UPDATE of Errors & Corrections is demoted like any other.
    let old = make_wm(&[(
        ErrorsAndCorrections,
        "- `npm ci` failed: lockfile out of date",
    )]);
    let raw = r#"garbage {"Errors & Corrections": {"op": "UPDATE", "content": "- all good now"} trailing"#;
    let recovery = read_arguments(raw).unwrap();
    let outcome = merge_text(&old, &recovery.ops, &MergeOptions::default());
    assert_eq!(
        outcome.document.body(ErrorsAndCorrections),
        "- `npm ci` failed: lockfile out of date\n- all good now"
    );
}

/// Arbitrary damage to a valid argument text: cut, characters swapped, quotes curled.
fn damaged() -> impl Strategy<Value = String> {
    let valid = json!({"sections": {
        "Session Title": {"op": "KEEP"},
        "Current State": {"op": "UPDATE", "content": "line \"one\"\nline two"},
        "Key Facts & Decisions": {"op": "APPEND", "items": ["a", "b [c]", "d\\e"]},
        "Open Issues": {"op": "UPDATE", "content": "- x"},
    }})
    .to_string();
    let len = valid.len();
    (
        0..=len,
        proptest::collection::vec((0..len, any::<char>()), 0..6),
        any::<bool>(),
    )
        .prop_map(move |(cut, swaps, curl)| {
            let mut chars: Vec<char> = valid.chars().collect();
            let count = chars.len();
            for (at, ch) in swaps {
                chars[at % count] = ch;
            }
            let mut text: String = chars.into_iter().take(cut).collect();
            if curl {
                text = text.replacen('"', "\u{201C}", 3);
            }
            text
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..ProptestConfig::default() })]

    #[test]
    fn recovery_never_panics_on_any_text(text in "\\PC{0,300}") {
        let _ = read_arguments(&text);
    }

    #[test]
    fn recovery_never_panics_on_damaged_arguments(text in damaged()) {
        if let Some(recovery) = read_arguments(&text) {
            prop_assert!(!recovery.recovered().is_empty());
            let outcome = merge_text("", &recovery.ops, &MergeOptions::default());
            prop_assert_eq!(outcome.document.render().matches("\n## ").count(), 7);
        }
    }
}

/// Issue 27: `{"sections": {}}` or `null` from a model was an unreadable answer (the update
/// fell back to re-creating the document). It now keeps every section, each with a record
/// saying it had no operation.
#[test]
fn no_operation_at_all_keeps_every_section_with_a_warning() {
    use working_memory::{MergeOptions, merge_text};
    let old = super::make_wm(&[
        (
            memory_protocol::working_memory::WorkingMemorySection::SessionTitle,
            "Tides",
        ),
        (
            memory_protocol::working_memory::WorkingMemorySection::OpenIssues,
            "- April format",
        ),
    ]);
    for raw in ["null", r#"{"sections": {}}"#, r#"{"sections": null}"#] {
        let recovery = read_arguments(raw).unwrap();
        assert_eq!(recovery.path, RecoveryPath::Empty, "{raw}");
        let outcome = merge_text(&old, &recovery.ops, &MergeOptions::default());
        assert_eq!(outcome.document.render(), old);
        assert_eq!(outcome.guards.len(), 7, "one warning per section");
    }
}
