//! Open Issues: nothing unresolved disappears silently.
//!
//! For an UPDATE, each old item that is not marked `[resolved]` must still be in the rewrite:
//! its first 40 characters (normalized, cut back to a whole word) must appear in the rewrite's
//! normalized items, on word boundaries, so a short item is not "found" inside another word.
//! Marking it (`[resolved]`, `[new]`) keeps it. An item that is missing is put back at the end,
//! tagged with the restored marker once (an item restored before and dropped again is restored
//! again, without a second tag); copies of one dropped item come back as one. The snippet is
//! cut back to a whole word only while it keeps at least 20 characters; otherwise (a long
//! word at the cut) it ends inside that word and only its start needs a word boundary. A
//! resolved item may be dropped. KEEP and APPEND pass.

use memory_protocol::working_memory::{GuardKind, SectionOp, limits};

use super::{OldBody, Reason, Verdict, quoted};
use crate::document::normalize_body;
#[cfg(test)]
use crate::keys::plain_key_hash;
use crate::keys::{KeySet, comparable_core, hash_of_key, is_plain, item_key_in, key_hash};
use crate::text::{has_status_tag, items, strip_status_tags};

pub(crate) fn guard(old_body: &OldBody<'_>, op: &SectionOp) -> Verdict {
    let old = old_body.text;
    let SectionOp::Update { content } = op else {
        return Verdict::unchanged();
    };
    let new = normalize_body(content);
    let mut buffer = String::with_capacity(128);
    let mut new_keys = String::with_capacity(new.len());
    for item in items(&new) {
        new_keys.push_str(item_key_in(item, &mut buffer));
        new_keys.push('\n');
    }
    let new_keys = NewKeys::new(&new_keys);
    // Room for an item every 40 bytes or so, so the set rarely grows.
    let dropped = dropped_items(old, &new_keys, &mut buffer);
    if dropped.is_empty() {
        return Verdict::unchanged();
    }
    let mut restored = new;
    restored.reserve(
        dropped
            .iter()
            .map(|item| item.len() + limits::RESTORED_MARKER.len() + 4)
            .sum(),
    );
    for item in &dropped {
        if !restored.is_empty() {
            restored.push('\n');
        }
        restored.push_str("- ");
        restored.push_str(limits::RESTORED_MARKER);
        restored.push(' ');
        restored.push_str(item);
    }
    let reason = Reason::with_capacity(224)
        .text("the rewrite dropped ")
        .count(dropped.len())
        .text(" unresolved item(s) without marking them ")
        .text(limits::RESOLVED_MARKER)
        .text("; restored: ")
        .text(&quoted(&dropped))
        .done();
    Verdict::changed(
        SectionOp::Update { content: restored },
        GuardKind::OpenIssuesRestore,
        reason,
    )
}

/// The unresolved items of `old` whose snippets `new_keys` lacks, without their status tags;
/// copies of one item (equal keys) come back as one. Equal keys have equal snippets, so the
/// items are first told apart by the hash of their snippets (read from the item's head
/// only, see [`dropped_snippet_hash`]); only items whose snippets hash alike have their whole
/// keys hashed and compared, as [`dropped_items_by_key_hash`] compares every item's.
fn dropped_items<'o>(old: &'o str, new_keys: &NewKeys<'_>, buffer: &mut String) -> Vec<&'o str> {
    // Room for an item every 40 bytes or so, so the lists rarely grow.
    let room = old.len() / 40 + 4;
    let mut snippets = KeySet::with_capacity_and_hasher(room, Default::default());
    // Each dropped item, its snippet's hash, and its key's hash once it was needed.
    let mut dropped: Vec<(&str, u64, Option<u64>)> = Vec::with_capacity(room);
    for item in items(old) {
        if has_status_tag(item, limits::RESOLVED_MARKER) {
            continue;
        }
        let Some(snippet_hash) = dropped_snippet_hash(item, new_keys, buffer) else {
            continue;
        };
        if !snippets.insert(snippet_hash) {
            // Another dropped item has a snippet hashing alike: the whole keys decide.
            let hash = key_hash(item);
            let mut copy = false;
            for (earlier, earlier_snippet, earlier_hash) in &mut dropped {
                if *earlier_snippet == snippet_hash {
                    let earlier_hash =
                        *earlier_hash.get_or_insert_with(|| key_hash(earlier).unwrap_or_default());
                    copy |= Some(earlier_hash) == hash;
                }
            }
            if copy {
                continue;
            }
            dropped.push((item, snippet_hash, hash));
            continue;
        }
        dropped.push((item, snippet_hash, None));
    }
    dropped
        .into_iter()
        .map(|(item, _, _)| strip_status_tags(item))
        .collect()
}

