//! Words in every script: what the title and Key Facts guards compare.
//!
//! Scripts written without spaces between words (Chinese, Japanese, Korean) are compared by
//! character bigrams: `潮汐表` gives `潮汐` and `汐表`, so two texts about the same subject
//! share some even when they are worded differently. Other scripts are split at
//! non-alphanumeric characters, whatever their alphabet.

use std::borrow::Cow;

pub(crate) use memory_sanitize::is_cjk;

/// True for a letter of a script without case (Arabic, Hebrew, Devanagari, Thai, ...), where
/// no capital marks a name.
pub(crate) fn is_caseless_letter(ch: char) -> bool {
    ch.is_alphabetic() && !ch.is_uppercase() && !ch.is_lowercase() && !is_cjk(ch)
}

/// A word's runs of CJK characters (`true`) and of other characters (`false`), in order, none
/// empty, one by one (most words are one run).
pub(crate) fn cjk_runs(word: &str) -> impl Iterator<Item = (bool, &str)> {
    let mut rest = word;
    std::iter::from_fn(move || {
        let cjk = is_cjk(rest.chars().next()?);
        // No ASCII character is CJK, so an ASCII rest is one run without a look at each
        // character; most words are ASCII.
        let end = if !cjk && rest.is_ascii() {
            rest.len()
        } else {
            rest.find(|ch: char| is_cjk(ch) != cjk)
                .unwrap_or(rest.len())
        };
        let (run, after) = rest.split_at(end);
        rest = after;
        Some((cjk, run))
    })
}

/// The character bigrams of a run of CJK characters; a single character is its own.
pub(crate) fn bigrams(run: &str) -> Vec<&str> {
    let ends: Vec<usize> = run
        .char_indices()
        .map(|(at, _)| at)
        .chain([run.len()])
        .collect();
    if ends.len() <= 2 {
        return if run.is_empty() {
            Vec::new()
        } else {
            vec![run]
        };
    }
    ends.windows(3).map(|w| &run[w[0]..w[2]]).collect()
}

/// The words of a text, lower-cased, in any script (CJK runs as their bigrams). Ordered: an
/// item has a few words, and finding one among them by comparison costs less than hashing it.
pub(crate) fn words(text: &str) -> std::collections::BTreeSet<String> {
    each_word(text).map(Cow::into_owned).collect()
}

/// The words of [`words`] one by one, repeats included, so a caller can stop at the first
/// one it does not want.
pub(crate) fn each_word(text: &str) -> impl Iterator<Item = Cow<'_, str>> {
    text.split(|ch: char| !ch.is_alphanumeric())
        .flat_map(cjk_runs)
        .flat_map(|(cjk, piece)| {
            let (bigram_words, word) = if cjk {
                (bigrams(piece), None)
            } else {
                (Vec::new(), Some(lower_case(piece)))
            };
            bigram_words.into_iter().map(Cow::Borrowed).chain(word)
        })
}

/// `word` lower-cased; an ASCII word without capitals is its own lower case, so it is not
/// copied.
fn lower_case(word: &str) -> Cow<'_, str> {
    if word.is_ascii() && !word.bytes().any(|byte| byte.is_ascii_uppercase()) {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(word.to_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_runs_split_from_other_text_and_into_bigrams() {
        assert_eq!(
            cjk_runs("v2潮汐表abc").collect::<Vec<_>>(),
            [(false, "v2"), (true, "潮汐表"), (false, "abc")]
        );
        assert_eq!(bigrams("潮汐表"), ["潮汐", "汐表"]);
        assert_eq!(bigrams("潮"), ["潮"]);
        assert!(bigrams("").is_empty());
        assert_eq!(cjk_runs("").count(), 0);
    }

    #[test]
    fn no_ascii_character_is_cjk() {
        assert!((0..128u8).all(|byte| !is_cjk(char::from(byte))));
    }

    #[test]
    fn scripts_without_case_are_told_apart() {
        assert!(is_caseless_letter('م'));
        assert!(!is_caseless_letter('Ж'));
        assert!(!is_caseless_letter('é'));
        assert!(!is_caseless_letter('潮'));
        assert!(!is_caseless_letter('1'));
    }
}
