//! Reading bullet items out of a section body, comparing them, and measuring a body.

use memory_protocol::working_memory::limits;

pub use super::keys::{ItemKeys, fresh_items, hash_of_key, item_key, key_hash};
use memory_sanitize::{CjkEstimate, TokenCounter};

/// The items of a body, in order: every non-blank line that is not a heading (`#...`), without
/// its bullet marker (`-`, `*`, `1.`, `2)` followed by whitespace). A plain line is an item too.
pub fn items(body: &str) -> impl Iterator<Item = &str> {
    lines(body).filter_map(item_of_line)
}

/// The item of one line of a body, if it is one (see [`items`]).
fn item_of_line(line: &str) -> Option<&str> {
    // Most lines are `- item` with ASCII edges: the item is the line after its marker.
    if let [b'-' | b'*' | b'+', b' ', first, .., last] = line.as_bytes()
        && first.is_ascii()
        && !is_ascii_space(*first)
        && last.is_ascii()
        && !is_ascii_space(*last)
    {
        return line.get(2..);
    }
    let line = trim(line);
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    // A marker needs whitespace after it, and `line` ends in none: what is left after
    // a marker and its whitespace is already trimmed, and never empty.
    Some(strip_marker(line))
}

/// True for the ASCII characters `char::is_whitespace` accepts.
fn is_ascii_space(byte: u8) -> bool {
    matches!(byte, b'\t'..=b'\r' | b' ')
}

/// `text.trim()`, with ASCII whitespace skipped byte by byte: lines almost always start and
/// end in ASCII, and only a non-ASCII edge needs the character-wise trim.
pub(crate) fn trim(text: &str) -> &str {
    let bytes = text.as_bytes();
    let start = bytes
        .iter()
        .position(|byte| !is_ascii_space(*byte))
        .unwrap_or(bytes.len());
    let rest = text.get(start..).unwrap_or_default();
    let rest = if rest.as_bytes().first().is_some_and(|byte| !byte.is_ascii()) {
        rest.trim_start()
    } else {
        rest
    };
    let bytes = rest.as_bytes();
    let end = bytes
        .iter()
        .rposition(|byte| !is_ascii_space(*byte))
        .map_or(0, |at| at + 1);
    let rest = rest.get(..end).unwrap_or_default();
    if rest.as_bytes().last().is_some_and(|byte| !byte.is_ascii()) {
        rest.trim_end()
    } else {
        rest
    }
}

/// The lines of a text, split at `\n` like `text.split('\n')`, each end found by
/// `find_line_break`.
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = Some(0);
    std::iter::from_fn(move || {
        let from = start?;
        match find_line_break(bytes, from) {
            Some(end) => {
                start = Some(end + 1);
                text.get(from..end)
            }
            None => {
                start = None;
                text.get(from..)
            }
        }
    })
}

/// Where the first `\n` of `bytes` at or after `from` is (one vectorized search).
fn find_line_break(bytes: &[u8], from: usize) -> Option<usize> {
    memchr::memchr(b'\n', bytes.get(from..)?).map(|at| from + at)
}

/// A line without its leading bullet marker; the line itself when it has none.
pub fn strip_marker(line: &str) -> &str {
    let bytes = line.as_bytes();
    let after = match bytes.first() {
        Some(b'-' | b'*' | b'+') => 1,
        Some(b'0'..=b'9') => {
            let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            match bytes.get(digits) {
                Some(b'.' | b')') => digits + 1,
                _ => return line,
            }
        }
        _ => return line,
    };
    match line.get(after..) {
        Some(rest) if rest.starts_with(char::is_whitespace) => trim_start(rest),
        _ => line,
    }
}

/// `text.trim_start()`, with ASCII whitespace skipped byte by byte (see [`trim`]).
fn trim_start(text: &str) -> &str {
    let start = text
        .as_bytes()
        .iter()
        .position(|byte| !is_ascii_space(*byte))
        .unwrap_or(text.len());
    let rest = text.get(start..).unwrap_or_default();
    if rest.as_bytes().first().is_some_and(|byte| !byte.is_ascii()) {
        rest.trim_start()
    } else {
        rest
    }
}

