//! Token counting.
//!
//! [`TokenCounter`] counts tokens and finds how much of a text's head or tail fits a token
//! budget, which is what [`crate::truncate`] needs. Implementations:
//!
//! - [`ByteEstimate`]: `ceil(bytes / 4)`, free, the estimate codex uses;
//! - [`O200kCounter`] ([`o200k`]): the exact o200k_base count (GPT-4o, GPT-4.1, GPT-5, o-series),
//!   from the `bpe-openai` crate. It was measured against `tiktoken-rs` (`docs/benchmarks.md`):
//!   about twice as fast on code and prose, linear on repetitive input, and it does not panic on
//!   long runs of whitespace, where `tiktoken-rs` does. Its vocabulary is embedded and built on
//!   first use;
//! - [`CharCount`]: counts characters, for budgets stated in characters;
//! - [`CjkEstimate`]: a script-aware estimate (a quarter token per character of most scripts,
//!   a token and a half per CJK, kana or hangul character, two per character outside the
//!   Basic Multilingual Plane), which a bytes/4 estimate undercounts by half on CJK text.

use crate::script::is_cjk;

/// Counts tokens of text.
///
/// Contract: `count("") == 0`, a count never exceeds the text's byte length, and counts grow
/// with the text (a prefix or suffix never counts more than the whole), up to the small
/// differences a tokenizer has at the edges of a cut.
pub trait TokenCounter: Send + Sync {
    /// The number of tokens in `text`.
    fn count(&self, text: &str) -> usize;

    /// The byte length of the longest prefix of `text`, ending on a character boundary, whose
    /// count is at most `budget`.
    ///
    /// The default searches with [`TokenCounter::count`]; implementations override it to look
    /// only at the prefix.
    fn prefix_within(&self, text: &str, budget: usize) -> usize {
        let boundaries: Vec<usize> = char_ends(text).collect();
        let fitting = boundaries.partition_point(|&end| {
            text.get(..end)
                .is_some_and(|prefix| self.count(prefix) <= budget)
        });
        fitting
            .checked_sub(1)
            .and_then(|last| boundaries.get(last).copied())
            .unwrap_or(0)
    }

    /// The start of the longest suffix of `text`, on a character boundary, whose count is at
    /// most `budget`.
    fn suffix_within(&self, text: &str, budget: usize) -> usize {
        let starts: Vec<usize> = text.char_indices().map(|(at, _)| at).collect();
        // Suffixes get shorter as the start grows: find the first start that fits.
        let first_fitting = starts.partition_point(|&start| {
            text.get(start..)
                .is_none_or(|suffix| self.count(suffix) > budget)
        });
        starts.get(first_fitting).copied().unwrap_or(text.len())
    }
}

fn char_ends(text: &str) -> impl Iterator<Item = usize> + '_ {
    text.char_indices().map(|(at, ch)| at + ch.len_utf8())
}

/// The largest character boundary of `text` at or below `at`.
pub(crate) fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest character boundary of `text` at or above `at`.
pub(crate) fn ceil_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// Bytes per token of [`ByteEstimate`].
pub(crate) const BYTES_PER_TOKEN: usize = 4;

/// Estimates `ceil(bytes / 4)` tokens. Free; no tokenizer.
#[derive(Debug, Clone, Copy, Default)]
pub struct ByteEstimate;

impl TokenCounter for ByteEstimate {
    fn count(&self, text: &str) -> usize {
        text.len().div_ceil(BYTES_PER_TOKEN)
    }

    fn prefix_within(&self, text: &str, budget: usize) -> usize {
        floor_boundary(text, budget.saturating_mul(BYTES_PER_TOKEN))
    }

    fn suffix_within(&self, text: &str, budget: usize) -> usize {
        let keep = budget.saturating_mul(BYTES_PER_TOKEN).min(text.len());
        ceil_boundary(text, text.len() - keep)
    }
}

/// Counts characters (Unicode scalar values).
#[derive(Debug, Clone, Copy, Default)]
pub struct CharCount;

impl TokenCounter for CharCount {
    fn count(&self, text: &str) -> usize {
        text.chars().count()
    }

    fn prefix_within(&self, text: &str, budget: usize) -> usize {
        text.char_indices()
            .nth(budget)
            .map_or(text.len(), |(at, _)| at)
    }

    fn suffix_within(&self, text: &str, budget: usize) -> usize {
        match budget.checked_sub(1) {
            None => text.len(),
            Some(last) => text.char_indices().rev().nth(last).map_or(0, |(at, _)| at),
        }
    }
}

