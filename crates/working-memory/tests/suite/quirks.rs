//! The reference's quirks this port fixes, one test each.

use memory_protocol::working_memory::{GuardKind, OpName, WorkingMemorySection::*};
use serde_json::json;
use working_memory::is_working_memory;

use super::{body, guards_of, items_of, make_wm, merged, numbered};

/// The reference's path pattern has no end boundary: `App.tsx` reads as `App.ts`,
/// `config.json` as `config.js`, and a URL as a fragment (`com/images/unused`), so a rewrite
/// that swaps `App.tsx` for `App.ts`, or one image URL for another, passed its guard.
#[test]
fn file_pattern_keeps_whole_extensions_and_urls() {
    let old = make_wm(&[(
        FilesAndContext,
        "- web/App.tsx: root view\n- web/config.json: flags\n- https://cdn.example.com/img/hero.png",
    )]);
    let outcome = merged(
        &old,
        json!({"Files & Context": {"op": "UPDATE", "content":
            "- web/App.ts: root view\n- web/config.js: flags\n- https://cdn.example.com/img/hero.jpg"}}),
    );
    let result = body(&outcome, FilesAndContext);
    for kept in [
        "web/App.tsx",
        "web/config.json",
        "https://cdn.example.com/img/hero.png",
    ] {
        assert!(result.contains(kept), "{kept} lost:\n{result}");
    }
    let record = outcome
        .guards
        .iter()
        .find(|r| r.section == FilesAndContext)
        .unwrap();
    assert_eq!(record.guard, GuardKind::FilesNoRegression);
    assert!(
        record.reason.contains("drops 3 path(s)"),
        "{}",
        record.reason
    );
}

/// The reference deduplicates by substring of the whole old body, so a short new item (`CI`,
/// `test`) that happens to occur inside any old line is dropped as "not fresh".
#[test]
fn dedup_compares_whole_items_so_short_items_survive() {
    let old = make_wm(&[(
        ErrorsAndCorrections,
        "- the decision to skip the test suite in CI was reverted",
    )]);
    let outcome = merged(
        &old,
        json!({"Errors & Corrections": {"op": "UPDATE", "content":
            "- the decision to skip the test suite in CI was reverted\n- test\n- CI"}}),
    );
    assert_eq!(
        items_of(&body(&outcome, ErrorsAndCorrections)),
        [
            "the decision to skip the test suite in CI was reverted",
            "test",
            "CI"
        ]
    );
    assert_eq!(
        guards_of(&outcome, ErrorsAndCorrections),
        [(GuardKind::ErrorsAppendOnly, OpName::Append)]
    );
}

/// An UPDATE with an empty body emptied Current State (and Task & Goals), which have no guard.
#[test]
fn empty_update_does_not_empty_current_state() {
    let old = make_wm(&[
        (CurrentState, "Migrating the billing job to the new queue."),
        (TaskAndGoals, "- move billing off cron"),
    ]);
    let outcome = merged(
        &old,
        json!({
            "Current State": {"op": "UPDATE", "content": ""},
            "Task & Goals": {"op": "UPDATE", "content": "(none)"},
        }),
    );
    assert_eq!(
        body(&outcome, CurrentState),
        "Migrating the billing job to the new queue."
    );
    assert_eq!(body(&outcome, TaskAndGoals), "- move billing off cron");
    assert_eq!(
        guards_of(&outcome, CurrentState),
        [(GuardKind::EmptyUpdate, OpName::Keep)]
    );
}

/// A Key Facts UPDATE that passed the ratio and anchor checks was accepted however large it
/// was, so a "consolidation" could grow the section without bound.
#[test]
fn key_facts_rewrite_may_not_grow_past_threshold_and_old_size() {
    let old_body = numbered("fact", 20);
    let old = make_wm(&[(KeyFactsAndDecisions, &old_body)]);
    // Keeps every old bullet (ratio and anchors pass) and adds 40 more.
    let grown = format!("{old_body}\n{}", numbered("padding", 40));
    let outcome = merged(
        &old,
        json!({"Key Facts & Decisions": {"op": "UPDATE", "content": grown}}),
    );
    let items = items_of(&body(&outcome, KeyFactsAndDecisions));
    assert!(items.len() <= 50, "{}", items.len());
    let record = outcome
        .guards
        .iter()
        .find(|r| r.section == KeyFactsAndDecisions)
        .unwrap();
    assert_eq!(record.guard, GuardKind::KeyFactsConsolidation);
    assert!(
        record.reason.contains("grows the section"),
        "{}",
        record.reason
    );
    // Growth up to the threshold is a normal rewrite.
    let modest = format!("{old_body}\n{}", numbered("extra", 5));
    let accepted = merged(
        &old,
        json!({"Key Facts & Decisions": {"op": "UPDATE", "content": modest}}),
    );
    assert_eq!(items_of(&body(&accepted, KeyFactsAndDecisions)).len(), 25);
}

/// Detection by substring counted `### Session Title` as a working-memory header.
#[test]
fn legacy_detection_needs_a_real_section_header() {
    let legacy = "# Summary\n\n### Session Title\nBilling\n\n### Open Issues\n- retries";
    assert!(!is_working_memory(legacy));
    assert!(is_working_memory("## Session Title\nBilling"));
}

/// Issue 27: an Open Issues item the rewrite reworded was restored as a duplicate beside its
/// new wording. An item whose every word is in one new item is not missing.
#[test]
fn a_reworded_open_issue_is_not_restored_as_a_duplicate() {
    let old = make_wm(&[(
        OpenIssues,
        "- April statement format unknown\n- May totals off",
    )]);
    let outcome = merged(
        &old,
        json!({"Open Issues": {"op": "UPDATE", "content":
            "- The April statement file format is still unknown\n- May totals off by one"}}),
    );
    assert_eq!(
        items_of(&body(&outcome, OpenIssues)),
        [
            "The April statement file format is still unknown",
            "May totals off by one"
        ]
    );
    // A rewrite that changes a word of the item still gets it back.
    let changed = merged(
        &old,
        json!({"Open Issues": {"op": "UPDATE", "content":
            "- The June statement format is unknown\n- May totals off"}}),
    );
    assert!(body(&changed, OpenIssues).contains("April statement format unknown"));
}
