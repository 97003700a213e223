//! The memory injection: what a model is given about its memory each turn.
//!
//! By state:
//!
//! - disabled: nothing, or one neutral line when `disabled_line` is set;
//! - empty: the header and the empty line, fenced;
//! - unavailable: the unavailable line with its problem, fenced (no numbers: none could be
//!   taken);
//! - ready and degraded: the read-path guidance, then the fenced block: header, the degraded
//!   line when degraded, then each source under its provenance label (the summary cut to its
//!   budget, notes not yet consolidated, host instruction files the host passed in).
//!
//! A line says when the state changed since the last turn. The environment block, when the host
//! describes itself, follows. Recall for one turn is a separate `<memory-recall>` fence placed
//! in the user's message.

use std::collections::BTreeSet;

use std::io::Read;

use memory_prompts::UntrustedText;
use memory_prompts::introspect::{
    EnvironmentContext, MemoryHeaderContext, MemorySourceContext, RecallHitContext, SourceKind,
    StateLineContext, environment, memory_header, memory_source, recall_hit, state_change,
    state_line,
};
use memory_prompts::memories::{ReadPathContext, read_path};
use memory_protocol::introspect::{MemoryIndexState, MemoryScope, MemorySnapshot, MemoryState};
use memory_protocol::names::memory_root::{MEMORY_FILE, MEMORY_SUMMARY_FILE, NOTES_DIR};
use memory_sanitize::{TokenCounter, TruncationPolicy, o200k, truncate_middle};

use crate::error::Result;
use crate::fence::{FenceKind, fence};
use crate::introspector::Introspector;
use crate::notes::{note_body, note_files, written_at};
use crate::passage_scope::{PassageScope, Standing};
use crate::paths::{RelativePath, open_file};
use crate::probe::Probe;
use crate::project::{Projects, folder_in_scope, note_folder, scope_summary};
use crate::query::{Purpose, parse};
use crate::scan::Walk;

/// Most characters of one recalled passage.
const RECALL_PASSAGE_CHARS: usize = 600;
/// Recall's minimum score: a passage is recalled only when it holds at least this many of the
/// message's key terms (all of them when the message has fewer). One shared word is too weak a
/// sign that a passage is about the message.
pub const RECALL_MIN_TERMS: usize = 2;
/// Candidates scored per passage recalled.
const RECALL_CANDIDATES_PER_HIT: usize = 4;

/// Where a host puts a rendered text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// In the system prompt (or developer message): stable for the session.
    System,
    /// At the start of the user's message, for this turn only.
    UserMessage,
}

impl Placement {
    /// `"system"` or `"user_message"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Placement::System => "system",
            Placement::UserMessage => "user_message",
        }
    }
}

/// The host describing itself, for the environment block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostEnvironment {
    /// The harness's name (`codex`, `claude-code`, ...).
    pub host: String,
    /// Where the harness keeps its own state.
    pub host_state_dir: String,
    /// The project the agent works on.
    pub project_root: String,
    /// The operating system.
    pub os: String,
    /// The shell, when known.
    pub shell: Option<String>,
}

impl HostEnvironment {
    /// The host named `host` with its state in `host_state_dir`, working on the current
    /// directory, on this OS, with `$SHELL`'s name when set.
    pub fn current(host: &str, host_state_dir: &str) -> HostEnvironment {
        let project_root = std::env::current_dir()
            .map(|dir| dir.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "unknown".to_owned());
        let shell = std::env::var_os("SHELL").and_then(|shell| {
            std::path::Path::new(&shell)
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
        });
        HostEnvironment {
            host: host.to_owned(),
            host_state_dir: host_state_dir.to_owned(),
            project_root,
            os: std::env::consts::OS.to_owned(),
            shell,
        }
    }
}

/// An instruction file the host loaded (such as `AGENTS.md`), to be carried with its label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostInstructionFile {
    /// Where the host loaded it from.
    pub path: String,
    /// How far it reaches.
    pub scope: MemoryScope,
    /// Its text.
    pub text: String,
}

