//! Head-and-tail truncation.
//!
//! A text over its budget keeps its beginning and its end, with a marker between them saying how
//! many characters were removed: `…[1234 chars omitted]…`. The **marker counts toward the
//! budget**, so the result always fits: `counter.count(result) <= budget` (for
//! [`TruncationPolicy::Bytes`], `result.len() <= budget`). The budget is split evenly between
//! head and tail. Cuts fall on character boundaries and, with the exact counter, on token
//! boundaries of the pre-tokenizer.
//!
//! Cost: the counter looks only at the kept head and tail, never at the removed middle (whose
//! characters are only counted for the marker), so truncating a huge text costs about as much as
//! counting what is kept; with [`crate::ByteEstimate`] it is a copy.
//!
//! When the budget is too small for the marker itself, the result is the longest prefix that
//! fits, without a marker.

use std::borrow::Cow;

use crate::tokens::{ByteCount, CharCount, TokenCounter};

/// A budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TruncationPolicy {
    /// At most this many bytes of UTF-8.
    Bytes(usize),
    /// At most this many tokens, as the counter counts them.
    Tokens(usize),
}

/// Default budget of [`truncate_tool_result`], in characters.
pub const DEFAULT_TOOL_RESULT_CHARS: usize = 2000;

/// Keeps the head and tail of `text` within the budget (see the module docs). Returns the input
/// borrowed when it fits.
pub fn truncate_middle<'a>(
    text: &'a str,
    policy: TruncationPolicy,
    counter: &dyn TokenCounter,
) -> Cow<'a, str> {
    match policy {
        TruncationPolicy::Bytes(budget) => truncate_with(text, budget, &ByteCount),
        TruncationPolicy::Tokens(budget) => truncate_with(text, budget, counter),
    }
}

/// Keeps the head and tail of a tool result within `max_chars` characters, marker included.
pub fn truncate_tool_result(text: &str, max_chars: usize) -> Cow<'_, str> {
    truncate_with(text, max_chars, &CharCount)
}

/// The marker put in place of `removed` characters.
pub(crate) fn truncation_marker(removed: usize) -> String {
    format!("…[{removed} chars omitted]…")
}

fn truncate_with<'a>(text: &'a str, budget: usize, counter: &dyn TokenCounter) -> Cow<'a, str> {
    // No counter counts more tokens than bytes, so a text this short always fits. Otherwise
    // the counter walks at most `budget` tokens' worth of the text to tell.
    if text.len() <= budget || counter.prefix_within(text, budget) >= text.len() {
        return Cow::Borrowed(text);
    }
    // The marker with the most digits it can need (more bytes than characters are removed).
    let mut reserve = counter.count(&truncation_marker(text.len()));
    loop {
        let Some(available) = budget.checked_sub(reserve) else {
            return longest_fitting_prefix(text, budget, counter);
        };
        let head_budget = available / 2;
        let head_end = counter.prefix_within(text, head_budget);
        let tail_start = counter
            .suffix_within(text, available - head_budget)
            .max(head_end);
        let (head, middle, tail) = match (
            text.get(..head_end),
            text.get(head_end..tail_start),
            text.get(tail_start..),
        ) {
            (Some(head), Some(middle), Some(tail)) => (head, middle, tail),
            // Counters return character boundaries; if one did not, fall back to a safe cut.
            _ => return longest_fitting_prefix(text, budget, counter),
        };
        let used = if middle.is_empty() {
            // Head and tail meet: the whole text may fit after all.
            let whole = counter.count(text);
            if whole <= budget {
                return Cow::Borrowed(text);
            }
            whole
        } else {
            let removed = middle.chars().count();
            let marker = truncation_marker(removed);
            let mut out = String::with_capacity(head.len() + marker.len() + tail.len());
            out.push_str(head);
            out.push_str(&marker);
            out.push_str(tail);
            let used = counter.count(&out);
            if used <= budget {
                return Cow::Owned(out);
            }
            used
        };
        // Tokenizers merge differently at the cuts; give up the overshoot and retry.
        reserve += used.saturating_sub(budget).max(1);
    }
}

