//! Lexical anchors of Key Facts & Decisions: the words a consolidating rewrite must keep.
//!
//! Four kinds, compared lower-cased: dates (`2024-01-20`, `7 May 2024`); amounts and counts
//! (`$2,000`, `3 kids`, `6 AM`, `40%`, `12 tests`); decision words (`because`, `decided`,
//! `chose`, `committed`, `agreed`, `resolved`); and capitalized names of three or more letters
//! (`OpenAI`, `McCloud`, `Postgres`) that are not common words. Found by a word scanner, not
//! regular expressions, and compared by a hash of their lower-cased text, so a guard check
//! allocates nothing per anchor.

use std::collections::HashSet;

/// Words after a number that make it a fact worth keeping.
#[rustfmt::skip]
const UNITS: &[&str] = &[
    "second", "seconds", "minute", "minutes", "hour", "hours", "day", "days", "week", "weeks",
    "month", "months", "year", "years", "ms", "time", "times", "round", "rounds", "session",
    "sessions", "visit", "visits", "attempt", "attempts", "retries", "test", "tests", "file",
    "files", "line", "lines", "item", "items", "user", "users", "people", "person", "persons",
    "kid", "kids", "child", "children", "dollar", "dollars", "euro", "euros", "pound", "pounds",
    "byte", "bytes", "kb", "mb", "gb", "token", "tokens", "mile", "miles", "km", "bedroom",
    "bedrooms", "am", "pm",
];

#[rustfmt::skip]
const MONTHS: &[&str] = &[
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
];

const DECISION_WORDS: &[&str] = &[
    "because",
    "decided",
    "chose",
    "committed",
    "agreed",
    "resolved",
];

/// Capitalized words that are not names: sentence starters and the section's own vocabulary.
#[rustfmt::skip]
const COMMON_WORDS: &[&str] = &[
    "the", "and", "for", "with", "from", "this", "that", "these", "those", "not", "but", "then",
    "its", "they", "their", "them", "she", "her", "him", "his", "our", "you", "your", "who",
    "which", "what", "when", "where", "how", "why", "all", "each", "every", "both", "few",
    "more", "most", "other", "some", "such", "than", "too", "very", "also", "just", "about",
    "after", "before", "between", "into", "through", "during", "again", "further", "once",
    "here", "there", "over", "under", "out", "off", "own", "same", "only", "new", "old", "key",
    "facts", "decisions", "session", "working", "memory", "are", "was", "were", "has", "have",
    "had", "been", "will", "would", "could", "should", "may", "might", "shall", "use", "uses",
    "used", "user", "users", "added", "fixed", "set", "see", "note", "keep", "run", "runs",
];

/// One anchor: one to three words of the text.
#[derive(Debug, Clone, Copy)]
struct Anchor<'a> {
    words: [&'a str; 3],
    len: usize,
}

impl<'a> Anchor<'a> {
    fn one(word: &'a str) -> Self {
        Self {
            words: [word, "", ""],
            len: 1,
        }
    }

    /// FNV-1a of the lower-cased words joined by single spaces.
    fn key(&self) -> u64 {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for (i, word) in self.words[..self.len].iter().enumerate() {
            if i > 0 {
                hash = (hash ^ u64::from(b' ')).wrapping_mul(0x100_0000_01b3);
            }
            for byte in word.bytes() {
                hash = (hash ^ u64::from(byte.to_ascii_lowercase())).wrapping_mul(0x100_0000_01b3);
            }
        }
        hash
    }

    fn text(&self) -> String {
        self.words[..self.len].join(" ").to_ascii_lowercase()
    }
}

fn in_list(word: &str, list: &[&str]) -> bool {
    list.iter().any(|known| known.eq_ignore_ascii_case(word))
}

fn is_number(word: &str) -> bool {
    !word.is_empty() && word.bytes().all(|b| b.is_ascii_digit())
}

