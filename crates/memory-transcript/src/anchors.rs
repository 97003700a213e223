//! Anchors: the words of a memory text that must not vanish silently.
//!
//! A rewrite of a memory file should keep every path, backtick code span, date, identifier,
//! URL, version and command-line flag of the old text unless it retires one on purpose. Paths
//! and URLs are what [`crate::paths`] recognises. The phase-2 guard, the offline consolidation
//! and the working memory's Errors guard all use this one definition.

use std::collections::{BTreeSet, HashSet};

use crate::paths::path_token;

/// Longest backtick span taken as an anchor; longer spans are prose, not a command or name.
const MAX_CODE_SPAN_CHARS: usize = 200;

/// Anchors of `old` that are absent from `new` and not listed in `obsolete`, sorted.
pub fn missing_anchors(old: &str, new: &str, obsolete: &[String]) -> Vec<String> {
    let obsolete: HashSet<&str> = obsolete
        .iter()
        .map(|entry| normalize_anchor(entry))
        .collect();
    let present = extract_anchors(new);
    extract_anchors(old)
        .into_iter()
        .filter(|anchor| {
            !present.contains(anchor)
                && !obsolete.contains(anchor.as_str())
                && !new.contains(anchor.as_str())
        })
        .collect()
}

/// The anchors of a text: backtick code spans, and words that look like paths, URLs, dates,
/// identifiers, versions or command-line flags. Sorted and deduplicated.
pub fn extract_anchors(text: &str) -> BTreeSet<String> {
    let mut anchors = BTreeSet::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            // Odd pieces of a split on '`' are inside a span; an unclosed last span is not.
            let pieces: Vec<&str> = line.split('`').collect();
            let closed = pieces.len() - (pieces.len() + 1) % 2;
            for piece in pieces.iter().take(closed).skip(1).step_by(2) {
                let span = piece.trim();
                if !span.is_empty() && span.chars().count() <= MAX_CODE_SPAN_CHARS {
                    anchors.insert(span.to_owned());
                }
            }
        }
        for word in line.split(|ch: char| ch.is_whitespace() || ch == '`') {
            if let Some(anchor) = word_anchor(word) {
                anchors.insert(anchor.to_owned());
            }
        }
    }
    anchors
}

/// An obsolete entry as a model may have written it: trimmed, without surrounding quotes or
/// backticks.
pub fn normalize_anchor(entry: &str) -> &str {
    entry.trim().trim_matches(['`', '"', '\'']).trim()
}

/// The anchor in one whitespace-separated word, if it is one.
fn word_anchor(word: &str) -> Option<&str> {
    let word = word
        .trim_start_matches(['(', '[', '{', '"', '\'', '<', '*', '_'])
        .trim_end_matches([
            ')', ']', '}', '"', '\'', '>', ',', '.', ';', ':', '!', '?', '*', '_',
        ]);
    if word.chars().count() < 3 || !word.chars().any(|ch| ch.is_ascii_alphanumeric()) {
        return None;
    }
    if let Some(date) = find_date(word) {
        return Some(date);
    }
    if let Some(path) = path_token(word) {
        return Some(path);
    }
    if is_flag(word) {
        return Some(word);
    }
    if is_identifier(word) || is_version(word) {
        return Some(word);
    }
    None
}

/// The first `YYYY-MM-DD` in a word.
fn find_date(word: &str) -> Option<&str> {
    let bytes = word.as_bytes();
    (0..bytes.len().saturating_sub(9)).find_map(|start| {
        let candidate = bytes.get(start..start + 10)?;
        let shape = candidate
            .iter()
            .enumerate()
            .all(|(index, byte)| match index {
                4 | 7 => *byte == b'-',
                _ => byte.is_ascii_digit(),
            });
        let bounded = start == 0 || !bytes.get(start - 1).is_some_and(u8::is_ascii_digit);
        (shape && bounded)
            .then(|| word.get(start..start + 10))
            .flatten()
    })
}

