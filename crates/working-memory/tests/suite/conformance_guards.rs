//! The reference's guard tests (its conformance list, first file), one test each, with our own
//! inputs. Where we deliberately differ, the test says so and asserts our behaviour. The
//! session-window and message-formatting cases of the same file live in `session`.

use memory_protocol::working_memory::{GuardKind, OpName, WorkingMemorySection::*, limits};
use serde_json::json;
use working_memory::{WorkingMemoryDocument, is_working_memory};

use super::{body, guards_of, headers, items_of, make_wm, merged};

mod parse_sections {
    use super::*;

    #[test]
    fn round_trip() {
        let text = make_wm(&[
            (SessionTitle, "Tide table importer"),
            (FilesAndContext, "- tides/import.py: the CSV reader"),
        ]);
        let document = WorkingMemoryDocument::parse(&text);
        assert_eq!(document.body(SessionTitle), "Tide table importer");
        assert_eq!(
            document.body(FilesAndContext),
            "- tides/import.py: the CSV reader"
        );
        assert_eq!(document.body(OpenIssues), "");
        assert_eq!(document.render(), text);
    }

    #[test]
    fn empty_input() {
        assert!(WorkingMemoryDocument::parse("").is_empty());
        assert!(WorkingMemoryDocument::parse("\n\n  \n").is_empty());
    }

    #[test]
    fn multiline_body() {
        let facts = "- harbour datum is chart datum\n- times are UTC\n\n### Sources\n- NOAA station 8518750";
        let document = WorkingMemoryDocument::parse(&make_wm(&[(KeyFactsAndDecisions, facts)]));
        assert_eq!(document.body(KeyFactsAndDecisions), facts);
    }
}

/// Errors & Corrections, the append-only section.
mod enforce_append_only {
    use super::*;

    const OLD: &str = "- `make deploy` failed: missing AWS_REGION; set it in .env";

    fn old() -> String {
        make_wm(&[(ErrorsAndCorrections, OLD)])
    }

    #[test]
    fn keep_passes_through() {
        let outcome = merged(&old(), json!({"Errors & Corrections": {"op": "KEEP"}}));
        assert_eq!(body(&outcome, ErrorsAndCorrections), OLD);
        assert!(guards_of(&outcome, ErrorsAndCorrections).is_empty());
    }

    #[test]
    fn append_passes_through() {
        let outcome = merged(
            &old(),
            json!({"Errors & Corrections": {"op": "APPEND", "items": ["pytest -x hung on the socket test"]}}),
        );
        assert_eq!(
            body(&outcome, ErrorsAndCorrections),
            format!("{OLD}\n- pytest -x hung on the socket test")
        );
        assert!(guards_of(&outcome, ErrorsAndCorrections).is_empty());
    }

    #[test]
    fn update_demoted_to_append() {
        let outcome = merged(
            &old(),
            json!({"Errors & Corrections": {"op": "UPDATE", "content": format!("{OLD}\n- user: use eu-west-1, not us-east-1")}}),
        );
        assert_eq!(
            body(&outcome, ErrorsAndCorrections),
            format!("{OLD}\n- user: use eu-west-1, not us-east-1")
        );
        assert_eq!(
            guards_of(&outcome, ErrorsAndCorrections),
            [(GuardKind::ErrorsAppendOnly, OpName::Append)]
        );
    }

    #[test]
    fn update_with_all_duplicates_becomes_keep() {
        let outcome = merged(
            &old(),
            json!({"Errors & Corrections": {"op": "UPDATE", "content": OLD}}),
        );
        assert_eq!(body(&outcome, ErrorsAndCorrections), OLD);
        assert_eq!(
            guards_of(&outcome, ErrorsAndCorrections),
            [(GuardKind::ErrorsAppendOnly, OpName::Keep)]
        );
    }

    #[test]
    fn none_op_becomes_keep() {
        let outcome = merged(&old(), json!({"Errors & Corrections": null}));
        assert_eq!(body(&outcome, ErrorsAndCorrections), OLD);
        assert_eq!(
            guards_of(&outcome, ErrorsAndCorrections),
            [(GuardKind::InvalidOp, OpName::Keep)]
        );
    }

