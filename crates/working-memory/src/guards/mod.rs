//! The guards: per-section rules that refuse or reshape an operation that would lose facts.
//!
//! A guard runs when the old section body is non-empty; it receives the operation after
//! [`super::ops`] read it and returns the operation to apply, with a note when it changed
//! anything. Which guard a section has:
//!
//! | section | guard |
//! |---|---|
//! | Session Title | [`title`]: a new title must share a meaningful word with the old one |
//! | Current State, Task & Goals | none beyond the shared rules of [`super::merge`] |
//! | Key Facts & Decisions | [`key_facts`]: consolidation check with salvage, anti-bloat |
//! | Files & Context | [`files`]: a rewrite may not drop a path |
//! | Errors & Corrections | [`errors`]: append-only, except a consolidation that keeps every anchor |
//! | Open Issues | [`open_issues`]: a silently dropped item is restored with a marker |

pub(crate) mod errors;
pub(crate) mod files;
pub(crate) mod key_facts;
pub(crate) mod open_issues;
pub(crate) mod title;

use std::cell::OnceCell;

use memory_protocol::working_memory::{GuardKind, SectionOp, WorkingMemorySection};

use super::text::{self, ItemKeys, SectionSize, fresh_items};

/// A section's old body, with what the rules read from it (its items, their keys, its size)
/// computed once per merge, when first needed.
pub(crate) struct OldBody<'a> {
    pub(crate) text: &'a str,
    items: OnceCell<Vec<&'a str>>,
    keys: OnceCell<ItemKeys>,
    raw_size: OnceCell<SectionSize>,
    size: OnceCell<SectionSize>,
}

impl<'a> OldBody<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Self {
            text,
            items: OnceCell::new(),
            keys: OnceCell::new(),
            raw_size: OnceCell::new(),
            size: OnceCell::new(),
        }
    }

    /// The items of the body ([`super::text::items`]).
    pub(crate) fn items(&self) -> &[&'a str] {
        self.items.get_or_init(|| text::items(self.text).collect())
    }

    /// `candidates` without empty items and without those whose key the body already has or
    /// an earlier candidate repeats ([`super::text::fresh_items`]).
    pub(crate) fn fresh<S: AsRef<str>>(&self, candidates: &[S]) -> Vec<String> {
        if candidates.is_empty() {
            // No item to compare: the body's items need no keys.
            return Vec::new();
        }
        let keys = self
            .keys
            .get_or_init(|| ItemKeys::of_items(self.items().iter().copied()));
        fresh_items(candidates, keys)
    }

    /// The size of the body as it is ([`SectionSize::of`]), counted from the items already
    /// read out of it.
    pub(crate) fn raw_size(&self) -> SectionSize {
        *self.raw_size.get_or_init(|| SectionSize {
            bullets: self.items().len(),
            tokens: text::tokens(self.text),
        })
    }

    /// The size of the body without the consolidation sentinel (the size as it is when the
    /// body has no sentinel).
    pub(crate) fn size(&self) -> SectionSize {
        *self.size.get_or_init(|| {
            if key_facts::has_sentinel(self.text) {
                SectionSize::of(&key_facts::without_sentinel(self.text))
            } else {
                self.raw_size()
            }
        })
    }
}

/// What a guard decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// The operation to apply.
    pub(crate) op: SectionOp,
    /// The rule and the reason, when the guard changed the operation.
    pub(crate) note: Option<(GuardKind, String)>,
}

impl Verdict {
    /// The operation as given.
    pub(crate) fn unchanged(op: &SectionOp) -> Self {
        Self::pass(op.clone())
    }

    /// Another operation, without a note.
    pub(crate) fn pass(op: SectionOp) -> Self {
        Self { op, note: None }
    }

    pub(crate) fn changed(op: SectionOp, guard: GuardKind, reason: impl Into<String>) -> Self {
        Self {
            op,
            note: Some((guard, reason.into())),
        }
    }
}

/// Runs the guard of `section` on `op` against the non-empty `old` body.
pub(crate) fn run(section: WorkingMemorySection, old: &OldBody<'_>, op: &SectionOp) -> Verdict {
    match section {
        WorkingMemorySection::SessionTitle => title::guard(old.text, op),
        WorkingMemorySection::KeyFactsAndDecisions => key_facts::guard(old, op),
        WorkingMemorySection::FilesAndContext => files::guard(old, op),
        WorkingMemorySection::ErrorsAndCorrections => errors::guard(old, op),
        WorkingMemorySection::OpenIssues => open_issues::guard(old.text, op),
        WorkingMemorySection::CurrentState | WorkingMemorySection::TaskAndGoals => {
            Verdict::unchanged(op)
        }
    }
}

/// `items` as an APPEND, or KEEP when there are none.
pub(crate) fn append_or_keep(items: Vec<String>) -> SectionOp {
    if items.is_empty() {
        SectionOp::Keep
    } else {
        SectionOp::Append { items }
    }
}

/// A short list of items for a reason text.
pub(crate) fn quoted<S: AsRef<str>>(items: &[S]) -> String {
    const SHOWN: usize = 3;
    let mut out = items
        .iter()
        .take(SHOWN)
        .map(|item| format!("\"{}\"", item.as_ref()))
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > SHOWN {
        out.push_str(&format!(", and {} more", items.len() - SHOWN));
    }
    out
}
