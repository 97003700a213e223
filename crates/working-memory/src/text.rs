//! Reading bullet items out of a section body, comparing them, and measuring a body.

use memory_protocol::working_memory::limits;

pub(crate) use super::keys::{ItemKeys, fresh_items, item_key};
use memory_sanitize::{CjkEstimate, TokenCounter};

/// The items of a body, in order: every non-blank line that is not a heading (`#...`), without
/// its bullet marker (`-`, `*`, `+`, `1.`, `2)` followed by whitespace). A plain line is an
/// item too.
pub(crate) fn items(body: &str) -> impl Iterator<Item = &str> {
    body.split('\n').filter_map(|line| {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        let item = strip_marker(line).trim();
        (!item.is_empty()).then_some(item)
    })
}

/// A line without its leading bullet marker; the line itself when it has none.
pub(crate) fn strip_marker(line: &str) -> &str {
    let bytes = line.as_bytes();
    let after = match bytes.first() {
        Some(b'-' | b'*' | b'+') => 1,
        Some(b'0'..=b'9') => {
            let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            match bytes.get(digits) {
                Some(b'.' | b')') => digits + 1,
                _ => return line,
            }
        }
        _ => return line,
    };
    match line.get(after..) {
        Some(rest) if rest.starts_with(char::is_whitespace) => rest.trim_start(),
        _ => line,
    }
}

/// An item as the model should write it in an APPEND: one line, no bullet marker, trimmed.
/// `None` for an empty item or one that only says `none`.
pub(crate) fn clean_item(item: &str) -> Option<String> {
    let one_line = if item.contains(['\n', '\r']) {
        item.split_whitespace().collect::<Vec<_>>().join(" ")
    } else {
        item.trim().to_owned()
    };
    let stripped = strip_marker(one_line.trim()).trim();
    if stripped.is_empty() || crate::document::normalize_body(stripped).is_empty() {
        return None;
    }
    Some(stripped.to_owned())
}

/// The status tags an item may start with, in any case.
const STATUS_TAGS: [&str; 4] = [
    limits::NEW_MARKER,
    limits::RESOLVED_MARKER,
    limits::RESTORED_MARKER,
    // The marker of the reference implementation, so documents it wrote compare the same.
    "[silently dropped, restored]",
];

/// The status tag `text` starts with, if any.
fn leading_status_tag(text: &str) -> Option<&'static str> {
    // Every tag opens with `[` (a test says so): most items do not, and are not compared with
    // each tag.
    if !text.starts_with('[') {
        return None;
    }
    STATUS_TAGS
        .into_iter()
        .find(|tag| starts_with_ignore_case(text, tag))
}

/// An item without the status tags it starts with.
pub(crate) fn strip_status_tags(item: &str) -> &str {
    let mut rest = item.trim_start();
    while let Some(tag) = leading_status_tag(rest) {
        rest = rest[tag.len()..].trim_start();
    }
    rest
}

/// True when the item starts with `tag` (among its leading status tags), in any case.
pub(crate) fn has_status_tag(item: &str, tag: &str) -> bool {
    let mut rest = strip_marker(item.trim()).trim_start();
    loop {
        if starts_with_ignore_case(rest, tag) {
            return true;
        }
        let Some(other) = leading_status_tag(rest) else {
            return false;
        };
        rest = rest[other.len()..].trim_start();
    }
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

/// Estimated tokens of a text (script-aware; see [`CjkEstimate`]).
pub(crate) fn tokens(text: &str) -> usize {
    CjkEstimate.count(text)
}

/// The size of a body: items and estimated tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SectionSize {
    /// Items ([`items`]).
    pub(crate) bullets: usize,
    /// Estimated tokens of the whole body.
    pub(crate) tokens: usize,
}

impl SectionSize {
    /// Measures a body.
    pub(crate) fn of(body: &str) -> Self {
        Self {
            bullets: items(body).count(),
            tokens: tokens(body),
        }
    }