    #[test]
    fn unknown_op_becomes_keep() {
        let outcome = merged(&old(), json!({"Errors & Corrections": {"op": "DELETE"}}));
        assert_eq!(body(&outcome, ErrorsAndCorrections), OLD);
        let record = &outcome.guards[outcome
            .guards
            .iter()
            .position(|r| r.section == ErrorsAndCorrections)
            .unwrap()];
        assert_eq!(record.op_in, "DELETE");
        assert_eq!(record.op_out, OpName::Keep);
        assert!(record.reason.contains("unknown op `DELETE`"));
    }
}

mod enforce_files_no_regression {
    use super::*;

    const OLD: &str = "- firmware/main.c: the control loop\n- docs/wiring.md: pinout";

    fn old() -> String {
        make_wm(&[(FilesAndContext, OLD)])
    }

    #[test]
    fn keep_passes_through() {
        let outcome = merged(&old(), json!({"Files & Context": {"op": "KEEP"}}));
        assert_eq!(body(&outcome, FilesAndContext), OLD);
    }

    #[test]
    fn update_preserving_all_paths() {
        let new = "- firmware/main.c: control loop (PID, 1 kHz)\n- docs/wiring.md: pinout, rev B";
        let outcome = merged(
            &old(),
            json!({"Files & Context": {"op": "UPDATE", "content": new}}),
        );
        assert_eq!(body(&outcome, FilesAndContext), new);
        assert!(guards_of(&outcome, FilesAndContext).is_empty());
    }

    #[test]
    fn update_dropping_path_rejected() {
        let outcome = merged(
            &old(),
            json!({"Files & Context": {"op": "UPDATE", "content": "- firmware/main.c: loop"}}),
        );
        assert_eq!(body(&outcome, FilesAndContext), OLD);
        let record = outcome
            .guards
            .iter()
            .find(|r| r.section == FilesAndContext)
            .unwrap();
        assert_eq!(record.guard, GuardKind::FilesNoRegression);
        assert_eq!(record.op_out, OpName::Keep);
        assert!(
            record.reason.contains("docs/wiring.md"),
            "{}",
            record.reason
        );
    }

    #[test]
    fn update_dropping_path_but_adding_new() {
        let outcome = merged(
            &old(),
            json!({"Files & Context": {"op": "UPDATE", "content": "- firmware/main.c\n- firmware/pid/tune.go: gains"}}),
        );
        assert_eq!(
            body(&outcome, FilesAndContext),
            format!("{OLD}\n- firmware/pid/tune.go: gains")
        );
        assert_eq!(
            guards_of(&outcome, FilesAndContext),
            [(GuardKind::FilesNoRegression, OpName::Append)]
        );
    }

    #[test]
    fn append_passes_through() {
        let outcome = merged(
            &old(),
            json!({"Files & Context": {"op": "APPEND", "items": ["Makefile: flash target"]}}),
        );
        assert!(body(&outcome, FilesAndContext).ends_with("\n- Makefile: flash target"));
    }

    #[test]
    fn none_op() {
        let outcome = merged(&old(), json!({"Files & Context": "UPDATE"}));
        assert_eq!(body(&outcome, FilesAndContext), OLD);
        assert_eq!(
            guards_of(&outcome, FilesAndContext),
            [(GuardKind::InvalidOp, OpName::Keep)]
        );
    }
}

mod enforce_title_stability {
    use super::*;

    fn retitle(old: &str, new: &str) -> (String, Vec<(GuardKind, OpName)>) {
        let outcome = merged(
            &make_wm(&[(SessionTitle, old)]),
            json!({"Session Title": {"op": "UPDATE", "content": new}}),
        );
        (
            body(&outcome, SessionTitle),
            guards_of(&outcome, SessionTitle),
        )
    }

    #[test]
    fn keep_passes_through() {
        let outcome = merged(
            &make_wm(&[(SessionTitle, "Greenhouse sensor calibration")]),
            json!({"Session Title": {"op": "KEEP"}}),
        );
        assert_eq!(
            body(&outcome, SessionTitle),
            "Greenhouse sensor calibration"
        );
    }

    #[test]
    fn update_with_overlap_accepted() {
        let (title, guards) = retitle(
            "Greenhouse sensor calibration",
            "Greenhouse sensor drift analysis",
        );
        assert_eq!(title, "Greenhouse sensor drift analysis");
        assert!(guards.is_empty());
    }

    #[test]
    fn update_with_zero_overlap_rejected() {
        let (title, guards) = retitle("Greenhouse sensor calibration", "Invoice PDF layout");
        assert_eq!(title, "Greenhouse sensor calibration");
        assert_eq!(guards, [(GuardKind::TitleStability, OpName::Keep)]);
    }