/// What to render besides memory itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockOptions {
    /// The state shown last turn; `None` uses the last recorded injection.
    pub previous_state: Option<MemoryState>,
    /// The host, for the environment block; no block without it.
    pub environment: Option<HostEnvironment>,
    /// Instruction files the host passes in, labelled as such.
    pub host_files: Vec<HostInstructionFile>,
}

/// The memory injection for one turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedBlock {
    /// Exactly what to inject (empty when memory is disabled without a line).
    pub text: String,
    /// The state it shows.
    pub state: MemoryState,
    /// Where it goes.
    pub placement: Placement,
    /// Its o200k tokens.
    pub tokens: usize,
    /// SHA-256 of `text`, lowercase hex: it changes only when the text does, which is only when
    /// memory (or the host's input) changed, so a host can key its prompt cache on it.
    pub content_hash: String,
    /// The numbers it shows, to record once injected ([`Introspector::record_injection`]).
    pub snapshot: MemorySnapshot,
}

/// Recall for one turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedRecall {
    /// Exactly what to put before the user's message (empty when nothing was recalled).
    pub text: String,
    /// The state the search ran in.
    pub state: MemoryState,
    /// Where it goes.
    pub placement: Placement,
    /// Its o200k tokens.
    pub tokens: usize,
    /// Passages recalled.
    pub hits: usize,
    /// The search index recall used (anything but fresh means the files were read directly).
    pub index: MemoryIndexState,
    /// Why nothing was recalled, or how the message was simplified to search it.
    pub note: Option<String>,
    /// Each recalled passage as `path:line`, in order, so a host can leave it out of the
    /// next recall of the same session ([`Introspector::recall_excluding`]).
    pub passages: Vec<String>,
}

impl Introspector {
    /// Renders this turn's memory injection (see the module docs).
    pub fn render_block(&self, options: &BlockOptions) -> Result<RenderedBlock> {
        let probe = self.probe(Walk::Full);
        let state = probe.state;
        let previous = match options.previous_state {
            Some(previous) => Some(previous),
            None if state == MemoryState::Disabled => None,
            None => self.last_injection().map(|snapshot| snapshot.state),
        };
        let change = match previous {
            Some(previous) if previous != state => Some(state_change(previous, state)?),
            _ => None,
        };
        let config = self.config();
        let mut text = match state {
            MemoryState::Disabled if !config.disabled_line => String::new(),
            MemoryState::Disabled => fence(FenceKind::Memory, &self.state_line(&probe)?)?,
            MemoryState::Unavailable => {
                let body = format!("{}{}", change.unwrap_or_default(), self.state_line(&probe)?);
                fence(FenceKind::Memory, &body)?
            }
            MemoryState::Empty => {
                let body = format!(
                    "{}{}{}",
                    self.header(&probe)?,
                    change.unwrap_or_default(),
                    self.state_line(&probe)?
                );
                fence(FenceKind::Memory, &body)?
            }
            MemoryState::Ready | MemoryState::Degraded => {
                let mut body = self.header(&probe)?;
                body.push_str(&change.unwrap_or_default());
                if state == MemoryState::Degraded {
                    body.push_str(&self.state_line(&probe)?);
                }
                for source in self.sources(&probe, &options.host_files)? {
                    body.push('\n');
                    body.push_str(&source);
                }
                let guidance = read_path(&ReadPathContext {
                    summary_token_cap: config.summary_budget_tokens,
                    tools: config.tools,
                    writable: config.effective_mode()
                        == memory_protocol::introspect::MemoryMode::Writable,
                })?;
                format!("{guidance}\n{}", fence(FenceKind::Memory, &body)?)
            }
        };
        if let Some(host) = &options.environment
            && state != MemoryState::Disabled
        {
            text.push('\n');
            text.push_str(&environment(&EnvironmentContext {
                host: UntrustedText::new(host.host.as_str()),
                host_state_dir: UntrustedText::new(host.host_state_dir.as_str()),
                memory_root: UntrustedText::new(self.display_root()),
                project_root: UntrustedText::new(host.project_root.as_str()),
                os: UntrustedText::new(host.os.as_str()),
                shell: host.shell.as_deref().map(UntrustedText::new),
            })?);
        }
        Ok(RenderedBlock {
            tokens: o200k().count(&text),
            content_hash: content_hash(&text),
            text,
            state,
            placement: Placement::System,
            snapshot: MemorySnapshot {
                as_of: probe.as_of,
                state,
                summary: probe.summary_use(config.summary_budget_tokens),
                files: probe.scan.file_count(),
                revision: probe.scan.revision(),
            },
        })
    }

