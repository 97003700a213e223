//! The guard that stops a consolidation from silently losing memory.
//!
//! A rewrite of `MEMORY.md` must keep every anchor of the old text (paths, commands in
//! backticks, dates, identifiers, URLs, versions, flags) unless the model listed it in
//! [`ConsolidationOutput::obsolete`]. A rewrite that drops anchors is rejected: the old text is
//! kept and the new material is appended below it, so nothing is lost and the next pass can
//! try again.

use std::collections::{BTreeSet, HashSet};

use memory_protocol::consolidation::ConsolidationOutput;

/// Longest backtick span taken as an anchor; longer spans are prose, not a command or name.
const MAX_CODE_SPAN_CHARS: usize = 200;
/// Heading of the block a rejected rewrite appends.
pub const UNCONSOLIDATED_HEADING: &str = "## Unconsolidated material";

/// The guard's decision on one consolidation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardVerdict {
    /// The `MEMORY.md` to write.
    pub memory_md: String,
    /// Old anchors the rewrite dropped without marking them obsolete; empty when accepted.
    pub missing: Vec<String>,
}

impl GuardVerdict {
    /// True when the model's rewrite was taken as is.
    pub fn accepted(&self) -> bool {
        self.missing.is_empty()
    }
}

/// Checks the model's new `MEMORY.md` against the old one.
///
/// Accepted: the new text is returned unchanged. Rejected: the old text is kept and
/// `new_material` (what this pass was meant to fold in) is appended under
/// [`UNCONSOLIDATED_HEADING`]; when `new_material` is blank the old text is kept as is.
pub fn guard_consolidation(
    old_memory_md: &str,
    output: &ConsolidationOutput,
    new_material: &str,
) -> GuardVerdict {
    let missing = missing_anchors(old_memory_md, &output.memory_md, &output.obsolete);
    if missing.is_empty() {
        return GuardVerdict {
            memory_md: output.memory_md.clone(),
            missing,
        };
    }
    let mut memory_md = old_memory_md.trim_end().to_owned();
    let material = new_material.trim();
    if !material.is_empty() {
        if !memory_md.is_empty() {
            memory_md.push_str("\n\n");
        }
        memory_md.push_str(UNCONSOLIDATED_HEADING);
        memory_md.push_str("\n\n");
        memory_md.push_str(material);
    }
    memory_md.push('\n');
    GuardVerdict { memory_md, missing }
}

/// Anchors of `old` that are absent from `new` and not listed in `obsolete`, sorted.
pub fn missing_anchors(old: &str, new: &str, obsolete: &[String]) -> Vec<String> {
    let obsolete: HashSet<&str> = obsolete.iter().map(|entry| normalize(entry)).collect();
    let present = extract_anchors(new);
    extract_anchors(old)
        .into_iter()
        .filter(|anchor| {
            !present.contains(anchor)
                && !obsolete.contains(anchor.as_str())
                && !new.contains(anchor.as_str())
        })
        .collect()
}

/// The anchors of a text: backtick code spans, and words that look like paths, URLs, dates,
/// identifiers, versions or command-line flags. Sorted and deduplicated.
pub fn extract_anchors(text: &str) -> BTreeSet<String> {
    let mut anchors = BTreeSet::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            // Odd pieces of a split on '`' are inside a span; an unclosed last span is not.
            let pieces: Vec<&str> = line.split('`').collect();
            let closed = pieces.len() - (pieces.len() + 1) % 2;
            for piece in pieces.iter().take(closed).skip(1).step_by(2) {
                let span = piece.trim();
                if !span.is_empty() && span.chars().count() <= MAX_CODE_SPAN_CHARS {
                    anchors.insert(span.to_owned());
                }
            }
        }
        for word in line.split(|ch: char| ch.is_whitespace() || ch == '`') {
            if let Some(anchor) = word_anchor(word) {
                anchors.insert(anchor.to_owned());
            }
        }
    }
    anchors
}

/// An obsolete entry as the model may have written it: trimmed, without surrounding quotes or
/// backticks.
fn normalize(entry: &str) -> &str {
    entry.trim().trim_matches(['`', '"', '\'']).trim()
}

