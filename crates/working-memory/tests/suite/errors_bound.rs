//! Errors & Corrections: append-only, with one way to shrink (a consolidating rewrite of an
//! oversized section that keeps every entry's anchors) and a bound (past twice the threshold,
//! the oldest entries move to the archive behind a pointer).

use memory_protocol::working_memory::{GuardKind, OpName, WorkingMemorySection::*, limits};
use serde_json::json;
use working_memory::MergeOutcome;

use super::{body, guards_of, items_of, make_wm, merged};

fn entry(i: usize) -> String {
    format!("`pytest tests/test_{i}.py` failed: KeyError on row {i}")
}

/// The reason of the Errors & Corrections guard record.
fn errors_reason(outcome: &MergeOutcome) -> String {
    outcome
        .guards
        .iter()
        .find(|record| record.section == ErrorsAndCorrections)
        .map(|record| record.reason.clone())
        .unwrap_or_default()
}

fn errors(n: usize) -> String {
    (1..=n)
        .map(|i| format!("- {}", entry(i)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Three bullets naming every command of entries 1..=n.
fn grouped(n: usize, skip: Option<usize>) -> String {
    let kept: Vec<usize> = (1..=n).filter(|i| Some(*i) != skip).collect();
    kept.chunks(kept.len().div_ceil(3))
        .map(|chunk| {
            let commands: Vec<String> = chunk
                .iter()
                .map(|i| format!("`pytest tests/test_{i}.py`"))
                .collect();
            format!(
                "- {} failed with KeyError on their rows",
                commands.join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_consolidation_that_keeps_every_entry_is_accepted() {
    let old = make_wm(&[(ErrorsAndCorrections, &errors(30))]);
    let rewrite = grouped(30, None);
    let outcome = merged(
        &old,
        json!({"Errors & Corrections": {"op": "UPDATE", "content": rewrite}}),
    );
    assert_eq!(body(&outcome, ErrorsAndCorrections), rewrite);
    assert!(
        guards_of(&outcome, ErrorsAndCorrections)
            .iter()
            .all(|(guard, _)| *guard != GuardKind::ErrorsAppendOnly),
        "{:?}",
        outcome.guards
    );
}

#[test]
fn a_consolidation_that_loses_one_entry_is_refused_and_only_appends() {
    let old = make_wm(&[(ErrorsAndCorrections, &errors(30))]);
    let rewrite = grouped(30, Some(17));
    let outcome = merged(
        &old,
        json!({"Errors & Corrections": {"op": "UPDATE", "content": rewrite}}),
    );
    assert_eq!(
        guards_of(&outcome, ErrorsAndCorrections),
        [(GuardKind::ErrorsAppendOnly, OpName::Append)]
    );
    let reason = errors_reason(&outcome);
    assert!(reason.contains("test_17.py"), "{reason}");
    let after = items_of(&body(&outcome, ErrorsAndCorrections));
    assert_eq!(after[..30], (1..=30).map(entry).collect::<Vec<_>>()[..]);
    assert_eq!(after.len(), 33, "the three grouped lines are appended");
}

#[test]
fn a_section_within_its_threshold_is_never_rewritten() {
    let old = make_wm(&[(ErrorsAndCorrections, &errors(10))]);
    let outcome = merged(
        &old,
        json!({"Errors & Corrections": {"op": "UPDATE", "content": grouped(10, None)}}),
    );
    assert_eq!(
        guards_of(&outcome, ErrorsAndCorrections),
        [(GuardKind::ErrorsAppendOnly, OpName::Append)]
    );
    assert!(errors_reason(&outcome).contains("not oversized"));
    let after = items_of(&body(&outcome, ErrorsAndCorrections));
    assert_eq!(after[..10], (1..=10).map(entry).collect::<Vec<_>>()[..]);
}

#[test]
fn past_the_hard_bound_the_oldest_entries_move_behind_a_pointer() {
    let full = limits::hard_bound_bullets();
    let old = make_wm(&[(ErrorsAndCorrections, &errors(full))]);
    let new: Vec<String> = (full + 1..=full + 3).map(entry).collect();
    let outcome = merged(
        &old,
        json!({"Errors & Corrections": {"op": "APPEND", "items": new}}),
    );
    assert!(
        guards_of(&outcome, ErrorsAndCorrections)
            .contains(&(GuardKind::SectionBound, OpName::Append)),
        "{:?}",
        outcome.guards
    );
    let after = items_of(&body(&outcome, ErrorsAndCorrections));
    assert!(
        after[0].starts_with(limits::MOVED_POINTER_PREFIX),
        "{}",
        after[0]
    );
    assert!(
        after.len() <= limits::SECTION_BULLET_THRESHOLD,
        "{}",
        after.len()
    );
    assert_eq!(
        after.last(),
        Some(&entry(full + 3)),
        "the newest entry landed"
    );
    let moved = &outcome.moved[0];
    assert_eq!(moved.section, ErrorsAndCorrections);
    assert_eq!(moved.entries[0], entry(1), "the oldest entries move first");
    // Nothing is lost: every entry is in the section or among the moved ones, once.
    for i in 1..=full + 3 {
        let text = entry(i);
        let places =
            usize::from(after.contains(&text)) + usize::from(moved.entries.contains(&text));
        assert_eq!(places, 1, "{text}");
    }
}
