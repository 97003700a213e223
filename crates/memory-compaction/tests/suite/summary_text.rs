//! The Done guard: earlier finished work survives an update.

use memory_compaction::compaction::keep_done_items;
use memory_sanitize::ByteEstimate;

/// An update that folds its oldest Done items into its count line has not dropped them; an
/// item that is neither listed nor counted is put back.
#[test]
fn done_items_the_update_folded_into_its_count_are_not_put_back() {
    let previous = "## Progress\n### Done\n- [x] first step\n- [x] second step\n- [x] third step";
    let folded = "## Progress\n### Done\n- [x] (2 earlier finished items folded to fit the size cap)\n- [x] third step";
    let (text, report) = keep_done_items(previous, folded, 10_000, &ByteEstimate);
    assert_eq!(report.restored, 0, "{text}");
    assert_eq!(text, folded);
    let dropped = "## Progress\n### Done\n- [x] (1 earlier finished items folded to fit the size cap)\n- [x] third step";
    let (text, report) = keep_done_items(previous, dropped, 10_000, &ByteEstimate);
    assert_eq!(report.restored, 1, "{text}");
    assert!(text.contains("- [x] second step"), "{text}");
}

/// A Done item the update rewrote with or without a full stop, in any script (`.`, `。`, `．`,
/// `｡`), is the same item: it is not put back as a second copy, and an open item repeating it
/// is removed.
#[test]
fn a_done_item_rewritten_with_an_ideographic_full_stop_is_the_same_item() {
    let previous = "## Progress\n### Done\n- [x] 修复了潮汐表导入器\n- [x] shipped the parser.";
    let updated = "## Progress\n### Done\n- [x] 修复了潮汐表导入器。\n- [x] shipped the parser\n### In Progress\n- [ ] 修复了潮汐表导入器｡";
    let (text, report) = keep_done_items(previous, updated, 10_000, &ByteEstimate);
    assert_eq!(report.restored, 0, "{text}");
    assert_eq!(report.reopened_removed, 1, "{text}");
    assert_eq!(text.matches("修复了潮汐表导入器").count(), 1, "{text}");
}
