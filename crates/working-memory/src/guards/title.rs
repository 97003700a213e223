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

/// The runs of ASCII letters, digits and dots of a text.
fn runs(text: &str) -> impl Iterator<Item = &str> {
    text.split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '.'))
        .filter(|run| !run.is_empty())
}

/// True when a run (without its edge dots) is a meaningful word.
fn is_meaningful(run: &str) -> bool {
    let starts_with_letter = run.starts_with(|ch: char| ch.is_ascii_alphabetic());
    let shaped = (starts_with_letter && run.len() >= 3)
        || (!run.is_empty()
            && run.bytes().any(|b| b.is_ascii_digit())
            && run.bytes().all(|b| b.is_ascii_digit() || b == b'.'));
    shaped
        && !FILLER_WORDS
            .iter()
            .any(|filler| filler.eq_ignore_ascii_case(run))
}

/// The meaningful words of a title, as written.
pub(crate) fn meaningful_words(title: &str) -> Vec<&str> {
    runs(title)
        .map(|run| run.trim_matches('.'))
        .filter(|run| is_meaningful(run))
        .collect()
}

/// True when `old` has no meaningful word or shares one with `new`.
fn keeps_a_word(old: &str, new: &str) -> bool {
    let old_words = meaningful_words(old);
    let new_words = meaningful_words(new);
    old_words.is_empty()
        || old_words
            .iter()
            .any(|old| new_words.iter().any(|new| new.eq_ignore_ascii_case(old)))
}

pub(crate) fn guard(old: &str, op: &SectionOp) -> Verdict {
    match op {
        SectionOp::Keep => Verdict::unchanged(op),
        SectionOp::Append { .. } => Verdict::changed(
            SectionOp::Keep,
            GuardKind::TitleStability,
            "a title is one line: items are not appended to it",
        ),
        SectionOp::Update { content } => {
            if keeps_a_word(old, content) {
                Verdict::unchanged(op)
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
    use super::*;

    #[test]
    fn filler_and_short_words_do_not_count() {
        assert_eq!(
            meaningful_words("The Ünïcode v2.0 session for Tidewater..."),
            ["code", "v2.0", "Tidewater"]
        );
    }

    #[test]
    fn a_title_keeps_a_word_or_had_none() {
        assert!(keeps_a_word("Tide importer", "TIDE. fixes"));
        assert!(!keeps_a_word("Tide importer", "Weekend grocery list"));
        assert!(keeps_a_word("Working memory notes", "anything"));
        assert!(keeps_a_word("release 1.5", "ship 1.5."));
    }
}
