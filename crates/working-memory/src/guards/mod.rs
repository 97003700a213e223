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

use std::borrow::Cow;
use std::cell::OnceCell;

use memory_protocol::working_memory::{GuardKind, SectionOp, WorkingMemorySection};

use super::keys::{comparable_core, key_of_core_is, push_item_key};
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
        self.items.get_or_init(|| {
            // Room for a line every 40 bytes or so, so the list rarely grows.
            let mut items = Vec::with_capacity(self.text.len() / 40 + 4);
            items.extend(text::items(self.text));
            items
        })
    }

    pub(crate) fn keys(&self) -> &ItemKeys {
        self.keys.get_or_init(|| ItemKeys::of_items(self.items()))
    }

    /// `candidates` without empty items and without those whose key the body already has or
    /// an earlier candidate repeats ([`super::text::fresh_items`]). A few candidates are
    /// compared with the old items directly ([`super::keys::key_of_core_is`]), which stops at the
    /// first differing byte of most items instead of hashing every old item whole.
    pub(crate) fn fresh<S: AsRef<str>>(&self, candidates: &[S]) -> Vec<String> {
        /// Up to this many candidates, direct comparison costs less than hashing.
        const FEW: usize = 4;
        if candidates.len() > FEW || self.keys.get().is_some() {
            return fresh_items(candidates, self.keys());
        }
        // The distinct keys, one after another in one string (`ends`: where each ends), and
        // the candidate each came from; no allocation per key.
        // For the keys of items that are not plain: not allocated until one needs it.
        let mut buffer = String::new();
        // A key is at most a few bytes longer than its candidate (lower-casing can grow a
        // character).
        let room: usize = candidates.iter().map(|c| c.as_ref().len() + 8).sum();
        let mut keys = String::with_capacity(room);
        let mut ends = [0usize; FEW];
        let mut fresh: [&str; FEW] = [""; FEW];
        let mut count = 0;
        for candidate in candidates {
            let candidate = candidate.as_ref();
            // Written in place after the keys kept so far, and cut off again when not kept.
            let start = keys.len();
            push_item_key(candidate, &mut keys, &mut buffer);
            let key = keys.get(start..).unwrap_or_default();
            let seen = (0..count).any(|i| key_at(&keys, &ends, i) == key);
            if key.is_empty() || seen || count == FEW {
                keys.truncate(start);
                continue;
            }
            ends[count] = keys.len();
            fresh[count] = candidate;
            count += 1;
        }
        let mut found: [(&str, bool); FEW] = [("", true); FEW];
        for (i, slot) in found.iter_mut().enumerate().take(count) {
            *slot = (key_at(&keys, &ends, i), false);
        }
        let found = found.get_mut(..count).unwrap_or_default();
        let mut missing = count;
        for item in self.items() {
            if missing == 0 {
                break;
            }
            let core = comparable_core(item);
            for (key, present) in found.iter_mut() {
                if !*present && key_of_core_is(item, core, key, &mut buffer) {
                    *present = true;
                    missing -= 1;
                }
            }
        }
        let present = |i: usize| found.get(i).is_some_and(|(_, present)| *present);
        (0..count)
            .filter(|i| !present(*i))
            .map(|i| fresh[i].to_owned())
            .collect()
    }

    /// The size of the body as it is.
    pub(crate) fn raw_size(&self) -> SectionSize {
        *self.raw_size.get_or_init(|| SectionSize {
            bullets: self.items().len(),
            tokens: text::tokens(self.text),
        })
    }

    /// The size of the body without the consolidation sentinel.
    pub(crate) fn size(&self) -> SectionSize {
        *self.size.get_or_init(|| {
            let facts = key_facts::without_sentinel(self.text);
            match facts {
                // No sentinel: the body as it is.
                Cow::Borrowed(_) => self.raw_size(),
                Cow::Owned(facts) => SectionSize::of(&facts),
            }
        })
    }
}

/// Key `i` of keys written one after another into `keys`, key `i` ending at `ends[i]`.
fn key_at<'k>(keys: &'k str, ends: &[usize], i: usize) -> &'k str {
    let start = i
        .checked_sub(1)
        .and_then(|j| ends.get(j))
        .copied()
        .unwrap_or(0);
    let end = ends.get(i).copied().unwrap_or(start);
    keys.get(start..end).unwrap_or_default()
}

