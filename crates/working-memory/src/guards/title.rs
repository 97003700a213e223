//! Session Title: stable unless the subject changed.
//!
//! An UPDATE is accepted when the old title has no meaningful word, or when the new one shares
//! at least one. Meaningful words are runs of letters, digits and dots that start with a
//! letter and have three or more characters, or runs of digits and dots holding a digit;
//! trailing dots are dropped, case is ignored, and a few filler words (`the`, `session`,
//! `working`, `memory`, `notes`, ...) never count. A title is one line, so an APPEND keeps it.

use memory_protocol::working_memory::{GuardKind, SectionOp};

use super::{Reason, Verdict};

const FILLER_WORDS: &[&str] = &[
    "the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "with", "by", "at", "from",
    "session", "title", "working", "memory", "plan", "plans", "notes", "note",
];

/// The bytes that make up runs: ASCII letters, digits and the dot.
const RUN_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = b.is_ascii_alphanumeric() || b == b'.';
        byte += 1;
    }
    table
};

fn in_run(byte: u8) -> bool {
    RUN_BYTES[usize::from(byte)]
}

/// The runs of ASCII letters, digits and dots of a text. Every other byte (UTF-8 bytes of
/// other characters included) separates runs, so a byte scan finds the same runs as a split
/// by characters, and every cut falls between characters.
fn runs(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while bytes.get(at).is_some_and(|byte| !in_run(*byte)) {
            at += 1;
        }
        let start = at;
        while bytes.get(at).is_some_and(|byte| in_run(*byte)) {
            at += 1;
        }
        (at > start).then(|| text.get(start..at)).flatten()
    })
}

/// A run without its leading and trailing dots.
fn without_edge_dots(run: &str) -> &str {
    if run.starts_with('.') || run.ends_with('.') {
        run.trim_matches('.')
    } else {
        run
    }
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
        .map(without_edge_dots)
        .filter(|run| is_meaningful(run))
        .collect()
}

/// True when `old` has no meaningful word or shares one with `new_words`. A run equal to a
/// meaningful word, ignoring ASCII case, is itself meaningful (the rules only look at ASCII
/// letters, digits, dots and length), so each new word is looked for in the old title as a
/// run ([`occurs_as_run`]), and the old title's runs are read only until the first
/// meaningful one.
fn keeps_a_word(old: &str, new_words: &[&str]) -> bool {
    new_words
        .iter()
        .any(|word| occurs_as_run(old.as_bytes(), word.as_bytes()))
        || !runs(old).map(without_edge_dots).any(is_meaningful)
}

/// True when `word` (a meaningful word: starting and ending with a letter or digit) is,
/// ignoring ASCII case, a run of `text` without its edge dots: found from the places where
/// its first letter occurs (one vectorized search for either case), each kept when only dots
/// stand between it and the ends of its run.
fn occurs_as_run(text: &[u8], word: &[u8]) -> bool {
    let Some(&first) = word.first() else {
        return false;
    };
    let only_dots_to_the_edge = |mut bytes: std::slice::Iter<'_, u8>, backwards: bool| {
        let next = if backwards {
            bytes.rfind(|byte| **byte != b'.')
        } else {
            bytes.find(|byte| **byte != b'.')
        };
        next.is_none_or(|byte| !in_run(*byte))
    };
    memchr::memchr2_iter(first.to_ascii_lowercase(), first.to_ascii_uppercase(), text).any(|at| {
        let end = at + word.len();
        text.get(at..end)
            .is_some_and(|found| found.eq_ignore_ascii_case(word))
            && only_dots_to_the_edge(text.get(..at).unwrap_or_default().iter(), true)
            && only_dots_to_the_edge(text.get(end..).unwrap_or_default().iter(), false)
    })
}

pub(crate) fn guard(old: &str, op: &SectionOp) -> Verdict {
    match op {
        SectionOp::Keep => Verdict::unchanged(),
        SectionOp::Append { .. } => Verdict::changed(
            SectionOp::Keep,
            GuardKind::TitleStability,
            "a title is one line: items are not appended to it",
        ),
        SectionOp::Update { content } => {
            if keeps_a_word(old, &meaningful_words(content)) {
                Verdict::unchanged()
            } else {
                Verdict::changed(
                    SectionOp::Keep,
                    GuardKind::TitleStability,
                    Reason::with_capacity(content.len() + 64)
                        .text("the new title `")
                        .text(content.trim())
                        .text("` shares no meaningful word with the old one")
                        .done(),
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

        #[test]
        fn words_occur_as_runs_when_a_run_is_them(
            text in r"(a|A|b|1|\.|\.\.|-| |é){0,12}",
            word in r"(a|A|b|1)((a|b|1|\.){0,3}(a|b|1))?",
        ) {
            let expected = runs(&text)
                .map(without_edge_dots)
                .any(|run| run.eq_ignore_ascii_case(&word));
            prop_assert_eq!(occurs_as_run(text.as_bytes(), word.as_bytes()), expected);
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