/// The hash of the snippet of the key of `item` when the snippet is missing from `new_keys`
/// (and the key is not empty); `None` when the item is still there. An item whose core
/// starts with a plain head (see [`PLAIN_HEAD`]; most) has a key that starts with the
/// head lower-cased, so only the head is checked, copied and lower-cased, instead of the
/// whole key being built ([`dropped_key_hash_by_key`]).
fn dropped_snippet_hash(item: &str, new_keys: &NewKeys<'_>, buffer: &mut String) -> Option<u64> {
    let core = comparable_core(item);
    let head = core
        .as_bytes()
        .get(..core.len().min(PLAIN_HEAD))
        .unwrap_or_default();
    let cut = if is_plain(head) {
        // A plain head is ASCII: any byte ends a character.
        buffer.clear();
        buffer.push_str(core.get(..head.len()).unwrap_or_default());
        buffer.make_ascii_lowercase();
        if buffer.is_empty() {
            return None;
        }
        snippet(buffer)
    } else {
        let key = item_key_in(item, buffer);
        if key.is_empty() {
            return None;
        }
        snippet(key)
    };
    let text = cut.text;
    if new_keys.has(cut) {
        return None;
    }
    Some(hash_of_key(text).unwrap_or_default())
}

/// The dropped items as the guard first found them: each unresolved item's key hashed
/// whole, the copies told apart by those hashes ([`dropped_items`] finds the same).
#[cfg(test)]
fn dropped_items_by_key_hash<'o>(
    old: &'o str,
    new_keys: &NewKeys<'_>,
    buffer: &mut String,
) -> Vec<&'o str> {
    let mut restored_keys = KeySet::default();
    let mut dropped = Vec::new();
    for item in items(old) {
        if has_status_tag(item, limits::RESOLVED_MARKER) {
            continue;
        }
        if let Some(hash) = dropped_key_hash(item, new_keys, buffer)
            && restored_keys.insert(hash)
        {
            dropped.push(strip_status_tags(item));
        }
    }
    dropped
}

/// Bytes of a plain key that decide its snippet: the snippet's characters and the one after.
const SNIPPET_HEAD: usize = limits::OPEN_ISSUE_SNIPPET_CHARS + 1;

/// [`SNIPPET_HEAD`] rounded up to whole 8-byte blocks: the head of a core that is checked
/// and lower-cased to cut its snippet from (the bytes past the snippet's do not change it,
/// and whole blocks are checked for less).
const PLAIN_HEAD: usize = SNIPPET_HEAD.div_ceil(8) * 8;

/// The hash of the key of `item` when its snippet is missing from `new_keys` (and the key is
/// not empty); `None` when the item is still there. A plain item's core (most) is read once
/// for its key's hash ([`plain_key_hash`]), and only the head its snippet is cut from is
/// copied and lower-cased, instead of the whole key being built first
/// ([`dropped_key_hash_by_key`], which it equals).
#[cfg(test)]
fn dropped_key_hash(item: &str, new_keys: &NewKeys<'_>, buffer: &mut String) -> Option<u64> {
    let core = comparable_core(item);
    let Some(hash) = plain_key_hash(core.as_bytes()) else {
        return dropped_key_hash_by_key(item, new_keys, buffer);
    };
    // A plain core is ASCII: any byte ends a character.
    buffer.clear();
    buffer.push_str(core.get(..core.len().min(SNIPPET_HEAD)).unwrap_or_default());
    buffer.make_ascii_lowercase();
    (!buffer.is_empty() && !new_keys.has(snippet(buffer))).then_some(hash)
}

/// [`dropped_key_hash`] from the item's key, built.
#[cfg(test)]
fn dropped_key_hash_by_key(item: &str, new_keys: &NewKeys<'_>, buffer: &mut String) -> Option<u64> {
    let key = item_key_in(item, buffer);
    if new_keys.has(snippet(key)) {
        return None;
    }
    hash_of_key(key)
}

/// The first characters of a key that identify the item, cut back to a whole word.
struct Snippet<'a> {
    text: &'a str,
    /// False when the key's first word is longer than the snippet, so the snippet ends inside
    /// it and no word boundary can follow it.
    ends_a_word: bool,
}

#[inline(always)]
fn snippet(key: &str) -> Snippet<'_> {
    if key.is_ascii() {
        return ascii_snippet(key);
    }
    general_snippet(key)
}

/// True for the ASCII characters `char::is_whitespace` accepts.
fn is_ascii_space(byte: u8) -> bool {
    matches!(byte, b'\t'..=b'\r' | b' ')
}

