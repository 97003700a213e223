//! Open Issues: nothing unresolved disappears silently.
//!
//! For an UPDATE, each old item that is not marked `[resolved]` must still be in the rewrite:
//! its first 40 characters (normalized, cut back to a whole word) must appear in the rewrite's
//! normalized items, on word boundaries, so a short item is not "found" inside another word.
//! Marking it (`[resolved]`, `[new]`) keeps it. An item that is missing is put back at the end,
//! tagged with the restored marker once (an item restored before and dropped again is restored
//! again, without a second tag); copies of one dropped item come back as one. The snippet is
//! cut back to a whole word only while it keeps at least 20 characters; otherwise (a long
//! word at the cut) it ends inside that word and only its start needs a word boundary. An
//! item reworded in the rewrite is not missing either: when one new item holds every word of
//! the old one (in any order, with more words around them), restoring it would only add a
//! duplicate. A resolved item may be dropped. KEEP and APPEND pass.

use std::collections::BTreeSet;

use memory_protocol::working_memory::{GuardKind, SectionOp, limits};

use super::{Verdict, quoted};
use crate::document::normalize_body;
use crate::keys::item_key;
use crate::script::{each_word, words};
use crate::text::{has_status_tag, items, strip_status_tags};

pub(crate) fn guard(old: &str, op: &SectionOp) -> Verdict {
    let SectionOp::Update { content } = op else {
        return Verdict::unchanged(op);
    };
    let new = normalize_body(content);
    // The keys of the rewrite's items, one a line: snippets are looked for in them.
    let new_keys: String = items(&new).map(|item| item_key(item) + "\n").collect();
    let missing = dropped_items(old, &new_keys);
    if missing.is_empty() {
        return Verdict::unchanged(op);
    }
    // Word sets only when some snippet is missing: most rewrites keep every item.
    let new_words: Vec<BTreeSet<String>> = items(&new)
        .map(|item| words(strip_status_tags(item)))
        .collect();
    let dropped: Vec<&str> = missing
        .into_iter()
        .filter(|item| !is_reworded(item, &new_words))
        .collect();
    if dropped.is_empty() {
        return Verdict::unchanged(op);
    }
    let mut restored = new;
    for item in &dropped {
        if !restored.is_empty() {
            restored.push('\n');
        }
        // `- [restored] item`, written in place.
        restored.push_str("- ");
        restored.push_str(limits::RESTORED_MARKER);
        restored.push(' ');
        restored.push_str(item);
    }
    let reason = format!(
        "the rewrite dropped {} unresolved item(s) without marking them {}; restored: {}",
        dropped.len(),
        limits::RESOLVED_MARKER,
        quoted(&dropped)
    );
    Verdict::changed(
        SectionOp::Update { content: restored },
        GuardKind::OpenIssuesRestore,
        reason,
    )
}

/// The unresolved items of `old` whose snippets `new_keys` lacks, without their status tags;
/// copies of one item (equal keys) come back as one.
fn dropped_items<'o>(old: &'o str, new_keys: &str) -> Vec<&'o str> {
    // Ordered: telling a key from the few already restored costs less than hashing it.
    let mut restored_keys = BTreeSet::new();
    let mut dropped = Vec::new();
    for item in items(old) {
        if has_status_tag(item, limits::RESOLVED_MARKER) {
            continue;
        }
        let key = item_key(item);
        if !key.is_empty() && !is_present(snippet(&key), new_keys) && restored_keys.insert(key) {
            dropped.push(strip_status_tags(item));
        }
    }
    dropped
}

/// True when one of the rewrite's items holds every word of `item`.
fn is_reworded(item: &str, new_words: &[BTreeSet<String>]) -> bool {
    // Word by word, keeping the new items that hold every word so far: most items are told
    // apart by their first words, and the rest of the item is not read.
    let mut holding: Vec<&BTreeSet<String>> = new_words.iter().collect();
    let mut has_words = false;
    for word in each_word(item) {
        has_words = true;
        holding.retain(|new| new.contains(word.as_ref()));
        if holding.is_empty() {
            return false;
        }
    }
    has_words && !holding.is_empty()
}

