//! Scripts written without spaces (Chinese, Japanese, Korean, Thai, Lao, Khmer, Myanmar) as
//! overlapping character pairs, so a word inside a run of such text can be found.
//!
//! FTS5's `unicode61` tokenizer makes a whole unspaced run one token, so `制表符` inside
//! `用户偏好使用制表符缩进` never matched. The index keeps a second column of bigrams: each
//! pair of neighbouring characters of a run, then the run's last character alone (so a
//! one-character query, searched as a prefix, finds a character at any position). A query
//! word in these scripts becomes the phrase of its bigrams, which matches exactly where the
//! characters are adjacent in the text.

/// True for a character of a script written without spaces between words.
pub(crate) fn is_unspaced(ch: char) -> bool {
    memory_sanitize::is_cjk(ch)
        || matches!(
            u32::from(ch),
            0x0E00..=0x0EFF // Thai, Lao
                | 0x1000..=0x109F // Myanmar
                | 0x1780..=0x17FF // Khmer
        )
}

/// The bigram column's text for `text`: for each unspaced run, its bigrams and its last
/// character, separated by spaces; runs end with a newline. Empty when there is no such run.
pub(crate) fn index_grams(text: &str) -> String {
    let mut out = String::new();
    for run in unspaced_runs(text) {
        push_run_grams(&mut out, run);
        out.push('\n');
    }
    out
}

/// The FTS5 form of an unspaced run in a query: the phrase of its bigrams, or for a single
/// character a prefix search for the tokens that start with it.
pub(crate) fn query_grams(run: &str) -> String {
    let chars: Vec<char> = run.chars().collect();
    if chars.len() == 1 {
        return format!("\"{}\" *", chars[0]);
    }
    let pairs: Vec<String> = chars.windows(2).map(|pair| pair.iter().collect()).collect();
    format!("\"{}\"", pairs.join(" "))
}

/// The maximal runs of unspaced characters in `text`.
pub(crate) fn unspaced_runs(text: &str) -> impl Iterator<Item = &str> {
    text.split(|ch: char| !is_unspaced(ch))
        .filter(|run| !run.is_empty())
}

fn push_run_grams(out: &mut String, run: &str) {
    let chars: Vec<char> = run.chars().collect();
    for pair in chars.windows(2) {
        out.push(pair[0]);
        out.push(pair[1]);
        out.push(' ');
    }
    if let Some(last) = chars.last() {
        out.push(*last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_become_bigrams_and_their_last_character() {
        assert_eq!(index_grams("use 制表符 now"), "制表 表符 符\n");
        assert_eq!(index_grams("a 字 b ไทย"), "字\nไท ทย ย\n");
        assert_eq!(index_grams("plain words only"), "");
        assert_eq!(query_grams("制表符"), "\"制表 表符\"");
        assert_eq!(query_grams("制"), "\"制\" *");
    }
}