fn is_iso_date(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// `$2,000` or `$19.99`, without trailing punctuation.
fn money(word: &str) -> Option<&str> {
    let rest = word.strip_prefix('$')?;
    if !rest.starts_with(|ch: char| ch.is_ascii_digit()) {
        return None;
    }
    let end = rest
        .find(|ch: char| !(ch.is_ascii_digit() || ch == ',' || ch == '.'))
        .unwrap_or(rest.len());
    Some(word[..=end].trim_end_matches([',', '.']))
}

/// An ASCII capital followed by at least two ASCII letters, nothing else.
fn is_name(part: &str) -> bool {
    let bytes = part.as_bytes();
    bytes.len() >= 3
        && bytes[0].is_ascii_uppercase()
        && bytes[1..].iter().all(u8::is_ascii_alphabetic)
}

fn is_edge_punctuation(ch: char) -> bool {
    matches!(
        ch,
        '(' | ')'
            | '['
            | ']'
            | '{'
            | '}'
            | '"'
            | '\''
            | '`'
            | '*'
            | '_'
            | ','
            | ';'
            | ':'
            | '!'
            | '?'
    )
}

/// Calls `found` for every anchor of `text`, repeats included.
fn scan<'a>(text: &'a str, mut found: impl FnMut(Anchor<'a>)) {
    let words: Vec<&str> = text
        .split_whitespace()
        .map(|word| word.trim_matches(is_edge_punctuation))
        .filter(|word| !word.is_empty())
        .collect();
    for (at, raw) in words.iter().enumerate() {
        let word = raw.trim_end_matches('.');
        if is_iso_date(word) {
            found(Anchor::one(word));
        }
        if let Some(amount) = money(word) {
            found(Anchor::one(amount));
        }
        if is_number(word)
            && let Some(next) = words.get(at + 1).map(|w| w.trim_end_matches('.'))
        {
            if word.len() <= 2 && in_list(next, MONTHS) {
                if let Some(year) = words.get(at + 2).map(|w| w.trim_end_matches('.'))
                    && year.len() == 4
                    && is_number(year)
                {
                    found(Anchor {
                        words: [word, next, year],
                        len: 3,
                    });
                }
            } else if in_list(next, UNITS) {
                found(Anchor {
                    words: [word, next, ""],
                    len: 2,
                });
            }
        }
        if word.len() > 1 && word.ends_with('%') && is_number(&word[..word.len() - 1]) {
            found(Anchor::one(word));
        }
        for part in word.split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_')) {
            if part.len() < 3 {
                continue;
            }
            let decision = in_list(part, DECISION_WORDS);
            if decision || (is_name(part) && !in_list(part, COMMON_WORDS)) {
                found(Anchor::one(part));
            }
        }
    }
}

/// The anchors of a text, lower-cased and deduplicated.
pub fn lexical_anchors(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    scan(text, |anchor| {
        out.insert(anchor.text());
    });
    out
}

/// The anchors of a text as sorted, deduplicated keys (hashes of their lower-cased text).
pub(crate) fn anchor_keys(text: &str) -> Vec<u64> {
    let mut keys = Vec::new();
    scan(text, |anchor| keys.push(anchor.key()));
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// The share of `old`'s anchor keys found in `new` (1.0 when `old` has none).
pub(crate) fn anchor_coverage(old: &[u64], new: &[u64]) -> f64 {
    if old.is_empty() {
        return 1.0;
    }
    let kept = old
        .iter()
        .filter(|key| new.binary_search(key).is_ok())
        .count();
    kept as f64 / old.len() as f64
}

/// The anchors of `old` whose keys are not in `new`, sorted, for a reason text.
pub(crate) fn lost_anchors(old: &str, new: &[u64]) -> Vec<String> {
    let mut lost = Vec::new();
    scan(old, |anchor| {
        if new.binary_search(&anchor.key()).is_err() {
            lost.push(anchor.text());
        }
    });
    lost.sort_unstable();
    lost.dedup();
    lost
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_kind() {
        let found = lexical_anchors(
            "On 2024-01-20 and 7 May 2024, we decided because of $2,000 and 3 kids at 6 AM. \
             OpenAI McCloud The Key ran 40% of 12 tests.",
        );
        let mut sorted: Vec<&str> = found.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            [
                "$2,000",
                "12 tests",
                "2024-01-20",
                "3 kids",
                "40%",
                "6 am",
                "7 may 2024",
                "because",
                "decided",
                "mccloud",
                "openai"
            ]
        );
    }

    #[test]
    fn keys_ignore_case_and_match_the_text() {
        let old = anchor_keys("Okafor agreed on 7 May 2024");
        let new = anchor_keys("OKAFOR AGREED ON 7 MAY 2024");
        assert_eq!(old, new);
        assert_eq!(
            anchor_coverage(&old, &anchor_keys("Okafor only")),
            1.0 / 3.0
        );
        assert_eq!(
            lost_anchors("Okafor agreed on 7 May 2024", &anchor_keys("Okafor")),
            ["7 may 2024", "agreed"]
        );
    }
}
