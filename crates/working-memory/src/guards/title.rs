//! Session Title: stable unless the subject changed.
//!
//! An UPDATE is accepted when the old title has no meaningful word, or when the new one shares
//! at least one. Meaningful words, in any script, are runs of letters, digits and dots that
//! start with a letter and have three or more characters, or runs of digits and dots holding
//! a digit; runs of Chinese, Japanese or Korean characters count by character bigrams (see
//! `script.rs`); trailing dots are dropped, case is ignored, and a few filler words (`the`,
//! `session`, `working`, `memory`, `notes`, ...) never count. A title is one line, so an
//! APPEND keeps it.

use memory_protocol::working_memory::{GuardKind, SectionOp};

use super::Verdict;
use crate::script::{bigrams, cjk_runs};

const FILLER_WORDS: &[&str] = &[
    "the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "with", "by", "at", "from",
    "session", "title", "working", "memory", "plan", "plans", "notes", "note",
];

/// The runs of letters, digits and dots of a text, in any script.
fn runs(text: &str) -> impl Iterator<Item = &str> {
    text.split(|ch: char| !(ch.is_alphanumeric() || ch == '.'))
        .filter(|run| !run.is_empty())
}

/// True when a run (without its edge dots) is a meaningful word.
fn is_meaningful(run: &str) -> bool {
    let starts_with_letter = run.starts_with(char::is_alphabetic);
    let shaped = (starts_with_letter && run.chars().count() >= 3)
        || (!run.is_empty()
            && run.chars().any(char::is_numeric)
            && run.chars().all(|ch| ch.is_numeric() || ch == '.'));
    shaped
        && !FILLER_WORDS
            .iter()
            .any(|filler| filler.eq_ignore_ascii_case(run))
}

/// The meaningful words of a title, as written (CJK runs as their bigrams).
pub(crate) fn meaningful_words(title: &str) -> Vec<&str> {
    let mut words = Vec::new();
    for run in runs(title) {
        for (cjk, piece) in cjk_runs(run.trim_matches('.')) {
            if cjk {
                words.extend(bigrams(piece));
            } else {
                let piece = piece.trim_matches('.');
                if is_meaningful(piece) {
                    words.push(piece);
                }
            }
        }
    }
    words
}

/// True when `old` has no meaningful word or shares one with `new`.
fn keeps_a_word(old: &str, new: &str) -> bool {
    let new_words: Vec<String> = meaningful_words(new)
        .iter()
        .map(|w| w.to_lowercase())
        .collect();
    let old_words = meaningful_words(old);
    old_words.is_empty()
        || old_words.iter().any(|old| {
            // An ASCII word lower-cased is the new word when the two are equal ignoring ASCII
            // case, so it is compared in place instead of lower-cased into a new string.
            if old.is_ascii() {
                new_words.iter().any(|new| old.eq_ignore_ascii_case(new))
            } else {
                new_words.contains(&old.to_lowercase())
            }
        })
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
            ["Ünïcode", "v2.0", "Tidewater"]
        );
    }

    #[test]
    fn a_title_keeps_a_word_or_had_none() {
        assert!(keeps_a_word("Tide importer", "TIDE. fixes"));
        assert!(!keeps_a_word("Tide importer", "Weekend grocery list"));
        assert!(keeps_a_word("Working memory notes", "anything"));
        assert!(keeps_a_word("release 1.5", "ship 1.5."));
    }

    #[test]
    fn titles_in_every_script_keep_a_word() {
        // Chinese: "fix the tide table importer" -> "tide table importer tests" shares bigrams.
        assert!(keeps_a_word("修复潮汐表导入器", "潮汐表导入器的测试"));
        assert!(!keeps_a_word("修复潮汐表导入器", "周末购物清单"));
        assert!(keeps_a_word("Импорт таблиц приливов", "ИМПОРТ данных"));
        assert!(!keeps_a_word("Импорт таблиц приливов", "Список покупок"));
        assert!(keeps_a_word("استيراد جداول المد", "جداول المد الجديدة"));
        assert!(!keeps_a_word("استيراد جداول المد", "قائمة التسوق"));
        assert!(keeps_a_word(
            "Réparer l'importateur des marées",
            "MARÉES de juin"
        ));
        assert!(!keeps_a_word(
            "Réparer l'importateur des marées",
            "Liste de courses"
        ));
    }
}
