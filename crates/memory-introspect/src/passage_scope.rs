//! Which project a passage of a memory file is about, so recall for a working directory
//! leaves other projects' passages out and search ranks the current project's first.
//!
//! Each kind of file names its project its own way:
//!
//! - a note: its `cwd:` header line (see [`crate::project::note_folder`]);
//! - a session summary (`rollout_summaries/`): its `cwd:` header line;
//! - `raw_memories.md`: the `cwd:` line of the `## Thread` section the passage is in;
//! - the handbook (`MEMORY.md`): the `applies_to: cwd=` line of its `# Task Group`;
//! - the summary: the project sections and tags the block is scoped by
//!   ([`crate::project::line_owners`]).
//!
//! A passage naming no project is global: recalled in every project.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use memory_protocol::names::memory_root::{
    MEMORY_FILE, MEMORY_SUMMARY_FILE, NOTES_DIR, RAW_MEMORIES_FILE, ROLLOUT_SUMMARIES_DIR,
};

use crate::project::{Projects, folder_in_scope, line_owners, note_folder};

/// Where a passage stands for a working directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Standing {
    /// About the working directory's project (or a folder holding it).
    ThisProject,
    /// About no project.
    Global,
    /// About other projects only.
    OtherProject,
}

/// The project folders of each line of one memory file (index 0 is line 1).
#[derive(Debug, Default)]
struct FileOwners {
    lines: Vec<BTreeSet<String>>,
}

/// Finds the standing of passages for one working directory, reading each file once.
pub(crate) struct PassageScope<'a> {
    cwd: &'a Path,
    projects: &'a Projects,
    project: Option<&'a str>,
    files: HashMap<String, FileOwners>,
}

impl<'a> PassageScope<'a> {
    /// For `cwd`, in `project` (its folder among `projects`, if any).
    pub(crate) fn new(
        cwd: &'a Path,
        projects: &'a Projects,
        project: Option<&'a str>,
    ) -> PassageScope<'a> {
        PassageScope {
            cwd,
            projects,
            project,
            files: HashMap::new(),
        }
    }

    /// The standing of the passage of file `path` (relative to the root) that starts at line
    /// `start_line` and has `lines` lines; `read` gives a file's text (`None` when unreadable:
    /// the passage then counts as global, as it would unscoped).
    pub(crate) fn standing(
        &mut self,
        path: &str,
        start_line: u32,
        lines: usize,
        read: impl FnOnce(&str) -> Option<String>,
    ) -> Standing {
        let projects = self.projects;
        let owners = self.files.entry(path.to_owned()).or_insert_with(|| {
            read(path).map_or_else(FileOwners::default, |text| {
                FileOwners::of(path, &text, projects)
            })
        });
        let first = (start_line as usize).saturating_sub(1);
        let folders: BTreeSet<&String> = owners
            .lines
            .iter()
            .skip(first)
            .take(lines.max(1))
            .flatten()
            .collect();
        if folders.is_empty() {
            Standing::Global
        } else if folders
            .iter()
            .any(|folder| folder_in_scope(folder, self.project, self.cwd))
        {
            Standing::ThisProject
        } else {
            Standing::OtherProject
        }
    }
}

impl FileOwners {
    fn of(path: &str, text: &str, projects: &Projects) -> FileOwners {
        let whole = |folder: Option<&str>| FileOwners {
            lines: text
                .lines()
                .map(|_| {
                    folder
                        .map(|f| BTreeSet::from([f.to_owned()]))
                        .unwrap_or_default()
                })
                .collect(),
        };
        let in_dir = |dir: &str| {
            path.strip_prefix(dir)
                .is_some_and(|rest| rest.starts_with('/'))
        };
        if in_dir(NOTES_DIR) || in_dir(ROLLOUT_SUMMARIES_DIR) {
            whole(note_folder(text))
        } else if path == RAW_MEMORIES_FILE {
            FileOwners {
                lines: sections(text, "## ", |line| {
                    line.strip_prefix("cwd: ").map(str::trim)
                }),
            }
        } else if path == MEMORY_FILE {
            FileOwners {
                lines: sections(text, "# ", |line| {
                    line.strip_prefix("applies_to: cwd=")
                        .map(|rest| rest.split(';').next().unwrap_or_default().trim())
                }),
            }
        } else if path == MEMORY_SUMMARY_FILE {
            FileOwners {
                lines: line_owners(text, projects),
            }
        } else {
            whole(None)
        }
    }
}