    /// Recall for one turn: the passages that best match `message`, at most `max_hits`, in the
    /// `<memory-recall>` fence. The message's key terms are searched (common words left out, a
    /// long or oddly quoted message simplified, never dropped); a passage is recalled when it
    /// holds [`RECALL_MIN_TERMS`] of them, those holding more first. Nothing is recalled when
    /// nothing qualifies or memory is off, and [`RenderedRecall::note`] says why; when memory
    /// cannot be read the fence says so instead of staying silent.
    pub fn recall(&self, message: &str, max_hits: usize) -> Result<RenderedRecall> {
        self.recall_excluding(message, max_hits, &BTreeSet::new())
    }

    /// [`Introspector::recall`] without the passages in `already` (`path:line`, as
    /// [`RenderedRecall::passages`] names them): what a session already received is not
    /// recalled again.
    pub fn recall_excluding(
        &self,
        message: &str,
        max_hits: usize,
        already: &BTreeSet<String>,
    ) -> Result<RenderedRecall> {
        let probe = self.probe(Walk::Cached);
        let mut rendered = RenderedRecall {
            text: String::new(),
            state: probe.state,
            placement: Placement::UserMessage,
            tokens: 0,
            hits: 0,
            index: probe.index.state,
            note: None,
            passages: Vec::new(),
        };
        match probe.state {
            MemoryState::Disabled => {
                rendered.note = Some("memory is disabled".to_owned());
                return Ok(rendered);
            }
            MemoryState::Unavailable => {
                rendered.text = fence(FenceKind::Recall, &self.state_line(&probe)?)?;
            }
            MemoryState::Empty | MemoryState::Ready | MemoryState::Degraded => {
                let query = match parse(message, Purpose::Recall) {
                    Ok(query) => query,
                    Err(error) => {
                        rendered.note = Some(format!("nothing searched: {}", error.reason()));
                        return Ok(rendered);
                    }
                };
                let simplified = query.simplified_note();
                let candidates = max_hits.saturating_mul(RECALL_CANDIDATES_PER_HIT);
                let scored = self
                    .search_blocks(&probe, &query.any(), None, candidates)
                    .and_then(|hits| {
                        let rowids: Vec<i64> = hits.iter().map(|hit| hit.rowid).collect();
                        let counts = if hits.is_empty() {
                            Default::default()
                        } else {
                            self.on_probed_index(&probe, |index| {
                                index.count_terms(&rowids, &query.terms)
                            })?
                        };
                        Ok((hits, counts))
                    });
                let (hits, counts) = match scored {
                    Ok(scored) => scored,
                    Err(problem) => {
                        let line = state_line(&StateLineContext {
                            state: MemoryState::Degraded,
                            problem: Some(UntrustedText::new(problem)),
                        })?;
                        rendered.text = fence(FenceKind::Recall, &line)?;
                        rendered.tokens = o200k().count(&rendered.text);
                        return Ok(rendered);
                    }
                };
                let required = RECALL_MIN_TERMS.min(query.terms.len());
                let mut hits: Vec<(usize, crate::index::IndexHit)> = hits
                    .into_iter()
                    .map(|hit| (counts.get(&hit.rowid).copied().unwrap_or(0), hit))
                    .filter(|(matched, hit)| {
                        *matched >= required && !already.contains(&passage_key(hit))
                    })
                    .collect();
                // Scoped to a working directory: other projects' passages are left to search.
                let mut other_projects = 0usize;
                if let Some(scope) = self.project_scope(&probe) {
                    let mut passages = scope.passages();
                    hits.retain(|(_, hit)| {
                        let lines = hit.text.lines().count();
                        let standing = passages
                            .standing(&hit.path, hit.start_line, lines, |rel| read_text(self, rel));
                        let other = standing == Standing::OtherProject;
                        other_projects += usize::from(other);
                        !other
                    });
                }
                // Stable: equal counts keep the index's BM25 order.
                hits.sort_by_key(|(matched, _)| std::cmp::Reverse(*matched));
                hits.truncate(max_hits);
                if hits.is_empty() {
                    let mut why = format!(
                        "no passage holds {required} of the message's {} key terms (index {}, {} \
                         files searched)",
                        query.terms.len(),
                        probe.index.state.as_str(),
                        probe.scan.file_count()
                    );
                    if other_projects > 0 {
                        why.push_str(&format!(
                            " in this project; {other_projects} about other projects left out"
                        ));
                    }
                    rendered.note = Some(match simplified {
                        Some(simplified) => format!("{why}; {simplified}"),
                        None => why,
                    });
                    return Ok(rendered);
                }
                rendered.note = simplified;
                let mut body = String::new();
                if probe.state == MemoryState::Degraded {
                    body.push_str(&self.state_line(&probe)?);
                    body.push('\n');
                }
                let scope = self.config().scope;
                let consolidated_at = probe.summary.as_ref().map_or(i64::MIN, |s| s.written_at);
                for (number, (_, hit)) in hits.iter().enumerate() {
                    if number > 0 {
                        body.push('\n');
                    }
                    let passage = memory_sanitize::truncate_tool_result(
                        hit.text.trim(),
                        RECALL_PASSAGE_CHARS,
                    );
                    let note = hit.path.starts_with(&format!("{NOTES_DIR}/"));
                    let consolidated = note
                        && probe
                            .scan
                            .file(&hit.path)
                            .is_some_and(|file| file.mtime_seconds() < consolidated_at);
                    body.push_str(&recall_hit(&RecallHitContext {
                        path: UntrustedText::new(hit.path.as_str()),
                        line: hit.start_line,
                        note,
                        consolidated,
                        scope,
                        text: UntrustedText::new(passage),
                    })?);
                }
                rendered.hits = hits.len();
                rendered.passages = hits.iter().map(|(_, hit)| passage_key(hit)).collect();
                rendered.text = fence(FenceKind::Recall, &body)?;
            }
        }
        rendered.tokens = o200k().count(&rendered.text);
        Ok(rendered)
    }

