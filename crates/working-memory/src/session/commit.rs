//! Commits: archive the older live messages, then bring the working memory up to date with
//! every archived message after the cursor.

use memory_prompts::UntrustedText;
use memory_prompts::working_memory::{CreateContext, SectionLimits, UpdateContext, create, update};
use memory_protocol::compaction::ConversationEntry;
use memory_protocol::working_memory::{
    GuardRecord, SectionBody, WorkingMemoryCreateInput, WorkingMemorySection, WorkingMemoryUpdate,
    WorkingMemoryUpdateInput,
};
use memory_protocol::{ModelClient, ModelError, ModelRequest, TaskKind};
use serde::Serialize;

use super::archive::{
    self, Archive, ArchiveStatus, Completion, DoneMarker, FailureRecord, MOVED_FILE, UpdateMeta,
};
use super::format::{format_messages, sanitized};
use super::window::{cut_points, split_point, windows};
use super::{HISTORY_DIR, Session, estimate_message};
use crate::document::{WorkingMemoryDocument, is_working_memory};
use crate::error::Result;
use crate::merge::{MergeOptions, MergeOutcome, MovedEntries, merge, merge_created};
use crate::recover::read_arguments;
use crate::reminders::section_size_warnings;
use crate::text;

/// How a commit ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CommitStatus {
    /// Messages were archived and the working memory was updated; `.done` is written.
    Done,
    /// Messages were archived (or were waiting), but the update failed; `.failed.json` is
    /// written and no `.done`.
    Failed,
    /// Nothing to do.
    Skipped,
}

/// What a commit did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommitReport {
    /// How it ended.
    pub status: CommitStatus,
    /// Why nothing was done, when skipped.
    pub reason: Option<String>,
    /// The archive written or updated.
    pub archive: Option<String>,
    /// Messages moved from the live list into the archive.
    pub archived_messages: usize,
    /// Messages sent to the model: the archived ones after the cursor.
    pub sent_messages: usize,
    /// Windows they were sent in.
    pub windows: usize,
    /// Model calls made.
    pub model_calls: usize,
    /// Windows whose answer was recovered from malformed output.
    pub recovered: usize,
    /// Windows answered by the fallback (re-creating the document).
    pub fallbacks: usize,
    /// What the guards changed.
    pub guards: Vec<GuardRecord>,
    /// The error, when the update failed.
    pub error: Option<String>,
    /// The window state after the commit.
    pub pending_tokens: u64,
    /// Recent messages kept live.
    pub keep_recent_count: u32,
    /// The cursor after the commit.
    pub cursor: Option<String>,
}

impl CommitReport {
    fn new(status: CommitStatus, session: &Session) -> Self {
        Self {
            status,
            reason: None,
            archive: None,
            archived_messages: 0,
            sent_messages: 0,
            windows: 0,
            model_calls: 0,
            recovered: 0,
            fallbacks: 0,
            guards: Vec::new(),
            error: None,
            pending_tokens: session.state.pending_tokens,
            keep_recent_count: session.state.keep_recent_count,
            cursor: session.state.cursor.clone(),
        }
    }
}

impl Session {
    /// Commits when the pending tokens reached half the token budget; `None` otherwise.
    pub async fn commit_if_due(&mut self, model: &dyn ModelClient) -> Result<Option<CommitReport>> {
        if self.commit_due() {
            self.flush(model).await.map(Some)
        } else {
            Ok(None)
        }
    }

    /// Commits now, whatever the threshold, keeping the stored number of recent messages.
    pub async fn flush(&mut self, model: &dyn ModelClient) -> Result<CommitReport> {
        let keep = self.state.keep_recent_count;
        self.run_commit(model, keep, false).await
    }

    /// Commits now keeping `keep` recent messages (clamped to 10,000), and stores `keep` as the
    /// session's keep count.
    pub async fn commit(&mut self, model: &dyn ModelClient, keep: u32) -> Result<CommitReport> {
        let keep = keep.min(super::MAX_KEEP_RECENT);
        self.run_commit(model, keep, true).await
    }

    /// Archives every live message (keep 0) without changing the stored keep count: the path
    /// a host takes when its context is full.
    pub async fn compact(&mut self, model: &dyn ModelClient) -> Result<CommitReport> {
        self.run_commit(model, 0, false).await
    }

