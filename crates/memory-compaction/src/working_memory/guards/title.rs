//! Session Title: stable unless the subject changed.
//!
//! An UPDATE is accepted when the old title has no meaningful word, or when the new one shares
//! at least one. Meaningful words are runs of letters, digits and dots that start with a
//! letter and have three or more characters, or runs of digits and dots holding a digit;
//! trailing dots are dropped, case is ignored, and a few filler words (`the`, `session`,
//! `working`, `memory`, `notes`, ...) never count. A title is one line, so an APPEND keeps it.

use memory_protocol::working_memory::{GuardKind, SectionOp};

use super::Verdict;

const FILLER_WORDS: &[&str] = &[
    "the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "with", "by", "at", "from",
    "session", "title", "working", "memory", "plan", "plans", "notes", "note",
];

/// The runs of ASCII letters, digits and dots of a text. Every other byte (UTF-8 bytes of
/// other characters included) separates runs, so a byte scan finds the same runs as a split
/// by characters, and every cut falls between characters.
fn runs(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        let in_run = |byte: &u8| byte.is_ascii_alphanumeric() || *byte == b'.';
        let start = at + bytes.get(at..)?.iter().position(in_run)?;
        let length = bytes
            .get(start..)?
            .iter()
            .position(|byte| !in_run(byte))
            .unwrap_or(bytes.len() - start);
        at = start + length;
        text.get(start..at)
    })
}

/// True when a run (without its edge dots) is a meaningful word.
fn is_meaningful(run: &str) -> bool {
    let starts_with_letter = run.starts_with(|ch: char| ch.is_ascii_alphabetic());
    let shaped = (starts_with_letter && run.len() >= 3)
        || (!run.is_empty()
            && run.bytes().any(|b| b.is_ascii_digit())
            && run.bytes().all(|b| b.is_ascii_digit() || b == b'.'));
    // No filler word is longer than seven letters.
    shaped
        && (run.len() > 7
            || !FILLER_WORDS
                .iter()
                .any(|filler| filler.eq_ignore_ascii_case(run)))
}

/// The meaningful words of a title, as written.
pub(crate) fn meaningful_words(title: &str) -> Vec<&str> {
    runs(title)
        .map(|run| run.trim_matches('.'))
        .filter(|run| is_meaningful(run))
        .collect()
}

/// True when `old` has no meaningful word or shares one with `new_words`. A run equal to a
/// meaningful word, ignoring ASCII case, is itself meaningful (the rules only look at ASCII
/// letters, digits, dots and length), so the old title's runs are compared as they come and
/// only the first one is checked for meaning.
fn keeps_a_word(old: &str, new_words: &[&str]) -> bool {
    let mut old_has_words = false;
    for run in runs(old).map(|run| run.trim_matches('.')) {
        if new_words
            .iter()
            .any(|new| new.len() == run.len() && new.eq_ignore_ascii_case(run))
        {
            return true;
        }
        old_has_words = old_has_words || is_meaningful(run);
    }
    !old_has_words
}

pub(crate) fn guard(old: &str, op: SectionOp) -> Verdict {
    match op {
        SectionOp::Keep => Verdict::pass(op),
        SectionOp::Append { .. } => Verdict::changed(
            SectionOp::Keep,
            GuardKind::TitleStability,
            "a title is one line: items are not appended to it",
        ),
        SectionOp::Update { ref content } => {
            if keeps_a_word(old, &meaningful_words(content)) {
                Verdict::pass(op)
            } else {
                Verdict::changed(
                    SectionOp::Keep,
                    GuardKind::TitleStability,
                    format!(
                        "the new title `{}` shares no meaningful word with the old one",
                        content.trim()
                    ),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..ProptestConfig::default() })]

        #[test]
        fn runs_are_the_split_by_characters(text in r"(\PC|[a-zA-Z0-9. ])*") {
            let expected: Vec<&str> = text
                .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '.'))
                .filter(|run| !run.is_empty())
                .collect();
            prop_assert_eq!(runs(&text).collect::<Vec<_>>(), expected);
        }
    }

    /// The rule as written: the old title has no meaningful word, or shares one.
    fn plain_rule(old: &str, new: &str) -> bool {
        let old_words = meaningful_words(old);
        let new_words = meaningful_words(new);
        old_words.is_empty()
            || old_words
                .iter()
                .any(|old| new_words.iter().any(|new| new.eq_ignore_ascii_case(old)))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..ProptestConfig::default() })]

        #[test]
        fn the_early_exit_follows_the_rule(
            old in r"((the|The|a|v2|1.5|..|x|abc|Tide|tide|Session|NOTES|é|mémoire)[ .-]?){0,8}",
            new in r"((the|a|V2|1.5.|x|ABC|tide|session|é|mémoire)[ .-]?){0,5}",
        ) {
            prop_assert_eq!(keeps_a_word(&old, &meaningful_words(&new)), plain_rule(&old, &new));
        }
    }

    #[test]
    fn no_filler_word_is_longer_than_seven_letters() {
        assert!(FILLER_WORDS.iter().all(|filler| filler.len() <= 7));
    }

    #[test]
    fn filler_and_short_words_do_not_count() {
        assert_eq!(
            meaningful_words("The Ünïcode v2.0 session for Tidewater..."),
            ["code", "v2.0", "Tidewater"]
        );
    }
}
