//! Planning and running one compaction.
//!
//! [`plan_compaction`] is pure: it chooses the cut, cleans and serializes the span, and packs it
//! into windows, without calling a model. [`compact`] runs the plan: it folds the history
//! windows into a running summary (the first window with the initial format, every later one
//! with the update format over the summary so far), summarizes a split turn's beginning on its
//! own, appends the tracked files, and writes a short summary of the kept messages.
//!
//! A compaction is atomic: any failure, in any window, returns an error and produces no entry,
//! so the session is left as it was. A summary that would leave the context no smaller than it
//! was produces no entry either ([`CompactionOutcome::WouldNotShrink`]). A context-overflow
//! answer halves what was sent and replans that window; below the input floor it is an error.

use std::collections::VecDeque;

use memory_prompts::UntrustedText;
use memory_prompts::compaction::{SummaryFormat, SummaryRequestContext, summary_request, system};
use memory_protocol::compaction::summary_sections::TURN_CONTEXT;
use memory_protocol::compaction::{
    CompactionEntry, CompactionPlan, ConversationMessage, SummaryInput,
};
use memory_protocol::names::boundary_tags;
use memory_protocol::{ModelClient, ModelError, ModelRequest, TaskKind};
use memory_sanitize::{
    TokenCounter, TruncationPolicy, escape_boundary_tags, truncate_middle, truncate_tool_result,
};
use memory_transcript::file_ops::FileOps;

use super::cut::{Preparation, prepare};
use super::error::{CompactionError, Result};
use super::files::{files_block, merge_details, scan_messages, strip_files_blocks};
use super::serialize::{
    CleanStats, Dialect, TOOL_RESULT_MAX_CHARS, clean_messages, redact, serialize_message,
};
use super::session::Session;
use super::settings::{Budgets, CompactionSettings, DEFAULT_WINDOW_TOKENS};
use super::summary_text::keep_done_items;
use super::windows::{Window, fit_message, plan_windows};

/// Why a compaction runs. Whatever the reason, disabled settings produce no plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CompactionReason {
    /// The user or the host asked for it.
    #[default]
    Manual,
    /// [`super::should_compact`] said yes.
    Threshold,
    /// The model refused the context as too long.
    Overflow,
}

/// What a compaction needs besides the session and the model.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionOptions {
    /// Settings (enabled, reserve, keep-recent, thresholds).
    pub settings: CompactionSettings,
    /// The conversation model's context window, also the summarizer's when the summarizing
    /// model does not report one.
    pub window_tokens: u64,
    /// What the user wants the summary to focus on.
    pub focus: Option<String>,
    /// Additional context for the summarizer (notes a host or user adds; plan-mode notes,
    /// say), each redacted and sent as data.
    pub additional_context: Vec<String>,
    /// How to write the conversation; `None` picks it from the model's name.
    pub dialect: Option<Dialect>,
    /// Why the compaction runs.
    pub reason: CompactionReason,
    /// The context size the provider last reported, when known.
    pub provider_tokens: Option<u64>,
    /// The new entry's id; `None` picks a fresh `c<N>`.
    pub entry_id: Option<String>,
}

impl Default for CompactionOptions {
    fn default() -> Self {
        CompactionOptions {
            settings: CompactionSettings::default(),
            window_tokens: DEFAULT_WINDOW_TOKENS,
            focus: None,
            additional_context: Vec::new(),
            dialect: None,
            reason: CompactionReason::Manual,
            provider_tokens: None,
            entry_id: None,
        }
    }
}

/// A compaction planned and not yet run.
#[derive(Debug, Clone)]
pub struct PlannedCompaction<'s> {
    /// The figures (`tokens_after` is `None` until a summary exists).
    pub plan: CompactionPlan,
    /// The budgets the windows were planned for.
    pub budgets: Budgets,
    /// The most the context may hold after this compaction: the conversation's window less its
    /// reserve. The kept messages leave room for the summary within it.
    pub context_limit: u64,
    prep: Option<Preparation<'s>>,
    previous_summary: Option<String>,
    history_windows: Vec<Window>,
    prefix_windows: Vec<Window>,
    focus: Option<String>,
    additional_context: Vec<String>,
    dialect: Dialect,
    stats: CleanStats,
}

