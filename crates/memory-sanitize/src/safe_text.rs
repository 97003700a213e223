//! Terminal- and display-safe text.
//!
//! Transcripts carry whatever a tool printed: colour codes, cursor moves, a bell, NUL bytes,
//! and the Unicode bidirectional controls that make text display in another order than it is
//! stored ("Trojan Source"). None of that may reach a memory file a person opens in an editor,
//! or a terminal that `show` prints to, where an escape sequence is an instruction to the
//! terminal. [`display_safe`] is the one rule for both: newline and tab stay, a carriage return
//! that ends a line is dropped (`\r\n` becomes `\n`), and every other control character or
//! bidirectional control is replaced by a visible stand-in:
//!
//! - C0 controls (U+0000 to U+001F) by their Control Pictures symbol (`ESC` -> `␛`, NUL -> `␀`);
//! - DEL (U+007F) by `␡`;
//! - C1 controls (U+0080 to U+009F, which some terminals read as escape sequences) and the
//!   bidirectional embeddings, overrides and isolates (U+202A to U+202E, U+2066 to U+2069) by
//!   U+FFFD `�`.
//!
//! The stand-ins are ordinary printable characters, so the result is stable: applying the rule
//! twice changes nothing more.

use std::borrow::Cow;

/// Replacement for characters with no Control Pictures symbol.
const REPLACEMENT: char = '\u{FFFD}';

/// True for a character [`display_safe`] replaces (or, for a `\r` before a newline, drops).
pub fn is_unsafe_for_display(ch: char) -> bool {
    match ch {
        '\n' | '\t' => false,
        '\u{0}'..='\u{1F}' | '\u{7F}'..='\u{9F}' => true,
        // Bidirectional embeddings and overrides (LRE, RLE, PDF, LRO, RLO) and isolates
        // (LRI, RLI, FSI, PDI).
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// `text` with every control character other than newline and tab, and every bidirectional
/// control, replaced by a visible stand-in (see the module docs). Borrowed when nothing changes.
pub fn display_safe(text: &str) -> Cow<'_, str> {
    let Some(first) = text.find(is_unsafe_for_display) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    let mut chars = text[first..].chars().peekable();
    while let Some(ch) = chars.next() {
        if !is_unsafe_for_display(ch) {
            out.push(ch);
            continue;
        }
        match ch {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\u{0}'..='\u{1F}' => out.push(control_picture(ch)),
            '\u{7F}' => out.push('\u{2421}'),
            _ => out.push(REPLACEMENT),
        }
    }
    Cow::Owned(out)
}

/// The Control Pictures symbol of a C0 control (U+2400 + its code).
fn control_picture(ch: char) -> char {
    char::from_u32(0x2400 + u32::from(ch)).unwrap_or(REPLACEMENT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_bidi_controls_become_visible() {
        assert_eq!(
            display_safe("a\u{1b}[31mred\u{7}\0\u{7f}\u{9b}2J"),
            "a␛[31mred␇␀␡\u{FFFD}2J"
        );
        assert_eq!(
            display_safe("x\u{202E}gnp.exe\u{2066}"),
            "x\u{FFFD}gnp.exe\u{FFFD}"
        );
        assert_eq!(display_safe("line\r\nnext\rover"), "line\nnext␍over");
        assert!(matches!(display_safe("plain\ttext\n"), Cow::Borrowed(_)));
    }
}
