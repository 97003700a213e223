//! Reading patches in the `apply_patch` format, and the replacements of file tools (Claude
//! Code's `Edit`): which files they touch and, for a small edit, exactly what changed.

use std::collections::BTreeSet;

use super::text::{MAX_LINE_CHARS, one_line};

/// Longest changed line quoted from a patch, in characters.
const MAX_EDIT_LINE_CHARS: usize = 120;
/// Most removed or added lines of a patch for it to count as a small edit worth quoting.
const MAX_EDIT_LINES: usize = 2;

/// A file a patch touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileChange {
    /// The path as the patch wrote it.
    pub path: String,
    /// What happened to it.
    pub kind: ChangeKind,
}

/// What a patch did to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangeKind {
    /// `*** Add File:`.
    Added,
    /// `*** Update File:`.
    Updated,
    /// `*** Delete File:`.
    Deleted,
    /// Written whole by a file tool (`Write`), new or not.
    Written,
}

impl ChangeKind {
    pub(crate) fn verb(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Updated => "updated",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Written => "written",
        }
    }
}

/// A small edit: the few lines a patch removed and added in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SmallEdit {
    /// The file.
    pub path: String,
    /// Lines removed, trimmed.
    pub removed: Vec<String>,
    /// Lines added, trimmed.
    pub added: Vec<String>,
}

/// True when a text holds a patch.
pub(crate) fn is_patch(text: &str) -> bool {
    text.contains("*** Begin Patch")
}

/// The files a patch touches, in order, each once.
pub(crate) fn patch_changes(patch: &str) -> Vec<FileChange> {
    let mut changes: Vec<FileChange> = Vec::new();
    let mut seen = BTreeSet::new();
    for line in patch.lines() {
        if let Some((path, kind)) = file_header(line)
            && seen.insert(path.to_owned())
        {
            changes.push(FileChange {
                path: one_line(path, MAX_LINE_CHARS),
                kind,
            });
        }
    }
    changes
}

fn file_header(line: &str) -> Option<(&str, ChangeKind)> {
    let line = line.trim();
    [
        ("*** Add File:", ChangeKind::Added),
        ("*** Update File:", ChangeKind::Updated),
        ("*** Delete File:", ChangeKind::Deleted),
        ("*** Move to:", ChangeKind::Added),
    ]
    .into_iter()
    .find_map(|(marker, kind)| line.strip_prefix(marker).map(|path| (path.trim(), kind)))
    .filter(|(path, _)| !path.is_empty())
}

/// The edit of a patch that updates one file and changes at most two lines each way; `None`
/// for anything larger, which a lesson cannot quote usefully.
pub(crate) fn small_edit(patch: &str) -> Option<SmallEdit> {
    let mut path = None;
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    for line in patch.lines() {
        if let Some((file, kind)) = file_header(line) {
            if path.is_some() || kind != ChangeKind::Updated {
                return None;
            }
            path = Some(file.to_owned());
            continue;
        }
        if line.starts_with("***") || line.starts_with("@@") {
            continue;
        }
        let (list, body) = match (line.strip_prefix('-'), line.strip_prefix('+')) {
            (Some(body), _) => (&mut removed, body),
            (_, Some(body)) => (&mut added, body),
            _ => continue,
        };
        let body = body.trim();
        if !body.is_empty() {
            list.push(one_line(body, MAX_EDIT_LINE_CHARS));
        }
    }
    path.and_then(|path| small(path, removed, added))
}

