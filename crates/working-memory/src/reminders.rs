//! Size warnings: the sections the update prompt's `<section_size_warnings>` block names.
//!
//! Every section over its threshold (more than 25 bullets or 1,500 estimated tokens) is
//! named, Errors & Corrections included: it is append-only, but a warned Errors section may be
//! consolidated by an UPDATE that keeps every entry's anchors, which is how it gets smaller
//! before its oldest entries have to move to the archive.

use memory_protocol::working_memory::SectionSizeWarning;

use super::document::WorkingMemoryDocument;
use super::text::SectionSize;

/// The sections of `document` over their thresholds, in document order.
pub fn section_size_warnings(document: &WorkingMemoryDocument) -> Vec<SectionSizeWarning> {
    document
        .sections()
        .filter_map(|(section, body)| {
            let size = SectionSize::of(body);
            size.is_oversized().then_some(SectionSizeWarning {
                section,
                bullets: size.bullets as u64,
                tokens: size.tokens as u64,
            })
        })
        .collect()
}