    async fn run_commit(
        &mut self,
        model: &dyn ModelClient,
        keep: u32,
        store_keep: bool,
    ) -> Result<CommitReport> {
        if store_keep {
            self.state.keep_recent_count = keep;
        }
        let entries: Vec<ConversationEntry> =
            self.messages.iter().map(|m| m.entry.clone()).collect();
        let split = split_point(&entries, keep as usize);
        let archives = self.archives()?;
        let unfinished = unfinished(&archives);
        let (target, archived) = if split == 0 {
            let Some(latest) = unfinished.last() else {
                self.rebuild_pending();
                self.save_state()?;
                let mut report = CommitReport::new(CommitStatus::Skipped, self);
                report.reason = Some(if entries.is_empty() {
                    "no messages".to_owned()
                } else if entries.len() <= keep as usize {
                    "every message is within the keep window".to_owned()
                } else {
                    "the older messages end in a tool call whose result is within the keep \
                     window, and a call is never archived apart from its result"
                        .to_owned()
                });
                return Ok(report);
            };
            // Nothing new to archive, but an earlier update did not finish: retry it.
            ((*latest).clone(), 0)
        } else {
            let index = archives.last().map_or(1, |a| a.index + 1);
            let created =
                archive::create_archive(&self.layout.history(), index, &entries[..split], keep)?;
            let retained: Vec<ConversationEntry> = entries[split..].to_vec();
            super::store::write_messages(&self.layout.messages(), &retained)?;
            self.messages.drain(..split);
            self.rebuild_pending();
            self.save_state()?;
            (created, split)
        };
        let mut report = self.update_working_memory(model, &target).await?;
        report.archived_messages = archived;
        Ok(report)
    }

    /// Brings the working memory up to date with the archived messages after the cursor, up
    /// to and including `target`, and marks `target` done or failed.
    async fn update_working_memory(
        &mut self,
        model: &dyn ModelClient,
        target: &Archive,
    ) -> Result<CommitReport> {
        let archives = self.archives()?;
        let previous = self.working_memory()?;
        let previous_index = previous.as_ref().map_or(0, |(archive, _)| archive.index);
        let mut pending: Vec<ConversationEntry> = Vec::new();
        for archive in archives
            .iter()
            .filter(|a| a.index > previous_index && a.index <= target.index)
        {
            pending.extend(archive.messages()?);
        }
        if let Some(cursor) = &self.state.cursor
            && let Some(at) = pending.iter().position(|entry| &entry.id == cursor)
        {
            pending.drain(..=at);
        }
        let moved_location = format!("{HISTORY_DIR}/{}/{MOVED_FILE}", target.name());
        let (document, legacy) = match &previous {
            Some((_, text)) if is_working_memory(text) => {
                (WorkingMemoryDocument::parse(text), None)
            }
            Some((_, text)) if !text.trim().is_empty() => {
                (WorkingMemoryDocument::new(), Some(text.clone()))
            }
            _ => (WorkingMemoryDocument::new(), None),
        };
        let mut run = UpdateRun {
            model,
            options: MergeOptions {
                moved_location: moved_location.clone(),
            },
            document,
            legacy,
            meta: UpdateMeta {
                model: model.name(),
                sent_messages: pending.len(),
                ..UpdateMeta::default()
            },
            moved: Vec::new(),
        };
        let result = run
            .all_windows(&pending, self.options.update_input_tokens)
            .await;
        let mut report = CommitReport::new(CommitStatus::Done, self);
        report.archive = Some(target.name());
        report.sent_messages = pending.len();
        report.windows = run.meta.windows;
        report.model_calls = run.meta.model_calls;
        report.recovered = run.meta.recovered;
        report.fallbacks = run.meta.fallbacks;
        report.guards = run.meta.guards.clone();
        if let Err(error) = result {
            archive::fail(
                target,
                &FailureRecord {
                    stage: "working_memory".to_owned(),
                    error: error.to_string(),
                    failed_at: archive::now(),
                    model: model.name(),
                    sent_messages: pending.len(),
                },
            )?;
            report.status = CommitStatus::Failed;
            report.error = Some(error.to_string());
            return Ok(report);
        }
        let overview = run.document.render();
        let abstract_line = abstract_line(&run.document);
        run.meta.overview_tokens = text::tokens(&overview) as u64;
        run.meta.abstract_tokens = text::tokens(&abstract_line) as u64;
        let moved = moved_file(&run.moved);
        let starting = pending.first().map(|m| m.id.clone());
        let ending = pending
            .last()
            .map(|m| m.id.clone())
            .or_else(|| self.state.cursor.clone());
        archive::complete(
            target,
            Completion {
                overview: &overview,
                abstract_line: &abstract_line,
                moved: moved.as_deref(),
                update: run.meta,
                done: DoneMarker {
                    starting_message_id: starting,
                    ending_message_id: ending.clone(),
                    completed_at: archive::now(),
                },
            },
        )?;
        self.state.cursor = ending;
        self.save_state()?;
        report.cursor = self.state.cursor.clone();
        Ok(report)
    }
}

