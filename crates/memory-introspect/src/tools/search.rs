//! `memory_search`: BM25-ranked full-text search over the memory root.
//!
//! Blocks holding every term come first; when fewer than asked for do, blocks holding some of
//! the terms follow (`all_terms: false`), so a query with one word the memory does not use
//! still finds what is there. The query is simplified rather than refused (see
//! [`crate::query`]) and the result's `warning` says how. A path filter names a file or
//! folder the way the file system does: on a case-insensitive one, `Notes` is `notes`.
//!
//! Every search probes first, which refreshes the index from the files (only changed files are
//! read), so a search never answers from a stale index. When the index file cannot be used
//! the probe has built a transient index of the same files, and the answer says so in
//! `warning`. Unreadable memory is a failure, never an empty result.

use memory_protocol::introspect::{
    MemoryIndexState, MemorySearchHit, MemorySearchRequest, MemorySearchResult, MemoryState,
    MemoryToolFailure,
};

use crate::error::Result;
use crate::index::{IndexHit, MemoryIndex};
use crate::introspector::Introspector;
use crate::paths::{RelativePath, ResolveError, resolve};
use crate::probe::Probe;
use crate::query::{Purpose, Query, parse};
use crate::scan::Walk;
use crate::tools::repeats::merge_repeats;
use crate::tools::{disabled, failure, invalid_input, refusal, resolve_failure, unavailable};

/// Hits returned when the request names no number.
pub const DEFAULT_RESULTS: u32 = 10;
/// Most hits a request may ask for.
pub const MAX_RESULTS: u32 = 50;
/// Longest snippet, in characters.
const SNIPPET_CHARS: usize = 240;
/// With a working directory, blocks ranked (its project's first) per hit asked for.
const SCOPED_CANDIDATES: usize = 4;
/// Most blocks fetched to fill a page whose hits repeat each other, as a multiple of the
/// first fetch.
const MAX_REFETCH_FACTOR: usize = 16;

impl Introspector {
    /// Searches memory for `request.query`.
    pub fn search(
        &self,
        request: &MemorySearchRequest,
    ) -> Result<MemorySearchResult, MemoryToolFailure> {
        self.require_enabled()?;
        let query = parse(&request.query, Purpose::Search)
            .map_err(|error| invalid_input(error.reason().to_owned()))?;
        let limit = request.max_results.unwrap_or(DEFAULT_RESULTS);
        if !(1..=MAX_RESULTS).contains(&limit) {
            return Err(invalid_input(format!(
                "max_results {limit} is outside 1..={MAX_RESULTS}"
            )));
        }
        let prefix = match request.path.as_deref() {
            None => None,
            Some(shown) => {
                Some(RelativePath::parse(shown).map_err(|refused| refusal(shown, refused))?)
            }
        };
        let probe = self.probe(Walk::Cached);
        match probe.state {
            MemoryState::Disabled => return Err(disabled()),
            MemoryState::Unavailable => {
                return Err(unavailable(
                    probe.problem().unwrap_or_default(),
                    &self.display_root(),
                ));
            }
            MemoryState::Empty | MemoryState::Ready | MemoryState::Degraded => {}
        }
        if let Some(prefix) = prefix.as_ref().filter(|prefix| !prefix.is_root()) {
            match resolve(self.root(), prefix) {
                Ok(_) => {}
                Err(ResolveError::NotFound(_)) if probe.state == MemoryState::Empty => {
                    return Ok(self.empty_result(request, &probe, &query));
                }
                Err(error) => return Err(resolve_failure(self, &prefix.display(), &error)),
            }
        }
        let prefix = prefix
            .filter(|prefix| !prefix.is_root())
            .map(|prefix| spelled_as_indexed(&prefix.display(), &probe, case_rule(self.root())));
        let wanted = limit as usize;
        // Hits that repeat an earlier one's sentence are merged into it, so a page may need
        // more blocks than hits: fetch again, more each time, until the page is full or the
        // index has no more. With a working directory, the blocks of its project come first
        // among the best `SCOPED_CANDIDATES` times as many.
        let scope = self.project_scope(&probe);
        let mut fetch = match scope {
            Some(_) => wanted.saturating_mul(SCOPED_CANDIDATES),
            None => wanted + 1,
        };
        let most = fetch.saturating_mul(MAX_REFETCH_FACTOR);
        let (hits, truncated) = loop {
            let mut blocks = self.ranked_blocks(&probe, &query, prefix.as_deref(), fetch)?;
            let exhausted = blocks.len() < fetch;
            if let Some(scope) = &scope {
                let mut passages = scope.passages();
                blocks.sort_by_cached_key(|(hit, all_terms)| {
                    let lines = hit.text.lines().count();
                    let standing = passages.standing(&hit.path, hit.start_line, lines, |rel| {
                        self.read_memory_text(rel)
                    });
                    (!*all_terms, standing)
                });
            }
            let hits = merge_repeats(
                blocks
                    .into_iter()
                    .map(|(hit, all_terms)| to_hit(hit, all_terms, &query))
                    .collect(),
            );
            if hits.len() > wanted || exhausted || fetch >= most {
                let truncated = hits.len() > wanted || !exhausted;
                break (hits, truncated);
            }
            fetch = fetch.saturating_mul(4).min(most);
        };
        let mut warning = warning(&probe);
        if let Some(note) = query.simplified_note() {
            warning = Some(match warning {
                Some(warning) => format!("{note}. {warning}"),
                None => note,
            });
        }
        Ok(MemorySearchResult {
            query: request.query.clone(),
            hits: hits.into_iter().take(wanted).collect(),
            truncated,
            state: probe.state,
            index: probe.index.state,
            warning,
        })
    }