/// The edit of a file tool that replaced `old` with `new` in `path` (lines both sides share at
/// the start and the end are context, not the change); `None` when it is not small.
pub(crate) fn replacement_edit(path: &str, old: &str, new: &str) -> Option<SmallEdit> {
    let lines = |text: &str| -> Vec<String> {
        text.lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .map(|line| one_line(line, MAX_EDIT_LINE_CHARS))
            .collect()
    };
    let (mut removed, mut added) = (lines(old), lines(new));
    let head = removed
        .iter()
        .zip(&added)
        .take_while(|(a, b)| a == b)
        .count();
    removed.drain(..head);
    added.drain(..head);
    let tail = removed
        .iter()
        .rev()
        .zip(added.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    removed.truncate(removed.len() - tail);
    added.truncate(added.len() - tail);
    small(path.to_owned(), removed, added)
}

fn small(path: String, removed: Vec<String>, added: Vec<String>) -> Option<SmallEdit> {
    let small = removed.len() <= MAX_EDIT_LINES
        && added.len() <= MAX_EDIT_LINES
        && !(removed.is_empty() && added.is_empty());
    small.then_some(SmallEdit {
        path,
        removed,
        added,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn patches_list_each_file_once() {
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n*** Add File: b.md\n\
                     *** Delete File: c.txt\n*** Update File: src/a.rs\n*** Move to: src/d.rs\n*** End Patch";
        let paths: Vec<(String, &str)> = patch_changes(patch)
            .into_iter()
            .map(|c| (c.path, c.kind.verb()))
            .collect();
        assert_eq!(
            paths,
            vec![
                ("src/a.rs".to_owned(), "updated"),
                ("b.md".to_owned(), "added"),
                ("c.txt".to_owned(), "deleted"),
                ("src/d.rs".to_owned(), "added"),
            ]
        );
    }

    #[test]
    fn small_edits_are_quoted_and_large_ones_are_not() {
        let patch = "*** Begin Patch\n*** Update File: m.py\n@@\n-down_revision = 'a9'\n+down_revision = '3f'\n*** End Patch";
        let edit = small_edit(patch).unwrap();
        assert_eq!(edit.path, "m.py");
        assert_eq!(edit.removed, ["down_revision = 'a9'"]);
        assert_eq!(edit.added, ["down_revision = '3f'"]);
        let large = "*** Update File: a\n+1\n+2\n+3";
        assert_eq!(small_edit(large), None);
        assert_eq!(small_edit("*** Add File: a\n+x"), None);
        assert_eq!(
            small_edit("*** Update File: a\n*** Update File: b\n+x"),
            None
        );
    }

    #[test]
    fn a_replacement_is_quoted_without_its_context_lines() {
        let edit = replacement_edit(
            "ledger.py",
            "    header = lines[0]\n",
            "    if not lines:\n        return []\n    header = lines[0]\n",
        )
        .unwrap();
        assert_eq!(edit.removed, Vec::<String>::new());
        assert_eq!(edit.added, ["if not lines:", "return []"]);
        let swapped = replacement_edit("a.rs", "let x = 1;\nlet y = 2;", "let x = 3;\nlet y = 2;");
        assert_eq!(swapped.unwrap().removed, ["let x = 1;"]);
        assert_eq!(replacement_edit("a", "same", "same"), None);
        assert_eq!(replacement_edit("a", "", "1\n2\n3"), None);
    }

    proptest! {
        #[test]
        fn replacement_edits_never_panic(old in "(\\PC|\n){0,60}", new in "(\\PC|\n){0,60}") {
            if let Some(edit) = replacement_edit("f", &old, &new) {
                prop_assert!(edit.removed.len() <= MAX_EDIT_LINES && edit.added.len() <= MAX_EDIT_LINES);
                prop_assert!(!(edit.removed.is_empty() && edit.added.is_empty()));
            }
        }

        #[test]
        fn patch_readers_never_panic(text in "(\\PC|\\*\\*\\* Update File: |\\*\\*\\* Add File: |\n\\+|\n-|\n){0,40}") {
            for change in patch_changes(&text) {
                prop_assert!(!change.path.is_empty());
            }
            if let Some(edit) = small_edit(&text) {
                prop_assert!(edit.removed.len() <= MAX_EDIT_LINES && edit.added.len() <= MAX_EDIT_LINES);
            }
        }
    }
}
