//! `memory_search`: BM25-ranked full-text search over the memory root.
//!
//! Every search probes first, which refreshes the index from the files (only changed files are
//! read), so a search never answers from a stale index. When the index file cannot be used
//! the probe has built a transient index of the same files, and the answer says so in
//! `warning`. Unreadable memory is a failure, never an empty result.

use memory_protocol::introspect::{
    MemoryIndexState, MemorySearchHit, MemorySearchRequest, MemorySearchResult, MemoryState,
    MemoryToolFailure,
};

use crate::index::IndexHit;
use crate::introspector::Introspector;
use crate::paths::{RelativePath, ResolveError, resolve};
use crate::probe::Probe;
use crate::query::{Combine, parse};
use crate::tools::{disabled, failure, invalid_input, refusal, resolve_failure, unavailable};

/// Hits returned when the request names no number.
pub const DEFAULT_RESULTS: u32 = 10;
/// Most hits a request may ask for.
pub const MAX_RESULTS: u32 = 50;
/// Longest snippet, in characters.
const SNIPPET_CHARS: usize = 240;

impl Introspector {
    /// Searches memory for `request.query`.
    pub fn search(
        &self,
        request: &MemorySearchRequest,
    ) -> Result<MemorySearchResult, MemoryToolFailure> {
        self.require_enabled()?;
        let query =
            parse(&request.query, Combine::All).map_err(|error| invalid_input(error.reason()))?;
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
        let probe = self.probe();
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
                    return Ok(self.empty_result(request, &probe));
                }
                Err(error) => return Err(resolve_failure(self, &prefix.display(), &error)),
            }
        }
        let prefix = prefix.map(|prefix| prefix.display());
        let wanted = limit as usize;
        let hits = self
            .search_blocks(&probe, &query.expression, prefix.as_deref(), wanted + 1)
            .map_err(|problem| {
                failure(
                    memory_protocol::introspect::MemoryFailureCode::Failed,
                    problem,
                )
            })?;
        let truncated = hits.len() > wanted;
        Ok(MemorySearchResult {
            query: request.query.clone(),
            hits: hits.into_iter().take(wanted).map(to_hit).collect(),
            truncated,
            state: probe.state,
            index: probe.index.state,
            warning: warning(&probe),
        })
    }

    fn empty_result(&self, request: &MemorySearchRequest, probe: &Probe) -> MemorySearchResult {
        MemorySearchResult {
            query: request.query.clone(),
            hits: Vec::new(),
            truncated: false,
            state: probe.state,
            index: probe.index.state,
            warning: None,
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
    ) -> Result<Vec<IndexHit>, String> {
        if probe.state == MemoryState::Empty && probe.scan.files.is_empty() {
            return Ok(Vec::new());
        }
        if probe.index.state == MemoryIndexState::Fresh {
            return self
                .with_index(|index| index.search(expression, prefix, limit))
                .map_err(|problem| format!("search index: {}", problem.message));
        }
        match &probe.transient {
            Some(index) => index
                .search(expression, prefix, limit)
                .map_err(|error| error.to_string()),
            None => Err(format!(
                "search index: {}; the files could not be searched directly either",
                probe.index.problem.as_deref().unwrap_or("unusable")
            )),
        }
    }
}

/// What the caller should know about a result: an index that was not used, files that were
/// not searched, other problems.
fn warning(probe: &Probe) -> Option<String> {
    let mut parts = Vec::new();
    if probe.index.state != MemoryIndexState::Fresh {
        parts.push(format!(
            "the search index is {} ({}), so this search read the files directly; results are \
             complete but slower",
            state_name(probe.index.state),
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

fn state_name(state: MemoryIndexState) -> &'static str {
    match state {
        MemoryIndexState::Fresh => "fresh",
        MemoryIndexState::Stale => "stale",
        MemoryIndexState::Missing => "missing",
        MemoryIndexState::Unavailable => "unavailable",
    }
}

fn to_hit(hit: IndexHit) -> MemorySearchHit {
    let line = hit
        .text
        .lines()
        .nth(hit.match_offset as usize)
        .unwrap_or("");
    MemorySearchHit {
        snippet: snippet(line, hit.match_column),
        line: hit.start_line.saturating_add(hit.match_offset),
        path: hit.path,
        score: hit.score,
        heading: hit.heading,
    }
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
}