/// What a guard decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// The operation to apply; `None` for the operation the guard was given, unchanged (so
    /// it is not copied for the guard).
    pub(crate) op: Option<SectionOp>,
    /// The rule and the reason, when the guard changed the operation.
    pub(crate) note: Option<(GuardKind, String)>,
    /// The guard took an APPEND's items from [`OldBody::fresh`]: none is in the section or
    /// repeated, so the merge need not look for duplicates again.
    pub(crate) fresh: bool,
}

impl Verdict {
    /// The operation as given.
    pub(crate) fn unchanged() -> Self {
        Self {
            op: None,
            note: None,
            fresh: false,
        }
    }

    /// Another operation, without a note.
    pub(crate) fn pass(op: SectionOp) -> Self {
        Self {
            op: Some(op),
            note: None,
            fresh: false,
        }
    }

    pub(crate) fn changed(op: SectionOp, guard: GuardKind, reason: impl Into<String>) -> Self {
        Self {
            op: Some(op),
            note: Some((guard, reason.into())),
            fresh: false,
        }
    }

    /// Marks the APPEND's items as fresh (see [`Verdict::fresh`]).
    pub(crate) fn of_fresh_items(self) -> Self {
        Self {
            fresh: true,
            ..self
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
        WorkingMemorySection::OpenIssues => open_issues::guard(old, op),
        WorkingMemorySection::CurrentState | WorkingMemorySection::TaskAndGoals => {
            Verdict::unchanged()
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

/// A reason text written from its parts, without the formatting machinery (which costs more
/// than the rest of a merge's bookkeeping): [`Reason::count`] writes what `{}` writes.
pub(crate) struct Reason(String);

impl Reason {
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self(String::with_capacity(capacity))
    }

    pub(crate) fn text(mut self, part: &str) -> Self {
        self.0.push_str(part);
        self
    }

    pub(crate) fn count(mut self, count: usize) -> Self {
        push_count(&mut self.0, count);
        self
    }

    pub(crate) fn done(self) -> String {
        self.0
    }
}

/// Writes `count` in decimal, as `{}` does.
fn push_count(out: &mut String, mut count: usize) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    while let Some(slot) = start.checked_sub(1).and_then(|at| digits.get_mut(at)) {
        *slot = b'0' + (count % 10) as u8;
        start -= 1;
        count /= 10;
        if count == 0 {
            break;
        }
    }
    for &digit in digits.get(start..).unwrap_or_default() {
        out.push(char::from(digit));
    }
}

/// A short list of items for a reason text.
pub(crate) fn quoted<S: AsRef<str>>(items: &[S]) -> String {
    const SHOWN: usize = 3;
    let shown: usize = items
        .iter()
        .take(SHOWN)
        .map(|item| item.as_ref().len() + 4)
        .sum();
    let mut out = String::with_capacity(shown + 16);
    for (i, item) in items.iter().take(SHOWN).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push('"');
        out.push_str(item.as_ref());
        out.push('"');
    }
    if items.len() > SHOWN {
        out.push_str(", and ");
        push_count(&mut out, items.len() - SHOWN);
        out.push_str(" more");
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..ProptestConfig::default() })]

        /// Counts are written as `{}` writes them.
        #[test]
        fn counts_are_formatted_counts(count in any::<usize>(), small in 0usize..1000) {
            for count in [count, small, 0, usize::MAX] {
                let mut out = String::from("x");
                push_count(&mut out, count);
                prop_assert_eq!(out, format!("x{count}"));
            }
        }

        /// The direct comparison of a few candidates finds what the hashes of every key find.
        #[test]
        fn fresh_by_comparison_is_fresh_by_hash(
            body in proptest::collection::vec("[- *`_.aAbB\t1é]{0,8}", 0..8),
            candidates in proptest::collection::vec("[- *`_.aAbB\t1é]{0,8}", 0..6),
        ) {
            let body = body.join("\n");
            let expected = fresh_items(&candidates, &ItemKeys::of(&body));
            prop_assert_eq!(OldBody::new(&body).fresh(&candidates), expected);
        }
    }
}