    #[test]
    fn empty_old_title_accepts_anything() {
        let outcome = merged(
            &make_wm(&[]),
            json!({"Session Title": {"op": "UPDATE", "content": "Invoice PDF layout"}}),
        );
        assert_eq!(body(&outcome, SessionTitle), "Invoice PDF layout");
    }

    #[test]
    fn stopwords_only_old_title_accepts() {
        let (title, guards) = retitle("Working Memory Notes", "Invoice PDF layout");
        assert_eq!(title, "Invoice PDF layout");
        assert!(guards.is_empty());
    }

    #[test]
    fn meaningful_words_no_overlap_rejected() {
        // Short words (`UI`) and filler words (`the`, `session`) never count as overlap.
        let (title, guards) = retitle("The UI session: kiln timer", "The UI session: invoices");
        assert_eq!(title, "The UI session: kiln timer");
        assert_eq!(guards, [(GuardKind::TitleStability, OpName::Keep)]);
    }
}

/// Open Issues. We differ from the reference in one respect: an item restored once and dropped
/// again is restored again (the reference lets it go). Only an item marked resolved may leave,
/// so no unresolved issue is ever lost.
mod enforce_open_issues_resolved {
    use super::*;

    const OLD: &str = "- the kiln overshoots by 12 degrees\n- firmware OTA untested";

    fn update(old: &str, new: &str) -> (String, Vec<(GuardKind, OpName)>) {
        let outcome = merged(
            &make_wm(&[(OpenIssues, old)]),
            json!({"Open Issues": {"op": "UPDATE", "content": new}}),
        );
        (body(&outcome, OpenIssues), guards_of(&outcome, OpenIssues))
    }

    #[test]
    fn update_preserving_all_passes() {
        let new =
            "- [resolved] the kiln overshoots by 12 degrees (PID retuned)\n- firmware OTA untested";
        let (result, guards) = update(OLD, new);
        assert_eq!(result, new);
        assert!(guards.is_empty());
    }

    #[test]
    fn update_silently_dropping_item_restores() {
        let (result, guards) = update(OLD, "- firmware OTA untested\n- [new] fan noise");
        assert_eq!(
            result,
            format!(
                "- firmware OTA untested\n- [new] fan noise\n- {} the kiln overshoots by 12 degrees",
                limits::RESTORED_MARKER
            )
        );
        assert_eq!(guards, [(GuardKind::OpenIssuesRestore, OpName::Update)]);
    }

    #[test]
    fn keep_passes_through() {
        let outcome = merged(
            &make_wm(&[(OpenIssues, OLD)]),
            json!({"Open Issues": {"op": "keep"}}),
        );
        assert_eq!(body(&outcome, OpenIssues), OLD);
    }

    #[test]
    fn already_restored_item_not_restored_again() {
        // Deviation: dropped a second time, it comes back again, with a single marker.
        let old = format!(
            "- {} the kiln overshoots by 12 degrees",
            limits::RESTORED_MARKER
        );
        let (result, guards) = update(&old, "- [new] fan noise");
        assert_eq!(result, format!("- [new] fan noise\n{old}"));
        assert_eq!(result.matches(limits::RESTORED_MARKER).count(), 1);
        assert_eq!(guards, [(GuardKind::OpenIssuesRestore, OpName::Update)]);
        // Marked resolved, it may then go.
        let resolved = format!("- {} the kiln overshoots", limits::RESOLVED_MARKER);
        let (gone, guards) = update(&resolved, "- [new] fan noise");
        assert_eq!(gone, "- [new] fan noise");
        assert!(guards.is_empty());
    }

    #[test]
    fn multi_layer_restored_tags_not_restored() {
        // Nested markers (from older rounds or another implementation) collapse to one.
        let old = "- [restored] [silently dropped, restored] [restored] firmware OTA untested";
        let (result, _) = update(old, "- [new] fan noise");
        assert_eq!(
            result,
            format!(
                "- [new] fan noise\n- {} firmware OTA untested",
                limits::RESTORED_MARKER
            )
        );
    }

    #[test]
    fn fresh_item_still_restored_once() {
        let (first, _) = update(OLD, "- firmware OTA untested");
        let (second, guards) = update(&first, &first);
        assert_eq!(second, first);
        assert!(guards.is_empty());
        assert_eq!(first.matches(limits::RESTORED_MARKER).count(), 1);
    }