/// The anchor in one whitespace-separated word, if it is one.
fn word_anchor(word: &str) -> Option<&str> {
    let word = word
        .trim_start_matches(['(', '[', '{', '"', '\'', '<', '*', '_'])
        .trim_end_matches([
            ')', ']', '}', '"', '\'', '>', ',', '.', ';', ':', '!', '?', '*', '_',
        ]);
    if word.chars().count() < 3 || !word.chars().any(|ch| ch.is_ascii_alphanumeric()) {
        return None;
    }
    if let Some(date) = find_date(word) {
        return Some(date);
    }
    if word.contains("://") || is_path(word) || is_file_name(word) || is_flag(word) {
        return Some(word);
    }
    if is_identifier(word) || is_version(word) {
        return Some(word);
    }
    None
}

/// The first `YYYY-MM-DD` in a word.
fn find_date(word: &str) -> Option<&str> {
    let bytes = word.as_bytes();
    (0..bytes.len().saturating_sub(9)).find_map(|start| {
        let candidate = bytes.get(start..start + 10)?;
        let shape = candidate
            .iter()
            .enumerate()
            .all(|(index, byte)| match index {
                4 | 7 => *byte == b'-',
                _ => byte.is_ascii_digit(),
            });
        let bounded = start == 0 || !bytes.get(start - 1).is_some_and(u8::is_ascii_digit);
        (shape && bounded)
            .then(|| word.get(start..start + 10))
            .flatten()
    })
}

fn is_path_char(ch: char) -> bool {
    ch.is_ascii_alphanumeric() || matches!(ch, '/' | '.' | '_' | '-' | '~' | '+' | '@')
}

/// A path: has a `/`, only path characters, and something beyond a plain `word/word` (such as
/// `and/or`): a leading `/`, `~` or `.`, a second `/`, or a `.`, `_`, `-` or digit.
fn is_path(word: &str) -> bool {
    word.contains('/')
        && word.chars().all(is_path_char)
        && (word.starts_with(['/', '~', '.'])
            || word.matches('/').count() >= 2
            || word.contains(['.', '_', '-'])
            || word.chars().any(|ch| ch.is_ascii_digit()))
}

/// A file name such as `Cargo.toml` or `main.c`: a stem, a dot, an extension with a letter.
fn is_file_name(word: &str) -> bool {
    let Some((stem, extension)) = word.rsplit_once('.') else {
        return false;
    };
    word.len() >= 4
        && word.chars().all(is_path_char)
        && stem.chars().any(|ch| ch.is_ascii_alphanumeric())
        && (1..=8).contains(&extension.len())
        && extension.chars().all(|ch| ch.is_ascii_alphanumeric())
        && extension.chars().any(|ch| ch.is_ascii_alphabetic())
}

/// A command-line flag such as `--json` or `--max-age-days`.
fn is_flag(word: &str) -> bool {
    word.strip_prefix("--").is_some_and(|name| {
        name.starts_with(|ch: char| ch.is_ascii_alphabetic())
            && name
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '=')
    })
}

/// An identifier that is clearly a name, not an English word: `snake_case`, `CamelCase`,
/// `SCREAMING_CASE` or a `::` path.
fn is_identifier(word: &str) -> bool {
    let shape = word.starts_with(|ch: char| ch.is_ascii_alphabetic() || ch == '_')
        && word
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == ':');
    let chars: Vec<char> = word.chars().collect();
    let inner_underscore = chars.windows(3).any(|window| {
        matches!(window, [before, '_', after]
            if before.is_ascii_alphanumeric() && after.is_ascii_alphanumeric())
    });
    let camel = chars.windows(2).any(|window| {
        matches!(window, [lower, upper] if lower.is_ascii_lowercase() && upper.is_ascii_uppercase())
    });
    shape && (inner_underscore || camel || word.contains("::"))
}

