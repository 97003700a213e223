//! Project scope: which lines of the always-on summary, and which notes, belong to which
//! project, so the block for one working directory holds the global profile and that
//! project's memories and leaves the other projects' to search.
//!
//! Memories name their project by its working directory:
//!
//! - the summary lists each project's recent work under a heading holding its folder in
//!   backticks (`### ledger (`/src/ledger`)`), and tags a local preference or tip with the
//!   project's name (`- prefers tabs (ledger)`, `- In ledger, these passed: ...`,
//!   `- ledger: an older task`);
//! - the handbook (`MEMORY.md`) names each project's folder: a `# Task Group: NAME` block with
//!   an `applies_to: cwd=PATH` line, or a heading holding the folder in backticks;
//! - a note saved for a project carries a `cwd: PATH` header line.
//!
//! A line that names no project is global and always kept.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// The header line of a note that names its project's folder.
pub(crate) const NOTE_CWD_KEY: &str = "cwd: ";

/// The projects memory knows: each name with the folders it was used for.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Projects {
    folders_by_name: BTreeMap<String, BTreeSet<String>>,
}

impl Projects {
    /// The projects named in the summary and the handbook.
    pub(crate) fn known(summary: &str, handbook: &str) -> Projects {
        let mut projects = Projects::default();
        for line in summary.lines().chain(handbook.lines()) {
            if let Some((name, folder)) = project_heading(line) {
                projects.add(name, folder);
            }
        }
        let mut group: Option<&str> = None;
        for line in handbook.lines() {
            if let Some(name) = line.strip_prefix("# Task Group:") {
                group = Some(name.trim());
            } else if line.starts_with("# ") {
                group = None;
            } else if let (Some(name), Some(rest)) = (group, line.strip_prefix("applies_to: cwd="))
            {
                let folder = rest.split(';').next().unwrap_or_default().trim();
                projects.add(name, folder);
            }
        }
        projects
    }

    fn add(&mut self, name: &str, folder: &str) {
        if folder.is_empty() || !Path::new(folder).is_absolute() {
            return;
        }
        self.folders_by_name
            .entry(name.trim().to_owned())
            .or_default()
            .insert(folder.to_owned());
    }

    /// The folder of the project `cwd` is in: the longest known folder that is `cwd` or holds
    /// it; `None` when `cwd` is in no known project.
    pub(crate) fn project_of(&self, cwd: &Path) -> Option<String> {
        self.folders_by_name
            .values()
            .flatten()
            .filter(|folder| within(cwd, Path::new(folder)))
            .max_by_key(|folder| Path::new(folder).components().count())
            .cloned()
    }

    /// The folders a line of the summary is about, outside a project's section: a known
    /// project's name as its tag (`(name)` at the end, `In name, ` or `name: ` at the start of
    /// a list item), or a known folder in backticks.
    fn folders_named_by(&self, line: &str) -> BTreeSet<String> {
        let mut folders = BTreeSet::new();
        let trimmed = line.trim();
        if let Some(item) = trimmed.strip_prefix("- ") {
            for (name, named) in &self.folders_by_name {
                let tagged = item
                    .strip_suffix(')')
                    .and_then(|rest| rest.strip_suffix(name.as_str()))
                    .is_some_and(|rest| rest.ends_with('('))
                    || item.starts_with(&format!("In {name}, "))
                    || item.starts_with(&format!("{name}: "));
                if tagged {
                    folders.extend(named.iter().cloned());
                }
            }
        }
        for named in self.folders_by_name.values() {
            for folder in named {
                if trimmed.contains(&format!("`{folder}`")) {
                    folders.insert(folder.clone());
                }
            }
        }
        folders
    }
}

/// The summary for one project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScopedSummary {
    /// The global lines and the project's lines.
    pub(crate) text: String,
    /// The other projects whose lines were left out, by folder.
    pub(crate) left_out: BTreeSet<String>,
}

/// The summary's global lines and those of `project` (a folder from [`Projects::project_of`];
/// `None` keeps only the global lines). A heading holding a folder in backticks opens that
/// project's section, which runs to the next heading of its level or above.
pub(crate) fn scope_summary(
    summary: &str,
    projects: &Projects,
    project: Option<&str>,
) -> ScopedSummary {
    let mut kept = Vec::new();
    let mut left_out = BTreeSet::new();
    for (line, owners) in summary.lines().zip(line_owners(summary, projects)) {
        if owners.is_empty() || project.is_some_and(|project| owners.contains(project)) {
            kept.push(line);
        } else {
            left_out.extend(owners);
        }
    }
    // A heading whose every line went to other projects would only announce nothing.
    let kept = drop_emptied_headings(&kept, !left_out.is_empty());
    let mut text = kept.join("\n");
    if summary.ends_with('\n') {
        text.push('\n');
    }
    ScopedSummary { text, left_out }
}

