//! Bytes every match of a pattern holds, read from the pattern itself, so a window that lacks
//! them is skipped without running the regex.
//!
//! A rule whose keyword is common in encoded data (the two letters a Discord token starts
//! with, `MT`, `NT`, ... occur every few hundred bytes of base64) gets windows reaching to the
//! end of a long base64 run, and there its regex is at its slowest: the lazy DFA has to track
//! every overlapping candidate of a bounded repetition (`[MNO][A-Za-z0-9_-]{23,27}\.`) and
//! keeps rebuilding its cache. But such a token holds two `.`, which base64 never does; one
//! `memchr` over the window says so.
//!
//! The reading is exact, never a guess: a literal byte, or a class of at most three bytes, that
//! the pattern must pass through (in a sequence, a repetition of at least one, a group, or every
//! branch of an alternation). A pattern it cannot read yields no requirement, and the regex
//! runs as before.

use regex_syntax::ParserBuilder;
use regex_syntax::hir::{Class, Hir, HirKind};

/// The most bytes a requirement may list (one `memchr3`).
const MAX_SET: usize = 3;
/// The most requirements checked per window.
const MAX_CHECKED: usize = 3;

/// Byte sets, one byte of each of which every match of `pattern` holds (most selective first,
/// at most [`MAX_CHECKED`]). Empty when nothing is required or the pattern does not parse.
pub(crate) fn requirements(pattern: &str) -> Vec<Vec<u8>> {
    let Ok(hir) = ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build()
        .parse(pattern)
    else {
        return Vec::new();
    };
    let mut found = Vec::new();
    collect(&hir, &mut found);
    found.sort_by_key(|set| (commonness(set), set.clone()));
    found.dedup();
    found.truncate(MAX_CHECKED);
    found
}

/// True when `window` holds a byte of every requirement.
pub(crate) fn holds(requirements: &[Vec<u8>], window: &[u8]) -> bool {
    requirements.iter().all(|set| match set.as_slice() {
        [a] => memchr::memchr(*a, window).is_some(),
        [a, b] => memchr::memchr2(*a, *b, window).is_some(),
        [a, b, c] => memchr::memchr3(*a, *b, *c, window).is_some(),
        _ => true,
    })
}

fn collect(hir: &Hir, found: &mut Vec<Vec<u8>>) {
    match hir.kind() {
        HirKind::Literal(literal) => found.extend(literal.0.iter().map(|&b| vec![b])),
        HirKind::Class(class) => found.extend(class_bytes(class)),
        HirKind::Repetition(repetition) if repetition.min >= 1 => {
            collect(&repetition.sub, found);
        }
        HirKind::Capture(capture) => collect(&capture.sub, found),
        HirKind::Concat(parts) => parts.iter().for_each(|part| collect(part, found)),
        HirKind::Alternation(branches) => {
            // One byte set per branch; a match passes through one branch, so it holds a byte
            // of their union.
            let mut union = Vec::new();
            for branch in branches {
                let mut inner = Vec::new();
                collect(branch, &mut inner);
                let Some(best) = inner
                    .into_iter()
                    .min_by_key(|set| (set.len(), commonness(set)))
                else {
                    return;
                };
                union.extend(best);
            }
            union.sort_unstable();
            union.dedup();
            if union.len() <= MAX_SET {
                found.push(union);
            }
        }
        HirKind::Repetition(_) | HirKind::Empty | HirKind::Look(_) => {}
    }
}

/// The bytes of a class of at most [`MAX_SET`] bytes.
fn class_bytes(class: &Class) -> Option<Vec<u8>> {
    let ranges: Vec<(u32, u32)> = match class {
        Class::Bytes(bytes) => bytes
            .ranges()
            .iter()
            .map(|r| (u32::from(r.start()), u32::from(r.end())))
            .collect(),
        Class::Unicode(chars) => chars
            .ranges()
            .iter()
            .map(|r| (u32::from(r.start()), u32::from(r.end())))
            .collect(),
    };
    let size: u32 = ranges.iter().map(|(start, end)| end - start + 1).sum();
    if size as usize > MAX_SET {
        return None;
    }
    ranges
        .into_iter()
        .flat_map(|(start, end)| start..=end)
        .map(|b| u8::try_from(b).ok())
        .collect()
}

/// How often a byte set is expected in text: letters and digits are everywhere, a blank or a
/// line break nearly so; punctuation is what prunes.
fn commonness(set: &[u8]) -> usize {
    set.iter()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b' ' | b'\n' => 4,
            b'.' | b'_' | b'-' | b'/' | b':' | b'=' | b'"' => 2,
            _ => 1,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::TestRunner;
    use regex::bytes::RegexBuilder;

    use super::*;
    use crate::redact::rules;

    /// Every match of every rule in text generated from the rule's sample holds what the rule
    /// is said to require: a wrong reading would skip windows holding secrets.
    #[test]
    fn every_rule_match_holds_its_requirements() {
        let mut runner = TestRunner::deterministic();
        let mut checked = 0;
        for rule in rules::all() {
            let required = requirements(rule.pattern);
            let regex = RegexBuilder::new(rule.pattern)
                .unicode(false)
                .size_limit(64 << 20)
                .build()
                .unwrap();
            let strategy = proptest::string::string_regex(rule.sample).unwrap();
            for _ in 0..16 {
                let sample = strategy.new_tree(&mut runner).unwrap().current();
                for found in regex.find_iter(sample.as_bytes()) {
                    assert!(
                        holds(&required, found.as_bytes()),
                        "{}: {:?} lacks one of {required:?}",
                        rule.id,
                        String::from_utf8_lossy(found.as_bytes())
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn required_bytes_are_read_from_the_pattern() {
        let discord = r"([MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})";
        assert_eq!(
            requirements(discord),
            vec![vec![b'.'], vec![b'M', b'N', b'O']]
        );
        // Optional parts and unbounded classes require nothing; branches require their union.
        assert_eq!(requirements(r"a?[b-z]+"), Vec::<Vec<u8>>::new());
        assert_eq!(
            requirements(r"(?:x_|y-)1"),
            vec![vec![b'-', b'_'], vec![b'1']]
        );
        assert_eq!(
            requirements(r"(?i)ab"),
            vec![vec![b'A', b'a'], vec![b'B', b'b']]
        );
        assert_eq!(requirements(r"(?:x|)y"), vec![vec![b'y']]);
        assert!(requirements(r"(").is_empty());
    }

    #[test]
    fn a_window_without_a_required_byte_is_refused() {
        let required = requirements(r"ab\.c");
        assert!(holds(&required, b"xx ab.c"));
        assert!(!holds(&required, b"xx abc"));
    }
}