/// A dotted version with at least three parts, such as `1.89.0` or `v0.2.46`.
fn is_version(word: &str) -> bool {
    let digits = word.strip_prefix('v').unwrap_or(word);
    digits.split('.').count() >= 3
        && digits
            .split('.')
            .all(|part| !part.is_empty() && part.chars().all(|ch| ch.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn output(memory_md: &str, obsolete: &[String]) -> ConsolidationOutput {
        ConsolidationOutput {
            memory_md: memory_md.to_owned(),
            memory_summary_md: "v1\n".to_owned(),
            obsolete: obsolete.to_vec(),
        }
    }

    /// Markdown-ish text with anchors mixed in, so properties meet real anchors often.
    fn memory_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            any::<String>(),
            "[a-z]{1,8}(_[a-z]{1,8}){1,2}",
            "`[a-z -]{1,20}`",
            "(src|crates)/[a-z_]{1,10}\\.rs",
            "20[0-9]{2}-[01][0-9]-[0-3][0-9]",
            "[ \n#*`-]{0,4}",
        ];
        prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.join(" "))
    }

    proptest! {
        #[test]
        fn anchors_are_nonempty_substrings(text in memory_text()) {
            for anchor in extract_anchors(&text) {
                prop_assert!(!anchor.is_empty());
                prop_assert!(text.contains(&anchor), "{anchor:?} not in text");
            }
        }

        #[test]
        fn keeping_or_extending_the_text_is_accepted(old in memory_text(), extra in memory_text()) {
            prop_assert!(guard_consolidation(&old, &output(&old, &[]), "new").accepted());
            let extended = format!("{old}\n{extra}");
            prop_assert!(guard_consolidation(&old, &output(&extended, &[]), "new").accepted());
        }

        #[test]
        fn accepted_rewrites_keep_or_retire_every_anchor(
            old in memory_text(), new in memory_text(), obsolete in prop::collection::vec(memory_text(), 0..3),
        ) {
            let verdict = guard_consolidation(&old, &output(&new, &obsolete), "material");
            let retired: Vec<&str> = obsolete.iter().map(|entry| normalize(entry)).collect();
            if verdict.accepted() {
                prop_assert_eq!(&verdict.memory_md, &new);
                for anchor in extract_anchors(&old) {
                    prop_assert!(new.contains(&anchor) || retired.contains(&anchor.as_str()), "{anchor:?} lost");
                }
            } else {
                prop_assert!(verdict.memory_md.starts_with(old.trim_end()));
                prop_assert!(verdict.memory_md.contains("material"));
                for anchor in &verdict.missing {
                    prop_assert!(!new.contains(anchor.as_str()));
                }
            }
        }

        #[test]
        fn a_dropped_anchor_is_rejected_unless_obsolete(
            before in "[a-z ]{0,30}", name in "[a-z]{1,10}", after in "[a-z ]{0,30}",
        ) {
            let path = format!("src/{name}.rs");
            let old = format!("{before} {path} {after}");
            let new = format!("{before} {after}");
            let rejected = guard_consolidation(&old, &output(&new, &[]), "fresh facts");
            prop_assert_eq!(rejected.missing, vec![path.clone()]);
            prop_assert_eq!(rejected.memory_md, format!("{}\n\n{UNCONSOLIDATED_HEADING}\n\nfresh facts\n", old.trim_end()));
            let retired = guard_consolidation(&old, &output(&new, &[format!("`{path}`")]), "fresh facts");
            prop_assert!(retired.accepted());
        }
    }

    #[test]
    fn finds_each_kind_of_anchor() {
        let text = "On 2025-03-04 run `cargo test -p memory-write` in crates/memory-write; \
                    see src/lib.rs, Cargo.toml, https://example.com/x, StateStore, \
                    max_unused_days, OPENAI_API_KEY, memory_protocol::names, --json, v1.2.3. \
                    Plain and/or words like the, I/O, e.g. and well-known are not anchors.";
        let anchors = extract_anchors(text);
        for expected in [
            "2025-03-04",
            "cargo test -p memory-write",
            "crates/memory-write",
            "src/lib.rs",
            "Cargo.toml",
            "https://example.com/x",
            "StateStore",
            "max_unused_days",
            "OPENAI_API_KEY",
            "memory_protocol::names",
            "--json",
            "v1.2.3",
        ] {
            assert!(
                anchors.contains(expected),
                "missing {expected}: {anchors:?}"
            );
        }
        for word in ["and/or", "I/O", "e.g", "well-known", "Plain", "words"] {
            assert!(!anchors.contains(word), "{word} taken as an anchor");
        }
    }

    #[test]
    fn fenced_blocks_are_not_split_into_code_spans() {
        let anchors = extract_anchors("```sh\necho `date`\n```\n`unclosed span");
        assert!(!anchors.contains("date"));
        assert!(!anchors.contains("unclosed span"));
    }
}
