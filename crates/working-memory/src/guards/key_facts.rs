//! Key Facts & Decisions: consolidation without loss, and a bounded size.
//!
//! Sizes are measured without the consolidation sentinel. Three levels:
//!
//! - **within** its threshold (at most 25 bullets and 1,500 tokens): an APPEND adds its new
//!   items while the section stays within its hard bound (50 bullets, 3,000 tokens);
//! - **oversized** (above the threshold, below the hard bound): an APPEND adds at most
//!   [`limits::OVERSIZED_APPEND_CAP`] new items, within the hard bound;
//! - **at the hard bound**: an APPEND adds the sentinel bullet once, and nothing while the
//!   sentinel is there, until an UPDATE consolidates the section.
//!
//! New items are those whose normalized key no existing item has.
//!
//! An UPDATE (a consolidation) is refused when it keeps fewer than 15% of the old bullets
//! (exactly 15% passes), when it keeps less than 70% of the old lexical anchors, or when it
//! would leave the section larger than both its threshold and its old size. A refused UPDATE
//! is salvaged: its new items are appended under the APPEND rules, except at the hard bound,
//! where it is kept. The sentinel is never taken from the model: [`without_model_sentinel`]
//! cuts it out of every UPDATE body and APPEND item wherever it occurs, a whole item or inside
//! one (a list repaired from malformed output can glue several items into one), before any
//! rule runs and whatever the old body; an accepted consolidation therefore removes it, and
//! only this guard ever writes it, once.

use std::borrow::Cow;
use std::fmt::Write as _;

use memory_protocol::working_memory::{GuardKind, SectionOp, limits};

use super::{OldBody, Verdict, append_or_keep, quoted};
use crate::anchors::lexical_anchors;
use crate::document::normalize_body;
use crate::text::{self, SectionSize, items};

/// True when `body` holds the sentinel.
pub(crate) fn has_sentinel(body: &str) -> bool {
    // The sentinel's first word is looked for first: most bodies lack it, and a search for a
    // short pattern is much cheaper than one for the whole sentence.
    body.contains(SENTINEL_START) && body.contains(limits::CONSOLIDATION_SENTINEL)
}

/// How the sentinel starts (checked by a test).
const SENTINEL_START: &str = "[CONSOLIDATION";

/// The body without sentinel lines (borrowed when it has none).
pub(crate) fn without_sentinel(body: &str) -> Cow<'_, str> {
    if !has_sentinel(body) {
        return Cow::Borrowed(body);
    }
    Cow::Owned(
        body.split('\n')
            .filter(|line| !is_sentinel(line))
            .collect::<Vec<_>>()
            .join("\n")
            .trim()
            .to_owned(),
    )
}

fn is_sentinel(item: &str) -> bool {
    text::strip_marker(item.trim()).trim() == limits::CONSOLIDATION_SENTINEL
}

/// `text` with every copy of the sentinel cut out; cutting one can join the halves of another
/// (`[CONSOL` + sentinel + `IDATION ...]`), so it repeats until none is left.
fn cut_sentinel(text: &str) -> Cow<'_, str> {
    if !has_sentinel(text) {
        return Cow::Borrowed(text);
    }
    let mut cut = text.replace(limits::CONSOLIDATION_SENTINEL, "");
    while has_sentinel(&cut) {
        cut = cut.replace(limits::CONSOLIDATION_SENTINEL, "");
    }
    Cow::Owned(cut)
}

