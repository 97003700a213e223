//! The reference's growth and v2 tests (its conformance list, second and third files), one
//! test each, with our own inputs. Two deliberate differences, asserted here: Key Facts &
//! Decisions gets its sentinel when it reaches twice its threshold (50 bullets), not after, so
//! it never holds more than 50 facts plus the sentinel; and Errors & Corrections is bounded,
//! moving its oldest entries to the archive past 50, where the reference lets it grow forever.

use memory_prompts::UntrustedText;
use memory_prompts::working_memory::{SectionLimits, UpdateContext, update};
use memory_protocol::working_memory::{GuardKind, OpName, WorkingMemorySection::*, limits};
use serde_json::json;
use working_memory::{WorkingMemoryDocument, section_size_warnings};

use super::{body, guards_of, items_of, make_wm, merged, numbered};

const SURNAMES: [&str; 41] = [
    "Alvarez",
    "Baptiste",
    "Castellano",
    "Dubois",
    "Eriksen",
    "Fontaine",
    "Gallagher",
    "Hoffmann",
    "Ibarra",
    "Jansen",
    "Kowalski",
    "Lindqvist",
    "Moreau",
    "Novak",
    "Okafor",
    "Petrov",
    "Quinlan",
    "Rossi",
    "Sandoval",
    "Takahashi",
    "Ulrich",
    "Valente",
    "Whitfield",
    "Xavier",
    "Yilmaz",
    "Zimmer",
    "Abernathy",
    "Brennan",
    "Cardenas",
    "Delacroix",
    "Esposito",
    "Fairbanks",
    "Gutierrez",
    "Haddad",
    "Iversen",
    "Jovanovic",
    "Kessler",
    "Lombardi",
    "Marchetti",
    "Nakamura",
    "Oyelaran",
];

/// Forty-one facts of a house renovation, each with a name, a date and an amount.
fn rich_facts() -> Vec<String> {
    SURNAMES
        .iter()
        .enumerate()
        .map(|(i, name)| {
            format!(
                "{name} inspected room {} on 2025-03-{:02} and quoted ${},{:03}",
                i + 1,
                i % 28 + 1,
                i + 1,
                (i * 37) % 1000
            )
        })
        .collect()
}