impl PlannedCompaction<'_> {
    /// True when there is nothing to summarize: every live message is kept.
    pub fn is_empty(&self) -> bool {
        self.prep.as_ref().is_none_or(Preparation::is_empty)
    }

    /// The history windows, as they would be sent.
    pub fn history_windows(&self) -> &[Window] {
        &self.history_windows
    }

    /// The turn-prefix windows, as they would be sent.
    pub fn turn_prefix_windows(&self) -> &[Window] {
        &self.prefix_windows
    }
}

/// A finished compaction: the entry to append and what it did.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// The entry to append to the session.
    pub entry: CompactionEntry,
    /// The figures, `tokens_after` included.
    pub plan: CompactionPlan,
}

/// What [`compact`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum CompactionOutcome {
    /// A new entry.
    Compacted(Box<Compaction>),
    /// Every live message is kept: the previous summary, if any, stays as it is and no entry
    /// is written.
    NothingToSummarize(CompactionPlan),
    /// The summary and the kept messages would hold at least as many tokens as the context
    /// held before (a small context summarized on request, say): applying the entry would not
    /// shrink the context, so none is returned and the session stays as it is. The plan's
    /// `tokens_after` is what the entry would have left.
    WouldNotShrink(CompactionPlan),
}

/// Plans a compaction of `session` for a summarizer with a `summarizer_window`-token context.
pub fn plan_compaction<'s>(
    session: &'s Session,
    options: &CompactionOptions,
    summarizer_window: u64,
    dialect: Dialect,
    counter: &dyn TokenCounter,
) -> Result<PlannedCompaction<'s>> {
    if !options.settings.enabled {
        return Err(CompactionError::Disabled);
    }
    let mut stats = CleanStats::default();
    let tokens_before = options
        .provider_tokens
        .unwrap_or(0)
        .max(session.context_tokens(counter));
    let live = session.live();
    let previous_summary = live.previous.map(|previous| {
        let stripped = strip_files_blocks(&previous.summary);
        redact(&stripped, &mut stats)
    });
    let carried = previous_summary
        .as_deref()
        .map_or(0, |summary| count(counter, summary));
    let budgets = Budgets::new(summarizer_window, &options.settings, carried);
    let focus = options
        .focus
        .as_deref()
        .map(|focus| redact(focus, &mut stats))
        .filter(|focus| !focus.trim().is_empty());
    let additional_context: Vec<String> = options
        .additional_context
        .iter()
        .map(|item| redact(item, &mut stats))
        .filter(|item| !item.trim().is_empty())
        .collect();
    let context_limit = options
        .window_tokens
        .saturating_sub(options.settings.reserve_for(options.window_tokens));
    let max_kept = context_limit.saturating_sub(summary_allowance(&budgets, context_limit));
    let prep = prepare(live, options.settings.keep_recent_tokens, max_kept, counter);
    let mut plan = CompactionPlan {
        tokens_before,
        ..CompactionPlan::default()
    };
    let (mut history_windows, mut prefix_windows) = (Vec::new(), Vec::new());
    if let Some(prep) = &prep {
        plan.messages_total = prep.live.len() as u64;
        plan.messages_summarized = prep.summarized() as u64;
        plan.messages_kept = plan.messages_total - plan.messages_summarized;
        plan.first_kept_entry_id = prep.live.get(prep.first_kept).map(|e| e.id.clone());
        plan.split_turn = prep.split_turn;
        if !prep.is_empty() {
            let history = clean_messages(&prep.messages(&prep.history), dialect, &mut stats);
            history_windows = plan_windows(history, budgets.input, counter);
            let prefix = clean_messages(&turn_prefix_messages(prep), dialect, &mut stats);
            prefix_windows = plan_windows(prefix, budgets.input, counter);
        }
    }
    plan.windows = (history_windows.len() + prefix_windows.len()) as u64;
    plan.dropped_useless = stats.dropped_useless;
    plan.truncated_tool_results = stats.truncated_tool_results;
    plan.redactions = stats.redactions;
    Ok(PlannedCompaction {
        plan,
        budgets,
        context_limit,
        prep,
        previous_summary,
        history_windows,
        prefix_windows,
        focus,
        additional_context,
        dialect,
        stats,
    })
}