/// Archives after the newest done one (pending or failed), oldest first.
fn unfinished(archives: &[Archive]) -> Vec<&Archive> {
    let last_done = archives
        .iter()
        .rposition(|a| a.status == ArchiveStatus::Done)
        .map_or(0, |at| at + 1);
    archives[last_done..].iter().collect()
}

/// One line for `.abstract.md`: the title and the first sentence of the current state.
fn abstract_line(document: &WorkingMemoryDocument) -> String {
    let title = document
        .body(WorkingMemorySection::SessionTitle)
        .lines()
        .next()
        .unwrap_or("")
        .trim();
    let state = document.body(WorkingMemorySection::CurrentState);
    let first = state
        .split_inclusive(['.', '!', '?'])
        .next()
        .unwrap_or("")
        .trim();
    match (title.is_empty(), first.is_empty()) {
        (false, false) => format!("{title}: {first}"),
        (false, true) => title.to_owned(),
        (true, false) => first.to_owned(),
        (true, true) => "(empty working memory)".to_owned(),
    }
}

fn moved_file(moved: &[MovedEntries]) -> Option<String> {
    if moved.is_empty() {
        return None;
    }
    let mut out = String::from("# Entries moved out of the working memory\n");
    for section in WorkingMemorySection::ALL {
        let entries: Vec<&String> = moved
            .iter()
            .filter(|m| m.section == section)
            .flat_map(|m| m.entries.iter())
            .collect();
        if entries.is_empty() {
            continue;
        }
        out.push_str(&format!("\n## {}\n", section.header()));
        for entry in entries {
            out.push_str(&format!("- {entry}\n"));
        }
    }
    Some(out)
}

/// Why one window's update could not be applied.
#[derive(Debug, thiserror::Error)]
enum WindowError {
    #[error("{0}")]
    Model(ModelError),
    #[error("{0}")]
    Prompt(#[from] memory_prompts::Error),
    #[error("the model's create answer holds no working-memory section")]
    EmptyCreate,
}

/// The state of one update across its windows.
struct UpdateRun<'a> {
    model: &'a dyn ModelClient,
    options: MergeOptions,
    document: WorkingMemoryDocument,
    /// A previous document in another format, to carry forward on the first create.
    legacy: Option<String>,
    meta: UpdateMeta,
    moved: Vec<MovedEntries>,
}