/// [`snippet`] of an ASCII key, byte by byte: every character is one byte, so positions are
/// counts and no character needs decoding ([`general_snippet`], which it equals).
fn ascii_snippet(key: &str) -> Snippet<'_> {
    let limit = limits::OPEN_ISSUE_SNIPPET_CHARS;
    let bytes = key.as_bytes();
    let Some(&next) = bytes.get(limit) else {
        return Snippet {
            text: key,
            ends_a_word: true,
        };
    };
    let head = bytes.get(..limit).unwrap_or_default();
    let mid_word =
        next.is_ascii_alphanumeric() && head.last().is_some_and(u8::is_ascii_alphanumeric);
    let trimmed_end = |end: usize| {
        let kept = bytes
            .get(..end)
            .unwrap_or_default()
            .iter()
            .rposition(|byte| !is_ascii_space(*byte))
            .map_or(0, |at| at + 1);
        key.get(..kept).unwrap_or_default()
    };
    match head.iter().rposition(|byte| *byte == b' ') {
        Some(space) if mid_word && space >= limit / 2 => Snippet {
            text: trimmed_end(space),
            ends_a_word: true,
        },
        _ => Snippet {
            text: trimmed_end(limit),
            ends_a_word: !mid_word,
        },
    }
}

/// [`snippet`] of any key, character by character.
fn general_snippet(key: &str) -> Snippet<'_> {
    let limit = limits::OPEN_ISSUE_SNIPPET_CHARS;
    // An ASCII key (most are) is cut by byte position; others character by character.
    let found = if key.is_ascii() {
        key.as_bytes()
            .get(limit)
            .map(|byte| (limit, char::from(*byte)))
    } else {
        key.char_indices().nth(limit)
    };
    let Some((cut, next)) = found else {
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
        Some(space) if mid_word && char_count(&head[..space]) >= limit / 2 => Snippet {
            text: head[..space].trim_end(),
            ends_a_word: true,
        },
        _ => Snippet {
            text: head.trim_end(),
            ends_a_word: !mid_word,
        },
    }
}