/// The project folders each line of the summary is about, empty for a global line: a line in
/// a project's section (opened by a heading holding its folder in backticks, run to the next
/// heading of its level or above) is that project's; another line, the projects it names.
pub(crate) fn line_owners(summary: &str, projects: &Projects) -> Vec<BTreeSet<String>> {
    // The open project section: its heading level and folder.
    let mut section: Option<(usize, String)> = None;
    summary
        .lines()
        .map(|line| {
            let level = heading_level(line);
            if let Some(level) = level
                && section.as_ref().is_some_and(|(open, _)| level <= *open)
            {
                section = None;
            }
            if let (Some(level), Some((_, folder))) = (level, project_heading(line)) {
                section = Some((level, folder.to_owned()));
            }
            match &section {
                Some((_, folder)) => BTreeSet::from([folder.clone()]),
                None => projects.folders_named_by(line),
            }
        })
        .collect()
}

/// `lines` without the headings followed by nothing but blank lines before the next heading of
/// their level or above (or the end), when `emptied` (lines were left out); as they are
/// otherwise.
fn drop_emptied_headings<'a>(lines: &[&'a str], emptied: bool) -> Vec<&'a str> {
    if !emptied {
        return lines.to_vec();
    }
    let mut kept: Vec<&'a str> = Vec::with_capacity(lines.len());
    for (at, line) in lines.iter().enumerate() {
        if let Some(level) = heading_level(line) {
            let next = lines[at + 1..].iter().find(|next| !next.trim().is_empty());
            let empty = next.is_none_or(|next| heading_level(next).is_some_and(|l| l <= level));
            if empty {
                continue;
            }
        }
        kept.push(line);
    }
    kept
}

/// The project folder a note names on its `cwd:` header line (before its first blank line).
pub(crate) fn note_folder(note: &str) -> Option<&str> {
    note.lines()
        .take_while(|line| !line.trim().is_empty())
        .find_map(|line| line.strip_prefix(NOTE_CWD_KEY))
        .map(str::trim)
        .filter(|folder| !folder.is_empty())
}

/// True when a memory about `folder` belongs to working directory `cwd` in `project` (the
/// project folder of `cwd`, `None` for a directory in no known project): `cwd` is in
/// `folder`, or `folder` is in the project (a session in one of its subfolders).
pub(crate) fn folder_in_scope(folder: &str, project: Option<&str>, cwd: &Path) -> bool {
    within(cwd, Path::new(folder))
        || project.is_some_and(|project| within(Path::new(folder), Path::new(project)))
}

/// `path` made absolute and plain (`.` and `..` resolved by name), for comparing folders.
pub(crate) fn plain(path: &Path) -> std::io::Result<PathBuf> {
    let absolute = std::path::absolute(path)?;
    let mut plain = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                plain.pop();
            }
            Component::CurDir => {}
            other => plain.push(other),
        }
    }
    Ok(plain)
}

/// True when `path` is `folder` or inside it (by whole components).
fn within(path: &Path, folder: &Path) -> bool {
    path.starts_with(folder)
}

/// The level of a Markdown heading line (`## x` is 2).
fn heading_level(line: &str) -> Option<usize> {
    let hashes = line.bytes().take_while(|byte| *byte == b'#').count();
    (hashes > 0 && line[hashes..].starts_with(' ')).then_some(hashes)
}

