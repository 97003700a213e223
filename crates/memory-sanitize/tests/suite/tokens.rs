use memory_sanitize::{ByteEstimate, CharCount, TokenCounter, o200k};
use proptest::prelude::*;

#[test]
fn exact_counter_survives_pathological_input() {
    // tiktoken-rs panics on a megabyte of spaces; this counter must not.
    let spaces = " ".repeat(1 << 20);
    assert!(o200k().count(&spaces) > 0);
    let no_whitespace = "ab".repeat(5 << 20);
    let count = o200k().count(&no_whitespace);
    assert!(count > 0 && count <= no_whitespace.len());
}

#[test]
fn exact_counter_matches_known_counts() {
    // Reference counts from the o200k_base vocabulary.
    assert_eq!(o200k().count("hello world"), 2);
    assert_eq!(o200k().count("fn main() {}"), 4);
}

fn counters() -> Vec<&'static dyn TokenCounter> {
    vec![&ByteEstimate, &CharCount, o200k()]
}

proptest! {
    #[test]
    fn prefix_and_suffix_searches_fit_their_budget(text in "\\PC{0,200}", budget in 0usize..60) {
        for counter in counters() {
            let end = counter.prefix_within(&text, budget);
            prop_assert!(text.is_char_boundary(end));
            prop_assert!(counter.count(&text[..end]) <= budget);
            let start = counter.suffix_within(&text, budget);
            prop_assert!(text.is_char_boundary(start));
            prop_assert!(counter.count(&text[start..]) <= budget);
        }
    }

    #[test]
    fn counts_never_exceed_bytes(text in "\\PC{0,200}") {
        for counter in counters() {
            prop_assert!(counter.count(&text) <= text.len());
        }
    }
}