/// What comes between the history summary and the turn context, exactly as written.
const TURN_CONTEXT_SEPARATOR: &str = "\n\n---\n\n";

/// True when this compaction's turn prefix continues the turn the previous compaction split:
/// it starts at the request that compaction pinned.
fn continues_split_turn(prep: &Preparation<'_>) -> bool {
    let Some(pinned) = prep.previous.and_then(|p| p.pinned_entry_id.as_deref()) else {
        return false;
    };
    prep.turn_prefix
        .first()
        .and_then(|&i| prep.live.get(i))
        .is_some_and(|entry| entry.id == pinned)
}

/// A summary as written by [`compact`], split into its history part and its turn context
/// (recognised only in the exact form written: the separator, the header, a blank line).
fn split_turn_context(summary: &str) -> (Option<&str>, Option<&str>) {
    let header = format!("{TURN_CONTEXT}\n\n");
    if let Some(turn) = summary.strip_prefix(header.as_str()) {
        return (None, Some(turn));
    }
    let marker = format!("{TURN_CONTEXT_SEPARATOR}{header}");
    match summary.rfind(marker.as_str()) {
        Some(at) => (
            summary.get(..at).filter(|h| !h.trim().is_empty()),
            summary.get(at + marker.len()..),
        ),
        None => (Some(summary), None),
    }
}

/// Tokens set aside for the summary when choosing what to keep: the summary and turn-prefix
/// caps and room for the files block and separators, but never more than half the limit, so a
/// small window still keeps recent messages (a summary that overruns its share is cut).
fn summary_allowance(budgets: &Budgets, context_limit: u64) -> u64 {
    budgets
        .output
        .saturating_add(budgets.turn_prefix)
        .saturating_add(FILES_BLOCK_ALLOWANCE_TOKENS)
        .min(context_limit / 2)
}

/// Room set aside for the files block (at most [`super::FILE_LIST_LIMIT`] paths per list) and
/// the separators between summary parts.
const FILES_BLOCK_ALLOWANCE_TOKENS: u64 = 1_024;

/// The turn prefix as sent: its messages, the pinned request (kept verbatim anyway) cut like a
/// tool result so it gives context without being sent whole.
fn turn_prefix_messages(prep: &Preparation<'_>) -> Vec<ConversationMessage> {
    prep.turn_prefix
        .iter()
        .filter_map(|&i| {
            let message = &prep.live.get(i)?.message;
            Some(match message {
                ConversationMessage::User { text } if Some(i) == prep.pinned => {
                    ConversationMessage::User {
                        text: truncate_tool_result(text, TOOL_RESULT_MAX_CHARS).into_owned(),
                    }
                }
                other => other.clone(),
            })
        })
        .collect()
}

