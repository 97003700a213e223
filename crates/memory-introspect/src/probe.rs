//! What state memory is in right now, from one walk of the root, one read of the summary and
//! one index refresh. The block, `memory_status` and the tools all decide from a [`Probe`].
//!
//! - disabled: the user turned memory off;
//! - unavailable: the root or the always-on summary cannot be read (permission denied, not
//!   UTF-8, a symlink, not a folder): nothing can be said about the past;
//! - empty: nothing recorded yet (no summary text, no handbook, no session summaries, no
//!   notes) and nothing wrong;
//! - degraded: something is recorded or readable, but part of it is not (an unreadable file or
//!   folder, a symlink not followed, a search index that could not be used, a missing summary
//!   beside a handbook);
//! - ready: otherwise.

use std::io::Read;

use memory_protocol::introspect::{
    MemoryIndexState, MemoryIndexStatus, MemoryState, MemorySummaryUse,
};
use memory_protocol::names::memory_root::{
    MEMORY_FILE, MEMORY_SUMMARY_FILE, MEMORY_SUMMARY_VERSION, ROLLOUT_SUMMARIES_DIR,
};
use memory_sanitize::{TokenCounter, o200k};

use crate::index::MemoryIndex;
use crate::introspector::{Introspector, index_state};
use crate::notes::note_files;
use crate::paths::{RelativePath, ResolveError, open_file};
use crate::scan::{RootScan, Walk};

/// Longest state-line problem, in characters.
const SHORT_PROBLEM_CHARS: usize = 80;

/// The always-on summary, read.
#[derive(Debug, Clone)]
pub(crate) struct Summary {
    /// The text without its version line, trimmed.
    pub(crate) body: String,
    /// Its o200k tokens.
    pub(crate) tokens: u64,
    /// Its modification time, Unix seconds.
    pub(crate) written_at: i64,
}

/// Memory as one probe saw it.
#[derive(Debug)]
pub(crate) struct Probe {
    pub(crate) state: MemoryState,
    /// What is wrong, one entry per problem, most important first.
    pub(crate) problems: Vec<String>,
    pub(crate) as_of: i64,
    pub(crate) scan: std::sync::Arc<RootScan>,
    /// The summary, when it exists and could be read.
    pub(crate) summary: Option<Summary>,
    pub(crate) index: MemoryIndexStatus,
    /// Files the index could not read.
    pub(crate) unreadable: Vec<(String, String)>,
    /// When the index file could not be used: a transient index of the same files, built
    /// in memory, for this probe's searches.
    pub(crate) transient: Option<MemoryIndex>,
    /// The handbook exists but the summary does not.
    pub(crate) missing_summary: bool,
}

impl Probe {
    fn new(state: MemoryState, as_of: i64) -> Probe {
        let not_checked = match state {
            MemoryState::Disabled => Some("not checked: memory is disabled".to_owned()),
            _ => None,
        };
        Probe {
            state,
            problems: Vec::new(),
            as_of,
            scan: std::sync::Arc::default(),
            summary: None,
            index: MemoryIndexStatus {
                state: MemoryIndexState::Missing,
                files: 0,
                blocks: 0,
                reindexed_files: 0,
                problem: not_checked,
            },
            unreadable: Vec::new(),
            transient: None,
            missing_summary: false,
        }
    }

    /// Unavailable before anything could be indexed.
    fn root_unreadable(mut self, problem: String) -> Probe {
        self.index.problem = Some("not checked: the memory root cannot be read".to_owned());
        self.unavailable(problem)
    }

    fn unavailable(mut self, problem: String) -> Probe {
        self.state = MemoryState::Unavailable;
        self.problems.insert(0, problem);
        self
    }

    /// Every problem, joined.
    pub(crate) fn problem(&self) -> Option<String> {
        (!self.problems.is_empty()).then(|| self.problems.join("; "))
    }

