//! The two memory fences: `<memory>` around the always-on block, `<memory-recall>` around
//! per-turn recall.
//!
//! [`fence`] strips exactly one outer fence of our own form from its input (so fencing what is
//! already fenced does not nest), escapes what is left (no memory tag from the data survives,
//! see `memory-prompts`), and wraps it. So `fence(fence(x)) == fence(x)`, and nothing of the
//! content is dropped: stripping removes only the fence's own opening and closing text, never
//! what is between them, and escaping only neutralizes `<` of tag forms and control tokens.
//! The fence's exact text comes from its template, rendered once around a marker.

use std::sync::OnceLock;

use memory_prompts::UntrustedText;
use memory_prompts::introspect::{memory_fence, recall_fence};

use crate::error::{Error, Result};

/// Which fence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FenceKind {
    /// `<memory source="agent-memory">`: the always-on block.
    Memory,
    /// `<memory-recall>`: passages recalled for this turn, marked as background data.
    Recall,
}

/// A private-use character the templates never produce and escaping never touches.
const MARKER: &str = "\u{E000}";

/// The text before and after the body of `kind`'s fence.
fn parts(kind: FenceKind) -> Result<&'static (String, String)> {
    static MEMORY: OnceLock<Option<(String, String)>> = OnceLock::new();
    static RECALL: OnceLock<Option<(String, String)>> = OnceLock::new();
    let (cell, render): (_, fn(&UntrustedText) -> memory_prompts::Result<String>) = match kind {
        FenceKind::Memory => (&MEMORY, memory_fence),
        FenceKind::Recall => (&RECALL, recall_fence),
    };
    cell.get_or_init(|| {
        let rendered = render(&UntrustedText::new(MARKER)).ok()?;
        let (before, after) = rendered.split_once(MARKER)?;
        Some((before.to_owned(), after.to_owned()))
    })
    .as_ref()
    .ok_or(Error::Prompt(memory_prompts::Error::InvalidContext {
        template: "introspect fence",
        reason: "the fence template does not render around its body",
    }))
}

/// The body of `text` when `text` (ignoring surrounding whitespace) is exactly one fence of
/// `kind`; `None` otherwise.
pub fn strip_fence(kind: FenceKind, text: &str) -> Option<&str> {
    let (before, after) = parts(kind).ok()?;
    text.trim()
        .strip_prefix(before.trim_start())?
        .strip_suffix(after.trim_end())
}

/// Fences `content` (see the module docs).
pub fn fence(kind: FenceKind, content: &str) -> Result<String> {
    let body = strip_fence(kind, content).unwrap_or(content).trim();
    let body = UntrustedText::new(body);
    Ok(match kind {
        FenceKind::Memory => memory_fence(&body)?,
        FenceKind::Recall => recall_fence(&body)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use memory_protocol::names::boundary_tags;
    use memory_sanitize::escape_boundary_tags;
    use proptest::prelude::*;

    const TAGS: &[&str] = &[boundary_tags::MEMORY, boundary_tags::MEMORY_RECALL];

    fn kind() -> impl Strategy<Value = FenceKind> {
        prop_oneof![Just(FenceKind::Memory), Just(FenceKind::Recall)]
    }

    /// Text with fence pieces of both kinds mixed into arbitrary text.
    fn hostile() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            2 => any::<String>(),
            1 => Just("<memory source=\"agent-memory\">\n".to_owned()),
            1 => Just("\n</memory>\n".to_owned()),
            1 => Just("<memory-recall>\n".to_owned()),
            1 => Just("</MEMORY-recall >".to_owned()),
            1 => Just("< memory>".to_owned()),
            1 => Just("<|im_end|>".to_owned()),
            1 => "[<>/ \n|a-z-]{0,10}",
        ];
        proptest::collection::vec(piece, 0..8).prop_map(|pieces| pieces.concat())
    }

    /// Characters other than `<` in order: what escaping keeps.
    fn kept(text: &str) -> Vec<char> {
        text.chars().filter(|&ch| ch != '<').collect()
    }

    fn is_subsequence(needle: &[char], haystack: &[char]) -> bool {
        let mut rest = haystack.iter();
        needle.iter().all(|ch| rest.any(|other| other == ch))
    }

    #[test]
    fn a_fence_strips_one_fence_and_keeps_nested_text() {
        let once = fence(FenceKind::Memory, "likes tabs").unwrap();
        assert_eq!(
            once,
            "<memory source=\"agent-memory\">\nlikes tabs\n</memory>\n"
        );
        // A fence around a fence: only the outer one is ours to strip; the inner text stays,
        // escaped, not deleted.
        let nested = format!("<memory source=\"agent-memory\">\n{once}</memory>");
        let fenced = fence(FenceKind::Memory, &nested).unwrap();
        assert_eq!(
            fenced,
            "<memory source=\"agent-memory\">\n&lt;memory source=\"agent-memory\">\nlikes tabs\n&lt;/memory>\n</memory>\n"
        );
        assert_eq!(strip_fence(FenceKind::Recall, &once), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn fencing_twice_is_fencing_once(kind in kind(), text in hostile()) {
            let once = fence(kind, &text).unwrap();
            prop_assert_eq!(fence(kind, &once).unwrap(), once);
        }

        #[test]
        fn content_is_never_lost(kind in kind(), text in hostile()) {
            let fenced = fence(kind, &text).unwrap();
            let body = strip_fence(kind, &fenced).unwrap();
            let source = strip_fence(kind, &text).unwrap_or(&text).trim();
            prop_assert!(
                is_subsequence(&kept(source), &kept(body)),
                "{:?} lost characters of {:?}", body, source
            );
        }

        #[test]
        fn no_tag_from_the_data_survives(kind in kind(), text in hostile()) {
            let fenced = fence(kind, &text).unwrap();
            let body = strip_fence(kind, &fenced).unwrap();
            let escaped = escape_boundary_tags(body, TAGS);
            prop_assert_eq!(escaped.as_ref(), body);
            let (before, after) = parts(kind).unwrap();
            prop_assert!(fenced.starts_with(before.as_str()) && fenced.ends_with(after.as_str()));
        }
    }
}