fn longest_fitting_prefix<'a>(
    text: &'a str,
    budget: usize,
    counter: &dyn TokenCounter,
) -> Cow<'a, str> {
    let mut search_budget = budget;
    loop {
        let end = counter.prefix_within(text, search_budget);
        let prefix = text.get(..end).unwrap_or_default();
        let used = counter.count(prefix);
        if used <= budget || search_budget == 0 {
            return Cow::Borrowed(if used <= budget { prefix } else { "" });
        }
        search_budget = search_budget.saturating_sub((used - budget).max(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::ByteEstimate;

    #[test]
    fn fitting_text_is_borrowed() {
        let out = truncate_middle("short", TruncationPolicy::Bytes(5), &ByteEstimate);
        assert!(matches!(out, Cow::Borrowed("short")));
    }

    #[test]
    fn bytes_policy_keeps_head_and_tail_and_counts_the_marker() {
        let text = "a".repeat(50) + &"b".repeat(50);
        let out = truncate_middle(&text, TruncationPolicy::Bytes(60), &ByteEstimate);
        assert!(out.len() <= 60, "{out}");
        assert!(out.starts_with("aaaa") && out.ends_with("bbbb"), "{out}");
        let marker_len = truncation_marker(100).len();
        let kept = 60 - marker_len;
        assert!(out.contains(&truncation_marker(100 - kept)), "{out}");
    }

    #[test]
    fn tiny_budget_keeps_a_prefix_without_marker() {
        let out = truncate_middle("hello world", TruncationPolicy::Bytes(3), &ByteEstimate);
        assert_eq!(out, "hel");
        let out = truncate_tool_result("héllo wörld and more", 0);
        assert_eq!(out, "");
    }

    #[test]
    fn tool_result_counts_characters() {
        let text = "é".repeat(3000);
        let out = truncate_tool_result(&text, DEFAULT_TOOL_RESULT_CHARS);
        assert_eq!(out.chars().count(), DEFAULT_TOOL_RESULT_CHARS);
        assert!(out.contains("chars omitted"));
    }
}

/// Head, marker and tail over generated text, for every policy.
#[cfg(test)]
mod properties {
    use std::borrow::Cow;

    use super::{TruncationPolicy, truncate_middle, truncate_tool_result, truncation_marker};
    use crate::{ByteEstimate, CharCount, TokenCounter, o200k};
    use proptest::prelude::*;
    use regex::Regex;

    /// `out` is `text`, a prefix of it, or a prefix + a marker + a suffix of it.
    fn is_head_marker_tail(text: &str, out: &str) -> bool {
        if text.starts_with(out) {
            return true;
        }
        let marker = Regex::new(r"…\[\d+ chars omitted\]…").unwrap();
        marker.find_iter(out).any(|m| {
            let (head, tail) = (&out[..m.start()], &out[m.end()..]);
            let removed = text.len() - head.len() - tail.len();
            text.starts_with(head)
                && text.ends_with(tail)
                && head.len() + tail.len() <= text.len()
                && m.as_str()
                    == truncation_marker(text[head.len()..head.len() + removed].chars().count())
        })
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "\\PC{0,300}",
            "[a-z ]{0,300}",
            "(fn [a-z]{1,8}\\(\\) \\{ [a-z0-9_. ]{0,30} \\}\n){0,12}",
        ]
    }

    proptest! {
        #[test]
        fn byte_policy_fits_and_keeps_head_and_tail(text in text(), budget in 0usize..200) {
            let out = truncate_middle(&text, TruncationPolicy::Bytes(budget), &ByteEstimate);
            if text.len() <= budget {
                prop_assert!(matches!(out, Cow::Borrowed(_)));
            } else {
                prop_assert!(out.len() <= budget, "{out:?}");
            }
            prop_assert!(is_head_marker_tail(&text, &out), "{out:?}");
        }

        #[test]
        fn token_policy_fits_for_every_counter(text in text(), budget in 0usize..80) {
            let counters: [&dyn TokenCounter; 3] = [&ByteEstimate, &CharCount, o200k()];
            for counter in counters {
                let out = truncate_middle(&text, TruncationPolicy::Tokens(budget), counter);
                prop_assert!(counter.count(&out) <= budget, "{out:?}");
                prop_assert!(is_head_marker_tail(&text, &out), "{out:?}");
                if counter.count(&text) <= budget {
                    prop_assert_eq!(&*out, text.as_str());
                }
            }
        }

        #[test]
        fn tool_results_fit_in_characters(text in text(), max_chars in 0usize..120) {
            let out = truncate_tool_result(&text, max_chars);
            prop_assert!(out.chars().count() <= max_chars);
            prop_assert!(is_head_marker_tail(&text, &out), "{out:?}");
        }
    }

    #[test]
    fn token_truncation_uses_most_of_the_budget() {
        let text = "The quick brown fox jumps over the lazy dog. ".repeat(2000);
        let out = truncate_middle(&text, TruncationPolicy::Tokens(1000), o200k());
        let used = o200k().count(&out);
        assert!((950..=1000).contains(&used), "{used}");
        assert!(out.starts_with("The quick brown fox"));
        assert!(out.ends_with("lazy dog. "));
    }
}
