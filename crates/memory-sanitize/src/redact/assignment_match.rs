//! The matches of the `generic-assignment` regex, found without running it.
//!
//! That rule's keywords (`key`, `token`, `pass`, ...) are everywhere in code and in JSON, and
//! every `name:` or `name =` in a window around a hit is a match, so the regex ran about four
//! times per window and each run cost a lazy-DFA scan, a reverse scan and a backtracking pass
//! for the captures. The shape is simple enough to find by hand: every match holds a
//! separator, so the search jumps from one separator byte to the next and reads the key
//! backwards from it, then checks the match forwards exactly as the regex would take it.
//!
//! [`find`] returns what `captures_read_at` returns for the rule's pattern (leftmost-first, the
//! same groups); a test compares the two on generated text.

use memchr::memchr3_iter;

/// Spans of one match: index 0 is the whole match, then the capture groups; `None` for a group
/// that did not take part.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Groups([Option<(usize, usize)>; 6]);

impl Groups {
    pub(crate) fn get(&self, group: usize) -> Option<(usize, usize)> {
        self.0.get(group).copied().flatten()
    }

    #[cfg(test)]
    pub(crate) fn from_captures(locs: &regex::bytes::CaptureLocations) -> Groups {
        let mut groups = Groups::default();
        for (group, slot) in groups.0.iter_mut().enumerate() {
            *slot = locs.get(group);
        }
        groups
    }
}

/// The longest key the pattern takes (`{1,80}`).
const MAX_KEY: usize = 80;
/// The most backslashes before a quote (`\\{0,7}`).
const MAX_ESCAPES: usize = 7;

/// A byte of a key name: `[A-Za-z0-9_.\x80-\xFF-]`.
fn is_key(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-') || b >= 0x80
}

