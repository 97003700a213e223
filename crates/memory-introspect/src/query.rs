//! A model's search query or a user's message turned into FTS5 terms that cannot inject FTS5
//! syntax, simplified rather than refused.
//!
//! Words are separated by whitespace; text in double quotes is one phrase. Every word and
//! phrase becomes an FTS5 string (`"..."`, inner quotes doubled), so operators, column filters
//! and `*` in the query are just text; a word in a script written without spaces becomes the
//! phrase of its bigrams (see [`crate::grams`]). A query that cannot be taken as written is
//! simplified, never dropped, and [`Query::simplified`] says how: an unclosed quote is ignored,
//! a query over [`MAX_QUERY_CHARS`] is reduced to its key terms, terms past [`MAX_TERMS`] are
//! left out. Common words ([`is_stop_word`]) are left out of recall always, and out of a
//! search when the query has other words; a search of two or more common words and nothing else
//! takes them as one phrase.

use std::collections::HashSet;

use crate::grams::{is_unspaced, query_grams};

/// Longest query searched as written, in characters; a longer one is reduced to key terms.
pub(crate) const MAX_QUERY_CHARS: usize = 1_000;
/// Characters of a very long message read for key terms.
const MAX_SCANNED_CHARS: usize = 64 * 1024;
/// Most terms used.
pub(crate) const MAX_TERMS: usize = 32;

/// What the terms are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// A search the model or the user asked for: common words count when they are all there is.
    Search,
    /// Recall from a user's message: only key terms count.
    Recall,
}

/// Why there is nothing to search for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum QueryError {
    Blank,
    NoWords,
    OnlyCommonWords,
}

impl QueryError {
    pub(crate) fn reason(&self) -> &'static str {
        match self {
            QueryError::Blank => "the query is blank",
            QueryError::NoWords => "the query has no letters or digits to search for",
            QueryError::OnlyCommonWords => {
                "the text has only common words (such as \"the\" or \"what\"), no key terms"
            }
        }
    }
}

/// A parsed query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Query {
    /// Each term as an FTS5 expression, in query order, no two the same.
    pub(crate) terms: Vec<String>,
    /// The runs of unspaced script in the terms, to find where a bigram match sits.
    pub(crate) unspaced: Vec<String>,
    /// How the query was changed to be searchable; empty when it was taken as written.
    pub(crate) simplified: Vec<String>,
}

impl Query {
    /// Every term must match.
    pub(crate) fn all(&self) -> String {
        self.terms.join(" AND ")
    }

    /// Any term may match; more matching terms rank higher.
    pub(crate) fn any(&self) -> String {
        self.terms.join(" OR ")
    }

    /// One sentence saying how the query was simplified, when it was.
    pub(crate) fn simplified_note(&self) -> Option<String> {
        (!self.simplified.is_empty())
            .then(|| format!("the query was simplified: {}", self.simplified.join("; ")))
    }
}