    #[test]
    fn an_item_whose_first_word_is_longer_than_the_snippet_is_found() {
        // Found by the 200-round property under another seed: the snippet (40 characters)
        // ended inside the URL, the next letter failed the word-boundary check, and the item,
        // kept as is, was restored in every round, its copies doubling each time.
        let old = "- https://ci.example.com/builds/a1b2c3d4e5f6a7b8c9d0/logs keeps timing out\n- firmware OTA untested";
        let (result, guards) = update(old, old);
        assert_eq!(result, old);
        assert!(guards.is_empty());
    }

    #[test]
    fn a_short_first_word_before_a_long_one_does_not_shrink_the_snippet() {
        // Found by the 200-round property under seed 23: cut back to a whole word, the
        // snippet of this item was "a", which the rewrite holds, so the item was dropped.
        let old = "- a kubernetesclusterautoscalerconfigurationtemplate rollout is stuck\n- firmware OTA untested";
        let (result, guards) = update(old, "- firmware OTA untested\n- [new] a flaky test");
        assert_eq!(
            result,
            format!(
                "- firmware OTA untested\n- [new] a flaky test\n- {} a kubernetesclusterautoscalerconfigurationtemplate rollout is stuck",
                limits::RESTORED_MARKER
            )
        );
        assert_eq!(guards, [(GuardKind::OpenIssuesRestore, OpName::Update)]);
    }

    #[test]
    fn copies_of_a_dropped_item_come_back_as_one() {
        let old = "- firmware OTA untested\n- fan noise\n- Firmware OTA untested.";
        let (result, guards) = update(old, "- fan noise");
        assert_eq!(
            result,
            format!(
                "- fan noise\n- {} firmware OTA untested",
                limits::RESTORED_MARKER
            )
        );
        assert_eq!(guards, [(GuardKind::OpenIssuesRestore, OpName::Update)]);
    }
}

mod merge_sections {
    use super::*;

    fn full() -> String {
        make_wm(&[
            (SessionTitle, "Kiln controller tuning"),
            (CurrentState, "Retuning the PID loop."),
            (TaskAndGoals, "- hold 1,240 C within 5 degrees"),
            (KeyFactsAndDecisions, "- thermocouple is type K"),
            (FilesAndContext, "- firmware/pid.c: the loop"),
            (ErrorsAndCorrections, "- overshoot at ramp end"),
            (OpenIssues, "- fan noise"),
        ])
    }

    #[test]
    fn all_keep() {
        let ops: serde_json::Map<String, serde_json::Value> =
            memory_protocol::working_memory::WorkingMemorySection::ALL
                .iter()
                .map(|s| (s.header().to_owned(), json!({"op": "KEEP"})))
                .collect();
        let outcome = merged(&full(), serde_json::Value::Object(ops));
        assert_eq!(outcome.document.render(), full());
        assert!(outcome.guards.is_empty());
    }

    #[test]
    fn update_current_state() {
        let outcome = merged(
            &full(),
            json!({"Current State": {"op": "UPDATE", "content": "Loop stable; testing the ramp."}}),
        );
        assert_eq!(
            body(&outcome, CurrentState),
            "Loop stable; testing the ramp."
        );
        assert!(!outcome.document.render().contains("Retuning"));
    }

    #[test]
    fn append_to_open_issues() {
        let outcome = merged(
            &full(),
            json!({"Open Issues": {"op": "APPEND", "items": ["door sensor flaky"]}}),
        );
        assert_eq!(
            body(&outcome, OpenIssues),
            "- fan noise\n- door sensor flaky"
        );
    }

    #[test]
    fn missing_section_defaults_to_keep() {
        let outcome = merged(&full(), json!({}));
        assert_eq!(outcome.document.render(), full());
        assert_eq!(outcome.guards.len(), 7, "each missing op is reported");
        assert!(
            outcome
                .guards
                .iter()
                .all(|r| r.guard == GuardKind::InvalidOp)
        );
    }

    #[test]
    fn guard_key_facts_update_accepted_when_no_anchors() {
        let old = make_wm(&[(KeyFactsAndDecisions, "- the fan is loud\n- the lid sticks")]);
        let outcome = merged(
            &old,
            json!({"Key Facts & Decisions": {"op": "UPDATE", "content": "- the fan is loud\n- the lid is fixed"}}),
        );
        assert_eq!(
            body(&outcome, KeyFactsAndDecisions),
            "- the fan is loud\n- the lid is fixed"
        );
        assert!(guards_of(&outcome, KeyFactsAndDecisions).is_empty());
    }

