//! Search hits that repeat one sentence. Consolidation keeps a lesson in several files at
//! once: the session summary, `raw_memories.md`, the handbook (with a `[Task 1]` tag) and the
//! always-on summary (with a `(project)` tag). Listed one by one, the same sentence fills the
//! page; merged, it is one hit that names the other places.
//!
//! Two hits repeat each other when their matching lines are the same sentence: equal once the
//! list marker, runs of spaces and one trailing tag in brackets or parentheses are set aside.
//! Lines shorter than [`MIN_SENTENCE_CHARS`] are never merged: a short label such as
//! `- March import (success)` is not a sentence kept twice.

use std::collections::HashMap;

use memory_protocol::introspect::MemorySearchHit;

/// Shortest matching line, without its marker and tag, that counts as a sentence.
const MIN_SENTENCE_CHARS: usize = 30;

/// Longest trailing tag set aside, in characters (`[Task 12]`, `(harbor-web)`).
const MAX_TAG_CHARS: usize = 40;

/// Merges each hit into the first earlier one whose matching line (`lines`, one per hit) is
/// the same sentence; the kept hit lists the merged ones as `path:line` in `also_in`. Order is
/// kept.
pub(crate) fn merge_repeats(hits: Vec<(MemorySearchHit, String)>) -> Vec<MemorySearchHit> {
    let mut merged: Vec<MemorySearchHit> = Vec::with_capacity(hits.len());
    let mut first_with: HashMap<String, usize> = HashMap::new();
    for (hit, line) in hits {
        let sentence = sentence(&line);
        if sentence.chars().count() >= MIN_SENTENCE_CHARS {
            if let Some(&kept) = first_with.get(&sentence) {
                merged[kept]
                    .also_in
                    .push(format!("{}:{}", hit.path, hit.line));
                continue;
            }
            first_with.insert(sentence, merged.len());
        }
        merged.push(hit);
    }
    merged
}

/// `line` as a sentence: no list marker, single spaces, no trailing tag.
fn sentence(line: &str) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    let words = match words.split_first() {
        Some((first, rest)) if is_list_marker(first) => rest,
        _ => &words[..],
    };
    let text = words.join(" ");
    without_tag(&text).to_owned()
}

fn is_list_marker(word: &str) -> bool {
    matches!(word, "-" | "*" | "+")
        || word
            .strip_suffix(['.', ')'])
            .is_some_and(|number| !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()))
}

/// `text` without one trailing ` [tag]` or ` (tag)` of at most [`MAX_TAG_CHARS`].
fn without_tag(text: &str) -> &str {
    let open = match text.chars().last() {
        Some(']') => '[',
        Some(')') => '(',
        _ => return text,
    };
    let Some(start) = text.rfind(open) else {
        return text;
    };
    let tag = &text[start..];
    let before = &text[..start];
    if tag.chars().count() > MAX_TAG_CHARS || !before.ends_with(' ') {
        return text;
    }
    before.trim_end()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hit(path: &str, line: u32) -> MemorySearchHit {
        MemorySearchHit {
            path: path.to_owned(),
            line,
            score: 1.0,
            heading: None,
            snippet: String::new(),
            all_terms: true,
            also_in: Vec::new(),
        }
    }

    #[test]
    fn one_sentence_in_three_files_is_one_hit_naming_the_others() {
        let lesson =
            "`cargo test -q` failed (exit 101); it passed after adding `mod empty_table;`.";
        let hits = vec![
            (hit("MEMORY.md", 98), format!("- {lesson} [Task 1]")),
            (
                hit("memory_summary.md", 17),
                format!("- {lesson} (tidewater)"),
            ),
            (
                hit("notes/x.md", 3),
                "- a different lesson that is long enough".to_owned(),
            ),
            (hit("raw_memories.md", 27), format!("  -  {lesson}")),
            (hit("rollout_summaries/a.md", 31), lesson.to_owned()),
        ];
        let merged = merge_repeats(hits);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].path, "MEMORY.md");
        assert_eq!(
            merged[0].also_in,
            [
                "memory_summary.md:17",
                "raw_memories.md:27",
                "rollout_summaries/a.md:31"
            ]
        );
        assert_eq!(merged[1].path, "notes/x.md");
        assert!(merged[1].also_in.is_empty());
    }

    #[test]
    fn short_labels_and_different_sentences_stay_apart() {
        let hits = vec![
            (
                hit("memory_summary.md", 3),
                "- March import (success)".to_owned(),
            ),
            (hit("MEMORY.md", 9), "- March import (success)".to_owned()),
            (
                hit("a.md", 1),
                "Always run the scheduler tests twice.".to_owned(),
            ),
            (
                hit("b.md", 1),
                "Always run the scheduler tests once.".to_owned(),
            ),
        ];
        assert_eq!(merge_repeats(hits).len(), 4);
        assert_eq!(
            sentence("1. Keep the  changelog sorted by date (see CONTRIBUTING.md)"),
            "Keep the changelog sorted by date"
        );
        assert_eq!(sentence("- a (b) c"), "a (b) c");
    }

    proptest! {
        #![proptest_config(ProptestConfig { rng_seed: proptest::test_runner::RngSeed::Fixed(29), ..ProptestConfig::default() })]

        /// Merging loses no hit: every input is either kept or named by the one it merged into.
        #[test]
        fn every_hit_is_kept_or_named(lines in proptest::collection::vec("\\PC{0,60}", 0..12)) {
            let hits: Vec<(MemorySearchHit, String)> = lines
                .iter()
                .enumerate()
                .map(|(number, line)| (hit("f.md", number as u32), line.clone()))
                .collect();
            let merged = merge_repeats(hits);
            let mut named: Vec<String> = merged
                .iter()
                .flat_map(|hit| {
                    std::iter::once(format!("{}:{}", hit.path, hit.line))
                        .chain(hit.also_in.iter().cloned())
                })
                .collect();
            named.sort();
            let mut expected: Vec<String> =
                (0..lines.len()).map(|number| format!("f.md:{number}")).collect();
            expected.sort();
            prop_assert_eq!(named, expected);
        }
    }
}