/// An item as the model should write it in an APPEND: one line, no bullet marker, trimmed.
/// `None` for an empty item or one that only says `none`.
pub fn clean_item(item: &str) -> Option<String> {
    let one_line = if item.contains(['\n', '\r']) {
        item.split_whitespace().collect::<Vec<_>>().join(" ")
    } else {
        item.trim().to_owned()
    };
    let stripped = strip_marker(one_line.trim()).trim();
    if stripped.is_empty() || crate::document::normalize_body(stripped).is_empty() {
        return None;
    }
    Some(stripped.to_owned())
}

/// The status tags an item may start with, in any case.
const STATUS_TAGS: [&str; 4] = [
    limits::NEW_MARKER,
    limits::RESOLVED_MARKER,
    limits::RESTORED_MARKER,
    // The marker of the reference implementation, so documents it wrote compare the same.
    "[silently dropped, restored]",
];

/// An item without the status tags it starts with.
pub fn strip_status_tags(item: &str) -> &str {
    let mut rest = trim_start(item);
    loop {
        if !rest.starts_with('[') {
            return rest;
        }
        let Some(tag) = STATUS_TAGS
            .iter()
            .find(|tag| starts_with_ignore_case(rest, tag))
        else {
            return rest;
        };
        rest = rest[tag.len()..].trim_start();
    }
}