    /// The best `fetch` blocks for `query`, each with whether it holds every term: blocks
    /// holding all terms first, then (when fewer than `fetch` do) blocks holding some.
    fn ranked_blocks(
        &self,
        probe: &Probe,
        query: &Query,
        prefix: Option<&str>,
        fetch: usize,
    ) -> Result<Vec<(IndexHit, bool)>, MemoryToolFailure> {
        let failed = |problem| {
            failure(
                memory_protocol::introspect::MemoryFailureCode::Failed,
                problem,
            )
        };
        let mut hits: Vec<(IndexHit, bool)> = self
            .search_blocks(probe, &query.all(), prefix, fetch)
            .map_err(failed)?
            .into_iter()
            .map(|hit| (hit, true))
            .collect();
        if hits.len() < fetch && query.terms.len() > 1 {
            let some = self
                .search_blocks(probe, &query.any(), prefix, fetch + hits.len())
                .map_err(failed)?;
            for hit in some {
                if !hits.iter().any(|(all, _)| all.rowid == hit.rowid) {
                    hits.push((hit, false));
                }
            }
        }
        hits.truncate(fetch);
        Ok(hits)
    }

    fn empty_result(
        &self,
        request: &MemorySearchRequest,
        probe: &Probe,
        query: &Query,
    ) -> MemorySearchResult {
        MemorySearchResult {
            query: request.query.clone(),
            hits: Vec::new(),
            truncated: false,
            state: probe.state,
            index: probe.index.state,
            warning: query.simplified_note(),
        }
    }

    /// The best `limit` blocks for an FTS5 expression, from the index file when the probe
    /// found it fresh, else from the probe's transient index.
    pub(crate) fn search_blocks(
        &self,
        probe: &Probe,
        expression: &str,
        prefix: Option<&str>,
        limit: usize,
    ) -> std::result::Result<Vec<IndexHit>, String> {
        if probe.state == MemoryState::Empty && probe.scan.files.is_empty() {
            return Ok(Vec::new());
        }
        self.on_probed_index(probe, |index| index.search(expression, prefix, limit))
    }

    /// Runs `call` on the index file when the probe found it fresh, else on the probe's
    /// transient index of the same files.
    pub(crate) fn on_probed_index<T>(
        &self,
        probe: &Probe,
        call: impl FnOnce(&MemoryIndex) -> Result<T>,
    ) -> std::result::Result<T, String> {
        if probe.index.state == MemoryIndexState::Fresh {
            return self
                .with_index(|index| call(index))
                .map_err(|problem| format!("search index: {problem}"));
        }
        match &probe.transient {
            Some(index) => call(index).map_err(|error| error.to_string()),
            None => Err(format!(
                "search index: {}; the files could not be searched directly either",
                probe.index.problem.as_deref().unwrap_or("unusable")
            )),
        }
    }
}

/// Whether names differ by case on the file system holding `root`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CaseRule {
    Sensitive,
    Insensitive,
}

/// The case rule of the file system at `root`: insensitive when the root's own name with its
/// letters' case flipped names the same directory.
pub(crate) fn case_rule(root: &std::path::Path) -> CaseRule {
    let (Some(parent), Some(name)) = (root.parent(), root.file_name().and_then(|n| n.to_str()))
    else {
        return CaseRule::Sensitive;
    };
    let flipped: String = name
        .chars()
        .map(|ch| {
            if ch.is_ascii_lowercase() {
                ch.to_ascii_uppercase()
            } else {
                ch.to_ascii_lowercase()
            }
        })
        .collect();
    if flipped == name {
        return CaseRule::Sensitive;
    }
    match (
        std::fs::metadata(root),
        std::fs::metadata(parent.join(&flipped)),
    ) {
        (Ok(original), Ok(other)) if same_file(&original, &other) => CaseRule::Insensitive,
        _ => CaseRule::Sensitive,
    }
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.is_dir() == b.is_dir() && a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

/// `prefix` as the index spells it. The index keeps paths as the files are named; on a
/// case-insensitive file system a prefix naming them in another case is the same file or
/// folder, so it takes the spelling of the indexed path whose leading components match it.
pub(crate) fn spelled_as_indexed(prefix: &str, probe: &Probe, rule: CaseRule) -> String {
    if rule == CaseRule::Sensitive {
        return prefix.to_owned();
    }
    respell(
        prefix,
        probe.scan.files.iter().map(|file| file.rel.as_str()),
    )
}

fn respell<'a>(prefix: &str, paths: impl IntoIterator<Item = &'a str>) -> String {
    let wanted: Vec<String> = prefix.split('/').map(str::to_lowercase).collect();
    for path in paths {
        let components: Vec<&str> = path.split('/').collect();
        if components.len() >= wanted.len()
            && components
                .iter()
                .zip(&wanted)
                .all(|(have, want)| have.to_lowercase() == *want)
        {
            return components[..wanted.len()].join("/");
        }
    }
    prefix.to_owned()
}