    /// What is wrong in a few words, for a state line: the problem itself when memory is
    /// unavailable, a count per kind of problem when it is degraded. `problem()` has the
    /// details.
    pub(crate) fn short_problem(&self) -> Option<String> {
        if self.state == MemoryState::Unavailable {
            let first = self.problems.first()?;
            let mut short: String = first.chars().take(SHORT_PROBLEM_CHARS).collect();
            if short.len() < first.len() {
                short.push('…');
            }
            return Some(short);
        }
        let plural = |count: usize, one: &str, many: &str| {
            if count == 1 {
                format!("1 {one}")
            } else {
                format!("{count} {many}")
            }
        };
        let mut parts = Vec::new();
        if self.missing_summary {
            parts.push(format!("{MEMORY_SUMMARY_FILE} missing"));
        }
        if !self.unreadable.is_empty() {
            parts.push(plural(
                self.unreadable.len(),
                "file unreadable",
                "files unreadable",
            ));
        }
        if !self.scan.unreadable_dirs.is_empty() {
            let count = self.scan.unreadable_dirs.len();
            parts.push(plural(count, "folder unreadable", "folders unreadable"));
        }
        if !self.scan.symlinks.is_empty() {
            let count = self.scan.symlinks.len();
            parts.push(plural(
                count,
                "symlink not followed",
                "symlinks not followed",
            ));
        }
        if self.index.problem.is_some() && self.index.state != MemoryIndexState::Fresh {
            parts.push("search index unusable".to_owned());
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }

    /// Budget use of the summary against `budget` tokens.
    pub(crate) fn summary_use(&self, budget: u64) -> Option<MemorySummaryUse> {
        let summary = self.summary.as_ref()?;
        let budget = budget.max(1);
        Some(MemorySummaryUse {
            tokens: summary.tokens,
            budget_tokens: budget,
            percent: summary.tokens.saturating_mul(100) / budget,
        })
    }
}

impl Introspector {
    /// Probes memory now (see the module docs), walking the root as `walk` says. Refreshes the
    /// search index on the way.
    pub(crate) fn probe(&self, walk: Walk) -> Probe {
        let as_of = self.now();
        if !self.config().enabled {
            return Probe::new(MemoryState::Disabled, as_of);
        }
        let mut probe = Probe::new(MemoryState::Ready, as_of);
        let root = self.root();
        match std::fs::metadata(root) {
            Err(error) => {
                // No root in an existing home is memory not written yet; no home at all is a
                // wrong path (a mistyped `--home`, environment variable or config), not "empty".
                if let Some(problem) = self.home_problem() {
                    return probe.root_unreadable(problem);
                }
                if error.kind() == std::io::ErrorKind::NotFound {
                    probe.state = MemoryState::Empty;
                    return probe;
                }
                return probe.root_unreadable(format!("memory root: {}", crate::io_reason(&error)));
            }
            Ok(metadata) if !metadata.is_dir() => {
                return probe.root_unreadable("the memory root is a file, not a folder".to_owned());
            }
            Ok(_) => {}
        }
        probe.scan = match self.walk(walk) {
            Ok(scan) => scan,
            Err(error) => {
                return probe.root_unreadable(format!("memory root: {}", crate::io_reason(&error)));
            }
        };
        let summary = read_summary(self);
        self.refresh_index(&mut probe);
        match summary {
            Ok(summary) => probe.summary = summary,
            Err(problem) => return probe.unavailable(problem),
        }

        let mut problems = Vec::new();
        let has_handbook = probe
            .scan
            .file(MEMORY_FILE)
            .is_some_and(|file| file.size > 0);
        if probe.scan.file(MEMORY_SUMMARY_FILE).is_none() && has_handbook {
            probe.missing_summary = true;
            problems.push(format!("{MEMORY_SUMMARY_FILE} is missing"));
        }
        for (path, reason) in &probe.unreadable {
            problems.push(format!("{path}: {reason}"));
        }
        for (path, reason) in &probe.scan.unreadable_dirs {
            problems.push(format!("{path}/: {reason}"));
        }
        for link in &probe.scan.symlinks {
            problems.push(format!("{link} is a symlink, not followed"));
        }
        if let Some(problem) = &probe.index.problem {
            problems.push(format!("search index: {problem}"));
        }
        let recorded = probe.summary.as_ref().is_some_and(|s| !s.body.is_empty())
            || has_handbook
            || probe.scan.under(ROLLOUT_SUMMARIES_DIR).next().is_some()
            || !note_files(&probe.scan).is_empty();
        probe.state = if !problems.is_empty() {
            MemoryState::Degraded
        } else if recorded {
            MemoryState::Ready
        } else {
            MemoryState::Empty
        };
        probe.problems = problems;
        probe
    }

