use memory_sanitize::{ByteEstimate, CharCount, CjkEstimate, TokenCounter, o200k};
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
    vec![&ByteEstimate, &CharCount, &CjkEstimate, o200k()]
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

/// Mixed-script text: ASCII, accented Latin, CJK, kana, hangul, full-width forms, emoji.
fn mixed_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            "[a-z ]{0,8}",
            "[é-ü]{0,4}",
            "[\\u{4E00}-\\u{4E20}]{0,4}",
            "[\\u{3041}-\\u{3050}\\u{AC00}-\\u{AC10}\\u{FF01}-\\u{FF10}]{0,4}",
            "[\\u{1F600}-\\u{1F610}\\u{20000}-\\u{20010}]{0,3}",
            "\\PC{0,6}",
        ],
        0..12,
    )
    .prop_map(|pieces| pieces.concat())
}

/// The estimate's definition, written independently of the implementation: exact quarter
/// tokens per character, summed, rounded up.
fn reference_estimate(text: &str) -> usize {
    let quarters: u64 = text
        .chars()
        .map(|ch| {
            let c = ch as u32;
            let ranges: [(u32, u32); 11] = [
                (0x3400, 0x4DBF),
                (0x4E00, 0x9FFF),
                (0xF900, 0xFAFF),
                (0x20000, 0x2EBEF),
                (0x3040, 0x30FF),
                (0x31F0, 0x31FF),
                (0xAC00, 0xD7AF),
                (0x1100, 0x11FF),
                (0x3130, 0x318F),
                (0xFF00, 0xFFEF),
                (0x3000, 0x303F),
            ];
            if ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) {
                6
            } else if c > 0xFFFF {
                8
            } else {
                1
            }
        })
        .sum();
    quarters.div_ceil(4) as usize
}

proptest! {
    #![proptest_config(ProptestConfig { rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..ProptestConfig::default() })]

    #[test]
    fn cjk_estimate_matches_its_definition_and_is_additive(a in mixed_text(), b in mixed_text()) {
        prop_assert_eq!(CjkEstimate.count(&a), reference_estimate(&a));
        let whole = format!("{a}{b}");
        let count = CjkEstimate.count(&whole);
        // Rounding happens once, on the sum: the parts never count less than the whole.
        prop_assert!(count <= CjkEstimate.count(&a) + CjkEstimate.count(&b));
        prop_assert!(count >= CjkEstimate.count(&a).max(CjkEstimate.count(&b)));
        prop_assert!(count <= whole.len());
    }

    #[test]
    fn cjk_estimate_cuts_are_the_longest_that_fit(text in mixed_text(), budget in 0usize..20) {
        let end = CjkEstimate.prefix_within(&text, budget);
        prop_assert!(text.is_char_boundary(end));
        prop_assert!(CjkEstimate.count(&text[..end]) <= budget);
        if let Some(next) = text[end..].chars().next() {
            let longer = end + next.len_utf8();
            prop_assert!(CjkEstimate.count(&text[..longer]) > budget);
        }
        let start = CjkEstimate.suffix_within(&text, budget);
        prop_assert!(text.is_char_boundary(start));
        prop_assert!(CjkEstimate.count(&text[start..]) <= budget);
        if let Some(prev) = text[..start].chars().next_back() {
            let longer = start - prev.len_utf8();
            prop_assert!(CjkEstimate.count(&text[longer..]) > budget);
        }
    }
}