fn is_quote(b: u8) -> bool {
    matches!(b, b'"' | b'\'' | b'`')
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// A byte of an unquoted value: `[^\s"'`]`, where `\s` is ASCII whitespace including `\x0B`.
fn is_value(b: u8) -> bool {
    !(matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ') || is_quote(b))
}

/// The separators in the pattern's order of preference.
const SEPARATORS: [&[u8]; 10] = [
    b":=", b"::=", b"=>", b"===", b"!==", b"==", b"!=", b"?=", b"=", b":",
];

/// The leftmost match of `generic-assignment` in `hay` starting at or after `at`, as
/// `captures_read_at(hay, at)` finds it.
pub(crate) fn find(hay: &[u8], at: usize) -> Option<Groups> {
    let rest = hay.get(at..)?;
    // Every separator starts with `:`, `=`, `!` or `?`; `?` only in `?=`, so an `=` follows it
    // and the `=` is found as well.
    for offset in memchr3_iter(b':', b'=', b'!', rest) {
        let separator = at + offset;
        if let Some(groups) = match_before(hay, at, separator) {
            return Some(groups);
        }
        // `?=`: its `=` is the byte found; the separator starts one byte earlier.
        if hay.get(separator) == Some(&b'=')
            && separator > at
            && hay.get(separator - 1) == Some(&b'?')
            && let Some(groups) = match_before(hay, at, separator - 1)
        {
            return Some(groups);
        }
    }
    None
}

/// The match whose separator starts at `separator`, if one starts at or after `at`.
fn match_before(hay: &[u8], at: usize, separator: usize) -> Option<Groups> {
    // Backwards: blanks, an optional quote with its backslashes, then the key.
    let mut key_end = separator;
    while key_end > 0 && hay.get(key_end - 1).copied().is_some_and(is_blank) {
        key_end -= 1;
    }
    if key_end > 0 && hay.get(key_end - 1).copied().is_some_and(is_quote) {
        key_end -= 1;
        while key_end > 0 && hay.get(key_end - 1) == Some(&b'\\') {
            key_end -= 1;
        }
    }
    let mut key_start = key_end;
    while key_start > 0
        && key_end - key_start <= MAX_KEY
        && hay.get(key_start - 1).copied().is_some_and(is_key)
    {
        key_start -= 1;
    }
    let key_len = key_end - key_start;
    if key_len == 0 || key_len > MAX_KEY {
        return None;
    }
    // `^` when the key opens the haystack, else the byte before it (not a key byte).
    let start = key_start.saturating_sub(1);
    if start < at {
        return None;
    }
    let groups = forward(hay, start, key_start, key_end)?;
    // The path forward from the key must reach this separator; it always does when the
    // backward reading was right, and a mismatch is no match rather than a wrong one.
    (groups.get(3).map(|(s, _)| s) == Some(separator)).then_some(groups)
}

/// The match from `start` with its key at `key_start..key_end`, read forwards.
fn forward(hay: &[u8], start: usize, key_start: usize, key_end: usize) -> Option<Groups> {
    let mut groups = Groups::default();
    let mut at = key_end;
    let key_quote = quote_group(hay, at);
    if let Some((_, end)) = key_quote {
        at = end;
    }
    while hay.get(at).copied().is_some_and(is_blank) {
        at += 1;
    }
    let rest = hay.get(at..).unwrap_or_default();
    let separator = SEPARATORS.iter().find(|s| rest.starts_with(s))?;
    let separator = (at, at + separator.len());
    at = separator.1;
    while hay.get(at).copied().is_some_and(is_blank) {
        at += 1;
    }
    let value_quote = quote_group(hay, at);
    if let Some((_, end)) = value_quote {
        at = end;
    }
    let value_start = at;
    while hay.get(at).copied().is_some_and(is_value) {
        at += 1;
    }
    groups.0 = [
        Some((start, at)),
        Some((key_start, key_end)),
        key_quote,
        Some(separator),
        value_quote,
        Some((value_start, at)),
    ];
    Some(groups)
}

/// `(\\{0,7}["'`])` at `at`: up to seven backslashes and a quote.
fn quote_group(hay: &[u8], at: usize) -> Option<(usize, usize)> {
    let escapes = hay
        .get(at..)?
        .iter()
        .take(MAX_ESCAPES + 1)
        .take_while(|&&b| b == b'\\')
        .count();
    (escapes <= MAX_ESCAPES && hay.get(at + escapes).copied().is_some_and(is_quote))
        .then_some((at, at + escapes + 1))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use regex::bytes::{Regex, RegexBuilder};

    use super::*;
    use crate::redact::rules;

    fn reference() -> Regex {
        let rule = rules::all()
            .find(|rule| rule.id == "generic-assignment")
            .unwrap();
        RegexBuilder::new(rule.pattern)
            .unicode(false)
            .size_limit(64 << 20)
            .build()
            .unwrap()
    }

    /// Every match from every start, by the hand matcher and by the regex.
    fn both(regex: &Regex, hay: &[u8]) {
        let mut locs = regex.capture_locations();
        for at in 0..=hay.len() {
            let expected = regex
                .captures_read_at(&mut locs, hay, at)
                .map(|_| Groups::from_captures(&locs));
            assert_eq!(
                find(hay, at),
                expected,
                "at {at} in {:?}",
                String::from_utf8_lossy(hay)
            );
        }
    }

    /// Pieces that make up assignments and near misses of them.
    fn piece() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            4 => prop::sample::select(vec![
                &b"token"[..], b"api_key", b"x.y-z", b"K", b"pass", b"\xc3\xa9", b"a1",
            ]).prop_map(<[u8]>::to_vec),
            6 => prop::sample::select(vec![
                &b":"[..], b"=", b"!", b"?", b">", b":=", b"::=", b"=>", b"===", b"!==", b"==",
                b"!=", b"?=", b" ", b"\t", b"\"", b"'", b"`", b"\\", b"\\\\\\\\",
                b"\n", b"\x0b", b"\x0c", b"\r", b"[", b",", b"$", b"/",
            ]).prop_map(<[u8]>::to_vec),
            1 => prop::collection::vec(any::<u8>(), 1..4),
            1 => Just(vec![b'k'; 79]),
            1 => Just(vec![b'k'; 80]),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn finds_what_the_regex_finds(pieces in prop::collection::vec(piece(), 0..24)) {
            let regex = reference();
            both(&regex, &pieces.concat());
        }
    }

    #[test]
    fn finds_what_the_regex_finds_on_known_shapes() {
        let regex = reference();
        for hay in [
            &b"a:b:c"[..],
            b"token=abc",
            b"  \"api_key\" : \"v a\"",
            b"x ?= y; a != b; c !== d; e === f; g => h; i ::= j; k := l",
            b"\\\\\\\\\"k\":1",
            b"{\"password\":\"hunter2\",\"token\":\"x\"}",
            b"url?token=abc&key=def",
            b"\xc3\xa9t\xc3\xa9=1",
            b"=:!?",
            b"",
        ] {
            both(&regex, hay);
        }
    }

    #[test]
    fn quote_groups_take_at_most_seven_backslashes() {
        assert_eq!(quote_group(b"\\\\\"x", 0), Some((0, 3)));
        assert_eq!(quote_group(b"\\\\\\\\\\\\\\\\\"x", 0), None);
        assert_eq!(quote_group(b"x\"", 0), None);
    }

    #[test]
    fn a_key_of_81_bytes_is_no_key() {
        let long = format!("{}=value", "k".repeat(81));
        assert_eq!(find(long.as_bytes(), 0), None);
        let ok = format!(" {}=value", "k".repeat(80));
        assert!(find(ok.as_bytes(), 0).is_some());
    }
}