/// What the caller should know about a result: an index that was not used, files that were
/// not searched, other problems.
fn warning(probe: &Probe) -> Option<String> {
    let mut parts = Vec::new();
    if probe.index.state != MemoryIndexState::Fresh {
        parts.push(format!(
            "the search index is {} ({}), so this search read the files directly; results are \
             complete but slower",
            probe.index.state.as_str(),
            probe.index.problem.as_deref().unwrap_or("unusable")
        ));
    }
    if !probe.unreadable.is_empty() {
        let files: Vec<String> = probe
            .unreadable
            .iter()
            .map(|(path, reason)| format!("{path} ({reason})"))
            .collect();
        parts.push(format!(
            "these files could not be read and were not searched, so a missing result may be \
             in them: {}; tell the user",
            files.join(", ")
        ));
    }
    let other: Vec<&String> = probe
        .problems
        .iter()
        .filter(|problem| {
            !problem.starts_with("search index:")
                && !probe
                    .unreadable
                    .iter()
                    .any(|(path, _)| problem.starts_with(&format!("{path}:")))
        })
        .collect();
    if !other.is_empty() {
        parts.push(format!(
            "memory is degraded: {}",
            other
                .iter()
                .map(|problem| problem.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    (!parts.is_empty()).then(|| parts.join(". "))
}

/// The hit for an index match, with its whole matching line (to find repeats).
fn to_hit(hit: IndexHit, all_terms: bool, query: &Query) -> (MemorySearchHit, String) {
    let (offset, column) = if hit.marked {
        (hit.match_offset, hit.match_column)
    } else {
        unspaced_match(&hit.text, &query.unspaced)
    };
    let line = hit.text.lines().nth(offset as usize).unwrap_or("");
    let shown = MemorySearchHit {
        snippet: snippet(line, column),
        line: hit.start_line.saturating_add(offset),
        path: hit.path.clone(),
        score: hit.score,
        heading: hit.heading.clone(),
        all_terms,
        also_in: Vec::new(),
    };
    (shown, line.to_owned())
}

/// Line offset and byte column of the first line holding one of `runs` (a match through the
/// bigram column, which has no highlight), else the block's start.
fn unspaced_match(text: &str, runs: &[String]) -> (u32, usize) {
    for (number, line) in text.lines().enumerate() {
        if let Some(column) = runs.iter().filter_map(|run| line.find(run.as_str())).min() {
            return (u32::try_from(number).unwrap_or(0), column);
        }
    }
    (0, 0)
}

/// The line around byte `column`, at most [`SNIPPET_CHARS`] characters, `…` where cut.
fn snippet(line: &str, column: usize) -> String {
    let line = line.trim_end();
    let total = line.chars().count();
    if total <= SNIPPET_CHARS {
        return line.trim_start().to_owned();
    }
    let match_char = line
        .get(..column)
        .map_or(0, |before| before.chars().count());
    let start = match_char
        .saturating_sub(SNIPPET_CHARS / 3)
        .min(total - SNIPPET_CHARS);
    let cut: String = line.chars().skip(start).take(SNIPPET_CHARS).collect();
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.push_str(&cut);
    if start + SNIPPET_CHARS < total {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_keep_the_match_in_view() {
        assert_eq!(snippet("  short line  ", 2), "short line");
        let long = format!("{}MATCH{}", "a".repeat(500), "b".repeat(500));
        let cut = snippet(&long, 500);
        assert!(cut.contains("MATCH"), "{cut}");
        assert!(cut.starts_with('…') && cut.ends_with('…'));
        assert_eq!(cut.chars().count(), SNIPPET_CHARS + 2);
    }

    #[test]
    fn a_prefix_takes_the_indexed_spelling_when_case_does_not_matter() {
        let paths = ["MEMORY.md", "notes/2026-12-01.md", "rollout_summaries/a.md"];
        assert_eq!(respell("NOTES", paths), "notes");
        assert_eq!(respell("Notes/2026-12-01.MD", paths), "notes/2026-12-01.md");
        assert_eq!(respell("memory.md", paths), "MEMORY.md");
        assert_eq!(respell("elsewhere", paths), "elsewhere");
    }

    #[test]
    fn this_file_systems_case_rule_is_what_it_does() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("memories");
        std::fs::create_dir(&root).unwrap();
        let other_spelling_exists = dir.path().join("MEMORIES").is_dir();
        let expected = if other_spelling_exists {
            CaseRule::Insensitive
        } else {
            CaseRule::Sensitive
        };
        assert_eq!(case_rule(&root), expected);
    }
}
