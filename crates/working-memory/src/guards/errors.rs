//! Errors & Corrections: append-only, with one way to shrink.
//!
//! KEEP and APPEND pass (the merge drops items already present, compared by normalized key).
//! An UPDATE is accepted only as a consolidation of an oversized section (above 25 bullets or
//! 1,500 tokens) that has fewer bullets than before and keeps every entry's anchors: each old
//! entry's code anchors (paths, code spans, identifiers, flags, versions, dates; see
//! [`memory_transcript::anchors`]) must appear in the rewrite, and an entry without any must
//! keep its first words. Any other UPDATE becomes an APPEND of its new entries, or KEEP.
//!
//! The section's size bound (moving the oldest entries to the archive when it passes its hard
//! bound) is applied by the merge after the operation.

use memory_protocol::working_memory::{GuardKind, SectionOp, limits};
use memory_transcript::anchors::extract_anchors;

use super::{OldBody, Reason, Verdict, append_or_keep, quoted};
use crate::document::normalize_body;
use crate::text::{SectionSize, item_key, items};

pub(crate) fn guard(old_body: &OldBody<'_>, op: &SectionOp) -> Verdict {
    let SectionOp::Update { content } = op else {
        return Verdict::unchanged();
    };
    let new = normalize_body(content);
    let old_size = old_body.raw_size();
    let consolidation = if old_size.is_oversized() {
        unkept_entries(old_body.items(), &new, old_size)
    } else {
        Err("the section is not oversized".to_owned())
    };
    match consolidation {
        Ok(()) => Verdict::unchanged(),
        Err(why) => {
            let candidates: Vec<&str> = items(&new).collect();
            let fresh = old_body.fresh(&candidates);
            let reason = Reason::with_capacity(why.len() + 96)
                .text("the section is append-only and this rewrite is no consolidation (")
                .text(&why)
                .text("): ")
                .count(fresh.len())
                .text(if fresh.len() == 1 {
                    " new entry appended"
                } else {
                    " new entries appended"
                })
                .done();
            Verdict::changed(append_or_keep(fresh), GuardKind::ErrorsAppendOnly, reason)
                .of_fresh_items()
        }
    }
}

/// `Ok` when `new` consolidates `old`: fewer bullets, every entry's anchors kept.
fn unkept_entries(old: &[&str], new: &str, old_size: SectionSize) -> Result<(), String> {
    let new_size = SectionSize::of(new);
    if new_size.bullets >= old_size.bullets {
        return Err(format!(
            "{} bullets is not fewer than {}",
            new_size.bullets, old_size.bullets
        ));
    }
    let new_lower = new.to_lowercase();
    let new_key_text: String = items(new).map(item_key).collect::<Vec<_>>().join("\n");
    let mut lost = Vec::new();
    for &entry in old {
        let anchors = extract_anchors(entry);
        let kept = if anchors.is_empty() {
            let key = item_key(entry);
            let snippet: String = key.chars().take(limits::OPEN_ISSUE_SNIPPET_CHARS).collect();
            new_key_text.contains(snippet.trim())
        } else {
            anchors
                .iter()
                .all(|anchor| new_lower.contains(&anchor.to_lowercase()))
        };
        if !kept {
            lost.push(entry.to_owned());
        }
    }
    if lost.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "it loses {} entr{}: {}",
            lost.len(),
            if lost.len() == 1 { "y" } else { "ies" },
            quoted(&lost)
        ))
    }
}