/// A command-line flag such as `--json` or `--max-age-days`.
fn is_flag(word: &str) -> bool {
    word.strip_prefix("--").is_some_and(|name| {
        name.starts_with(|ch: char| ch.is_ascii_alphabetic())
            && name
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '=')
    })
}

/// An identifier that is clearly a name, not an English word: `snake_case`, `CamelCase`,
/// `SCREAMING_CASE` or a `::` path.
fn is_identifier(word: &str) -> bool {
    let shape = word.starts_with(|ch: char| ch.is_ascii_alphabetic() || ch == '_')
        && word
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == ':');
    let chars: Vec<char> = word.chars().collect();
    let inner_underscore = chars.windows(3).any(|window| {
        matches!(window, [before, '_', after]
            if before.is_ascii_alphanumeric() && after.is_ascii_alphanumeric())
    });
    let camel = chars.windows(2).any(|window| {
        matches!(window, [lower, upper] if lower.is_ascii_lowercase() && upper.is_ascii_uppercase())
    });
    shape && (inner_underscore || camel || word.contains("::"))
}

/// A dotted version with at least three parts, such as `1.89.0` or `v0.2.46`.
fn is_version(word: &str) -> bool {
    let digits = word.strip_prefix('v').unwrap_or(word);
    digits.split('.').count() >= 3
        && digits
            .split('.')
            .all(|part| !part.is_empty() && part.chars().all(|ch| ch.is_ascii_digit()))
}

/// Property-test input for code that reads anchors (the feature `strategies`, for the guards
/// of other crates' tests).
#[cfg(any(test, feature = "strategies"))]
pub mod strategies {
    use proptest::prelude::*;

    /// Markdown-ish text with anchors mixed in, so properties meet real anchors often.
    pub fn memory_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            any::<String>(),
            "[a-z]{1,8}(_[a-z]{1,8}){1,2}",
            "`[a-z -]{1,20}`",
            "(src|crates)/[a-z_]{1,10}\\.rs",
            "20[0-9]{2}-[01][0-9]-[0-3][0-9]",
            "[ \n#*`-]{0,4}",
        ];
        prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::strategies::memory_text;
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn anchors_are_nonempty_substrings(text in memory_text()) {
            for anchor in extract_anchors(&text) {
                prop_assert!(!anchor.is_empty());
                prop_assert!(text.contains(&anchor), "{anchor:?} not in text");
            }
        }

        #[test]
        fn nothing_is_missing_from_an_extension(old in memory_text(), extra in memory_text()) {
            prop_assert!(missing_anchors(&old, &old, &[]).is_empty());
            let extended = format!("{old}\n{extra}");
            prop_assert!(missing_anchors(&old, &extended, &[]).is_empty());
        }
    }

    #[test]
    fn finds_each_kind_of_anchor() {
        let text = "On 2025-03-04 run `cargo test -p memory-write` in crates/memory-write; \
                    see src/lib.rs, Cargo.toml, https://example.com/x, StateStore, \
                    max_unused_days, OPENAI_API_KEY, memory_protocol::names, --json, v1.2.3. \
                    Plain and/or words like the, I/O, e.g. and well-known are not anchors.";
        let anchors = extract_anchors(text);
        for expected in [
            "2025-03-04",
            "cargo test -p memory-write",
            "crates/memory-write",
            "src/lib.rs",
            "Cargo.toml",
            "https://example.com/x",
            "StateStore",
            "max_unused_days",
            "OPENAI_API_KEY",
            "memory_protocol::names",
            "--json",
            "v1.2.3",
        ] {
            assert!(
                anchors.contains(expected),
                "missing {expected}: {anchors:?}"
            );
        }
        for word in ["and/or", "I/O", "e.g", "well-known", "Plain", "words"] {
            assert!(!anchors.contains(word), "{word} taken as an anchor");
        }
    }

    #[test]
    fn fenced_blocks_are_not_split_into_code_spans() {
        let anchors = extract_anchors("```sh\necho `date`\n```\n`unclosed span");
        assert!(!anchors.contains("date"));
        assert!(!anchors.contains("unclosed span"));
    }
}
