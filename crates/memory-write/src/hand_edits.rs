//! Hand edits of the memory files, kept: a user who corrects `MEMORY.md` or
//! `memory_summary.md` by hand must not see the next consolidation silently write over it.
//!
//! Every time the write path writes one of the two files (a consolidation, or a shared
//! revision materialized), it keeps a copy of what it wrote in `.written/` (a hidden folder
//! the memory tools never serve). Before a pass, a file that no longer matches its copy was
//! edited by hand: the lines the user added and removed become a note in `notes/`, written by
//! the user, which every consolidation (model or offline) folds in as a correction and which
//! stays until it leaves `notes/`. The copy is then brought up to date, so one edit is one
//! note.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use memory_protocol::consolidation::NOTE_TITLE;
use memory_protocol::names::memory_root as names;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::memory_root::MemoryRoot;

/// The hidden folder holding what the write path last wrote of each memory file.
pub(crate) const WRITTEN_DIR: &str = ".written";
/// The files a user may correct by hand.
const EDITABLE: [&str; 2] = [names::MEMORY_FILE, names::MEMORY_SUMMARY_FILE];
/// Most lines of each kind (added, removed) a hand-edit note quotes.
const MAX_LINES: usize = 60;
/// Most characters of one quoted line.
const MAX_LINE_CHARS: usize = 400;

impl MemoryRoot {
    /// Keeps a copy of `text`, just written to the memory file `name`, for hand-edit
    /// detection; other files are not copied.
    pub(crate) fn record_written(&self, name: &str, text: &str) -> Result<()> {
        if EDITABLE.contains(&name) {
            let dir = self.dir().join(WRITTEN_DIR);
            std::fs::create_dir_all(&dir).map_err(|source| Error::io(&dir, source))?;
            self.write_atomic(&dir.join(name), text)?;
        }
        Ok(())
    }

    /// Turns each hand edit of `MEMORY.md` or `memory_summary.md` since the write path last
    /// wrote it into a user's note (see the module docs). Returns the notes written, by path
    /// relative to the root.
    pub fn fold_hand_edits(&self, now: i64) -> Result<Vec<String>> {
        let mut written = Vec::new();
        for name in EDITABLE {
            let (Some(current), Some(copy)) = (
                self.read(name)?,
                self.read(&format!("{WRITTEN_DIR}/{name}"))?,
            ) else {
                continue;
            };
            if current == copy {
                continue;
            }
            let (added, removed) = line_changes(&copy, &current);
            if !added.is_empty() || !removed.is_empty() {
                let stem = note_stem(now, &current);
                let path = format!("{}/{stem}.md", names::NOTES_DIR);
                let notes = self.dir().join(names::NOTES_DIR);
                std::fs::create_dir_all(&notes).map_err(|source| Error::io(&notes, source))?;
                self.write_atomic(&self.dir().join(&path), &note(name, now, &added, &removed))?;
                written.push(path);
            }
            self.record_written(name, &current)?;
        }
        Ok(written)
    }
}

/// The non-blank lines of `after` that `before` does not hold, and those of `before` that
/// `after` does not, each in file order (counted, so a repeated line counts each time).
fn line_changes<'a>(before: &'a str, after: &'a str) -> (Vec<&'a str>, Vec<&'a str>) {
    fn counts(text: &str) -> BTreeMap<&str, usize> {
        let mut counts = BTreeMap::new();
        for line in text
            .lines()
            .map(str::trim_end)
            .filter(|line| !line.trim().is_empty())
        {
            *counts.entry(line).or_default() += 1;
        }
        counts
    }
    fn only_in<'a>(text: &'a str, other: &BTreeMap<&str, usize>) -> Vec<&'a str> {
        let mut left = other.clone();
        let mut lines = Vec::new();
        for line in text
            .lines()
            .map(str::trim_end)
            .filter(|line| !line.trim().is_empty())
        {
            match left.get_mut(line) {
                Some(count) if *count > 0 => *count -= 1,
                _ => lines.push(line),
            }
        }
        lines
    }
    (
        only_in(after, &counts(before)),
        only_in(before, &counts(after)),
    )
}

/// The note recording one hand edit of `file`.
fn note(file: &str, now: i64, added: &[&str], removed: &[&str]) -> String {
    let time = jiff::Timestamp::from_second(now)
        .map(|time| time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default();
    let mut text = format!(
        "{NOTE_TITLE} (hand edit of {file})\nwritten_at: {time}\nwritten_by: the user, by \
         editing {file} by hand\n\nThe user corrected {file} by hand after the last \
         consolidation. Keep these corrections: they are the user's own word and override \
         what sessions said.\n"
    );
    for (heading, lines) in [
        ("Lines the user added or changed:", added),
        ("Lines the user removed:", removed),
    ] {
        if lines.is_empty() {
            continue;
        }
        let _ = write!(text, "\n{heading}\n");
        for line in lines.iter().take(MAX_LINES) {
            let line: String = line.chars().take(MAX_LINE_CHARS).collect();
            let _ = writeln!(text, "> {line}");
        }
        if lines.len() > MAX_LINES {
            let _ = writeln!(text, "(and {} more)", lines.len() - MAX_LINES);
        }
    }
    text
}

/// A note file stem as `memory_note` names them (the UTC second, then four hex digits), the
/// digits taken from the edited text so two edits in one second get two names.
fn note_stem(now: i64, text: &str) -> String {
    let time = jiff::Timestamp::from_second(now)
        .map(|time| time.strftime("%Y-%m-%dT%H-%M-%SZ").to_string())
        .unwrap_or_else(|_| "0000-00-00T00-00-00Z".to_owned());
    let digest = Sha256::digest(text.as_bytes());
    format!("{time}-{:02x}{:02x}", digest[0], digest[1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn changed_lines_are_counted_and_kept_in_file_order() {
        let (added, removed) = line_changes("a\nb\nb\n\nc\n", "b\nx\nc\nb\ny\n");
        assert_eq!(added, ["x", "y"]);
        assert_eq!(removed, ["a"]);
        let (added, removed) = line_changes("a\nb\nb\n", "a\nb\n");
        assert!(added.is_empty());
        assert_eq!(removed, ["b"]);
    }

    proptest! {
        #![proptest_config(ProptestConfig { rng_seed: proptest::test_runner::RngSeed::Fixed(29), ..ProptestConfig::default() })]

        /// Added lines come from the edited text, removed ones from the old; the same text
        /// twice has no changes; and the note quotes every line it lists on its own line.
        #[test]
        fn changes_come_from_the_texts_and_the_note_quotes_them(before in "(\\PC{0,20}\n){0,8}", after in "(\\PC{0,20}\n){0,8}") {
            let (added, removed) = line_changes(&before, &after);
            let after_lines: Vec<&str> = after.lines().map(str::trim_end).collect();
            let before_lines: Vec<&str> = before.lines().map(str::trim_end).collect();
            prop_assert!(added.iter().all(|line| after_lines.contains(line)));
            prop_assert!(removed.iter().all(|line| before_lines.contains(line)));
            let (same_added, same_removed) = line_changes(&after, &after);
            prop_assert!(same_added.is_empty() && same_removed.is_empty());
            let note = note("MEMORY.md", 0, &added, &removed);
            prop_assert!(note.starts_with(NOTE_TITLE));
            for line in added.iter().chain(&removed).take(MAX_LINES) {
                let quoted: String = line.chars().take(MAX_LINE_CHARS).collect();
                let quoted = format!("> {quoted}");
                prop_assert!(note.lines().any(|l| l == quoted));
            }
        }
    }
}