    #[test]
    fn guard_title_drift_blocked() {
        let outcome = merged(
            &full(),
            json!({"Session Title": {"op": "UPDATE", "content": "Weekend grocery list"}}),
        );
        assert_eq!(body(&outcome, SessionTitle), "Kiln controller tuning");
    }

    #[test]
    fn all_seven_sections_present() {
        let outcome = merged(&make_wm(&[]), json!({}));
        let headers = headers(&outcome.document.render());
        let expected: Vec<String> = memory_protocol::working_memory::WorkingMemorySection::ALL
            .iter()
            .map(|s| s.header().to_owned())
            .collect();
        assert_eq!(headers, expected);
    }

    #[test]
    fn none_ops() {
        let outcome = merged(&full(), serde_json::Value::Null);
        assert_eq!(outcome.document.render(), full());
        assert_eq!(headers(&outcome.document.render()).len(), 7);
    }
}

mod recover_ops_from_raw {
    use super::*;
    use memory_protocol::working_memory::SectionOp;
    use working_memory::read_arguments;

    fn op(
        raw: &str,
        section: memory_protocol::working_memory::WorkingMemorySection,
    ) -> Option<SectionOp> {
        read_arguments(raw)?
            .ops
            .get(section)
            .map(|read| read.op.clone())
    }

    #[test]
    fn recover_keep_ops() {
        let raw =
            r#"sections: {"Session Title": {"op": "KEEP"}, "Open Issues": {"op":"KEEP"} <<garbage"#;
        assert_eq!(op(raw, SessionTitle), Some(SectionOp::Keep));
        assert_eq!(op(raw, OpenIssues), Some(SectionOp::Keep));
    }

    #[test]
    fn recover_update_op() {
        let raw =
            r#"{"sections": {"Current State": {"op": "UPDATE", "content": "Kiln holds 1,240 C."} "#;
        assert_eq!(
            op(raw, CurrentState),
            Some(SectionOp::Update {
                content: "Kiln holds 1,240 C.".into()
            })
        );
    }

    #[test]
    fn recover_append_op() {
        let raw = r#"{"sections": {"Files & Context": {"op": "APPEND", "items": ["firmware/pid.c", "docs/ramp.md"]}"#;
        assert_eq!(
            op(raw, FilesAndContext),
            Some(SectionOp::Append {
                items: vec!["firmware/pid.c".into(), "docs/ramp.md".into()]
            })
        );
    }

    #[test]
    fn recover_mixed_ops() {
        let raw = r#"{"sections": {"Session Title": {"op": "KEEP"}, "Current State": {"op": "UPDATE", "content": "ok"}, "Open Issues": {"op": "APPEND", "items": ["x"]},"#;
        let recovery = read_arguments(raw).unwrap();
        assert_eq!(
            recovery.recovered(),
            [SessionTitle, CurrentState, OpenIssues]
        );
    }

    #[test]
    fn empty_input() {
        assert!(read_arguments("").is_none());
        assert!(read_arguments("   \n").is_none());
        assert!(read_arguments("I could not decide.").is_none());
    }

    #[test]
    fn partial_recovery() {
        let raw = r#"{"sections": {"Task & Goals": {"op": "KEEP"}, ### broken ###"#;
        let recovery = read_arguments(raw).unwrap();
        assert_eq!(recovery.recovered(), [TaskAndGoals]);
    }

    #[test]
    fn truncated_update_content() {
        let raw = r#"{"sections": {"Session Title": {"op": "KEEP"}, "Current State": {"op": "UPDATE", "content": "The kiln ramp is"#;
        assert_eq!(op(raw, SessionTitle), Some(SectionOp::Keep));
        assert_eq!(
            op(raw, CurrentState),
            None,
            "a cut-off body is not half-applied"
        );
    }

    #[test]
    fn escaped_content() {
        let raw = r#"{"sections": {"Current State": {"op": "UPDATE", "content": "line one\nsaid \"hold\" \u00e9"}"#;
        assert_eq!(
            op(raw, CurrentState),
            Some(SectionOp::Update {
                content: "line one\nsaid \"hold\" é".into()
            })
        );
    }
}

/// The reference detects its format with a substring test, so `### Session Title` counts. We
/// require a real `## ` header line with a known name.
mod is_wm_detection {
    use super::*;

    #[test]
    fn valid_v2() {
        assert!(is_working_memory(&make_wm(&[(SessionTitle, "x")])));
    }