impl UpdateRun<'_> {
    /// Sends `messages` window by window. A window the model finds too large is split in two
    /// and retried, down to a single message, which then fails the update.
    async fn all_windows(
        &mut self,
        messages: &[ConversationEntry],
        budget: u64,
    ) -> Result<(), WindowError> {
        let clean: Vec<ConversationEntry> = messages.iter().map(sanitized).collect();
        let costs: Vec<u64> = clean.iter().map(estimate_message).collect();
        let allowed = cut_points(&clean);
        let mut queue: Vec<std::ops::Range<usize>> = windows(&costs, &allowed, budget.max(1));
        queue.reverse();
        while let Some(range) = queue.pop() {
            match self.window(&clean[range.clone()]).await {
                Ok(()) => self.meta.windows += 1,
                Err(WindowError::Model(ModelError::ContextOverflow { message })) => {
                    let inner: Vec<bool> = allowed[range.clone()].to_vec();
                    let half = (range.start..range.end)
                        .skip(1)
                        .filter(|at| inner[at - range.start])
                        .min_by_key(|at| at.abs_diff(range.start + range.len() / 2));
                    match half {
                        Some(mid) => {
                            queue.push(mid..range.end);
                            queue.push(range.start..mid);
                        }
                        None => {
                            return Err(WindowError::Model(ModelError::ContextOverflow {
                                message: format!(
                                    "{message} (a window of {} message(s) that cannot be split further)",
                                    range.len()
                                ),
                            }));
                        }
                    }
                }
                Err(other) => return Err(other),
            }
        }
        Ok(())
    }

    /// One window: create when the document is empty, else update (with the fallback).
    async fn window(&mut self, messages: &[ConversationEntry]) -> Result<(), WindowError> {
        if self.document.is_empty() {
            let previous = self.legacy.clone();
            let outcome = self.create(messages, previous).await?;
            self.legacy = None;
            return self.accept(outcome);
        }
        match self.update(messages).await {
            Ok(outcome) => self.accept(outcome),
            Err(WindowError::Model(error @ ModelError::ContextOverflow { .. })) => {
                Err(WindowError::Model(error))
            }
            Err(_) => {
                // The update call failed or its answer held nothing readable: write the
                // document again from the previous one, through the same guards.
                self.meta.fallbacks += 1;
                let previous = Some(self.document.render());
                let outcome = self.create(messages, previous).await?;
                self.accept(outcome)
            }
        }
    }

    fn accept(&mut self, outcome: MergeOutcome) -> Result<(), WindowError> {
        self.meta.guards.extend(outcome.guards);
        self.moved.extend(outcome.moved);
        self.document = outcome.document;
        Ok(())
    }

    async fn call(&mut self, request: ModelRequest) -> Result<String, WindowError> {
        self.meta.model_calls += 1;
        self.model
            .complete(request)
            .await
            .map(|response| response.text)
            .map_err(WindowError::Model)
    }

    async fn create(
        &mut self,
        messages: &[ConversationEntry],
        previous: Option<String>,
    ) -> Result<MergeOutcome, WindowError> {
        let input = create(&CreateContext {
            conversation: UntrustedText::new(format_messages(messages)),
            previous_summary: previous.clone().map(UntrustedText::new),
            limits: SectionLimits::default(),
        })?;
        let structured = WorkingMemoryCreateInput {
            messages: messages.to_vec(),
            previous,
        };
        let text = self
            .call(request(
                TaskKind::WorkingMemoryCreate,
                input,
                &structured,
                None,
            ))
            .await?;
        let created = WorkingMemoryDocument::parse(&text);
        if created.is_empty() {
            return Err(WindowError::EmptyCreate);
        }
        Ok(merge_created(&self.document, &text, &self.options))
    }

    async fn update(
        &mut self,
        messages: &[ConversationEntry],
    ) -> Result<MergeOutcome, WindowError> {
        let warnings = section_size_warnings(&self.document);
        let input = update(&UpdateContext {
            working_memory: UntrustedText::new(self.document.render()),
            conversation: UntrustedText::new(format_messages(messages)),
            warnings: warnings.clone(),
            limits: SectionLimits::default(),
        })?;
        let structured = WorkingMemoryUpdateInput {
            sections: self
                .document
                .sections()
                .map(|(section, body)| SectionBody {
                    section,
                    body: body.to_owned(),
                })
                .collect(),
            messages: messages.to_vec(),
            warnings,
        };
        let text = self
            .call(request(
                TaskKind::WorkingMemoryUpdate,
                input,
                &structured,
                Some(WorkingMemoryUpdate::output_schema()),
            ))
            .await?;
        let recovery = read_arguments(&text).ok_or_else(|| {
            WindowError::Model(ModelError::InvalidOutput {
                message: "no section operation could be read from the answer".to_owned(),
            })
        })?;
        if recovery.path == crate::recover::RecoveryPath::Repaired {
            self.meta.recovered += 1;
        }
        Ok(merge(&self.document, &recovery.ops, &self.options))
    }
}

fn request(
    task: TaskKind,
    input: String,
    structured: &impl Serialize,
    output_schema: Option<serde_json::Value>,
) -> ModelRequest {
    ModelRequest {
        task,
        instructions: String::new(),
        input,
        structured_input: serde_json::to_value(structured).unwrap_or(serde_json::Value::Null),
        output_schema,
        reasoning_effort: None,
        max_output_tokens: None,
    }
}
