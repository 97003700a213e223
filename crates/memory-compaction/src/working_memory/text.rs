//! Reading bullet items out of a section body, comparing them, and measuring a body.

use memory_protocol::working_memory::limits;
use memory_sanitize::{CjkEstimate, TokenCounter};

/// The items of a body, in order: every non-blank line that is not a heading (`#...`), without
/// its bullet marker (`-`, `*`, `1.`, `2)` followed by whitespace). A plain line is an item too.
pub fn items(body: &str) -> impl Iterator<Item = &str> {
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
pub fn strip_marker(line: &str) -> &str {
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
pub fn clean_item(item: &str) -> Option<String> {
    let one_line = if item.contains(['\n', '\r']) {
        item.split_whitespace().collect::<Vec<_>>().join(" ")
    } else {
        item.trim().to_owned()
    };
    let stripped = strip_marker(one_line.trim()).trim();
    if stripped.is_empty() || crate::working_memory::document::normalize_body(stripped).is_empty() {
        return None;
    }
    Some(stripped.to_owned())
}

/// The comparison key of an item: lower-cased, status tags (`[new]`, `[resolved]`,
/// `[restored]`) and emphasis marks removed, whitespace collapsed, no trailing period. Two
/// items with the same key say the same thing; a short item is a duplicate only of an equal
/// item, never of a longer one that happens to contain it.
pub fn item_key(item: &str) -> String {
    let mut key = Vec::new();
    write_key(item, &mut key);
    String::from_utf8(key).unwrap_or_default()
}

/// Writes the key of `item` (see [`item_key`]) into `out`, which is cleared first. The bytes
/// are UTF-8: only whole characters are copied, lower-cased.
fn write_key(item: &str, out: &mut Vec<u8>) {
    out.clear();
    let core = strip_status_tags(strip_marker(item.trim()));
    out.reserve(core.len());
    let mut space = false;
    if core.is_ascii() {
        for &byte in core.as_bytes() {
            match byte {
                b'*' | b'`' => {}
                b'\t'..=b'\r' | b' ' => space = !out.is_empty(),
                _ => {
                    if space {
                        out.push(b' ');
                        space = false;
                    }
                    out.push(byte.to_ascii_lowercase());
                }
            }
        }
    } else {
        let mut buffer = [0u8; 4];
        for ch in core.chars() {
            if ch == '*' || ch == '`' {
                continue;
            }
            if ch.is_whitespace() {
                space = !out.is_empty();
                continue;
            }
            if space {
                out.push(b' ');
                space = false;
            }
            for lower in ch.to_lowercase() {
                out.extend_from_slice(lower.encode_utf8(&mut buffer).as_bytes());
            }
        }
    }
    let trim = |byte: &u8| matches!(byte, b'_' | b'.' | b' ');
    let end = out
        .iter()
        .rposition(|byte| !trim(byte))
        .map_or(0, |at| at + 1);
    out.truncate(end);
    let start = out.iter().position(|byte| !trim(byte)).unwrap_or(out.len());
    out.drain(..start);
}

/// The status tags an item may start with, in any case.
const STATUS_TAGS: [&str; 4] = [
    limits::NEW_MARKER,
    limits::RESOLVED_MARKER,
    limits::RESTORED_MARKER,
    // The marker of the reference implementation, so documents it wrote compare the same.
    "[silently dropped, restored]",
];

/// An item without the status tags it starts with.
pub fn strip_status_tags(item: &str) -> &str {
    let mut rest = item.trim_start();
    loop {
        let Some(tag) = STATUS_TAGS
            .iter()
            .find(|tag| starts_with_ignore_case(rest, tag))
        else {
            return rest;
        };
        rest = rest[tag.len()..].trim_start();
    }
}

/// True when the item starts with `tag` (among its leading status tags), in any case.
pub fn has_status_tag(item: &str, tag: &str) -> bool {
    let mut rest = strip_marker(item.trim()).trim_start();
    loop {
        if starts_with_ignore_case(rest, tag) {
            return true;
        }
        let Some(other) = STATUS_TAGS
            .iter()
            .find(|t| starts_with_ignore_case(rest, t))
        else {
            return false;
        };
        rest = rest[other.len()..].trim_start();
    }
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.len() >= prefix.len()
        && text.is_char_boundary(prefix.len())
        && text[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// A 64-bit hash of [`item_key`]`(item)` (SipHash with fixed keys); `None` when the key is
/// empty. Equal keys hash equally; two different keys collide with a chance of about one in
/// 2^64, which the guards accept in exchange for comparing items without keeping their keys.
pub fn key_hash(item: &str) -> Option<u64> {
    let mut key = Vec::new();
    write_key(item, &mut key);
    hash_of_key_bytes(&key)
}

/// The hash of an already built key (see [`key_hash`]).
pub fn hash_of_key(key: &str) -> Option<u64> {
    hash_of_key_bytes(key.as_bytes())
}

fn hash_of_key_bytes(key: &[u8]) -> Option<u64> {
    use std::hash::Hasher;
    if key.is_empty() {
        return None;
    }
    let mut hasher = std::hash::DefaultHasher::new();
    hasher.write(key);
    Some(hasher.finish())
}

/// Which items a body holds, by the hash of their keys (see [`key_hash`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ItemKeys(Vec<u64>);

impl ItemKeys {
    /// The keys of a body's items.
    pub fn of(body: &str) -> Self {
        let mut buffer = Vec::new();
        let mut keys: Vec<u64> = items(body)
            .filter_map(|item| {
                write_key(item, &mut buffer);
                hash_of_key_bytes(&buffer)
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        Self(keys)
    }

    /// True when the body has an item with this key hash.
    pub fn contains(&self, hash: u64) -> bool {
        self.0.binary_search(&hash).is_ok()
    }
}

/// `candidates` without empty items and without those whose key the body already has or an
/// earlier candidate repeats.
pub fn fresh_items(candidates: &[String], existing: &ItemKeys) -> Vec<String> {
    let mut seen: Vec<u64> = Vec::with_capacity(candidates.len());
    candidates
        .iter()
        .filter(|item| match key_hash(item) {
            Some(hash) if !existing.contains(hash) && !seen.contains(&hash) => {
                seen.push(hash);
                true
            }
            _ => false,
        })
        .cloned()
        .collect()
}

/// Estimated tokens of a text (script-aware; see [`CjkEstimate`]).
pub fn tokens(text: &str) -> usize {
    CjkEstimate.count(text)
}

/// The size of a body: items and estimated tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SectionSize {
    /// Items ([`items`]).
    pub bullets: usize,
    /// Estimated tokens of the whole body.
    pub tokens: usize,
}

impl SectionSize {
    /// Measures a body.
    pub fn of(body: &str) -> Self {
        Self {
            bullets: items(body).count(),
            tokens: tokens(body),
        }
    }

    /// Over the section thresholds (strictly more bullets or tokens than allowed).
    pub fn is_oversized(self) -> bool {
        self.bullets > limits::SECTION_BULLET_THRESHOLD
            || self.tokens > limits::SECTION_TOKEN_THRESHOLD
    }

    /// At or past the hard bound.
    pub fn is_at_hard_bound(self) -> bool {
        self.bullets >= limits::hard_bound_bullets() || self.tokens >= limits::hard_bound_tokens()
    }

    /// Past the hard bound.
    pub fn is_past_hard_bound(self) -> bool {
        self.bullets > limits::hard_bound_bullets() || self.tokens > limits::hard_bound_tokens()
    }
}

/// Renders items as bullets, one per line.
pub fn bullets(items: &[String]) -> String {
    let mut out = String::new();
    for item in items {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str("- ");
        out.push_str(item);
    }
    out
}

/// `body` with `items` appended as bullets.
pub fn append_items(body: &str, items: &[String]) -> String {
    let added = bullets(items);
    match (body.is_empty(), added.is_empty()) {
        (_, true) => body.to_owned(),
        (true, false) => added,
        (false, false) => format!("{body}\n{added}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_stripped_only_before_whitespace() {
        assert_eq!(strip_marker("- a"), "a");
        assert_eq!(strip_marker("12) b"), "b");
        assert_eq!(strip_marker("3. c"), "c");
        assert_eq!(strip_marker("-x"), "-x");
        assert_eq!(strip_marker("2024-01-01 d"), "2024-01-01 d");
    }

    #[test]
    fn key_hashes_agree_with_keys() {
        for item in [
            "- [resolved] **Fix**  the `parser`.",
            "_ x",
            "a ._ b_.",
            "*",
            "",
            "ÉCOLE  Ünïcode",
            "..x..",
            "x _ y",
        ] {
            assert_eq!(key_hash(item), hash_of_key(&item_key(item)), "{item:?}");
        }
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
}