    #[test]
    fn legacy_format() {
        assert!(!is_working_memory(
            "## Goal\nship it\n\n## Progress\n- done"
        ));
    }

    #[test]
    fn empty() {
        assert!(!is_working_memory(""));
    }

    #[test]
    fn partial_sections() {
        assert!(is_working_memory(
            "# Working Memory\n\n## Open Issues\n- fan"
        ));
    }

    #[test]
    fn wrong_heading_level() {
        assert!(!is_working_memory(
            "### Session Title\nx\n### Open Issues\n- y"
        ));
    }

    #[test]
    fn no_section_headers() {
        assert!(!is_working_memory(
            "Session Title: the kiln\nOpen Issues: none"
        ));
    }
}

mod path_like_tokens {
    use memory_transcript::paths::path_tokens;

    fn tokens(text: &str) -> Vec<String> {
        path_tokens(text).into_iter().map(str::to_owned).collect()
    }

    #[test]
    fn python_file() {
        assert_eq!(tokens("see tools/fit_curve.py"), ["tools/fit_curve.py"]);
    }

    #[test]
    fn typescript_file() {
        assert_eq!(
            tokens("ui/Dial.ts and ui/Dial.tsx"),
            ["ui/Dial.ts", "ui/Dial.tsx"]
        );
    }

    #[test]
    fn deep_path() {
        assert_eq!(
            tokens("module firmware/control/ramp"),
            ["firmware/control/ramp"]
        );
    }

    #[test]
    fn yaml_file() {
        assert_eq!(
            tokens("(.github/workflows/ci.yml)"),
            [".github/workflows/ci.yml"]
        );
    }

    #[test]
    fn no_match_plain_word() {
        assert!(tokens("kiln").is_empty());
    }
}

mod append_non_string_items {
    use super::*;

    #[test]
    fn append_with_mixed_types_keeps_strings() {
        let outcome = merged(
            &make_wm(&[(KeyFactsAndDecisions, "- cone 6 is 1,222 C")]),
            json!({"Key Facts & Decisions": {"op": "APPEND", "items": [77, null, {"a": 1}, "glaze is food safe"]}}),
        );
        assert_eq!(
            body(&outcome, KeyFactsAndDecisions),
            "- cone 6 is 1,222 C\n- glaze is food safe"
        );
        assert!(!outcome.document.render().contains("77"));
        assert_eq!(
            guards_of(&outcome, KeyFactsAndDecisions),
            [(GuardKind::InvalidOp, OpName::Append)]
        );
    }

    #[test]
    fn append_with_empty_items() {
        let outcome = merged(
            &make_wm(&[(KeyFactsAndDecisions, "- cone 6 is 1,222 C")]),
            json!({"Key Facts & Decisions": {"op": "APPEND", "items": []}}),
        );
        assert_eq!(body(&outcome, KeyFactsAndDecisions), "- cone 6 is 1,222 C");
    }
}

mod merge_sections_edge_cases {
    use super::*;

    #[test]
    fn missing_ops_default_to_keep() {
        let old = make_wm(&[
            (CurrentState, "Waiting for the glaze order."),
            (OpenIssues, "- fan"),
        ]);
        let outcome = merged(
            &old,
            json!({"Open Issues": {"op": "APPEND", "items": ["door"]}}),
        );
        assert_eq!(body(&outcome, CurrentState), "Waiting for the glaze order.");
        assert_eq!(body(&outcome, OpenIssues), "- fan\n- door");
    }

    #[test]
    fn unknown_op_defaults_to_keep() {
        let old = make_wm(&[(CurrentState, "Waiting for the glaze order.")]);
        let outcome = merged(
            &old,
            json!({"Current State": {"op": "REPLACE", "content": "x"}}),
        );
        assert_eq!(body(&outcome, CurrentState), "Waiting for the glaze order.");
    }

    #[test]
    fn all_sections_update() {
        let ops: serde_json::Map<String, serde_json::Value> =
            memory_protocol::working_memory::WorkingMemorySection::ALL
                .iter()
                .map(|s| {
                    (
                        s.header().to_owned(),
                        json!({"op": "UPDATE", "content": format!("- new {}", s.header())}),
                    )
                })
                .collect();
        let outcome = merged(&make_wm(&[]), serde_json::Value::Object(ops));
        for section in memory_protocol::working_memory::WorkingMemorySection::ALL {
            assert_eq!(
                items_of(&body(&outcome, section)),
                [format!("new {}", section.header())]
            );
        }
    }
}