/// Compacts `session` with `model`: plans, summarizes, and returns the entry to append. The
/// session itself is not changed; append [`Compaction::entry`] to keep the result.
pub async fn compact(
    session: &Session,
    model: &dyn ModelClient,
    options: &CompactionOptions,
    counter: &dyn TokenCounter,
) -> Result<CompactionOutcome> {
    let window = model.context_window().unwrap_or(options.window_tokens);
    let dialect = options
        .dialect
        .unwrap_or_else(|| Dialect::for_model(&model.name()));
    let planned = plan_compaction(session, options, window, dialect, counter)?;
    let Some(prep) = planned.prep.as_ref().filter(|prep| !prep.is_empty()) else {
        return Ok(CompactionOutcome::NothingToSummarize(planned.plan));
    };
    let mut run = Run {
        model,
        counter,
        budgets: planned.budgets,
        focus: planned.focus.clone(),
        additional_context: planned.additional_context.clone(),
        stats: planned.stats,
        windows_sent: 0,
    };

    // When the previous compaction split the same turn, its turn context is the start of this
    // turn prefix: it is folded into the new one, so one turn has one turn context however
    // often it is compacted. Otherwise the whole previous summary is the history so far.
    let (previous_history, previous_prefix) = match planned.previous_summary.as_deref() {
        Some(previous) if continues_split_turn(prep) => {
            let (history, turn) = split_turn_context(previous);
            (history.map(str::to_owned), turn.map(str::to_owned))
        }
        other => (other.map(str::to_owned), None),
    };
    // The history, folded into the running summary; nothing new reuses the previous summary.
    let history_summary = if planned.history_windows.is_empty() {
        previous_history
    } else {
        run.fold(
            Stage::History,
            planned.history_windows.clone(),
            previous_history,
        )
        .await?
    };
    let prefix_summary = if planned.prefix_windows.is_empty() {
        previous_prefix
    } else {
        run.fold(
            Stage::TurnPrefix,
            planned.prefix_windows.clone(),
            previous_prefix,
        )
        .await?
    };
    let body = match (history_summary, prefix_summary) {
        (Some(history), Some(prefix)) => {
            format!("{history}{TURN_CONTEXT_SEPARATOR}{TURN_CONTEXT}\n\n{prefix}")
        }
        (None, Some(prefix)) => format!("{TURN_CONTEXT}\n\n{prefix}"),
        (Some(history), None) => history,
        (None, None) => return Err(CompactionError::EmptySummary { stage: "summary" }),
    };

    let mut ops = FileOps::default();
    scan_messages(&mut ops, &prep.messages(&prep.history));
    scan_messages(&mut ops, &prep.messages(&prep.turn_prefix));
    let details = merge_details(&ops, prep.previous.map(|p| &p.details));
    let block = files_block(&details);
    let summary = if block.is_empty() {
        body.clone()
    } else {
        format!("{body}\n\n{block}")
    };

    let kept: Vec<usize> = prep.kept().collect();
    let recent = clean_messages(&prep.messages(&kept), planned.dialect, &mut run.stats);
    let short_summary = run.short_summary(recent, &body).await?;

    // The kept messages fit the limit with room for the summary's caps; a summary that still
    // overruns (a long carried summary, long file paths) loses its middle, never the limit.
    let kept_tokens = prep.kept_tokens();
    let room = planned.context_limit.saturating_sub(kept_tokens);
    let summary = if count(counter, &summary) > room {
        let budget = usize::try_from(room).unwrap_or(usize::MAX);
        truncate_middle(&summary, TruncationPolicy::Tokens(budget), counter).into_owned()
    } else {
        summary
    };
    if summary.trim().is_empty() {
        return Err(CompactionError::EmptySummary { stage: "summary" });
    }
    let tokens_after = count(counter, &summary) + kept_tokens;
    let mut plan = planned.plan.clone();
    plan.tokens_after = Some(tokens_after);
    plan.windows = run.windows_sent as u64;
    plan.dropped_useless = run.stats.dropped_useless;
    plan.truncated_tool_results = run.stats.truncated_tool_results;
    plan.redactions = run.stats.redactions;
    // A compaction exists to make room: one that leaves the context as large or larger is
    // refused here, so no host has to know to check.
    if tokens_after >= plan.tokens_before {
        return Ok(CompactionOutcome::WouldNotShrink(plan));
    }
    let entry = CompactionEntry {
        id: options
            .entry_id
            .clone()
            .unwrap_or_else(|| session.fresh_id("c")),
        summary,
        short_summary: Some(short_summary),
        first_kept_entry_id: plan.first_kept_entry_id.clone(),
        pinned_entry_id: prep
            .pinned
            .and_then(|i| prep.live.get(i))
            .map(|entry| entry.id.clone()),
        tokens_before: plan.tokens_before,
        tokens_after,
        messages_summarized: plan.messages_summarized,
        engine: model.name(),
        details,
    };
    Ok(CompactionOutcome::Compacted(Box::new(Compaction {
        entry,
        plan,
    })))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    History,
    TurnPrefix,
    Short,
}

