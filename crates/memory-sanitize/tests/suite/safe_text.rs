use memory_sanitize::display_safe;
use memory_sanitize::safe_text::is_unsafe_for_display;
use proptest::prelude::*;

/// Text dense in the characters the rule is about, mixed with arbitrary Unicode.
fn hostile_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        any::<String>(),
        "[\u{0}-\u{1F}\u{7F}-\u{9F}]{1,4}",
        "[\u{202A}-\u{202E}\u{2066}-\u{2069}\u{200E}\u{200F}]{1,3}",
        Just("\u{1b}[2J\u{1b}]0;title\u{7}".to_owned()),
        Just("\r\n".to_owned()),
        "[a-z \t\n]{0,8}",
    ];
    prop::collection::vec(piece, 0..10).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn no_unsafe_character_survives(text in hostile_text()) {
        let safe = display_safe(&text);
        prop_assert!(!safe.chars().any(is_unsafe_for_display), "{safe:?}");
    }

    #[test]
    fn the_rule_is_idempotent_and_keeps_safe_text(text in hostile_text()) {
        let once = display_safe(&text).into_owned();
        let twice = display_safe(&once).into_owned();
        prop_assert_eq!(twice, once);
        if !text.chars().any(is_unsafe_for_display) {
            let kept = display_safe(&text).into_owned();
            prop_assert_eq!(kept, text);
        }
    }

    #[test]
    fn newlines_tabs_and_other_characters_keep_their_place(text in any::<String>()) {
        let safe = display_safe(&text);
        let kept = |s: &str| -> String {
            s.chars().filter(|c| !is_unsafe_for_display(*c)).collect()
        };
        // Everything that is not replaced is kept, in order; stand-ins add no newline or tab.
        let stand_ins = ['\u{FFFD}', '\u{2421}'];
        let without_stand_ins: String = safe
            .chars()
            .filter(|c| !stand_ins.contains(c) && !('\u{2400}'..='\u{241F}').contains(c))
            .collect();
        let original: String = kept(&text)
            .chars()
            .filter(|c| !stand_ins.contains(c) && !('\u{2400}'..='\u{241F}').contains(c))
            .collect();
        prop_assert_eq!(without_stand_ins, original);
        prop_assert_eq!(
            safe.matches('\n').count() + safe.matches('\t').count(),
            text.matches('\n').count() + text.matches('\t').count()
        );
    }
}