/// Parses `query` (see the module docs).
pub(crate) fn parse(query: &str, purpose: Purpose) -> Result<Query, QueryError> {
    if query.trim().is_empty() {
        return Err(QueryError::Blank);
    }
    let mut simplified = Vec::new();
    let long = query.chars().count() > MAX_QUERY_CHARS;
    let text = match query.char_indices().nth(MAX_SCANNED_CHARS) {
        Some((end, _)) => &query[..end],
        None => query,
    };
    let (raw, unclosed) = split_terms(text);
    if unclosed && !long {
        simplified.push("its unclosed double quote was ignored".to_owned());
    }
    let searchable: Vec<Term<'_>> = raw
        .into_iter()
        .filter(|term| term.text.chars().any(char::is_alphanumeric))
        .collect();
    if searchable.is_empty() {
        return Err(QueryError::NoWords);
    }
    let key: Vec<Term<'_>> = searchable
        .iter()
        .copied()
        .filter(|term| term.phrase || !is_stop_word(term.text))
        .collect();
    // Common words only: each alone is in most blocks and ranks nothing (its weight is about
    // zero), so words are searched as the phrase they make, in their order.
    let common_phrase = joined_words(&searchable);
    let chosen = match (purpose, key.is_empty()) {
        (Purpose::Recall, true) => return Err(QueryError::OnlyCommonWords),
        (Purpose::Search, true) => match &common_phrase {
            Some(phrase) => {
                simplified.push(format!(
                    "it has only common words, so they were searched as the phrase \"{phrase}\""
                ));
                vec![Term {
                    text: phrase,
                    phrase: true,
                }]
            }
            None => searchable,
        },
        (Purpose::Search, false) if !long => {
            if key.len() < searchable.len() {
                let left: Vec<&str> = searchable
                    .iter()
                    .filter(|term| !term.phrase && is_stop_word(term.text))
                    .map(|term| term.text)
                    .collect();
                simplified.push(format!("common words left out: {}", left.join(" ")));
            }
            key
        }
        _ => key,
    };
    let mut seen = HashSet::new();
    let mut terms = Vec::new();
    let mut unspaced = Vec::new();
    let mut dropped = 0usize;
    for term in chosen {
        let Some(expression) = fts_term(term.text, &mut unspaced) else {
            continue;
        };
        if !seen.insert(expression.to_lowercase()) {
            continue;
        }
        if terms.len() == MAX_TERMS {
            dropped += 1;
            continue;
        }
        terms.push(expression);
    }
    if long {
        simplified.push(format!(
            "it is longer than {MAX_QUERY_CHARS} characters, so only its key terms were searched \
             (common words and repeats left out, at most {MAX_TERMS})"
        ));
    } else if dropped > 0 {
        simplified.push(format!(
            "only its first {MAX_TERMS} terms were searched ({dropped} left out)"
        ));
    }
    if terms.is_empty() {
        return Err(QueryError::NoWords);
    }
    Ok(Query {
        terms,
        unspaced,
        simplified,
    })
}

/// A word or a quoted phrase as written.
#[derive(Debug, Clone, Copy)]
struct Term<'a> {
    text: &'a str,
    phrase: bool,
}

