//! Small text helpers shared by the offline engine: one-line caps, sentences, words.
//!
//! Everything here takes untrusted text and never panics: lengths are capped on character
//! boundaries and no text is indexed by a computed position.

use memory_protocol::REDACTED_SECRET;
use memory_sanitize::{FULL_STOPS, is_cjk};

/// Longest request, preference, command or error line kept, in characters.
pub(crate) const MAX_LINE_CHARS: usize = 240;

/// Collapses whitespace to single spaces and caps the length, on char boundaries, with `…`.
pub(crate) fn one_line(text: &str, max_chars: usize) -> String {
    let mut chars = text
        .split_whitespace()
        .enumerate()
        .flat_map(|(i, word)| (i > 0).then_some(' ').into_iter().chain(word.chars()));
    let head: String = chars.by_ref().take(max_chars).collect();
    if chars.next().is_none() {
        return head;
    }
    // Cut at a word boundary when one is near, so a title does not end mid-word.
    let mut head: String = head.chars().take(max_chars.saturating_sub(1)).collect();
    if let Some(space) = head.rfind(' ')
        && head
            .get(..space)
            .is_some_and(|kept| kept.chars().count() * 4 >= max_chars * 3)
    {
        head.truncate(space);
    }
    head.truncate(head.trim_end().len());
    head.push('…');
    head
}

/// The sentences of a text: split at line breaks, at `.`, `!` or `?` followed by a space and at
/// the full-width `。`, `！` and `？`, keeping the terminator. Inline code spans and paths (`src/a.rs`, `v1.2`) are not split.
pub(crate) fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim().trim_start_matches(['-', '*', '>', '#']).trim();
        if line.is_empty() {
            continue;
        }
        let mut current = String::new();
        let mut in_code = false;
        let mut chars = line.chars().peekable();
        while let Some(ch) = chars.next() {
            current.push(ch);
            if ch == '`' {
                in_code = !in_code;
            }
            let ends = !in_code
                && (matches!(ch, '。' | '！' | '？')
                    || (matches!(ch, '.' | '!' | '?')
                        && chars.peek().is_none_or(|next| next.is_whitespace())));
            if ends {
                let sentence = current.trim().to_owned();
                if !sentence.is_empty() {
                    out.push(sentence);
                }
                current.clear();
            }
        }
        let rest = current.trim();
        if !rest.is_empty() {
            out.push(rest.to_owned());
        }
    }
    out
}

/// The words of a text, counted in any script: a run of characters of a script written without
/// spaces (Chinese, Japanese, Korean) counts one word per two characters, rounded up (most
/// Chinese words have two), so `修复导入器` is three words where a split at whitespace sees one.
/// Text without such characters counts exactly its whitespace-separated words.
pub(crate) fn word_count(text: &str) -> usize {
    text.split_whitespace()
        .map(|word| {
            let cjk = word.chars().filter(|&ch| is_cjk(ch)).count();
            if cjk == 0 {
                return 1;
            }
            let other = word.chars().any(|ch| ch.is_alphanumeric() && !is_cjk(ch));
            cjk.div_ceil(2) + usize::from(other)
        })
        .sum()
}

/// `text` without the full stops (of any script), exclamation marks and spaces it ends with: a
/// title or a clause to be joined to another. A question keeps its mark.
pub(crate) fn without_final_stop(text: &str) -> &str {
    text.trim_end_matches(|ch: char| matches!(ch, ' ' | '!' | '！') || FULL_STOPS.contains(&ch))
}

/// What a sentence may end with, in any script.
pub(crate) const SENTENCE_ENDS: [char; 9] = ['.', '!', '?', '…', '。', '！', '？', '．', '｡'];

/// `text` as a sentence: as it is when it already ends with a sentence end of any script
/// ([`SENTENCE_ENDS`]), else with a `.` added (so `完成。` does not become `完成。.`).
pub(crate) fn ending_a_sentence(mut text: String) -> String {
    if !text.ends_with(SENTENCE_ENDS) {
        text.push('.');
    }
    text
}

/// Uppercases the first character.
pub(crate) fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Appends `value` unless present or the list already holds `max` items.
pub(crate) fn push_distinct(list: &mut Vec<String>, value: String, max: usize) {
    if list.len() < max && !value.is_empty() && !list.contains(&value) {
        list.push(value);
    }
}

