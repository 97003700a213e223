//! Comparison keys of items.
//!
//! Two items say the same thing when their keys are equal ([`item_key`]). The guards compare
//! an operation's items with a section's by key: [`ItemKeys`] holds the keys of a body, and
//! [`fresh_items`] keeps the candidates whose keys are new.

use std::collections::BTreeSet;

use memory_sanitize::FULL_STOPS;

use super::text::{strip_marker, strip_status_tags};

/// The comparison key of an item: lower-cased, status tags (`[new]`, `[resolved]`,
/// `[restored]`) and emphasis marks removed, whitespace collapsed, no leading or trailing
/// full stop (`.`, `。`, ...), underscore or space. Two items with the same key say the same thing; a short item
/// is a duplicate only of an equal item, never of a longer one that happens to contain it.
pub(crate) fn item_key(item: &str) -> String {
    let core = strip_status_tags(strip_marker(item.trim()));
    let mut key = String::with_capacity(core.len());
    // One pass over the characters: emphasis marks are skipped, and a run of whitespace
    // becomes one space before the next kept character (so a word of emphasis marks only
    // adds no word).
    let mut space_pending = false;
    for ch in core.chars() {
        if ch.is_whitespace() {
            space_pending = !key.is_empty();
        } else if !matches!(ch, '*' | '`') {
            if space_pending {
                key.push(' ');
                space_pending = false;
            }
            if ch.is_ascii() {
                key.push(ch.to_ascii_lowercase());
            } else {
                key.extend(ch.to_lowercase());
            }
        }
    }
    let end = key.trim_end_matches(is_key_edge).len();
    key.truncate(end);
    let start = key.len() - key.trim_start_matches(is_key_edge).len();
    key.drain(..start);
    key
}

/// What a key never starts or ends with: an underscore, a space, or a full stop of any script
/// ([`FULL_STOPS`]).
fn is_key_edge(ch: char) -> bool {
    ch == '_' || ch == ' ' || FULL_STOPS.contains(&ch)
}

/// The keys of a body's items, sorted and without repeats, so a key is found by binary search
/// (a body has a few dozen items: sorting them costs less than hashing each one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ItemKeys(Vec<String>);

impl ItemKeys {
    /// The keys of items already read out of a body.
    pub(crate) fn of_items<'a>(items: impl IntoIterator<Item = &'a str>) -> Self {
        let mut keys: Vec<String> = items
            .into_iter()
            .map(item_key)
            .filter(|key| !key.is_empty())
            .collect();
        keys.sort_unstable();
        keys.dedup();
        Self(keys)
    }

    /// True when the body has an item with this key.
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.0
            .binary_search_by(|known| known.as_str().cmp(key))
            .is_ok()
    }
}

/// `candidates` without empty items and without those whose key the body already has or an
/// earlier candidate repeats.
pub(crate) fn fresh_items<S: AsRef<str>>(candidates: &[S], existing: &ItemKeys) -> Vec<String> {
    // Ordered: an operation has a few items, and comparing a key with them costs less than
    // hashing it.
    let mut seen = BTreeSet::new();
    candidates
        .iter()
        .map(AsRef::as_ref)
        .filter(|item| {
            let key = item_key(item);
            !key.is_empty() && !existing.contains(&key) && seen.insert(key)
        })
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::items;

    #[test]
    fn keys_follow_the_definition() {
        for (item, key) in [
            ("- [resolved] **Fix**  the `parser`.", "fix the parser"),
            ("_ x", "x"),
            ("x _ y_ ._", "x _ y"),
            ("a * b", "a b"),
            ("ΣΑΣ  Ünïcode\u{a0}x", "σασ ünïcode x"),
            ("..", ""),
            ("x\u{2003}.\u{2003}", "x"),
            ("港务长同意重试三次。", "港务长同意重试三次"),
            ("．全角句号．", "全角句号"),
            ("半角｡", "半角"),
        ] {
            assert_eq!(item_key(item), key, "{item:?}");
        }
    }

    #[test]
    fn fresh_items_are_new_and_distinct() {
        let existing = ItemKeys::of_items(items("- Fix the parser\n- [new] ship it"));
        assert_eq!(
            fresh_items(
                &[
                    "fix the **parser**",
                    "Ship it.",
                    "new one",
                    "New  one",
                    "",
                    "..",
                    "other"
                ],
                &existing
            ),
            ["new one", "other"]
        );
    }
}