/// A script-aware estimate: the sum of per-character weights, rounded up.
///
/// Weights, in tokens: 1.5 for CJK ideographs (U+3400-4DBF, U+4E00-9FFF, U+F900-FAFF,
/// U+20000-2EBEF), kana (U+3040-30FF, U+31F0-31FF), hangul (U+AC00-D7AF, U+1100-11FF,
/// U+3130-318F), CJK punctuation (U+3000-303F) and full-width forms (U+FF00-FFEF); 2 for any
/// other character above U+FFFF (emoji, rare scripts); 0.25 for everything else. Weights are
/// summed exactly in quarter tokens, so the count is deterministic. Every weight is at most the
/// character's UTF-8 length, so a count never exceeds the byte length. Pure ASCII takes a fast
/// path (`ceil(bytes / 4)`, the same figure).
#[derive(Debug, Clone, Copy, Default)]
pub struct CjkEstimate;

/// Quarter tokens per character of [`CjkEstimate`].
fn cjk_quarters(ch: char) -> usize {
    let code = u32::from(ch);
    // CJK text, and the full-width forms and punctuation written with it.
    let wide = is_cjk(ch) || matches!(code, 0xFF00..=0xFFEF | 0x3000..=0x303F);
    if wide {
        6
    } else if code > 0xFFFF {
        8
    } else {
        1
    }
}

impl CjkEstimate {
    /// The estimate of `text` in quarter tokens.
    fn quarters(text: &str) -> usize {
        if text.is_ascii() {
            return text.len();
        }
        text.chars().map(cjk_quarters).sum()
    }
}

impl TokenCounter for CjkEstimate {
    fn count(&self, text: &str) -> usize {
        Self::quarters(text).div_ceil(4)
    }

    fn prefix_within(&self, text: &str, budget: usize) -> usize {
        let limit = budget.saturating_mul(4);
        if text.is_ascii() {
            return text.len().min(limit);
        }
        let mut used = 0usize;
        for (at, ch) in text.char_indices() {
            used += cjk_quarters(ch);
            if used > limit {
                return at;
            }
        }
        text.len()
    }

    fn suffix_within(&self, text: &str, budget: usize) -> usize {
        let limit = budget.saturating_mul(4);
        if text.is_ascii() {
            return text.len() - text.len().min(limit);
        }
        let mut used = 0usize;
        for (at, ch) in text.char_indices().rev() {
            used += cjk_quarters(ch);
            if used > limit {
                return at + ch.len_utf8();
            }
        }
        0
    }
}

/// Counts bytes; used for byte budgets.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ByteCount;

impl TokenCounter for ByteCount {
    fn count(&self, text: &str) -> usize {
        text.len()
    }

    fn prefix_within(&self, text: &str, budget: usize) -> usize {
        floor_boundary(text, budget)
    }

    fn suffix_within(&self, text: &str, budget: usize) -> usize {
        ceil_boundary(text, text.len().saturating_sub(budget))
    }
}

/// The exact o200k_base token count.
#[derive(Debug, Clone, Copy, Default)]
pub struct O200kCounter;

/// The shared exact o200k counter. Its tokenizer is built on first use (about 50 ms).
pub fn o200k() -> &'static O200kCounter {
    static COUNTER: O200kCounter = O200kCounter;
    &COUNTER
}

/// Pieces longer than this are cut by bytes inside [`O200kCounter::prefix_within`] and
/// [`O200kCounter::suffix_within`] instead of searched token by token, so one pathological
/// piece (a megabyte without a word break) costs one count, not a search.
const SEARCH_PIECE_BYTES: usize = 4096;

