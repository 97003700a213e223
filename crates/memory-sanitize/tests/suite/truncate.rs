use std::borrow::Cow;

use memory_sanitize::truncate::truncation_marker;
use memory_sanitize::{
    ByteEstimate, CharCount, TokenCounter, TruncationPolicy, o200k, truncate_middle,
    truncate_tool_result,
};
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