/// Owners of each line of a file in sections opened by lines starting with `heading`: each
/// section belongs to the folder its first `folder_of` line names (none when it names none).
fn sections<'t>(
    text: &'t str,
    heading: &str,
    folder_of: impl Fn(&'t str) -> Option<&'t str>,
) -> Vec<BTreeSet<String>> {
    let lines: Vec<&str> = text.lines().collect();
    let mut owners = vec![BTreeSet::new(); lines.len()];
    let mut start = 0;
    while start < lines.len() {
        let end = lines[start + 1..]
            .iter()
            .position(|line| line.starts_with(heading))
            .map_or(lines.len(), |at| start + 1 + at);
        let folder = lines[start..end]
            .iter()
            .find_map(|line| folder_of(line))
            .filter(|folder| Path::new(folder).is_absolute());
        if let Some(folder) = folder {
            for owner in &mut owners[start..end] {
                owner.insert(folder.to_owned());
            }
        }
        start = end;
    }
    owners
}

#[cfg(test)]
mod tests {
    use super::*;

    const HANDBOOK: &str = "# Task Group: tides\nscope: x\napplies_to: cwd=/src/tides; reuse_rule=y\n\n\
        ## Task 1: flaky scheduler\n- run the scheduler tests twice\n\n\
        # Task Group: ledger\napplies_to: cwd=/src/ledger\n\n- use just ci\n\n# General\n- be brief\n";
    const RAW: &str = "# Raw Memories\n\n## Thread `a`\nthread_id: a\ncwd: /src/tides/cmd\n\n\
        ### Task 1\n- tides lesson\n\n## Thread `b`\nno folder here\n- global lesson\n";

    fn standing_of(path: &str, text: &str, line: u32, cwd: &str) -> Standing {
        let projects = Projects::known("", HANDBOOK);
        let cwd = Path::new(cwd);
        let project = projects.project_of(cwd);
        let mut scope = PassageScope::new(cwd, &projects, project.as_deref());
        scope.standing(path, line, 1, |_| Some(text.to_owned()))
    }

    #[test]
    fn each_kind_of_file_names_its_project() {
        assert_eq!(
            standing_of(MEMORY_FILE, HANDBOOK, 6, "/src/tides"),
            Standing::ThisProject
        );
        assert_eq!(
            standing_of(MEMORY_FILE, HANDBOOK, 6, "/src/ledger/x"),
            Standing::OtherProject
        );
        assert_eq!(
            standing_of(MEMORY_FILE, HANDBOOK, 11, "/src/ledger/x"),
            Standing::ThisProject
        );
        assert_eq!(
            standing_of(MEMORY_FILE, HANDBOOK, 14, "/src/ledger"),
            Standing::Global
        );
        // A session in a subfolder of the project is the project's.
        assert_eq!(
            standing_of(RAW_MEMORIES_FILE, RAW, 8, "/src/tides"),
            Standing::ThisProject
        );
        assert_eq!(
            standing_of(RAW_MEMORIES_FILE, RAW, 8, "/src/ledger"),
            Standing::OtherProject
        );
        assert_eq!(
            standing_of(RAW_MEMORIES_FILE, RAW, 12, "/src/ledger"),
            Standing::Global
        );
        let summary = "thread_id: a\ncwd: /src/ledger\n\n# Task\n- lesson\n";
        let path = "rollout_summaries/a.md";
        assert_eq!(
            standing_of(path, summary, 5, "/src/tides"),
            Standing::OtherProject
        );
        assert_eq!(
            standing_of(path, summary, 5, "/src/ledger"),
            Standing::ThisProject
        );
        let note = "# Agent note\ncwd: /src/tides\n\nuse tabs\n";
        assert_eq!(
            standing_of("notes/n.md", note, 4, "/src/ledger"),
            Standing::OtherProject
        );
        assert_eq!(
            standing_of("notes/g.md", "# Note\n\nuse tabs\n", 3, "/src/ledger"),
            Standing::Global
        );
        // A folder in no known project keeps only what names no project or holds it.
        assert_eq!(
            standing_of(path, summary, 5, "/elsewhere"),
            Standing::OtherProject
        );
        assert_eq!(
            standing_of("notes/g.md", "# Note\n\nx\n", 3, "/elsewhere"),
            Standing::Global
        );
    }
}
