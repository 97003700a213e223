//! Lexical anchors of Key Facts & Decisions: the words a consolidating rewrite must keep.
//!
//! Five kinds, compared lower-cased: dates (`2024-01-20`, `7 May 2024`); amounts and counts
//! (`$2,000`, `3 kids`, `6 AM`, `40%`, `12 tests`); decision words (`because`, `decided`,
//! `chose`, `committed`, `agreed`, `resolved`); capitalized names of three or more letters in
//! any cased script (`OpenAI`, `McCloud`, `Zürich`, `Петров`) that are not common words; and,
//! in scripts where no capital marks a name, the text itself: character bigrams of Chinese,
//! Japanese and Korean, words of three or more letters of Arabic, Hebrew and the like. Found
//! by a word scanner, not regular expressions.

use std::collections::HashSet;

use crate::script::{bigrams, cjk_runs, is_caseless_letter};

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

/// A capital followed by at least two letters, nothing else, in any cased script.
fn is_name(part: &str) -> bool {
    let mut chars = part.chars();
    chars.next().is_some_and(char::is_uppercase)
        && part.chars().count() >= 3
        && chars.all(char::is_alphabetic)
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

/// The anchors of a text, lower-cased and deduplicated.
pub(crate) fn lexical_anchors(text: &str) -> HashSet<String> {
    let words: Vec<&str> = text
        .split_whitespace()
        .map(|word| word.trim_matches(is_edge_punctuation))
        .filter(|word| !word.is_empty())
        .collect();
    let mut found = HashSet::new();
    let mut add = |parts: &[&str]| {
        found.insert(parts.join(" ").to_lowercase());
    };
    for (at, raw) in words.iter().enumerate() {
        let word = raw.trim_end_matches('.');
        if is_iso_date(word) {
            add(&[word]);
        }
        if let Some(amount) = money(word) {
            add(&[amount]);
        }
        if is_number(word)
            && let Some(next) = words.get(at + 1).map(|w| w.trim_end_matches('.'))
        {
            if word.len() <= 2 && in_list(next, MONTHS) {
                if let Some(year) = words.get(at + 2).map(|w| w.trim_end_matches('.'))
                    && year.len() == 4
                    && is_number(year)
                {
                    add(&[word, next, year]);
                }
            } else if in_list(next, UNITS) {
                add(&[word, next]);
            }
        }
        if word.len() > 1 && word.ends_with('%') && is_number(&word[..word.len() - 1]) {
            add(&[word]);
        }
        for part in word.split(|ch: char| !(ch.is_alphanumeric() || ch == '_')) {
            for (cjk, piece) in cjk_runs(part) {
                if cjk {
                    for bigram in bigrams(piece) {
                        add(&[bigram]);
                    }
                    continue;
                }
                if piece.chars().count() < 3 {
                    continue;
                }
                let decision = in_list(piece, DECISION_WORDS);
                let caseless = piece.chars().all(is_caseless_letter);
                if decision || caseless || (is_name(piece) && !in_list(piece, COMMON_WORDS)) {
                    add(&[piece]);
                }
            }
        }
    }
    found
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
    fn anchors_in_every_script() {
        let chinese = lexical_anchors("决定使用潮汐表");
        assert!(
            chinese.contains("潮汐") && chinese.contains("决定"),
            "{chinese:?}"
        );
        let russian = lexical_anchors("Петров выбрал Москву");
        assert!(
            russian.contains("петров") && russian.contains("москву"),
            "{russian:?}"
        );
        assert!(
            !russian.contains("выбрал"),
            "lower-case words are not names"
        );
        let arabic = lexical_anchors("قرر أحمد استخدام الجدول");
        assert!(
            arabic.contains("أحمد") && arabic.contains("الجدول"),
            "{arabic:?}"
        );
        let accented = lexical_anchors("Émile moved to Zürich");
        assert!(
            accented.contains("émile") && accented.contains("zürich"),
            "{accented:?}"
        );
    }

    #[test]
    fn extract_anchors_catches_mixed_case_names() {
        let found = lexical_anchors("Moved from OpenAI to McCloud's JavaScript stack.");
        for name in ["openai", "mccloud", "javascript"] {
            assert!(found.contains(name), "{name} in {found:?}");
        }
    }

    #[test]
    fn extract_anchors_catches_standard_proper_nouns() {
        let found = lexical_anchors("Marguerite flies to Lisbon with Tomas.");
        for name in ["marguerite", "lisbon", "tomas"] {
            assert!(found.contains(name), "{name} in {found:?}");
        }
    }

    #[test]
    fn extract_anchors_filters_stopwords() {
        let found = lexical_anchors("The Key Facts: This Session These Those Working Memory.");
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn anchors_ignore_case() {
        assert_eq!(
            lexical_anchors("Okafor agreed on 7 May 2024"),
            lexical_anchors("OKAFOR AGREED ON 7 MAY 2024")
        );
    }
}