/// The first characters of a key that identify the item, cut back to a whole word.
struct Snippet<'a> {
    text: &'a str,
    /// False when the key's first word is longer than the snippet, so the snippet ends inside
    /// it and no word boundary can follow it.
    ends_a_word: bool,
}

fn snippet(key: &str) -> Snippet<'_> {
    let limit = limits::OPEN_ISSUE_SNIPPET_CHARS;
    let Some((cut, next)) = key.char_indices().nth(limit) else {
        return Snippet {
            text: key,
            ends_a_word: true,
        };
    };
    let head = &key[..cut];
    let mid_word = next.is_alphanumeric() && head.ends_with(char::is_alphanumeric);
    // Cut back to a whole word only while that keeps at least half the snippet: a short
    // first word before a long one would leave a snippet ("a") found in almost any rewrite.
    match head.rfind(' ') {
        Some(space) if mid_word && head[..space].chars().count() >= limit / 2 => Snippet {
            text: head[..space].trim_end(),
            ends_a_word: true,
        },
        _ => Snippet {
            text: head.trim_end(),
            ends_a_word: !mid_word,
        },
    }
}

/// True when the snippet occurs in `text` with a word boundary on each side (after it only
/// when it ends a word).
fn is_present(snippet: Snippet<'_>, text: &str) -> bool {
    let Snippet {
        text: snippet,
        ends_a_word,
    } = snippet;
    if snippet.is_empty() {
        return true;
    }
    let word_char = |ch: Option<char>| ch.is_some_and(char::is_alphanumeric);
    let starts_word = snippet.starts_with(char::is_alphanumeric);
    let ends_word = ends_a_word && snippet.ends_with(char::is_alphanumeric);
    let mut from = 0;
    // Overlapping matches: one inside a word may hide the next one, which starts in it.
    while let Some(found) = text[from..].find(snippet) {
        let start = from + found;
        let end = start + snippet.len();
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        let inside_a_word = (starts_word && word_char(before)) || (ends_word && word_char(after));
        if !inside_a_word {
            return true;
        }
        from = start + snippet.chars().next().map_or(1, char::len_utf8);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(text: &str) -> Snippet<'_> {
        Snippet {
            text,
            ends_a_word: true,
        }
    }

    #[test]
    fn copies_of_a_dropped_item_come_back_once() {
        let old = "- Batch one is late\n- batch ONE is late\n- [resolved] gone\n- kept";
        assert_eq!(dropped_items(old, "kept\n"), ["Batch one is late"]);
    }

    #[test]
    fn a_reworded_item_is_not_missing() {
        let new = [words("The April statement file format is still unknown")];
        assert!(is_reworded("April statement format unknown", &new));
        assert!(!is_reworded("May statement format unknown", &new));
        assert!(!is_reworded("四月格式未知", &[words("四月的格式仍然未知")]));
        assert!(is_reworded("四月格式", &[words("仍不清楚四月格式")]));
    }

    #[test]
    fn presence_needs_word_boundaries() {
        assert!(is_present(whole("ci"), "fix ci now"));
        assert!(!is_present(whole("ci"), "a decision"));
        assert!(is_present(whole("flaky test"), "[new] flaky test on arm"));
        // The first match is inside a word; the overlapping second one is not.
        assert!(is_present(whole("a a"), "xa a a"));
    }

    #[test]
    fn snippets_stop_at_a_whole_word() {
        let key = "the importer rejects statements written with a byte order mark";
        let cut = snippet(key);
        assert_eq!(cut.text, "the importer rejects statements written");
        assert!(cut.ends_a_word);
    }

    #[test]
    fn a_first_word_longer_than_the_snippet_is_found_in_itself() {
        // No space to cut back to: the snippet ends inside the word, so the letter after it
        // in the item is no reason to call the item missing (it was restored every round,
        // doubling its copies).
        let key = "v$q-tdfzcabcdefghijklmnopqrstuvwxyz0123456789 tail";
        let cut = snippet(key);
        assert!(!cut.ends_a_word);
        assert!(is_present(cut, key));
        assert!(!is_present(
            snippet(key),
            "xv$q-tdfzcabcdefghijklmnopqrstuvwxyz0123456789"
        ));
    }
}