/// `op` as the model may write it into Key Facts & Decisions: without the sentinel, which only
/// the guard adds. A line or item left empty by the cut is dropped.
pub(crate) fn without_model_sentinel(op: SectionOp) -> SectionOp {
    match op {
        SectionOp::Keep => op,
        SectionOp::Update { content } if has_sentinel(&content) => {
            let lines: Vec<String> = content
                .split('\n')
                .filter_map(|line| {
                    if !has_sentinel(line) {
                        return Some(line.to_owned());
                    }
                    // The marker and indent stay; the item is what is cut.
                    let item = text::strip_marker(line.trim_start());
                    let marker = &line[..line.len() - item.len()];
                    let cut = cut_sentinel(item);
                    let cut = cut.trim();
                    (!cut.is_empty()).then(|| format!("{marker}{cut}"))
                })
                .collect();
            SectionOp::Update {
                content: lines.join("\n"),
            }
        }
        SectionOp::Update { .. } => op,
        SectionOp::Append { items } => SectionOp::Append {
            items: items
                .into_iter()
                .filter_map(|item| {
                    if !has_sentinel(&item) {
                        return Some(item);
                    }
                    text::clean_item(&cut_sentinel(&item))
                })
                .collect(),
        },
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Within,
    Oversized,
    AtHardBound,
}

fn level(size: SectionSize) -> Level {
    if size.is_at_hard_bound() {
        Level::AtHardBound
    } else if size.is_oversized() {
        Level::Oversized
    } else {
        Level::Within
    }
}

/// Tokens one appended bullet adds, counted generously (its line plus the line break).
fn bullet_tokens(item: &str) -> usize {
    text::tokens(item) + 2
}

/// The new items that fit: at most `cap`, and never past the hard bound.
fn admit(size: SectionSize, fresh: &[String], cap: usize) -> Vec<String> {
    let mut bullets = size.bullets;
    let mut tokens = size.tokens;
    let mut admitted = Vec::new();
    for item in fresh {
        if admitted.len() == cap {
            break;
        }
        let cost = bullet_tokens(item);
        if bullets < limits::hard_bound_bullets() && tokens + cost <= limits::hard_bound_tokens() {
            bullets += 1;
            tokens += cost;
            admitted.push(item.clone());
        }
    }
    admitted
}

pub(crate) fn guard(old_body: &OldBody<'_>, op: &SectionOp) -> Verdict {
    match op {
        SectionOp::Keep => Verdict::unchanged(op),
        SectionOp::Append { items } => append(old_body, items, GuardKind::KeyFactsAntiBloat, ""),
        SectionOp::Update { content } => {
            // The merge has cut the sentinel out of the model's text already.
            let new = normalize_body(content);
            let size = old_body.size();
            match refusal(&without_sentinel(old_body.text), size, &new) {
                None => Verdict::unchanged(op),
                Some(why) => {
                    let new_items: Vec<&str> = items(&new).collect();
                    if level(size) == Level::AtHardBound {
                        return Verdict::changed(
                            SectionOp::Keep,
                            GuardKind::KeyFactsConsolidation,
                            format!("{why}; the section is at its hard bound, so it is kept"),
                        );
                    }
                    append(old_body, &new_items, GuardKind::KeyFactsConsolidation, &why)
                }
            }
        }
    }
}

/// Why an UPDATE from `old` to `new` is refused, if it is.
fn refusal(old: &str, old_size: SectionSize, new: &str) -> Option<String> {
    if old_size.bullets == 0 {
        return None;
    }
    let new_size = SectionSize::of(new);
    let ratio = new_size.bullets as f64 / old_size.bullets as f64;
    if ratio < limits::KEY_FACTS_MIN_BULLET_RATIO {
        return Some(format!(
            "the rewrite keeps {} of {} bullets (below {:.0}%)",
            new_size.bullets,
            old_size.bullets,
            limits::KEY_FACTS_MIN_BULLET_RATIO * 100.0
        ));
    }
    let old_anchors = lexical_anchors(old);
    if !old_anchors.is_empty() {
        let new_anchors = lexical_anchors(new);
        let mut lost: Vec<&String> = old_anchors.difference(&new_anchors).collect();
        lost.sort_unstable();
        let coverage = (old_anchors.len() - lost.len()) as f64 / old_anchors.len() as f64;
        if coverage < limits::KEY_FACTS_MIN_ANCHOR_COVERAGE {
            return Some(format!(
                "the rewrite keeps {:.0}% of the names, dates and amounts (below {:.0}%; lost {})",
                coverage * 100.0,
                limits::KEY_FACTS_MIN_ANCHOR_COVERAGE * 100.0,
                quoted(&lost)
            ));
        }
    }
    let bullet_cap = old_size.bullets.max(limits::SECTION_BULLET_THRESHOLD);
    let token_cap = old_size.tokens.max(limits::SECTION_TOKEN_THRESHOLD);
    if new_size.bullets > bullet_cap || new_size.tokens > token_cap {
        return Some(format!(
            "the rewrite grows the section to {} bullets and {} tokens, past both its threshold \
             and its old size ({} bullets, {} tokens)",
            new_size.bullets, new_size.tokens, old_size.bullets, old_size.tokens
        ));
    }
    None
}

/// The APPEND rules for `candidates` (an APPEND's items, or a refused UPDATE's items).
fn append(
    existing: &OldBody<'_>,
    candidates: &[impl AsRef<str>],
    guard: GuardKind,
    why: &str,
) -> Verdict {
    let size = existing.size();
    let fresh = existing.fresh(candidates);
    let prefix = if why.is_empty() {
        String::new()
    } else {
        format!("{why}; ")
    };
    let current = level(size);
    if current == Level::AtHardBound {
        if has_sentinel(existing.text) {
            return Verdict::changed(
                SectionOp::Keep,
                GuardKind::KeyFactsAntiBloat,
                format!(
                    "{prefix}the section is at its hard bound and already asks for consolidation: \
                     {} new item(s) refused until an UPDATE consolidates it",
                    fresh.len()
                ),
            );
        }
        return Verdict::changed(
            SectionOp::Append {
                items: vec![limits::CONSOLIDATION_SENTINEL.to_owned()],
            },
            GuardKind::KeyFactsAntiBloat,
            format!(
                "{prefix}the section reached its hard bound ({} bullets, {} tokens): the \
                 consolidation sentinel was added and {} new item(s) refused",
                size.bullets,
                size.tokens,
                fresh.len()
            ),
        );
    }
    let cap = match current {
        Level::Oversized => limits::OVERSIZED_APPEND_CAP,
        _ => usize::MAX,
    };
    let admitted = admit(size, &fresh, cap);
    let refused: Vec<String> = fresh
        .iter()
        .filter(|item| !admitted.contains(item))
        .cloned()
        .collect();
    if why.is_empty() && refused.is_empty() {
        // Everything new fits; the merge drops the duplicates and says so.
        return Verdict::pass(append_or_keep(
            candidates
                .iter()
                .map(|item| item.as_ref().to_owned())
                .collect(),
        ));
    }
    let duplicates = candidates.len() - fresh.len();
    // Written into one string (writing to a `String` cannot fail).
    let mut reason = prefix;
    if !why.is_empty() {
        let _ = write!(reason, "{} new item(s) salvaged", admitted.len());
    } else {
        let _ = write!(reason, "{} new item(s) accepted", admitted.len());
    }
    if duplicates > 0 {
        let _ = write!(reason, ", {duplicates} already present");
    }
    if !refused.is_empty() {
        let limit = if current == Level::Oversized {
            format!(
                "the section is oversized ({} bullets, {} tokens) and takes at most {} per update within its hard bound",
                size.bullets,
                size.tokens,
                limits::OVERSIZED_APPEND_CAP
            )
        } else {
            "they would pass the hard bound".to_owned()
        };
        let _ = write!(
            reason,
            ", {} refused because {limit}: {}",
            refused.len(),
            quoted(&refused)
        );
    }
    let guard = if why.is_empty() {
        GuardKind::KeyFactsAntiBloat
    } else {
        guard
    };
    Verdict::changed(append_or_keep(admitted), guard, reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentinel_starts_as_the_search_expects() {
        assert!(limits::CONSOLIDATION_SENTINEL.starts_with(SENTINEL_START));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 500, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..proptest::prelude::ProptestConfig::default() })]

        /// An operation without the sentinel is left as it is by the cut; one with it loses
        /// every copy.
        #[test]
        fn only_the_sentinel_is_cut(
            parts in proptest::collection::vec("\\[CONSOLIDATION|x|- y|\n| ", 0..6),
            sentinel_at in proptest::option::of(0usize..6),
            append: bool,
        ) {
            let mut parts = parts;
            if let Some(at) = sentinel_at {
                parts.insert(at.min(parts.len()), limits::CONSOLIDATION_SENTINEL.to_owned());
            }
            let op = if append {
                SectionOp::Append { items: parts }
            } else {
                SectionOp::Update { content: parts.concat() }
            };
            let cut = without_model_sentinel(op.clone());
            match &cut {
                SectionOp::Keep => {}
                SectionOp::Update { content } => proptest::prop_assert!(!has_sentinel(content)),
                SectionOp::Append { items } => {
                    proptest::prop_assert!(items.iter().all(|item| !has_sentinel(item)));
                }
            }
            if sentinel_at.is_none() {
                proptest::prop_assert_eq!(cut, op);
            }
        }
    }
}