impl O200kCounter {
    fn tokenizer() -> &'static bpe_openai::Tokenizer {
        bpe_openai::o200k_base()
    }

    /// Pre-tokenizer pieces of `text` with their byte offsets. Tokens never cross pieces, so a
    /// text's count is the sum of its pieces' counts.
    fn pieces(text: &str) -> impl Iterator<Item = (usize, &str)> {
        let base = text.as_ptr() as usize;
        Self::tokenizer()
            .split(text)
            .map(move |piece| ((piece.as_ptr() as usize).saturating_sub(base), piece))
    }

    fn piece_count(piece: &str) -> usize {
        Self::tokenizer().bpe.count(piece.as_bytes())
    }

    /// The longest prefix of one piece within `budget`.
    fn piece_prefix_within(piece: &str, budget: usize) -> usize {
        if piece.len() > SEARCH_PIECE_BYTES {
            // Every token is at least one byte, so `budget` bytes always fit.
            return floor_boundary(piece, budget);
        }
        let ends: Vec<usize> = char_ends(piece).collect();
        let fitting = ends.partition_point(|&end| {
            piece
                .get(..end)
                .is_some_and(|p| Self::piece_count(p) <= budget)
        });
        fitting
            .checked_sub(1)
            .and_then(|last| ends.get(last).copied())
            .unwrap_or(0)
    }

    /// The start of the longest suffix of one piece within `budget`.
    fn piece_suffix_within(piece: &str, budget: usize) -> usize {
        if piece.len() > SEARCH_PIECE_BYTES {
            return ceil_boundary(piece, piece.len().saturating_sub(budget));
        }
        let starts: Vec<usize> = piece.char_indices().map(|(at, _)| at).collect();
        let first = starts.partition_point(|&start| {
            piece
                .get(start..)
                .is_none_or(|s| Self::piece_count(s) > budget)
        });
        starts.get(first).copied().unwrap_or(piece.len())
    }
}

impl TokenCounter for O200kCounter {
    fn count(&self, text: &str) -> usize {
        Self::tokenizer().count(text)
    }

    fn prefix_within(&self, text: &str, budget: usize) -> usize {
        let mut used = 0;
        for (offset, piece) in Self::pieces(text) {
            let cost = Self::piece_count(piece);
            if used + cost > budget {
                return offset + Self::piece_prefix_within(piece, budget - used);
            }
            used += cost;
        }
        text.len()
    }

    fn suffix_within(&self, text: &str, budget: usize) -> usize {
        // Pre-tokenize only a window at the end, growing it until the budget is used up. A piece
        // cut by the window's start may split differently than in the whole text, so the first
        // piece of a window is never used unless the window starts the text.
        let mut window = budget.saturating_mul(8).saturating_add(64);
        loop {
            let start = floor_boundary(text, text.len().saturating_sub(window));
            let tail = text.get(start..).unwrap_or_default();
            let pieces: Vec<(usize, &str)> =
                Self::pieces(tail).skip(usize::from(start > 0)).collect();
            let mut used = 0;
            for &(offset, piece) in pieces.iter().rev() {
                let cost = Self::piece_count(piece);
                if used + cost > budget {
                    let within = Self::piece_suffix_within(piece, budget - used);
                    return start + offset + within;
                }
                used += cost;
            }
            if start == 0 {
                return 0;
            }
            window = window.saturating_mul(2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_estimate_rounds_up() {
        assert_eq!(ByteEstimate.count(""), 0);
        assert_eq!(ByteEstimate.count("abcde"), 2);
        assert_eq!(ByteEstimate.prefix_within("abcdefgh", 1), 4);
        assert_eq!(ByteEstimate.suffix_within("abcdefgh", 1), 4);
    }

    #[test]
    fn char_count_walks_characters() {
        assert_eq!(CharCount.count("aé😀"), 3);
        assert_eq!(CharCount.prefix_within("aé😀", 2), 3);
        assert_eq!(CharCount.suffix_within("aé😀", 1), 3);
        assert_eq!(CharCount.suffix_within("aé😀", 0), 7);
        assert_eq!(CharCount.suffix_within("aé😀", 9), 0);
    }

    #[test]
    fn cjk_estimate_weighs_scripts() {
        assert_eq!(CjkEstimate.count(""), 0);
        assert_eq!(CjkEstimate.count("abcd"), 1);
        assert_eq!(CjkEstimate.count("abcde"), 2);
        // Two ideographs: 3 tokens; a kana, a hangul syllable and an emoji: 1.5 + 1.5 + 2.
        assert_eq!(CjkEstimate.count("漢字"), 3);
        assert_eq!(CjkEstimate.count("か한😀"), 5);
        // Accented Latin is a quarter token, like ASCII.
        assert_eq!(CjkEstimate.count("éééé"), 1);
        assert_eq!(CjkEstimate.prefix_within("漢字abc", 1), 0);
        assert_eq!(CjkEstimate.prefix_within("漢字abc", 2), 3);
        assert_eq!(CjkEstimate.suffix_within("漢字abc", 1), 6);
    }

    #[test]
    fn o200k_counts_known_text() {
        assert_eq!(o200k().count(""), 0);
        assert_eq!(o200k().count("hello world"), 2);
    }
}