/// Words that carry no topic: articles, pronouns, auxiliaries, politeness and generic verbs of
/// a request. Used for slugs, keywords and title comparisons.
const FILLER: [&str; 62] = [
    "a", "an", "the", "to", "of", "in", "on", "for", "and", "or", "is", "are", "was", "be", "it",
    "its", "my", "our", "your", "this", "that", "these", "those", "please", "can", "could",
    "would", "will", "you", "me", "i", "we", "us", "what", "why", "how", "does", "do", "did", "hi",
    "hello", "hey", "thanks", "let", "lets", "some", "with", "from", "into", "so", "just", "now",
    "then", "also", "when", "there", "here", "need", "want", "help", "at", "by",
];

/// Lowercase words of a text, for slugs and keywords: ASCII letters and digits, without
/// filler words and the redaction marker.
pub(crate) fn content_words(text: &str) -> Vec<String> {
    text.replace(REDACTED_SECRET, " ")
        .split(|c: char| !c.is_ascii_alphanumeric())
        .map(str::to_ascii_lowercase)
        .filter(|w| !w.is_empty() && !FILLER.contains(&w.as_str()))
        .collect()
}

/// Inline code that cannot be closed from inside.
pub(crate) fn code(text: &str) -> String {
    format!("`{}`", text.replace('`', "'"))
}

/// `items` joined by commas, with ` and N more` past `max`.
pub(crate) fn capped_join(items: &[String], max: usize) -> String {
    let mut joined = items
        .iter()
        .take(max)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > max {
        joined.push_str(&format!(" and {} more", items.len() - max));
    }
    joined
}

/// The first sentence of `text` (up to a line break, `?`, `!` or `. `, or through a full-width
/// `。`, `！` or `？`, which ends a sentence with no space after it and stays with it), trimmed.
pub(crate) fn first_sentence(text: &str) -> &str {
    text.split(['\n', '?', '!'])
        .flat_map(|part| part.split(". "))
        .flat_map(|part| part.split_inclusive(['。', '！', '？']))
        .map(str::trim)
        .find(|s| !s.is_empty())
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn words_are_counted_in_every_script() {
        assert_eq!(word_count("fix the parser"), 3);
        assert_eq!(word_count("- a , b"), 4);
        assert_eq!(word_count("修复导入器"), 3);
        assert_eq!(word_count("修复 v2 导入器"), 4);
        assert_eq!(word_count("修复v2"), 2);
        assert_eq!(word_count("谢谢！"), 1);
        assert_eq!(word_count(""), 0);
    }

    #[test]
    fn final_stops_are_cut_in_any_script() {
        assert_eq!(without_final_stop("Fix the parser. "), "Fix the parser");
        assert_eq!(without_final_stop("修复导入器。"), "修复导入器");
        assert_eq!(without_final_stop("修复导入器！"), "修复导入器");
        assert_eq!(without_final_stop("为什么失败？"), "为什么失败？");
        assert_eq!(without_final_stop("v1.2"), "v1.2");
    }

    #[test]
    fn a_sentence_ends_once_in_any_script() {
        for (text, sentence) in [
            ("done", "done."),
            ("done.", "done."),
            ("really?", "really?"),
            ("完成", "完成."),
            ("完成。", "完成。"),
            ("完成！", "完成！"),
            ("真的？", "真的？"),
            ("cut…", "cut…"),
        ] {
            assert_eq!(ending_a_sentence(text.to_owned()), sentence);
        }
    }

    #[test]
    fn one_line_collapses_and_caps_at_words() {
        assert_eq!(one_line("  a \n b\tc ", 10), "a b c");
        assert_eq!(one_line("hello wonderful world", 17), "hello wonderful…");
        assert_eq!(one_line("ééééé", 3), "éé…");
        assert_eq!(one_line("", 3), "");
    }

    #[test]
    fn sentences_keep_code_and_paths_whole() {
        assert_eq!(
            sentences("Run `cargo t. x` now. Then edit src/a.rs please!\n- never push? ok"),
            [
                "Run `cargo t. x` now.",
                "Then edit src/a.rs please!",
                "never push?",
                "ok"
            ]
        );
    }

    proptest! {
        #[test]
        fn one_line_never_exceeds_its_cap(text in "\\PC{0,300}", max in 0usize..80) {
            let line = one_line(&text, max);
            prop_assert!(line.chars().count() <= max.max(1));
            prop_assert!(!line.contains('\n'));
        }

        #[test]
        fn helpers_never_panic(text in "(\\PC|`|\\.|\\?|\n| ){0,80}") {
            for sentence in sentences(&text) {
                prop_assert!(!sentence.is_empty());
                prop_assert!(!sentence.contains('\n'));
            }
            for word in content_words(&text) {
                prop_assert!(word.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
            }
            prop_assert!(!code(&text).trim_matches('`').contains('`'));
        }
    }
}