fn rich_body() -> String {
    rich_facts()
        .iter()
        .map(|fact| format!("- {fact}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The 41 facts consolidated into `groups` bullets that keep every name, date and amount.
fn consolidated(groups: usize) -> String {
    let facts = rich_facts();
    let mut chunks: Vec<Vec<String>> = vec![Vec::new(); groups];
    for (i, fact) in facts.iter().enumerate() {
        chunks[i * groups / facts.len()].push(fact.clone());
    }
    chunks
        .iter()
        .map(|chunk| {
            let joined: Vec<String> = chunk
                .iter()
                .map(|fact| {
                    fact.replace(" inspected room ", " room ")
                        .replace(" and quoted ", " ")
                })
                .collect();
            format!("- Inspections: {}", joined.join("; "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn append(old: &str, section: &str, items: &[&str]) -> super::MergeOutcome {
    merged(old, json!({ section: {"op": "APPEND", "items": items} }))
}

mod monotonic_growth {
    use super::*;

    #[test]
    fn key_facts_section_grows_monotonically_under_repeated_appends() {
        let mut text = make_wm(&[(KeyFactsAndDecisions, "- fact 1")]);
        let mut previous = 1;
        for round in 2..=51 {
            let outcome = append(&text, "Key Facts & Decisions", &[&format!("fact {round}")]);
            text = outcome.document.render();
            let count = items_of(&body(&outcome, KeyFactsAndDecisions)).len();
            assert!(count >= previous, "round {round}: {count} < {previous}");
            previous = count;
        }
        let items = items_of(WorkingMemoryDocument::parse(&text).body(KeyFactsAndDecisions));
        assert_eq!(items.len(), 51);
        assert_eq!(items[0], "fact 1");
        assert_eq!(items[49], "fact 50");
        // Deviation: the 51st bullet is the sentinel, not a 51st fact.
        assert_eq!(items[50], limits::CONSOLIDATION_SENTINEL);
    }

    #[test]
    fn errors_and_corrections_section_grows_with_each_new_error() {
        let mut text = make_wm(&[(ErrorsAndCorrections, "- error 1")]);
        for round in 2..=41 {
            text = append(&text, "Errors & Corrections", &[&format!("error {round}")])
                .document
                .render();
        }
        let items = items_of(WorkingMemoryDocument::parse(&text).body(ErrorsAndCorrections));
        assert_eq!(items.len(), 41);
        assert_eq!(items[40], "error 41");
    }

    #[test]
    fn files_and_context_section_can_keep_growing_with_unique_paths() {
        let mut text = make_wm(&[(FilesAndContext, "- src/mod_1.rs")]);
        for round in 2..=31 {
            text = append(&text, "Files & Context", &[&format!("src/mod_{round}.rs")])
                .document
                .render();
        }
        let items = items_of(WorkingMemoryDocument::parse(&text).body(FilesAndContext));
        assert_eq!(items.len(), 31);
    }
}

mod layer_one {
    use super::*;

    #[test]
    fn key_facts_consolidation_rejected_when_trivially_small() {
        let old = make_wm(&[(KeyFactsAndDecisions, &rich_body())]);
        let outcome = merged(
            &old,
            json!({"Key Facts & Decisions": {"op": "UPDATE", "content": "- the renovation is on track"}}),
        );
        let items = items_of(&body(&outcome, KeyFactsAndDecisions));
        assert_eq!(
            items.len(),
            42,
            "1 of 41 is below 15%: refused, its new bullet salvaged"
        );
        assert_eq!(items[41], "the renovation is on track");
        assert_eq!(
            guards_of(&outcome, KeyFactsAndDecisions),
            [(GuardKind::KeyFactsConsolidation, OpName::Append)]
        );
    }
}

mod layer_two {
    use super::*;

    #[test]
    fn key_facts_consolidation_accepted_when_anchors_preserved() {
        let old = make_wm(&[(KeyFactsAndDecisions, &rich_body())]);
        let new = consolidated(11);
        let outcome = merged(
            &old,
            json!({"Key Facts & Decisions": {"op": "UPDATE", "content": new}}),
        );
        let result = body(&outcome, KeyFactsAndDecisions);
        assert_eq!(result, new);
        assert!(items_of(&result).len() <= 15);
        for name in SURNAMES {
            assert!(result.contains(name), "{name}");
        }
    }

    #[test]
    fn key_facts_consolidation_rejected_when_anchors_missing() {
        let old = make_wm(&[(KeyFactsAndDecisions, &rich_body())]);
        let vague: Vec<String> = (1..=8)
            .map(|i| format!("- several rooms were looked at ({i})"))
            .collect();
        let outcome = merged(
            &old,
            json!({"Key Facts & Decisions": {"op": "UPDATE", "content": vague.join("\n")}}),
        );
        let result = body(&outcome, KeyFactsAndDecisions);
        assert!(items_of(&result).len() >= 41);
        assert!(result.starts_with(&rich_body()));
        let record = outcome
            .guards
            .iter()
            .find(|r| r.section == KeyFactsAndDecisions)
            .unwrap();
        assert!(
            record.reason.contains("names, dates and amounts"),
            "{}",
            record.reason
        );
    }

    #[test]
    fn key_facts_consolidation_accepted_at_low_volume_with_anchors() {
        let old = make_wm(&[(KeyFactsAndDecisions, &rich_body())]);
        let new = consolidated(10);
        assert_eq!(items_of(&new).len(), 10);
        let outcome = merged(
            &old,
            json!({"Key Facts & Decisions": {"op": "UPDATE", "content": new}}),
        );
        let result = body(&outcome, KeyFactsAndDecisions);
        assert_eq!(result, new);
        assert!(result.contains("2025-03-01") && result.contains("2025-03-13"));
    }
}

mod salvage {
    use super::*;

    #[test]
    fn key_facts_rejected_consolidation_salvages_new_facts() {
        let old = make_wm(&[(KeyFactsAndDecisions, &rich_body())]);
        let outcome = merged(
            &old,
            json!({"Key Facts & Decisions": {"op": "UPDATE", "content":
                "- many inspections happened\n- the budget is tight\n- adopted a puppy named Max on 2025-05-04"}}),
        );
        let result = body(&outcome, KeyFactsAndDecisions);
        assert!(result.contains("adopted a puppy named Max on 2025-05-04"));
        assert!(result.starts_with(&rich_body()), "the old facts stay");
        assert_eq!(items_of(&result).len(), 44);
    }
}

mod reminders {
    use super::*;

    fn warnings_for(text: &str) -> Vec<memory_protocol::working_memory::SectionSizeWarning> {
        section_size_warnings(&WorkingMemoryDocument::parse(text))
    }

    #[test]
    fn build_wm_section_reminders_triggers_above_threshold() {
        let warnings = warnings_for(&make_wm(&[(KeyFactsAndDecisions, &numbered("fact", 34))]));
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].section, KeyFactsAndDecisions);
        assert_eq!(warnings[0].bullets, 34);
    }

    #[test]
    fn build_wm_section_reminders_skips_append_only_sections() {
        // Deviation: Errors & Corrections is warned too, because a warned Errors section may be
        // consolidated (keeping every entry's anchors) instead of hitting its bound.
        let warnings = warnings_for(&make_wm(&[(ErrorsAndCorrections, &numbered("error", 30))]));
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].section, ErrorsAndCorrections);
    }

    #[test]
    fn build_wm_section_reminders_silent_below_threshold() {
        let text = make_wm(&[
            (KeyFactsAndDecisions, &numbered("fact", 25)),
            (OpenIssues, &numbered("issue", 3)),
        ]);
        assert!(warnings_for(&text).is_empty());
    }

    #[test]
    fn wm_section_reminders_consistent_with_prompt_template() {
        let text = make_wm(&[(KeyFactsAndDecisions, &numbered("fact", 41))]);
        let prompt = update(&UpdateContext {
            working_memory: UntrustedText::new(text.clone()),
            conversation: UntrustedText::new("[User]: more"),
            warnings: warnings_for(&text),
            limits: SectionLimits::default(),
        })
        .unwrap();
        let start = prompt.find("<section_size_warnings>\n").unwrap();
        let end = prompt.find("\n</section_size_warnings>").unwrap();
        let block = &prompt[start..end];
        assert!(block.contains("\"Key Facts & Decisions\" has 41 bullets"));
        assert!(block.contains("Consolidate it with UPDATE"));
        assert!(block.contains("limit of 25 bullets or 1500 tokens"));
    }
}

mod aggregate {
    use super::*;

    #[test]
    fn working_memory_document_size_keeps_increasing_across_rounds() {
        let mut text = make_wm(&[
            (KeyFactsAndDecisions, "- fact 1"),
            (FilesAndContext, "- src/part_1.rs"),
            (ErrorsAndCorrections, "- error 1"),
        ]);
        let mut moved_errors = Vec::new();
        for round in 2..=61 {
            let outcome = merged(
                &text,
                json!({
                    "Key Facts & Decisions": {"op": "APPEND", "items": [format!("fact {round}")]},
                    "Files & Context": {"op": "APPEND", "items": [format!("src/part_{round}.rs")]},
                    "Errors & Corrections": {"op": "APPEND", "items": [format!("error {round}")]},
                }),
            );
            for moved in &outcome.moved {
                assert_eq!(moved.section, ErrorsAndCorrections);
                moved_errors.extend(moved.entries.clone());
            }
            text = outcome.document.render();
        }
        let document = WorkingMemoryDocument::parse(&text);
        let facts = items_of(document.body(KeyFactsAndDecisions));
        assert_eq!(facts.len(), 51, "50 facts and the sentinel");
        assert_eq!(
            facts.last().map(String::as_str),
            Some(limits::CONSOLIDATION_SENTINEL)
        );
        assert_eq!(items_of(document.body(FilesAndContext)).len(), 61);
        // Errors: every one of the 61 is either still here or moved to the archive.
        let errors = items_of(document.body(ErrorsAndCorrections));
        let kept = errors
            .iter()
            .filter(|e| !e.starts_with(limits::MOVED_POINTER_PREFIX))
            .count();
        assert_eq!(kept + moved_errors.len(), 61);
        assert!(errors.len() <= limits::hard_bound_bullets());
        assert_eq!(moved_errors[0], "error 1");
    }
}

mod anti_bloat {
    use super::*;

    #[test]
    fn antibloat_normal_append_passes_under_threshold() {
        let old = make_wm(&[(KeyFactsAndDecisions, &numbered("fact", 10))]);
        let outcome = append(&old, "Key Facts & Decisions", &["new a", "new b"]);
        assert_eq!(items_of(&body(&outcome, KeyFactsAndDecisions)).len(), 12);
        assert!(
            outcome
                .guards
                .iter()
                .all(|r| r.section != KeyFactsAndDecisions)
        );
    }

    #[test]
    fn antibloat_throttled_append_caps_at_5() {
        let old = make_wm(&[(KeyFactsAndDecisions, &numbered("fact", 30))]);
        let new: Vec<String> = (1..=8).map(|i| format!("new {i}")).collect();
        let refs: Vec<&str> = new.iter().map(String::as_str).collect();
        let outcome = append(&old, "Key Facts & Decisions", &refs);
        let items = items_of(&body(&outcome, KeyFactsAndDecisions));
        assert_eq!(items.len(), 35);
        assert_eq!(items[34], "new 5");
        assert_eq!(
            guards_of(&outcome, KeyFactsAndDecisions),
            [(GuardKind::KeyFactsAntiBloat, OpName::Append)]
        );
    }

    #[test]
    fn antibloat_throttled_dedup_filters_existing() {
        let old = make_wm(&[(KeyFactsAndDecisions, &numbered("fact", 30))]);
        let outcome = append(
            &old,
            "Key Facts & Decisions",
            &["fact 3", "FACT 7.", "new a", "new b"],
        );
        let items = items_of(&body(&outcome, KeyFactsAndDecisions));
        assert_eq!(items.len(), 32);
        assert_eq!(&items[30..], ["new a", "new b"]);
    }

    #[test]
    fn antibloat_emergency_inserts_sentinel_and_stops() {
        let old = make_wm(&[(KeyFactsAndDecisions, &numbered("fact", 55))]);
        let first = append(&old, "Key Facts & Decisions", &["new a"]);
        let items = items_of(&body(&first, KeyFactsAndDecisions));
        assert_eq!(items.len(), 56);
        assert_eq!(items[55], limits::CONSOLIDATION_SENTINEL);
        let second = append(
            &first.document.render(),
            "Key Facts & Decisions",
            &["new b"],
        );
        assert_eq!(items_of(&body(&second, KeyFactsAndDecisions)).len(), 56);
        assert_eq!(
            guards_of(&second, KeyFactsAndDecisions),
            [(GuardKind::KeyFactsAntiBloat, OpName::Keep)]
        );
    }

    #[test]
    fn antibloat_salvage_bypass_blocked_at_emergency() {
        let old = make_wm(&[(KeyFactsAndDecisions, &numbered("fact", 55))]);
        let outcome = merged(
            &old,
            json!({"Key Facts & Decisions": {"op": "UPDATE", "content": "- a summary\n- new fact"}}),
        );
        assert_eq!(items_of(&body(&outcome, KeyFactsAndDecisions)).len(), 55);
        assert_eq!(
            guards_of(&outcome, KeyFactsAndDecisions),
            [(GuardKind::KeyFactsConsolidation, OpName::Keep)]
        );
    }

    #[test]
    fn antibloat_nonstring_items_handled() {
        let old = make_wm(&[(KeyFactsAndDecisions, &numbered("fact", 30))]);
        let outcome = merged(
            &old,
            json!({"Key Facts & Decisions": {"op": "APPEND", "items": [1, true, "new fact", null]}}),
        );
        let items = items_of(&body(&outcome, KeyFactsAndDecisions));
        assert_eq!(items.len(), 31);
        assert_eq!(items[30], "new fact");
        assert!(!items.iter().any(|item| item == "1" || item == "true"));
    }
}

mod v2 {
    use super::*;

    #[test]
    fn dynamic_reminders_flag_large_key_facts_and_bulk_urls() {
        let urls: Vec<String> = (1..=30)
            .map(|i| format!("- https://images.example.org/gallery/{i}.png"))
            .collect();
        let text = make_wm(&[
            (KeyFactsAndDecisions, &numbered("fact", 27)),
            (FilesAndContext, &urls.join("\n")),
        ]);
        let warned: Vec<_> = section_size_warnings(&WorkingMemoryDocument::parse(&text))
            .into_iter()
            .map(|w| w.section)
            .collect();
        assert_eq!(warned, [KeyFactsAndDecisions, FilesAndContext]);
    }

    #[test]
    fn key_facts_allows_safe_consolidation_when_oversized() {
        // As in the reference, one bullet for 41 is refused by the ratio rule and salvaged.
        let old = make_wm(&[(KeyFactsAndDecisions, &rich_body())]);
        let outcome = merged(
            &old,
            json!({"Key Facts & Decisions": {"op": "UPDATE", "content": "- Renovation: every room inspected in March 2025"}}),
        );
        let items = items_of(&body(&outcome, KeyFactsAndDecisions));
        assert_eq!(items.len(), 42);
    }

    #[test]
    fn key_facts_rejects_unsafe_consolidation_that_drops_anchors() {
        let old = make_wm(&[(KeyFactsAndDecisions, &rich_body())]);
        let half: Vec<String> = rich_facts()
            .into_iter()
            .take(12)
            .map(|f| format!("- {f}"))
            .collect();
        let outcome = merged(
            &old,
            json!({"Key Facts & Decisions": {"op": "UPDATE", "content": half.join("\n")}}),
        );
        assert_eq!(body(&outcome, KeyFactsAndDecisions), rich_body());
    }

    #[test]
    fn files_context_update_blocked_when_dropping_path_like_tokens() {
        let old = make_wm(&[(
            FilesAndContext,
            "- https://example.com/images/unused.png: old mockup\n- site/index.html",
        )]);
        let outcome = merged(
            &old,
            json!({"Files & Context": {"op": "UPDATE", "content": "- site/index.html: landing page"}}),
        );
        assert!(body(&outcome, FilesAndContext).contains("https://example.com/images/unused.png"));
    }
}