fn char_count(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        text.chars().count()
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
    while let Some(start) = find_from(text, from, snippet) {
        let end = start + snippet.len();
        let before = text.get(..start).and_then(|head| head.chars().next_back());
        let after = text.get(end..).and_then(|tail| tail.chars().next());
        let inside_a_word = (starts_word && word_char(before)) || (ends_word && word_char(after));
        if !inside_a_word {
            return true;
        }
        from = start + snippet.chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// No place (see [`NewKeys`]).
const NOWHERE: u32 = u32::MAX;

/// The keys of the rewrite's items, one per line, with where each byte value occurs in them:
/// built once per rewrite, so looking for the snippet of every old item visits only the
/// places where its first byte is, instead of searching the text again for each.
struct NewKeys<'a> {
    text: &'a str,
    /// The first place of each byte value, or [`NOWHERE`].
    first: [u32; 256],
    /// For each place, the next place of the same byte, or [`NOWHERE`]; empty when the text
    /// is too long to be indexed with 32-bit places (it is then searched as [`is_present`]
    /// does).
    next: Vec<u32>,
}

impl<'a> NewKeys<'a> {
    fn new(text: &'a str) -> Self {
        let mut first = [NOWHERE; 256];
        let Ok(len) = u32::try_from(text.len()) else {
            return Self {
                text,
                first,
                next: Vec::new(),
            };
        };
        let mut next = vec![NOWHERE; text.len()];
        for (at, (&byte, slot)) in (0..len)
            .zip(text.as_bytes().iter().zip(next.iter_mut()))
            .rev()
        {
            let first = &mut first[usize::from(byte)];
            *slot = *first;
            *first = at;
        }
        Self { text, first, next }
    }

    /// [`is_present`]`(snippet, self.text)`, from the places of the snippet's first byte.
    #[inline(always)]
    fn has(&self, snippet: Snippet<'_>) -> bool {
        if self.next.len() != self.text.len() {
            return is_present(snippet, self.text);
        }
        let Snippet {
            text: needle,
            ends_a_word,
        } = snippet;
        let Some(&lead) = needle.as_bytes().first() else {
            return true;
        };
        let starts_word = needle.starts_with(char::is_alphanumeric);
        let ends_word = ends_a_word && needle.ends_with(char::is_alphanumeric);
        let bytes = self.text.as_bytes();
        let mut at = self.first[usize::from(lead)];
        // Every place of the first byte, in order: a match can only start at one, and the
        // first byte of a character never occurs inside another.
        while at != NOWHERE {
            let start = at as usize;
            if bytes
                .get(start..)
                .is_some_and(|rest| rest.starts_with(needle.as_bytes()))
                && !inside_a_word(
                    self.text,
                    start,
                    start + needle.len(),
                    starts_word,
                    ends_word,
                )
            {
                return true;
            }
            at = self.next.get(start).copied().unwrap_or(NOWHERE);
        }
        false
    }
}

/// True when the match of `text[start..end]` is inside a word: a letter or digit before it
/// when it starts a word, or after it when it ends one.
fn inside_a_word(text: &str, start: usize, end: usize, starts_word: bool, ends_word: bool) -> bool {
    let word_char = |ch: Option<char>| ch.is_some_and(char::is_alphanumeric);
    (starts_word && word_char(text.get(..start).and_then(|head| head.chars().next_back())))
        || (ends_word && word_char(text.get(end..).and_then(|tail| tail.chars().next())))
}

/// The first occurrence of `needle` in `text` at or after `from`. The texts are a few short
/// items: checking each place where the needle's first byte occurs costs less than building
/// a substring searcher per needle.
fn find_from(text: &str, from: usize, needle: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let first = *needle.as_bytes().first()?;
    let matches_at = |at: &usize| {
        bytes
            .get(*at..)
            .is_some_and(|rest| rest.starts_with(needle.as_bytes()))
    };
    let haystack = bytes.get(from..)?;
    memchr::memchr_iter(first, haystack)
        .map(|at| from + at)
        .find(matches_at)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of a rewrite's lines, one a line, as the guard indexes them.
    fn keys_of_lines(lines: &[String], buffer: &mut String) -> String {
        let mut keys = String::new();
        for line in lines {
            keys.push_str(item_key_in(line, buffer));
            keys.push('\n');
        }
        keys
    }

    fn whole(text: &str) -> Snippet<'_> {
        Snippet {
            text,
            ends_a_word: true,
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..proptest::prelude::ProptestConfig::default() })]

        /// The byte-wise snippet of an ASCII key is the character-wise one.
        #[test]
        fn ascii_snippets_are_snippets(key in "[a-c1 \t\x0b._$-]{0,50}|([a-z]{1,12} ){0,8}[a-z]{0,30}") {
            let fast = ascii_snippet(&key);
            let general = general_snippet(&key);
            proptest::prop_assert_eq!((fast.text, fast.ends_a_word), (general.text, general.ends_a_word));
        }

        /// Looking from the places of the first byte finds what searching the text finds.
        #[test]
        fn indexed_presence_is_presence(
            needle in "[ab é1.]{0,4}",
            text in "[ab é1.\n]{0,24}",
            ends_a_word: bool,
        ) {
            let snippet = || Snippet { text: &needle, ends_a_word };
            proptest::prop_assert_eq!(NewKeys::new(&text).has(snippet()), is_present(snippet(), &text));
        }

        /// Telling copies apart by their snippets' hashes first drops what hashing every key
        /// drops, and reading a plain head decides what building the key decides.
        #[test]
        fn dropped_items_are_those_found_by_key_hashes(
            lines in proptest::collection::vec(
                "(- |\\[resolved\\] |\\[new\\] |batch one has duplicate rows after the switch|[aAbB ._*`é\t]|[a-z]{12}){0,6}",
                0..10,
            ),
            repeats in proptest::collection::vec(0usize..10, 0..4),
            new in proptest::collection::vec("(batch one has duplicate rows|[aAbB ._]|[a-z]{12}){0,6}", 0..3),
        ) {
            let mut lines = lines;
            for at in repeats {
                if let Some(line) = lines.get(at).cloned() {
                    lines.push(line.to_uppercase());
                    lines.push(line);
                }
            }
            let old = lines.join("\n");
            let mut buffer = String::new();
            let new_keys = keys_of_lines(&new, &mut buffer);
            let indexed = NewKeys::new(&new_keys);
            proptest::prop_assert_eq!(
                dropped_items(&old, &indexed, &mut buffer),
                dropped_items_by_key_hash(&old, &indexed, &mut buffer)
            );
        }

        /// Reading a plain item once decides what building its key decides.
        #[test]
        fn dropped_items_are_found_as_from_their_keys(
            item in "(- |\\[new\\] |[aAbB ._*`é]|batch|[a-z]{12}){0,10}",
            new in proptest::collection::vec("(batch|[aAbB ._]|[a-z]{12}){0,8}", 0..3),
        ) {
            let mut buffer = String::new();
            let mut new_keys = keys_of_lines(&new, &mut buffer);
            let indexed = NewKeys::new(&new_keys);
            proptest::prop_assert_eq!(
                dropped_key_hash(&item, &indexed, &mut buffer),
                dropped_key_hash_by_key(&item, &indexed, &mut buffer)
            );
            // And when the rewrite still has the item.
            new_keys.push_str(&crate::keys::item_key(&item));
            let indexed = NewKeys::new(&new_keys);
            proptest::prop_assert_eq!(
                dropped_key_hash(&item, &indexed, &mut buffer),
                dropped_key_hash_by_key(&item, &indexed, &mut buffer)
            );
        }
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