    /// The header of the block, from the probe's numbers.
    fn header(&self, probe: &Probe) -> Result<String> {
        let config = self.config();
        let budget = config.summary_budget_tokens.max(1);
        let tokens = probe.summary.as_ref().map_or(0, |summary| summary.tokens);
        Ok(memory_header(&MemoryHeaderContext {
            root: UntrustedText::new(self.display_root()),
            scope: config.scope,
            summary_tokens: tokens,
            summary_budget_tokens: budget,
            mode: config.effective_mode(),
            tools: config.tools,
            last_written: probe.scan.last_write_at(),
        })?)
    }

    /// The state line of a probe that is not ready.
    fn state_line(&self, probe: &Probe) -> Result<String> {
        Ok(state_line(&StateLineContext {
            state: probe.state,
            problem: probe.short_problem().map(UntrustedText::new),
        })?)
    }

    /// Every source of a ready or degraded block, each under its label.
    fn sources(&self, probe: &Probe, host_files: &[HostInstructionFile]) -> Result<Vec<String>> {
        let config = self.config();
        let mut sources = Vec::new();
        let scope = self.project_scope(probe);
        if let Some(summary) = probe.summary.as_ref().filter(|s| !s.body.is_empty()) {
            let budget = usize::try_from(config.summary_budget_tokens).unwrap_or(usize::MAX);
            let (body, tokens, other_projects) = match &scope {
                Some(scope) => {
                    let scoped =
                        scope_summary(&summary.body, &scope.projects, scope.project.as_deref());
                    let tokens = o200k().count(&scoped.text);
                    (scoped.text, tokens, scoped.left_out.len())
                }
                None => (
                    summary.body.clone(),
                    usize::try_from(summary.tokens).unwrap_or(usize::MAX),
                    0,
                ),
            };
            let text = truncate_middle(&body, TruncationPolicy::Tokens(budget), o200k());
            sources.push(memory_source(&MemorySourceContext {
                kind: SourceKind::Summary {
                    cut: tokens > budget,
                    other_projects: u32::try_from(other_projects).unwrap_or(u32::MAX),
                },
                path: UntrustedText::new(MEMORY_SUMMARY_FILE),
                scope: config.scope,
                text: UntrustedText::new(text),
            })?);
        }
        // Notes newer than the summary have not been through a consolidation yet: show them,
        // newest first, within their budget, so a note is in the next turn's memory.
        let consolidated_at = probe.summary.as_ref().map_or(i64::MIN, |s| s.written_at);
        let mut left = usize::try_from(config.pending_notes_tokens).unwrap_or(usize::MAX);
        for file in note_files(&probe.scan).into_iter().rev() {
            if file.mtime_seconds() < consolidated_at {
                continue;
            }
            let Some(text) = read_text(self, &file.rel) else {
                continue;
            };
            if let (Some(scope), Some(folder)) = (&scope, note_folder(&text))
                && !folder_in_scope(folder, scope.project.as_deref(), &scope.cwd)
            {
                continue;
            }
            let source = memory_source(&MemorySourceContext {
                kind: SourceKind::Note {
                    written_at: written_at(file),
                },
                path: UntrustedText::new(file.rel.as_str()),
                scope: config.scope,
                text: UntrustedText::new(note_body(&text)),
            })?;
            let cost = o200k().count(&source);
            if cost > left {
                break;
            }
            left -= cost;
            sources.push(source);
        }
        for file in host_files {
            sources.push(memory_source(&MemorySourceContext {
                kind: SourceKind::HostInstructions,
                path: UntrustedText::new(file.path.as_str()),
                scope: file.scope,
                text: UntrustedText::new(file.text.as_str()),
            })?);
        }
        Ok(sources)
    }
}