/// True when the item starts with `tag` (among its leading status tags), in any case.
pub fn has_status_tag(item: &str, tag: &str) -> bool {
    // An item that starts with a letter has no marker, space or tag before its text (every
    // status tag starts with `[`).
    if tag.starts_with('[') && item.as_bytes().first().is_some_and(u8::is_ascii_alphabetic) {
        return false;
    }
    let mut rest = trim_start(strip_marker(trim(item)));
    loop {
        // Every status tag starts with `[`: most items are out at once.
        if tag.starts_with('[') && !rest.starts_with('[') {
            return false;
        }
        if starts_with_ignore_case(rest, tag) {
            return true;
        }
        let Some(other) = STATUS_TAGS
            .iter()
            .find(|t| starts_with_ignore_case(rest, t))
        else {
            return false;
        };
        rest = rest[other.len()..].trim_start();
    }
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.len() >= prefix.len()
        && text.is_char_boundary(prefix.len())
        && text[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// Estimated tokens of a text (script-aware; see [`CjkEstimate`]).
pub fn tokens(text: &str) -> usize {
    CjkEstimate.count(text)
}

/// The size of a body: items and estimated tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SectionSize {
    /// Items ([`items`]).
    pub bullets: usize,
    /// Estimated tokens of the whole body.
    pub tokens: usize,
}

impl SectionSize {
    /// Measures a body.
    pub fn of(body: &str) -> Self {
        Self {
            bullets: items(body).count(),
            tokens: tokens(body),
        }
    }

    /// Over the section thresholds (strictly more bullets or tokens than allowed).
    pub fn is_oversized(self) -> bool {
        self.bullets > limits::SECTION_BULLET_THRESHOLD
            || self.tokens > limits::SECTION_TOKEN_THRESHOLD
    }

    /// At or past the hard bound.
    pub fn is_at_hard_bound(self) -> bool {
        self.bullets >= limits::hard_bound_bullets() || self.tokens >= limits::hard_bound_tokens()
    }

    /// Past the hard bound.
    pub fn is_past_hard_bound(self) -> bool {
        self.bullets > limits::hard_bound_bullets() || self.tokens > limits::hard_bound_tokens()
    }
}

/// Renders items as bullets, one per line.
pub fn bullets(items: &[String]) -> String {
    append_items("", items)
}

/// `body` with `items` appended as bullets.
pub fn append_items(body: &str, items: &[String]) -> String {
    let mut out = String::with_capacity(body.len() + appended_len(items));
    out.push_str(body);
    push_items(&mut out, items);
    out
}

/// The bytes [`push_items`] adds for `items`.
pub(crate) fn appended_len(items: &[String]) -> usize {
    items.iter().map(|item| item.len() + 3).sum()
}

/// Appends `items` to `body` as bullets, one per line.
pub(crate) fn push_items(body: &mut String, items: &[String]) {
    for item in items {
        if !body.is_empty() {
            body.push('\n');
        }
        body.push_str("- ");
        body.push_str(item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..proptest::prelude::ProptestConfig::default() })]

        #[test]
        fn trim_is_str_trim(text in "[ \t\n\x0b\x0c\ra\u{a0}\u{2003}\u{3000}é]{0,12}") {
            proptest::prop_assert_eq!(trim(&text), text.trim());
        }

        #[test]
        fn trim_start_is_str_trim_start(text in "[ \t\n\x0b\x0c\ra\u{a0}\u{2003}\u{3000}é]{0,12}") {
            proptest::prop_assert_eq!(trim_start(&text), text.trim_start());
        }

        #[test]
        fn status_tags_follow_their_definition(item in "(- |\\[new\\] |\\[RESOLVED\\]|\\[resolved\\]| |a|\\[|\u{a0}){0,5}") {
            let plain = {
                let mut rest = strip_marker(item.trim()).trim_start();
                loop {
                    if starts_with_ignore_case(rest, limits::RESOLVED_MARKER) {
                        break true;
                    }
                    match STATUS_TAGS.iter().find(|t| starts_with_ignore_case(rest, t)) {
                        Some(other) => rest = rest[other.len()..].trim_start(),
                        None => break false,
                    }
                }
            };
            proptest::prop_assert_eq!(has_status_tag(&item, limits::RESOLVED_MARKER), plain);
            let mut expected = item.trim_start();
            while let Some(tag) = STATUS_TAGS.iter().find(|tag| starts_with_ignore_case(expected, tag)) {
                expected = expected[tag.len()..].trim_start();
            }
            proptest::prop_assert_eq!(strip_status_tags(&item), expected);
        }

        #[test]
        fn lines_of_any_length_are_split_lines(lines_in in proptest::collection::vec("[a\u{e9} ]{0,70}", 0..6)) {
            let text = lines_in.join("\n");
            proptest::prop_assert_eq!(lines(&text).collect::<Vec<_>>(), text.split('\n').collect::<Vec<_>>());
        }

        #[test]
        fn lines_are_split_lines(text in "[\na\u{e9}]{0,40}") {
            proptest::prop_assert_eq!(lines(&text).collect::<Vec<_>>(), text.split('\n').collect::<Vec<_>>());
        }

        /// Items as first defined: each line trimmed, marker stripped, trimmed again.
        #[test]
        fn items_follow_their_definition(body in "[- *#1.)\n \ta\u{a0}\u{2003}é]{0,40}|((- |\\* |[-+] ?)[a \u{a0}é][ab]{0,20}[ a\u{a0}]?\n){0,6}") {
            let expected: Vec<&str> = body
                .split('\n')
                .filter_map(|line| {
                    let line = line.trim();
                    if line.is_empty() || line.starts_with('#') {
                        return None;
                    }
                    let marker_free = match line.as_bytes().first() {
                        Some(b'-' | b'*' | b'+' | b'0'..=b'9') => strip_marker(line),
                        _ => line,
                    };
                    let item = marker_free.trim();
                    (!item.is_empty()).then_some(item)
                })
                .collect();
            proptest::prop_assert_eq!(items(&body).collect::<Vec<_>>(), expected);
        }
    }

    #[test]
    fn markers_are_stripped_only_before_whitespace() {
        assert_eq!(strip_marker("- a"), "a");
        assert_eq!(strip_marker("12) b"), "b");
        assert_eq!(strip_marker("3. c"), "c");
        assert_eq!(strip_marker("-x"), "-x");
        assert_eq!(strip_marker("2024-01-01 d"), "2024-01-01 d");
    }

    #[test]
    fn keys_ignore_case_tags_emphasis_and_spacing() {
        assert_eq!(
            item_key("- [resolved] **Fix**  the `parser`."),
            "fix the parser"
        );
        assert_eq!(item_key("[RESTORED] [new] x"), "x");
        assert_eq!(item_key("snake_case_name"), "snake_case_name");
    }
}
