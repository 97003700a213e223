//! The consolidation sentinel is written by the Key Facts guard only, once: never taken from
//! the model, whole or inside an item, whatever the path and whatever the old body.
//!
//! The first case is the input that held the sentinel twice after a merge (found by the
//! 200-round property under another seed): a truncated APPEND whose list mixes the sentinel
//! with non-text items. The tolerant reader glued `x", 42, "[sentinel]` into one item, which
//! the guard's whole-item check let through, once per glued pair.

use memory_protocol::working_memory::{WorkingMemorySection::*, limits};
use serde_json::json;
use working_memory::{MergeOptions, merge_text, read_arguments};

use super::{body, items_of, make_wm, merged, numbered};

fn sentinels(text: &str) -> usize {
    text.matches(limits::CONSOLIDATION_SENTINEL).count()
}

#[test]
fn a_repaired_list_mixing_the_sentinel_and_non_text_items_adds_no_sentinel() {
    let old = make_wm(&[(KeyFactsAndDecisions, &numbered("fact", 16))]);
    let s = limits::CONSOLIDATION_SENTINEL;
    // Cut short, so only the tolerant scan reads it.
    let raw = format!(
        r#"{{"sections": {{"Key Facts & Decisions": {{"op": "APPEND", "items": ["queue uses advisory locks", 42, "{s}", "retries capped at 5", null, "{s}"]}}, "Open Issues": {{"op": "KE"#
    );
    let recovery = read_arguments(&raw).unwrap();
    let outcome = merge_text(&old, &recovery.ops, &MergeOptions::default());
    let facts = body(&outcome, KeyFactsAndDecisions);
    assert_eq!(sentinels(&facts), 0, "{facts}");
    assert_eq!(
        items_of(&facts)[16..],
        ["queue uses advisory locks", "retries capped at 5"]
    );
}

#[test]
fn a_sentinel_inside_an_appended_item_is_cut_out() {
    let old = make_wm(&[(KeyFactsAndDecisions, &numbered("fact", 3))]);
    let s = limits::CONSOLIDATION_SENTINEL;
    let outcome = merged(
        &old,
        json!({"Key Facts & Decisions": {"op": "APPEND", "items": [
            format!("cache TTL is 60 s {s}"),
            format!("- {s}"),
            // Cutting the inner copy joins an outer one; both go.
            format!("[CONSOLIDATION{s} REQUIRED: this section is at its size limit. Merge and shorten the existing bullets with UPDATE; new facts are refused until then.]"),
        ]}}),
    );
    let facts = body(&outcome, KeyFactsAndDecisions);
    assert_eq!(sentinels(&facts), 0, "{facts}");
    let items = items_of(&facts);
    assert_eq!(items.last().map(String::as_str), Some("cache TTL is 60 s"));
    assert_eq!(items.len(), 4, "{facts}");
}

#[test]
fn a_sentinel_written_into_an_empty_section_is_cut_out() {
    let old = make_wm(&[(SessionTitle, "Cache rollout")]);
    let s = limits::CONSOLIDATION_SENTINEL;
    let outcome = merged(
        &old,
        json!({"Key Facts & Decisions": {"op": "UPDATE", "content": format!("- {s}\n- TTL 60 s\n- {s}")}}),
    );
    assert_eq!(body(&outcome, KeyFactsAndDecisions), "- TTL 60 s");
    let appended = merged(
        &old,
        json!({"Key Facts & Decisions": {"op": "APPEND", "items": [s, s]}}),
    );
    assert_eq!(body(&appended, KeyFactsAndDecisions), "");
}

#[test]
fn rounds_at_the_hard_bound_keep_one_sentinel() {
    let mut document = make_wm(&[(KeyFactsAndDecisions, &numbered("fact", 50))]);
    let s = limits::CONSOLIDATION_SENTINEL;
    for round in 0..4 {
        let outcome = merged(
            &document,
            json!({"Key Facts & Decisions": {"op": "APPEND", "items": [format!("new {round}"), s, format!("{s} again")]}}),
        );
        document = outcome.document.render();
        assert_eq!(sentinels(&document), 1, "round {round}:\n{document}");
    }
}
