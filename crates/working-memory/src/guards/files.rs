//! Files & Context: a rewrite may not drop a path.
//!
//! An UPDATE is accepted when every path-like token of the old body (see
//! [`crate::paths`]) is still in the new body. Otherwise the old body stays,
//! and the lines of the rewrite that name paths the old body lacked are appended, one per line
//! (in the rewrite's order, without duplicates), or nothing when there are none. KEEP and
//! APPEND pass.

use memory_protocol::working_memory::{GuardKind, SectionOp};

use super::{OldBody, Reason, Verdict, append_or_keep, quoted};
use crate::paths::{path_tokens, path_tokens_in_order};
use crate::text::items;

pub(crate) fn guard(old_body: &OldBody<'_>, op: &SectionOp) -> Verdict {
    let old = old_body.text;
    let SectionOp::Update { content } = op else {
        return Verdict::unchanged();
    };
    let old_paths = path_tokens(old);
    let new_paths = path_tokens(content);
    let missing = missing_paths(&old_paths, &new_paths);
    if missing.is_empty() {
        return Verdict::unchanged();
    }
    // The rewrite's items that name a path the old body did not have.
    let carrying_new_paths: Vec<&str> = items(content)
        .filter(|item| {
            path_tokens_in_order(item).any(|path| old_paths.binary_search(&path).is_err())
        })
        .collect();
    let added = old_body.fresh(&carrying_new_paths);
    let reason = Reason::with_capacity(224)
        .text("the rewrite drops ")
        .count(missing.len())
        .text(" path(s) (")
        .text(&quoted(&missing))
        .text("); the old body is kept and ")
        .count(added.len())
        .text(" line(s) with new paths appended")
        .done();
    Verdict::changed(append_or_keep(added), GuardKind::FilesNoRegression, reason).of_fresh_items()
}

/// The paths of `old` that `new` lacks, in order; both sorted and deduplicated, so one walk
/// through both compares each path once instead of searching `new` for every old path.
fn missing_paths<'a>(old: &[&'a str], new: &[&str]) -> Vec<&'a str> {
    let mut missing = Vec::with_capacity(old.len());
    let mut new = new.iter().peekable();
    for &path in old {
        let mut found = false;
        while let Some(&&other) = new.peek() {
            match other.cmp(path) {
                std::cmp::Ordering::Less => {
                    new.next();
                }
                std::cmp::Ordering::Equal => {
                    found = true;
                    break;
                }
                std::cmp::Ordering::Greater => break,
            }
        }
        if !found {
            missing.push(path);
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..ProptestConfig::default() })]

        /// The walk through both sorted lists finds what a search of `new` for each old path finds.
        #[test]
        fn missing_paths_are_those_not_found_by_search(
            old in proptest::collection::btree_set("[ab/.]{0,4}", 0..12),
            new in proptest::collection::btree_set("[ab/.]{0,4}", 0..12),
        ) {
            let old: Vec<&str> = old.iter().map(String::as_str).collect();
            let new: Vec<&str> = new.iter().map(String::as_str).collect();
            let expected: Vec<&str> = old
                .iter()
                .filter(|path| new.binary_search(path).is_err())
                .copied()
                .collect();
            prop_assert_eq!(missing_paths(&old, &new), expected);
        }
    }
}