impl Stage {
    fn name(self) -> &'static str {
        match self {
            Stage::History => "summary",
            Stage::TurnPrefix => "turn prefix",
            Stage::Short => "short summary",
        }
    }
}

struct Run<'a> {
    model: &'a dyn ModelClient,
    counter: &'a dyn TokenCounter,
    budgets: Budgets,
    focus: Option<String>,
    additional_context: Vec<String>,
    stats: CleanStats,
    /// History and turn-prefix windows sent (the short summary is not counted).
    windows_sent: usize,
}

impl Run<'_> {
    /// Folds `windows` into a running summary that starts as `carried`.
    async fn fold(
        &mut self,
        stage: Stage,
        windows: Vec<Window>,
        mut carried: Option<String>,
    ) -> Result<Option<String>> {
        let cap = match stage {
            Stage::TurnPrefix => self.budgets.turn_prefix,
            Stage::History | Stage::Short => self.budgets.output,
        };
        let mut pending: VecDeque<Window> = windows.into();
        let mut number = 0;
        while let Some(window) = pending.pop_front() {
            number += 1;
            let (format, task) = match (stage, &carried) {
                (Stage::TurnPrefix, _) => (SummaryFormat::TurnPrefix, TaskKind::TurnPrefixSummary),
                (_, Some(_)) => (SummaryFormat::Update, TaskKind::CompactionUpdate),
                (_, None) => (SummaryFormat::Initial, TaskKind::CompactionSummary),
            };
            self.windows_sent += 1;
            let answer = self
                .call(format, task, &window, carried.as_deref(), cap)
                .await;
            match answer {
                Ok(text) => {
                    let text = self.clean_output(stage, &text, cap)?;
                    let text = match (&carried, format) {
                        (Some(previous), SummaryFormat::Update) => {
                            keep_done_items(previous, &text, cap, self.counter).0
                        }
                        _ => text,
                    };
                    carried = Some(text);
                }
                Err(ModelError::ContextOverflow { .. }) => {
                    let sent = window.tokens;
                    let halved = window.budget.min(sent) / 2;
                    if halved < self.budgets.floor {
                        return Err(CompactionError::BelowFloor {
                            stage: stage.name(),
                            window: number,
                            sent,
                            floor: self.budgets.floor,
                        });
                    }
                    number -= 1;
                    let smaller = plan_windows(window.messages, halved, self.counter);
                    for window in smaller.into_iter().rev() {
                        pending.push_front(window);
                    }
                }
                Err(source) => {
                    return Err(CompactionError::Model {
                        stage: stage.name(),
                        window: number,
                        windows: number + pending.len(),
                        source,
                    });
                }
            }
        }
        Ok(carried)
    }

    /// Sends one window.
    async fn call(
        &mut self,
        format: SummaryFormat,
        task: TaskKind,
        window: &Window,
        previous: Option<&str>,
        cap: u64,
    ) -> std::result::Result<String, ModelError> {
        let request = self
            .request(format, task, window, previous, cap)
            .map_err(|e| ModelError::InvalidRequest {
                message: e.to_string(),
            })?;
        Ok(self.model.complete(request).await?.text)
    }

    fn request(
        &self,
        format: SummaryFormat,
        task: TaskKind,
        window: &Window,
        previous: Option<&str>,
        cap: u64,
    ) -> Result<ModelRequest> {
        let max_output_tokens = u32::try_from(cap).unwrap_or(u32::MAX);
        let input = summary_request(&SummaryRequestContext {
            format,
            conversation: UntrustedText::new(window.text.as_str()),
            previous_summary: previous.map(UntrustedText::new),
            additional_context: self
                .additional_context
                .iter()
                .map(|item| UntrustedText::new(item.as_str()))
                .collect(),
            focus: self.focus.as_deref().map(UntrustedText::new),
        })?;
        let structured = SummaryInput {
            messages: window.messages.clone(),
            previous_summary: previous.map(str::to_owned),
            focus: self.focus.clone(),
            additional_context: self.additional_context.clone(),
            max_output_tokens,
        };
        Ok(ModelRequest {
            task,
            instructions: system()?,
            input,
            structured_input: serde_json::to_value(&structured).map_err(CompactionError::Encode)?,
            output_schema: None,
            reasoning_effort: None,
            max_output_tokens: Some(max_output_tokens),
        })
    }

    /// A model's answer as stored: secrets redacted, boundary tags neutralized, any files
    /// block removed (the tracked block is appended by code), trimmed, and within `cap`.
    fn clean_output(&mut self, stage: Stage, text: &str, cap: u64) -> Result<String> {
        let redacted = redact(text, &mut self.stats);
        let escaped = escape_boundary_tags(
            &redacted,
            &[
                boundary_tags::CONVERSATION,
                boundary_tags::PREVIOUS_SUMMARY,
                boundary_tags::ADDITIONAL_CONTEXT,
            ],
        );
        let stripped = strip_files_blocks(&escaped);
        let trimmed = stripped.trim();
        if trimmed.is_empty() {
            return Err(CompactionError::EmptySummary {
                stage: stage.name(),
            });
        }
        let budget = usize::try_from(cap).unwrap_or(usize::MAX);
        Ok(truncate_middle(trimmed, TruncationPolicy::Tokens(budget), self.counter).into_owned())
    }

    /// The short summary of the kept messages (as many of the newest as fit the input budget),
    /// with the new summary as context.
    async fn short_summary(
        &mut self,
        recent: Vec<ConversationMessage>,
        summary: &str,
    ) -> Result<String> {
        let mut budget = self.budgets.input;
        loop {
            let window = newest_within(&recent, budget, self.counter);
            let answer = self
                .call(
                    SummaryFormat::Short,
                    TaskKind::ShortSummary,
                    &window,
                    Some(summary),
                    self.budgets.short_summary,
                )
                .await;
            match answer {
                Ok(text) => {
                    return self.clean_output(Stage::Short, &text, self.budgets.short_summary);
                }
                Err(ModelError::ContextOverflow { .. }) => {
                    let halved = budget.min(window.tokens) / 2;
                    if halved < self.budgets.floor {
                        return Err(CompactionError::BelowFloor {
                            stage: Stage::Short.name(),
                            window: 1,
                            sent: window.tokens,
                            floor: self.budgets.floor,
                        });
                    }
                    budget = halved;
                }
                Err(source) => {
                    return Err(CompactionError::Model {
                        stage: Stage::Short.name(),
                        window: 1,
                        windows: 1,
                        source,
                    });
                }
            }
        }
    }
}

/// One window of the newest messages that fit `budget` (the newest alone, cut, when even it
/// does not).
fn newest_within(
    messages: &[ConversationMessage],
    budget: u64,
    counter: &dyn TokenCounter,
) -> Window {
    let separator = count(counter, "\n\n");
    let mut used = 0u64;
    let mut start = messages.len();
    for (index, message) in messages.iter().enumerate().rev() {
        let tokens = count(counter, &serialize_message(message));
        let joined = if used == 0 {
            tokens
        } else {
            used + separator + tokens
        };
        if joined > budget {
            break;
        }
        used = joined;
        start = index;
    }
    let mut chosen: Vec<ConversationMessage> = messages.get(start..).unwrap_or_default().to_vec();
    if chosen.is_empty()
        && let Some(newest) = messages.last()
    {
        chosen.push(fit_message(newest, budget, counter).0);
    }
    plan_windows(chosen, budget, counter)
        .into_iter()
        .next()
        .unwrap_or(Window {
            messages: Vec::new(),
            text: String::new(),
            tokens: 0,
            budget,
            clamped: false,
        })
}

fn count(counter: &dyn TokenCounter, text: &str) -> u64 {
    u64::try_from(counter.count(text)).unwrap_or(u64::MAX)
}
