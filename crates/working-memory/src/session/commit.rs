//! Commits: archive the older live messages, then bring the working memory up to date with
//! every archived message after the cursor.

use memory_prompts::UntrustedText;
use memory_prompts::working_memory::{CreateContext, SectionLimits, UpdateContext, create, update};
use memory_protocol::compaction::ConversationEntry;
use memory_protocol::working_memory::{
    GuardRecord, SectionBody, WorkingMemoryCreateInput, WorkingMemorySection, WorkingMemoryUpdate,
    WorkingMemoryUpdateInput,
};
use memory_protocol::{ModelClient, ModelError, ModelRequest, TaskKind, input_token_budget};
use serde::Serialize;

use super::archive::{
    self, Archive, ArchiveStatus, Completion, DoneMarker, MOVED_FILE, UpdateMeta,
};
use super::cut::cut_message;
use super::format::{format_messages, sanitized};
use super::window::{cut_points, split_point, windows};
use super::{HISTORY_DIR, Session, estimate_message};
use crate::document::{WorkingMemoryDocument, is_working_memory};
use crate::error::Result;
use crate::merge::{MergeOptions, MergeOutcome, MovedEntries, merge, merge_created};
use crate::recover::read_arguments;
use crate::reminders::section_size_warnings;
use crate::text;