/// A heading that holds an absolute folder in backticks: the project's name (the text before
/// ` (`, else the folder) and its folder.
fn project_heading(line: &str) -> Option<(&str, &str)> {
    let level = heading_level(line)?;
    let text = line[level..].trim();
    let start = text.find("`/")?;
    let folder = text[start + 1..].split('`').next()?;
    if folder.is_empty() || text[start + 1 + folder.len()..].is_empty() {
        return None;
    }
    let before = text[..start].trim().trim_end_matches('(').trim();
    let name = match before {
        "" | "Project" => folder,
        name => name,
    };
    Some((name, folder))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SUMMARY: &str = "v1\n## User Profile\nWorks on ledger (Rust) and tides (Go).\n\n\
        ## User preferences\n- Prefers strict parsers.\n- Always run `just ci` before a push. (ledger)\n\
        - Never touch the staging deploy. (tides)\n\n## General Tips\n- In tides, these passed: `go test ./...`\n\n\
        ## What's in Memory\n### ledger (`/src/ledger`)\n#### 2026-03-14\n- March import (success)\n\n\
        ### tides (`/src/tides`)\n#### 2026-03-12\n- Flaky scheduler test (success)\n\n\
        ### Older Memory Topics\n- tides: Move CI (2026-01-02)\n";
    const HANDBOOK: &str = "# Task Group: tides\nscope: work in `/src/tides`\n\
        applies_to: cwd=/src/tides; reuse_rule=reuse here\n\n## Task 1: x\n";

    #[test]
    fn a_projects_block_keeps_the_global_lines_and_its_own() {
        let projects = Projects::known(SUMMARY, HANDBOOK);
        let project = projects.project_of(Path::new("/src/ledger/crates/import"));
        assert_eq!(project.as_deref(), Some("/src/ledger"));
        let scoped = scope_summary(SUMMARY, &projects, project.as_deref());
        assert!(scoped.text.contains("Prefers strict parsers."));
        assert!(scoped.text.contains("Always run `just ci`"));
        assert!(scoped.text.contains("- March import (success)"));
        // Its only line was the other project's.
        assert!(!scoped.text.contains("### Older Memory Topics"));
        for other in [
            "staging deploy",
            "go test",
            "Flaky scheduler",
            "Move CI",
            "(`/src/tides`)",
        ] {
            assert!(
                !scoped.text.contains(other),
                "{other} leaked:\n{}",
                scoped.text
            );
        }
        assert_eq!(scoped.left_out, BTreeSet::from(["/src/tides".to_owned()]));
    }

    #[test]
    fn a_folder_in_no_project_gets_only_the_global_lines() {
        let projects = Projects::known(SUMMARY, HANDBOOK);
        assert_eq!(projects.project_of(Path::new("/src")), None);
        assert_eq!(projects.project_of(Path::new("/src/ledgers")), None);
        let scoped = scope_summary(SUMMARY, &projects, None);
        assert!(scoped.text.contains("Prefers strict parsers."));
        assert!(!scoped.text.contains("just ci"));
        assert!(!scoped.text.contains("March import"));
        assert_eq!(scoped.left_out.len(), 2);
        // Headings with nothing left under them go; those with lines stay.
        assert!(!scoped.text.contains("## General Tips"), "{}", scoped.text);
        assert!(
            !scoped.text.contains("### Older Memory Topics"),
            "{}",
            scoped.text
        );
        assert!(
            scoped
                .text
                .contains("## User preferences\n- Prefers strict parsers.")
        );
    }

    #[test]
    fn the_handbook_names_projects_the_summary_only_tags() {
        let summary = "v1\n## User preferences\n- Use tabs. (tides)\n";
        let projects = Projects::known(summary, HANDBOOK);
        let scoped = scope_summary(summary, &projects, Some("/src/ledger"));
        assert!(!scoped.text.contains("Use tabs"));
        let legacy = Projects::known("", "# Memory\n\n## Project `/src/ledger`\n\n- x\n");
        assert_eq!(
            legacy.project_of(Path::new("/src/ledger")).as_deref(),
            Some("/src/ledger")
        );
    }

    #[test]
    fn a_note_names_its_folder_in_its_header_only() {
        let note = "# Agent note\nwritten_at: x\ncwd: /src/ledger\n\ncwd: /elsewhere\n";
        assert_eq!(note_folder(note), Some("/src/ledger"));
        assert_eq!(note_folder("# Agent note\n\ncwd: /src/ledger\n"), None);
        assert!(folder_in_scope(
            "/src/ledger",
            None,
            Path::new("/src/ledger/sub")
        ));
        assert!(!folder_in_scope(
            "/src/ledger",
            None,
            Path::new("/src/tides")
        ));
        assert_eq!(
            plain(Path::new("/src/ledger/../tides/./x")).unwrap(),
            PathBuf::from("/src/tides/x")
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { rng_seed: proptest::test_runner::RngSeed::Fixed(29), ..ProptestConfig::default() })]

        /// Scoping only ever drops whole lines, and keeps every line that names no project.
        #[test]
        fn scoping_keeps_lines_whole_and_never_invents(summary in "(\\PC{0,40}\n){0,12}", cwd in "/[a-z/]{0,12}") {
            let projects = Projects::known(&summary, HANDBOOK);
            let project = projects.project_of(Path::new(&cwd));
            let scoped = scope_summary(&summary, &projects, project.as_deref());
            let lines: Vec<&str> = summary.lines().collect();
            let mut next = 0;
            for kept in scoped.text.lines() {
                let found = lines[next..].iter().position(|line| *line == kept);
                prop_assert!(found.is_some(), "{kept:?} is not a line of the summary");
                next += found.unwrap_or(0) + 1;
            }
            let unscoped = scope_summary(&summary, &Projects::default(), None);
            let has_project_heading = summary.lines().any(|line| project_heading(line).is_some());
            if !has_project_heading {
                prop_assert_eq!(unscoped.text.lines().count(), summary.lines().count());
            }
        }
    }
}