    /// What is wrong with the home folder itself, naming it; `None` when it is a folder.
    pub(crate) fn home_problem(&self) -> Option<String> {
        let home = self.home().display();
        match std::fs::metadata(self.home()) {
            Ok(metadata) if metadata.is_dir() => None,
            Ok(_) => Some(format!("the home {home} is a file, not a folder")),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                Some(format!("the home {home} does not exist"))
            }
            Err(error) => Some(format!("the home {home}: {}", crate::io_reason(&error))),
        }
    }

    /// Updates the index from the probe's scan and records its status.
    fn refresh_index(&self, probe: &mut Probe) {
        let root = self.root();
        let refreshed = self.with_index(|index| {
            let report = index.refresh(root, &probe.scan)?;
            let (files, blocks) = index.counts()?;
            Ok((report, files, blocks))
        });
        match refreshed {
            Ok((report, files, blocks)) => {
                probe.index = MemoryIndexStatus {
                    state: MemoryIndexState::Fresh,
                    files,
                    blocks,
                    reindexed_files: report.reindexed,
                    problem: None,
                };
                probe.unreadable = report.unreadable;
            }
            Err(problem) => {
                probe.index.state = index_state(&problem);
                probe.index.problem = Some(problem.to_string());
                // Without the index, find unreadable files by reading them into a transient
                // one, so the state is the same with or without the index file.
                if let Ok(mut transient) = MemoryIndex::in_memory()
                    && let Ok(report) = transient.refresh(root, &probe.scan)
                {
                    probe.unreadable = report.unreadable;
                    probe.transient = Some(transient);
                }
            }
        }
        probe
            .unreadable
            .retain(|(path, _)| path != MEMORY_SUMMARY_FILE);
    }
}

/// Reads `memory_summary.md`: `Ok(None)` when it does not exist, `Err(problem)` when it exists
/// and cannot be read as text.
fn read_summary(introspector: &Introspector) -> Result<Option<Summary>, String> {
    let relative = RelativePath::root().join(MEMORY_SUMMARY_FILE);
    let (mut file, metadata) = match open_file(introspector.root(), &relative) {
        Ok(opened) => opened,
        Err(ResolveError::NotFound(_)) => return Ok(None),
        Err(error) => {
            return Err(format!(
                "{MEMORY_SUMMARY_FILE}: {}",
                crate::resolve_reason(&error)
            ));
        }
    };
    if !metadata.is_file() {
        return Err(format!("{MEMORY_SUMMARY_FILE}: not a regular file"));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|error| format!("{MEMORY_SUMMARY_FILE}: {}", crate::io_reason(&error)))?;
    let text =
        String::from_utf8(bytes).map_err(|_| format!("{MEMORY_SUMMARY_FILE}: not valid UTF-8"))?;
    let body = summary_body(&text).to_owned();
    let tokens = o200k().count(&body) as u64;
    let written_at = metadata
        .modified()
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |duration| {
            i64::try_from(duration.as_secs()).unwrap_or(i64::MAX)
        });
    Ok(Some(Summary {
        body,
        tokens,
        written_at,
    }))
}

/// The summary without its version line, trimmed.
pub(crate) fn summary_body(text: &str) -> &str {
    let text = text.trim();
    match text.split_once('\n') {
        Some((first, rest)) if first.trim() == MEMORY_SUMMARY_VERSION => rest.trim(),
        None if text == MEMORY_SUMMARY_VERSION => "",
        _ => text,
    }
}