/// Two or more words, none quoted, joined by single spaces; `None` otherwise.
fn joined_words(terms: &[Term<'_>]) -> Option<String> {
    (terms.len() >= 2 && terms.iter().all(|term| !term.phrase)).then(|| {
        terms
            .iter()
            .map(|term| term.text)
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// Splits on whitespace, keeping quoted phrases whole. An unclosed quote is ignored (the text
/// after it is read as words); the flag says whether there was one.
fn split_terms(query: &str) -> (Vec<Term<'_>>, bool) {
    let mut terms = Vec::new();
    let mut unclosed = false;
    let mut rest = query;
    while let Some(start) = rest.find(|ch: char| !ch.is_whitespace()) {
        rest = &rest[start..];
        if let Some(after) = rest.strip_prefix('"') {
            match after.find('"') {
                Some(end) => {
                    terms.push(Term {
                        text: &after[..end],
                        phrase: true,
                    });
                    rest = &after[end + 1..];
                }
                None => {
                    unclosed = true;
                    rest = after;
                }
            }
        } else {
            let end = rest
                .find(|ch: char| ch.is_whitespace() || ch == '"')
                .unwrap_or(rest.len());
            terms.push(Term {
                text: &rest[..end],
                phrase: false,
            });
            rest = &rest[end..];
        }
    }
    (terms, unclosed)
}

/// One term's FTS5 expression: a quoted string, or for text with unspaced runs the bigram
/// phrase of each run and the strings of the rest, all required. Pushes the runs to `unspaced`.
fn fts_term(text: &str, unspaced: &mut Vec<String>) -> Option<String> {
    let text = text.replace(|ch: char| ch.is_control(), " ");
    if !text.chars().any(is_unspaced) {
        return Some(quoted(&text));
    }
    let mut parts = Vec::new();
    let mut piece = String::new();
    let mut run = String::new();
    for ch in text.chars().chain(std::iter::once(' ')) {
        if is_unspaced(ch) {
            flush_piece(&mut piece, &mut parts);
            run.push(ch);
        } else {
            if !run.is_empty() {
                parts.push(query_grams(&run));
                unspaced.push(std::mem::take(&mut run));
            }
            if ch.is_whitespace() {
                flush_piece(&mut piece, &mut parts);
            } else {
                piece.push(ch);
            }
        }
    }
    match parts.len() {
        0 => None,
        1 => parts.pop(),
        _ => Some(format!("({})", parts.join(" AND "))),
    }
}

fn flush_piece(piece: &mut String, parts: &mut Vec<String>) {
    if piece.chars().any(char::is_alphanumeric) {
        parts.push(quoted(piece));
    }
    piece.clear();
}

fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// English words too common to say what a message is about.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "because", "been", "before", "being", "but", "by", "can", "could", "did", "do", "does",
    "doing", "done", "for", "from", "get", "got", "had", "has", "have", "having", "he", "her",
    "here", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "it's", "just", "let",
    "me", "might", "more", "most", "much", "must", "my", "no", "not", "now", "of", "on", "or",
    "our", "please", "shall", "she", "should", "so", "some", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "those", "to", "too", "up", "us", "very",
    "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will",
    "with", "would", "you", "your",
];

/// True for a word in [`STOP_WORDS`], ignoring case and surrounding punctuation.
pub(crate) fn is_stop_word(word: &str) -> bool {
    let bare = word
        .trim_matches(|ch: char| !ch.is_alphanumeric())
        .to_lowercase();
    STOP_WORDS.contains(&bare.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn terms(query: &str, purpose: Purpose) -> Vec<String> {
        parse(query, purpose).unwrap().terms
    }

    #[test]
    fn words_and_phrases_become_fts_strings() {
        assert_eq!(
            parse(r#"cargo "invalid date" NEAR(x) -y*"#, Purpose::Search)
                .unwrap()
                .all(),
            r#""cargo" AND "invalid date" AND "NEAR(x)" AND "-y*""#
        );
        assert_eq!(
            parse("a1 b1", Purpose::Search).unwrap().any(),
            r#""a1" OR "b1""#
        );
        assert_eq!(parse("  ", Purpose::Search), Err(QueryError::Blank));
        assert_eq!(parse("-- ** ::", Purpose::Search), Err(QueryError::NoWords));
    }

    #[test]
    fn an_unclosed_quote_is_ignored_and_said() {
        let query = parse(r#"why does "cargo test fail on CI?"#, Purpose::Search).unwrap();
        assert_eq!(
            query.terms,
            [r#""cargo""#, r#""test""#, r#""fail""#, r#""CI?""#]
        );
        assert!(
            query.simplified[0].contains("unclosed double quote"),
            "{:?}",
            query.simplified
        );
    }

    #[test]
    fn a_long_query_is_reduced_to_its_key_terms() {
        let message = format!(
            "{} the flaky nextest runner",
            "why is the build slow ".repeat(60)
        );
        let query = parse(&message, Purpose::Search).unwrap();
        assert_eq!(
            query.terms,
            [
                r#""build""#,
                r#""slow""#,
                r#""flaky""#,
                r#""nextest""#,
                r#""runner""#
            ]
        );
        assert!(query.simplified_note().unwrap().contains("key terms"));
    }

    #[test]
    fn common_words_are_left_out_unless_they_are_all_there_is() {
        assert_eq!(
            terms("what test runner does the user prefer", Purpose::Search),
            [r#""test""#, r#""runner""#, r#""user""#, r#""prefer""#]
        );
        assert_eq!(terms("the", Purpose::Search), [r#""the""#]);
        // Words that are all common make one phrase: alone, each is in most blocks.
        let query = parse("when the", Purpose::Search).unwrap();
        assert_eq!(query.terms, [r#""when the""#]);
        assert!(
            query
                .simplified_note()
                .unwrap()
                .contains(r#"searched as the phrase "when the""#)
        );
        assert_eq!(terms(r#"when "the""#, Purpose::Search), [r#""the""#]);
        assert_eq!(terms(r#""the end""#, Purpose::Recall), [r#""the end""#]);
        assert_eq!(
            parse("what is it?", Purpose::Recall),
            Err(QueryError::OnlyCommonWords)
        );
    }

    #[test]
    fn unspaced_scripts_become_bigram_phrases() {
        let query = parse("制表符 tabs 字", Purpose::Search).unwrap();
        assert_eq!(query.terms, [r#""制表 表符""#, r#""tabs""#, r#""字" *"#]);
        assert_eq!(query.unspaced, ["制表符", "字"]);
        assert_eq!(
            terms("用cargo", Purpose::Search),
            [r#"("用" * AND "cargo")"#]
        );
    }

    /// The text outside FTS5 strings, with the contents of each string removed.
    fn outside_strings(expression: &str) -> (String, bool) {
        let mut outside = String::new();
        let mut inside = false;
        let mut chars = expression.chars().peekable();
        while let Some(ch) = chars.next() {
            if ch == '"' {
                if inside && chars.peek() == Some(&'"') {
                    chars.next();
                    continue;
                }
                inside = !inside;
                continue;
            }
            if !inside {
                outside.push(ch);
            }
        }
        (outside, inside)
    }

    proptest! {
        #![proptest_config(ProptestConfig { rng_seed: proptest::test_runner::RngSeed::Fixed(29), ..ProptestConfig::default() })]

        #[test]
        fn any_query_with_a_word_is_searched_as_only_strings(query in any::<String>(), purpose in prop_oneof![Just(Purpose::Search), Just(Purpose::Recall)]) {
            match parse(&query, purpose) {
                Ok(parsed) => {
                    prop_assert!(!parsed.terms.is_empty() && parsed.terms.len() <= MAX_TERMS);
                    // Outside the strings only our joiners, grouping and prefix stars remain.
                    let (outside, open) = outside_strings(&parsed.all());
                    prop_assert!(!open);
                    let rest = outside.replace(" AND ", "").replace(['(', ')', '*', ' '], "");
                    prop_assert!(rest.is_empty(), "{:?}", outside);
                }
                Err(QueryError::Blank) => prop_assert!(query.trim().is_empty()),
                Err(QueryError::NoWords) => {
                    prop_assert!(!query.chars().take(MAX_SCANNED_CHARS).any(char::is_alphanumeric))
                }
                Err(QueryError::OnlyCommonWords) => prop_assert_eq!(purpose, Purpose::Recall),
            }
        }

        #[test]
        fn words_with_letters_are_never_dropped(words in proptest::collection::vec("[a-z]{3,8}|[\\u4e00-\\u4e20]{1,4}", 1..10), quotes in 0usize..3) {
            // Any mix of words, with or without stray quotes, keeps every word that is not a
            // common one (up to the term limit), never an error.
            let query: Vec<String> = words
                .iter()
                .enumerate()
                .map(|(at, word)| if at < quotes { format!("\"{word}") } else { word.clone() })
                .collect();
            let query = query.join(" ");
            let parsed = parse(&query, Purpose::Search);
            prop_assert!(parsed.is_ok(), "{:?} -> {:?}", query, parsed);
            if quotes.min(words.len()) % 2 == 1 {
                prop_assert!(!parsed.unwrap().simplified.is_empty());
            }
        }

        #[test]
        fn a_long_message_is_never_refused(filler in "[a-z ]{0,40}", times in 30usize..200) {
            let message = format!("{} nextest", filler.repeat(times));
            let parsed = parse(&message, Purpose::Recall);
            prop_assert!(parsed.is_ok());
            let parsed = parsed.unwrap();
            prop_assert!(parsed.terms.len() <= MAX_TERMS);
        }
    }
}
