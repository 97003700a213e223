//! What the guards and the estimates need to know about scripts.

/// True for a character of a script written without spaces between words: CJK ideographs,
/// kana, hangul.
pub fn is_cjk(ch: char) -> bool {
    matches!(
        u32::from(ch),
        0x3400..=0x4DBF
            | 0x4E00..=0x9FFF
            | 0xF900..=0xFAFF
            | 0x20000..=0x2EBEF
            | 0x3040..=0x30FF
            | 0x31F0..=0x31FF
            | 0xAC00..=0xD7AF
            | 0x1100..=0x11FF
            | 0x3130..=0x318F
    )
}

/// The full stops an item or a sentence may end with: the Latin one, and the forms the scripts
/// written without spaces use (ideographic `。`, full-width `．`, half-width `｡`). Text compared
/// for equality drops them at its ends, so `完成。` repeats `完成` as `done.` repeats `done`.
pub const FULL_STOPS: [char; 4] = ['.', '\u{3002}', '\u{FF0E}', '\u{FF61}'];