/// What a commit would leave, shown to the caller's check before anything is written (see
/// [`Session::commit_accepting`]).
#[derive(Debug, Clone, Copy)]
pub struct CommitPreview<'a> {
    /// The working memory the commit would leave, as stored (`.overview.md`).
    pub overview: &'a str,
    /// The live messages it would archive, oldest first.
    pub archived: &'a [ConversationEntry],
    /// The live messages it would keep, oldest first.
    pub kept: &'a [ConversationEntry],
}

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
    /// Ids of the messages sent to the model cut (head and tail) to fit its window.
    pub cut_messages: Vec<String>,
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
            cut_messages: Vec::new(),
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
        self.run_commit(model, keep, false, None).await
    }

    /// Commits now keeping `keep` recent messages (clamped to 10,000), and stores `keep` as the
    /// session's keep count once the commit succeeds. Keep 0 archives everything and stores
    /// nothing, as [`Session::compact`] does: a stored 0 would archive every message at every
    /// later commit.
    pub async fn commit(&mut self, model: &dyn ModelClient, keep: u32) -> Result<CommitReport> {
        let keep = keep.min(super::MAX_KEEP_RECENT);
        self.run_commit(model, keep, keep > 0, None).await
    }

    /// As [`Session::commit`], but once the update is ready and before anything is written,
    /// `accept` sees what the commit would leave; when it declines, nothing is written (the
    /// messages stay live, the working memory and the stored keep count as they were; the
    /// model calls are spent) and the report is `Skipped` with the reason `declined`. A host
    /// uses it to commit only when the commit makes its context smaller, which it can tell
    /// only from the new working memory.
    pub async fn commit_accepting(
        &mut self,
        model: &dyn ModelClient,
        keep: u32,
        accept: &dyn Fn(&CommitPreview<'_>) -> bool,
    ) -> Result<CommitReport> {
        let keep = keep.min(super::MAX_KEEP_RECENT);
        self.run_commit(model, keep, keep > 0, Some(accept)).await
    }

    /// Archives every live message (keep 0) without changing the stored keep count: the path
    /// a host takes when its context is full.
    pub async fn compact(&mut self, model: &dyn ModelClient) -> Result<CommitReport> {
        self.run_commit(model, 0, false, None).await
    }

    async fn run_commit(
        &mut self,
        model: &dyn ModelClient,
        keep: u32,
        store_keep: bool,
        accept: Option<&dyn Fn(&CommitPreview<'_>) -> bool>,
    ) -> Result<CommitReport> {
        let entries: Vec<ConversationEntry> =
            self.messages.iter().map(|m| m.entry.clone()).collect();
        let split = split_point(&entries, keep as usize);
        let archives = self.archives()?;
        let unfinished = unfinished(&archives);
        let target_index = if split > 0 {
            archives.last().map_or(1, |a| a.index + 1)
        } else if let Some(latest) = unfinished.last() {
            // Nothing new to archive, but an earlier update did not finish: retry it.
            latest.index
        } else {
            if store_keep && self.state.keep_recent_count != keep {
                self.state.keep_recent_count = keep;
                self.rebuild_pending();
                self.save_state()?;
            }
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
        let archiving = &entries[..split];
        let (mut report, completed) = self
            .update_working_memory(model, &unfinished, archiving, target_index)
            .await?;
        let Some(completed) = completed else {
            // A failed update writes nothing: the messages stay live, the next commit retries.
            return Ok(report);
        };
        if let Some(accept) = accept {
            let preview = CommitPreview {
                overview: &completed.completion.overview,
                archived: archiving,
                kept: &entries[split..],
            };
            if !accept(&preview) {
                report.status = CommitStatus::Skipped;
                report.reason = Some("declined".to_owned());
                return Ok(report);
            }
        }
        // Archive, then mark it done, then drop the archived messages from the live list: a
        // crash in between leaves messages that the newest archive holds, which opening the
        // session leaves out again.
        let target = if split > 0 {
            archive::create_archive(&self.layout.history(), target_index, archiving, keep)?
        } else {
            match unfinished.last() {
                Some(latest) => (*latest).clone(),
                None => return Ok(report),
            }
        };
        archive::complete(&target, completed.completion)?;
        if split > 0 {
            super::store::write_messages(&self.layout.messages(), &entries[split..])?;
            self.messages.drain(..split);
        }
        if store_keep {
            self.state.keep_recent_count = keep;
        }
        self.state.cursor = completed.cursor;
        self.rebuild_pending();
        self.save_state()?;
        report.archived_messages = split;
        report.pending_tokens = self.state.pending_tokens;
        report.keep_recent_count = self.state.keep_recent_count;
        report.cursor = self.state.cursor.clone();
        Ok(report)
    }

    /// Brings a copy of the working memory up to date with the messages after the cursor:
    /// those of the unfinished archives, then `archiving`. Writes nothing: returns the report
    /// and, when the update succeeded, what the archive `archive_NNN` (`target_index`) gets.
    async fn update_working_memory(
        &self,
        model: &dyn ModelClient,
        unfinished: &[&Archive],
        archiving: &[ConversationEntry],
        target_index: u32,
    ) -> Result<(CommitReport, Option<Completed>)> {
        let previous = self.working_memory()?;
        let mut pending: Vec<ConversationEntry> = Vec::new();
        for archive in unfinished {
            pending.extend(archive.messages()?);
        }
        pending.extend(archiving.iter().cloned());
        if let Some(cursor) = &self.state.cursor
            && let Some(at) = pending.iter().position(|entry| &entry.id == cursor)
        {
            pending.drain(..=at);
        }
        let moved_location = format!(
            "{HISTORY_DIR}/{}/{MOVED_FILE}",
            archive::archive_name(target_index)
        );
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
            cut: Vec::new(),
        };
        let budget = match model.context_window() {
            Some(window) => self
                .options
                .update_input_tokens
                .min(input_token_budget(Some(window))),
            None => self.options.update_input_tokens,
        };
        let result = run.all_windows(&pending, budget).await;
        let mut report = CommitReport::new(CommitStatus::Done, self);
        report.archive = Some(archive::archive_name(target_index));
        report.sent_messages = pending.len();
        report.windows = run.meta.windows;
        report.model_calls = run.meta.model_calls;
        report.recovered = run.meta.recovered;
        report.fallbacks = run.meta.fallbacks;
        report.guards = run.meta.guards.clone();
        report.cut_messages = run.cut.clone();
        if let Err(error) = result {
            report.status = CommitStatus::Failed;
            report.error = Some(error.to_string());
            return Ok((report, None));
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
        Ok((
            report,
            Some(Completed {
                completion: Completion {
                    overview,
                    abstract_line,
                    moved,
                    update: run.meta,
                    done: DoneMarker {
                        starting_message_id: starting,
                        ending_message_id: ending.clone(),
                        completed_at: archive::now(),
                    },
                },
                cursor: ending,
            }),
        ))
    }
}

/// What a successful update leaves to write.
struct Completed {
    completion: Completion,
    cursor: Option<String>,
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
    /// Ids of the messages sent cut to fit.
    cut: Vec<String>,
}

/// A message this small that still overflows the model's window fails the update.
const SMALLEST_CUT_TOKENS: u64 = 64;

impl UpdateRun<'_> {
    /// Sends `messages` window by window, each message cut (head and tail) to the budget. A
    /// window the model finds too large is split in two and retried, down to a single
    /// message, which is then cut to half its size and retried while it is larger than
    /// [`SMALLEST_CUT_TOKENS`].
    async fn all_windows(
        &mut self,
        messages: &[ConversationEntry],
        budget: u64,
    ) -> Result<(), WindowError> {
        let budget = budget.max(1);
        let mut clean: Vec<ConversationEntry> = Vec::with_capacity(messages.len());
        for message in messages {
            let sanitized = sanitized(message);
            let cut = cut_message(&sanitized, budget);
            if cut != sanitized {
                self.cut.push(cut.id.clone());
            }
            clean.push(cut);
        }
        let costs: Vec<u64> = clean.iter().map(estimate_message).collect();
        let allowed = cut_points(&clean);
        let mut queue: Vec<std::ops::Range<usize>> = windows(&costs, &allowed, budget);
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
                    if let Some(mid) = half {
                        queue.push(mid..range.end);
                        queue.push(range.start..mid);
                        continue;
                    }
                    // One message (or a call with its results) the model cannot take: cut its
                    // largest message to half and try again.
                    let largest = range
                        .clone()
                        .max_by_key(|at| estimate_message(&clean[*at]))
                        .unwrap_or(range.start);
                    let size = estimate_message(&clean[largest]);
                    let cut = cut_message(&clean[largest], size / 2);
                    if size <= SMALLEST_CUT_TOKENS || estimate_message(&cut) >= size {
                        return Err(WindowError::Model(ModelError::ContextOverflow {
                            message: format!(
                                "{message} (a window of {} message(s) that cannot be split or cut further)",
                                range.len()
                            ),
                        }));
                    }
                    if !self.cut.contains(&cut.id) {
                        self.cut.push(cut.id.clone());
                    }
                    clean[largest] = cut;
                    queue.push(range);
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