/// The project a scoped block, recall or search is for.
pub(crate) struct ProjectScope {
    /// The working directory.
    cwd: std::path::PathBuf,
    /// The projects memory knows.
    projects: Projects,
    /// The folder of the project `cwd` is in, if any.
    project: Option<String>,
}

impl ProjectScope {
    /// Finds which of this scope's passages are about its project.
    pub(crate) fn passages(&self) -> PassageScope<'_> {
        PassageScope::new(&self.cwd, &self.projects, self.project.as_deref())
    }
}

impl Introspector {
    /// The project scope of this block, when the memory is scoped to a working directory: the
    /// projects are named by the summary and the handbook.
    pub(crate) fn project_scope(&self, probe: &Probe) -> Option<ProjectScope> {
        let cwd = self.cwd()?.to_path_buf();
        let summary = probe
            .summary
            .as_ref()
            .map_or("", |summary| summary.body.as_str());
        let handbook = read_text(self, MEMORY_FILE).unwrap_or_default();
        let projects = Projects::known(summary, &handbook);
        let project = projects.project_of(&cwd);
        Some(ProjectScope {
            cwd,
            projects,
            project,
        })
    }
}

impl Introspector {
    /// A memory file's text (`rel` from the root); `None` when it cannot be read.
    pub(crate) fn read_memory_text(&self, rel: &str) -> Option<String> {
        read_text(self, rel)
    }
}

/// SHA-256 of `text`, lowercase hex.
fn content_hash(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// A memory file's text through the confined open; `None` when it cannot be read (the probe
/// already reports unreadable files).
fn read_text(introspector: &Introspector, rel: &str) -> Option<String> {
    let relative = RelativePath::parse(rel).ok()?;
    let (mut file, _) = open_file(introspector.root(), &relative).ok()?;
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    Some(text)
}

/// How a recalled passage is named between recalls: its file and first line.
fn passage_key(hit: &crate::index::IndexHit) -> String {
    format!("{}:{}", hit.path, hit.start_line)
}
