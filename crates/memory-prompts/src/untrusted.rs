//! [`UntrustedText`]: the only way user, tool, file or model text reaches a template.

use memory_sanitize::{escape_boundary_tags, escape_control_tokens, escape_xml_text};

use crate::labels::is_line_break;

/// Text from a user, a tool, a file or a model, on its way into a prompt.
///
/// It can only be rendered through this crate's render functions, which escape it for the
/// boundary tags of the template it lands in. It deliberately implements neither `Display` nor
/// `Serialize`, so it cannot be formatted or serialized into a template around that escaping.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UntrustedText(String);

impl UntrustedText {
    /// Wraps untrusted text.
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// The raw, unescaped text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True when the text is empty or only whitespace.
    pub fn is_blank(&self) -> bool {
        self.0.trim().is_empty()
    }

    /// The text with every opening or closing form of `tags` and every chat-template control
    /// token neutralized; everything else is left as it is, so code stays readable.
    pub(crate) fn escaped(&self, tags: &[&str]) -> String {
        escape_control_tokens(&escape_boundary_tags(&self.0, tags)).into_owned()
    }

    /// [`Self::escaped`] on one line: every run of whitespace that contains a line break
    /// becomes one space, so the text cannot start a line of its own.
    pub(crate) fn escaped_inline(&self, tags: &[&str]) -> String {
        let escaped = self.escaped(tags);
        let mut out = String::with_capacity(escaped.len());
        let mut whitespace = String::new();
        for ch in escaped.chars() {
            if ch.is_whitespace() {
                whitespace.push(ch);
                continue;
            }
            push_whitespace_run(&mut out, &mut whitespace);
            out.push(ch);
        }
        push_whitespace_run(&mut out, &mut whitespace);
        out
    }

    /// [`Self::escaped`] for data placed under a provenance label: every line that starts like
    /// a label, a passage header or a header line is neutralized too
    /// ([`crate::labels::neutralize_label_lines`]), so data cannot pass for a label.
    pub(crate) fn escaped_under_label(&self, tags: &[&str]) -> String {
        crate::labels::neutralize_label_lines(&self.escaped(tags)).into_owned()
    }

    /// The text with `&`, `<` and `>` escaped as XML entities (goal objectives, as codex
    /// does): no tag of any name can be formed.
    pub(crate) fn escaped_xml(&self) -> String {
        escape_xml_text(&self.0).into_owned()
    }
}

/// Appends a pending whitespace run to `out`, as one space when it breaks the line.
fn push_whitespace_run(out: &mut String, run: &mut String) {
    if run.chars().any(is_line_break) {
        out.push(' ');
    } else {
        out.push_str(run);
    }
    run.clear();
}

impl From<String> for UntrustedText {
    fn from(text: String) -> Self {
        Self(text)
    }
}

impl From<&str> for UntrustedText {
    fn from(text: &str) -> Self {
        Self(text.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn inline_text_has_no_line_break_and_keeps_every_other_character(text in any::<String>()) {
            let inline = UntrustedText::new(text.as_str()).escaped_inline(&[]);
            prop_assert!(!inline.chars().any(is_line_break), "{inline:?}");
            let visible = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
            prop_assert_eq!(visible(&inline), visible(&escape_control_tokens(&text)));
        }

        #[test]
        fn xml_text_leaves_no_angle_bracket(text in any::<String>()) {
            let escaped = UntrustedText::new(text).escaped_xml();
            prop_assert!(!escaped.contains('<') && !escaped.contains('>'));
        }
    }
}