    /// Over the section thresholds (strictly more bullets or tokens than allowed).
    pub(crate) fn is_oversized(self) -> bool {
        self.bullets > limits::SECTION_BULLET_THRESHOLD
            || self.tokens > limits::SECTION_TOKEN_THRESHOLD
    }

    /// At or past the hard bound.
    pub(crate) fn is_at_hard_bound(self) -> bool {
        self.bullets >= limits::hard_bound_bullets() || self.tokens >= limits::hard_bound_tokens()
    }

    /// Past the hard bound.
    pub(crate) fn is_past_hard_bound(self) -> bool {
        self.bullets > limits::hard_bound_bullets() || self.tokens > limits::hard_bound_tokens()
    }
}

/// `body` with `items` appended as bullets, one per line.
pub(crate) fn append_items(body: &str, items: &[String]) -> String {
    let mut out = body.to_owned();
    for item in items {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str("- ");
        out.push_str(item);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_drop_markers_headings_and_blank_lines() {
        let body = "- a\n\n  * b  \n# heading\n3. c\n12) d\n+ e\n-f\nplain line\n-\n2024-01-01 g";
        assert_eq!(
            items(body).collect::<Vec<_>>(),
            [
                "a",
                "b",
                "c",
                "d",
                "e",
                "-f",
                "plain line",
                "-",
                "2024-01-01 g"
            ]
        );
    }

    #[test]
    fn every_status_tag_opens_with_a_bracket() {
        assert!(STATUS_TAGS.iter().all(|tag| tag.starts_with('[')));
    }

    #[test]
    fn status_tags_are_read_in_any_case_and_order() {
        assert!(has_status_tag(
            "- [new] [RESOLVED] x",
            limits::RESOLVED_MARKER
        ));
        assert!(has_status_tag("[Resolved]x", limits::RESOLVED_MARKER));
        assert!(!has_status_tag("x [resolved]", limits::RESOLVED_MARKER));
        assert!(!has_status_tag(
            "- [later] [resolved] x",
            limits::RESOLVED_MARKER
        ));
        assert_eq!(strip_status_tags(" [new] [RESTORED]  x [new]"), "x [new]");
        assert_eq!(strip_status_tags("[resolvedx"), "[resolvedx");
    }
    #[test]
    fn markers_are_stripped_only_before_whitespace() {
        assert_eq!(strip_marker("- a"), "a");
        assert_eq!(strip_marker("12) b"), "b");
        assert_eq!(strip_marker("3. c"), "c");
        assert_eq!(strip_marker("-x"), "-x");
        assert_eq!(strip_marker("2024-01-01 d"), "2024-01-01 d");
    }

    #[test]
    fn keys_ignore_case_tags_emphasis_and_spacing() {
        assert_eq!(
            item_key("- [resolved] **Fix**  the `parser`."),
            "fix the parser"
        );
        assert_eq!(item_key("[RESTORED] [new] x"), "x");
        assert_eq!(item_key("snake_case_name"), "snake_case_name");
    }

    /// The reference's `extract_bullet_items` cases (its conformance list), with our inputs.
    mod extract_bullet_items {
        use super::*;

        fn list(body: &str) -> Vec<&str> {
            items(body).collect()
        }

        #[test]
        fn dash_bullets() {
            assert_eq!(list("- kelp\n- cod\n- hake"), ["kelp", "cod", "hake"]);
        }

        #[test]
        fn numbered_list() {
            assert_eq!(
                list("1. sail\n2. anchor\n3) moor"),
                ["sail", "anchor", "moor"]
            );
        }

        #[test]
        fn plain_lines() {
            assert_eq!(list("first line\n* second"), ["first line", "second"]);
        }

        #[test]
        fn skips_headings_and_blank() {
            assert_eq!(
                list("### Boats\n\n- dinghy\n   \n# top\n- ketch"),
                ["dinghy", "ketch"]
            );
        }

        #[test]
        fn empty() {
            assert!(list("").is_empty());
            assert!(list("\n  \n").is_empty());
        }
    }
}
