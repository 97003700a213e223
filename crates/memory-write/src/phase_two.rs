//! Phase 2: consolidate the selected stage-one outputs, and the notes agents added, into the
//! memory root. (What a session is shown of memory is `memory-introspect`'s.)
//!
//! One pass: claim the global lease -> prune stale outputs -> select -> compare with the
//! baseline of the last success (added, changed, removed threads) -> sync `raw_memories.md`
//! and `rollout_summaries/` -> read `notes/` -> hash the inputs (an unchanged hash since the last success skips
//! the model) -> render the prompts (the current files, the changes, and the material of added
//! and changed threads only, each within its share of the model's window) -> one
//! [`ModelClient`] call with a strict output schema, heartbeating the lease meanwhile ->
//! redact -> guard `MEMORY.md` against silent loss (what only removed threads supported may
//! go) -> fit the summary to its budget -> write both files atomically -> record success and
//! the new baseline. Any error after the claim records a failure (with backoff) and is
//! returned.

use crate::blocking::blocking;
use std::time::Duration;

use std::collections::{BTreeMap, BTreeSet};

use memory_protocol::consolidation::{
    ConsolidationInput, ConsolidationNote, ConsolidationOutput, SelectionChanges,
};
use memory_protocol::names::memory_root as names;
use memory_protocol::stage_one::StageOneOutputRecord;
use memory_protocol::{ModelClient, ModelError, ModelRequest};
use memory_sanitize::{
    TokenCounter, TruncationPolicy, display_safe, o200k, redact_json_strings, redact_secrets,
};
use sha2::{Digest, Sha256};

use crate::config::MemoriesConfig;
use crate::consolidation_guard::{forgettable_anchors, guard_consolidation};
use crate::consolidation_prompt::{consolidation_request, prompt_budget};
use crate::error::{Error, Result};
use crate::memory_root::{MemoryRoot, raw_memory_block, render_rollout_summary, with_version_line};
use crate::shared_root;
use crate::stage_one_request::MIN_ROLLOUT_TOKEN_BUDGET;
use crate::store::{
    ActivityWindow, BaselineEntry, Heartbeat, PhaseTwoClaim, PhaseTwoClaimParams, PhaseTwoFailure,
    PhaseTwoLease, PhaseTwoState, PhaseTwoSuccess, WriteStore, now_unix,
};

/// Token budget of `memory_summary.md`, and the default cap of the read path.
pub const DEFAULT_SUMMARY_TOKEN_BUDGET: u64 = 2_500;
/// Quiet time after a successful pass.
pub const DEFAULT_COOLDOWN_SECONDS: i64 = 6 * 3600;
/// Lease length; a running pass extends it every heartbeat.
pub const DEFAULT_LEASE_SECONDS: i64 = 600;
/// Time between heartbeats while the model runs.
pub const DEFAULT_HEARTBEAT_INTERVAL: Duration = Duration::from_secs(60);
/// Wait before retrying after a failed pass (doubled per further failure).
pub const DEFAULT_FAILURE_BACKOFF_SECONDS: i64 = 3600;
/// Most stale stage-one outputs pruned per pass.
pub const DEFAULT_PRUNE_LIMIT: usize = 200;
/// Most passes one holder runs before releasing the lease, when new stage-one outputs keep
/// arriving while it consolidates; input still newer after the last is left pending.
pub const MAX_PASSES_PER_LEASE: usize = 4;
/// How often a run waiting for another consolidator looks at the lease again.
const WAIT_POLL_INTERVAL: Duration = Duration::from_millis(100);
/// Bumped when the hashed layout changes, so old hashes never match.
const HASH_VERSION: &str = "agent-memory phase2 input v2";

/// Settings of a phase-2 pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseTwoOptions {
    /// Most stage-one outputs consolidated.
    pub max_selected: usize,
    /// Memories idle longer than this many days are neither selected nor kept.
    pub max_unused_days: i64,
    /// Quiet time after a success.
    pub cooldown_seconds: i64,
    /// Lease length.
    pub lease_seconds: i64,
    /// Time between heartbeats while the model runs.
    pub heartbeat_interval: Duration,
    /// Wait before retrying after a failure.
    pub failure_backoff_seconds: i64,
    /// Most stale outputs pruned per pass.
    pub prune_limit: usize,
    /// Token budget of `memory_summary.md`.
    pub summary_token_budget: u64,
    /// Ignore the cooldown and backoff when there is new input (`agent-memory run`).
    pub force: bool,
    /// Run a pass now whatever the cooldown or backoff, new input or not (`consolidate
    /// --now`); a live lease held by another process is still respected.
    pub now: bool,
    /// How long to wait for another process's pass when it holds the lease; zero returns at
    /// once with [`PhaseTwoReport::pending`] set.
    pub wait_for_holder: Duration,
}

impl Default for PhaseTwoOptions {
    fn default() -> Self {
        PhaseTwoOptions {
            max_selected: 256,
            max_unused_days: 30,
            cooldown_seconds: DEFAULT_COOLDOWN_SECONDS,
            lease_seconds: DEFAULT_LEASE_SECONDS,
            heartbeat_interval: DEFAULT_HEARTBEAT_INTERVAL,
            failure_backoff_seconds: DEFAULT_FAILURE_BACKOFF_SECONDS,
            prune_limit: DEFAULT_PRUNE_LIMIT,
            summary_token_budget: DEFAULT_SUMMARY_TOKEN_BUDGET,
            force: false,
            now: false,
            wait_for_holder: Duration::ZERO,
        }
    }
}

impl PhaseTwoOptions {
    /// Defaults with the selection size, the unused-days window and the cooldown from the
    /// config.
    pub fn from_config(config: &MemoriesConfig) -> Self {
        PhaseTwoOptions {
            max_selected: usize::try_from(config.max_raw_memories_for_consolidation).unwrap_or(256),
            max_unused_days: config.max_unused_days,
            cooldown_seconds: config.consolidation_cooldown_hours.saturating_mul(3600),
            ..PhaseTwoOptions::default()
        }
    }
}

/// What a phase-2 pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhaseTwoReport {
    /// True when this process held the lease and finished a pass.
    pub ran: bool,
    /// Stage-one outputs selected.
    pub selected: usize,
    /// Memory-root files created, rewritten or removed.
    pub files_written: usize,
    /// Model calls made (0 when the inputs were unchanged).
    pub model_calls: usize,
    /// Why the pass did not run, when it did not.
    pub skipped: Option<String>,
    /// True when the inputs matched the last success and the model was not called.
    pub unchanged: bool,
    /// Stale stage-one outputs deleted.
    pub pruned: usize,
    /// Old `MEMORY.md` anchors the model dropped; non-empty means the rewrite was rejected
    /// and the new material was appended instead.
    pub guard_missing: Vec<String>,
    /// Passes run under one lease: more than one when new stage-one outputs arrived during a
    /// pass (see [`MAX_PASSES_PER_LEASE`]).
    pub passes: usize,
    /// True when stage-one outputs remain that no finished pass consolidated: another process
    /// still held the lease when this one stopped waiting, or new outputs kept arriving.
    pub pending: bool,
    /// Missing or damaged memory-root files found before the pass, which made it run whatever
    /// the cooldown.
    pub repaired: Vec<String>,
    /// On a store shared by several machines: the revision of the shared memory root
    /// materialized into this machine's root (published by another machine's pass), if one was.
    pub materialized_revision: Option<i64>,
    /// Old `MEMORY.md` anchors dropped because only removed threads supported them.
    pub forgotten: usize,
    /// How the selection changed since the last successful pass.
    pub changes: SelectionChanges,
}

/// True when a note in the memory root was written at or after the last successful pass
/// (the same second counts: a pass that finds nothing new makes no model call).
async fn notes_since_last_success(store: &dyn WriteStore, root: &MemoryRoot) -> Result<bool> {
    let Some(last_success) = store.phase_two_state().await?.last_success_at else {
        return Ok(false);
    };
    let root = root.clone();
    let newest = blocking(move || root.newest_note_mtime()).await?;
    Ok(newest.is_some_and(|at| at >= last_success))
}

/// Runs one phase-2 pass (see the module docs).
pub async fn run_phase_two(
    store: &dyn WriteStore,
    root: &MemoryRoot,
    model: &dyn ModelClient,
    options: &PhaseTwoOptions,
) -> Result<PhaseTwoReport> {
    // A user's hand edit of the memory files becomes a note first, before anything (a
    // shared revision, this pass) writes over the edited file.
    let edit_root = root.clone();
    let folded = blocking(move || edit_root.fold_hand_edits(now_unix())).await?;
    if !folded.is_empty() {
        tracing::info!(notes = ?folded, "hand edits of the memory files kept as notes");
    }
    // On a shared store this machine's root first catches up with the newest published one,
    // so a machine that never consolidated does not take its empty root for damage.
    let materialized = shared_root::sync_shared_root(store, root).await?.revision;
    // Missing or damaged files are rebuilt now, not after the cooldown: they count as new input.
    let repaired = damage(store, root).await?;
    // A note written since the last successful pass is new input too.
    let new_notes = notes_since_last_success(store, root).await?;
    // Asking for a pass now counts as new input, which a forced claim lets past the cooldown.
    if !repaired.is_empty() || options.now || new_notes {
        store.enqueue_phase_two(now_unix()).await?;
    }
    let force = options.force || options.now || !repaired.is_empty() || new_notes;
    let deadline = tokio::time::Instant::now() + options.wait_for_holder;
    let mut waited = false;
    let mut lease = loop {
        let params = PhaseTwoClaimParams {
            now: now_unix(),
            lease_seconds: options.lease_seconds,
            cooldown_seconds: options.cooldown_seconds,
            force,
        };
        match store.claim_phase_two(params).await? {
            PhaseTwoClaim::Claimed(lease) => break lease,
            PhaseTwoClaim::SkippedRunning { .. } if tokio::time::Instant::now() < deadline => {
                waited = true;
                tokio::time::sleep(WAIT_POLL_INTERVAL.min(options.wait_for_holder)).await;
            }
            skipped => {
                let state = store.phase_two_state().await?;
                let pending = matches!(skipped, PhaseTwoClaim::SkippedRunning { .. })
                    || unconsolidated(&state);
                let reason = match skipped.skip_reason() {
                    Some(_) if waited && !pending => {
                        "another process consolidated everything while this one waited".to_owned()
                    }
                    Some(reason) => reason,
                    None => String::new(),
                };
                // Another machine may have published while this one waited.
                let materialized_revision = shared_root::sync_shared_root(store, root)
                    .await?
                    .revision
                    .or(materialized);
                return Ok(PhaseTwoReport {
                    skipped: Some(reason),
                    pending,
                    repaired,
                    materialized_revision,
                    ..PhaseTwoReport::default()
                });
            }
        }
    };
    let mut report = PhaseTwoReport {
        repaired,
        materialized_revision: materialized,
        ..PhaseTwoReport::default()
    };
    let outcome = loop {
        let may_repeat = report.passes + 1 < MAX_PASSES_PER_LEASE;
        match consolidate(store, root, model, options, &lease, may_repeat, &mut report).await {
            // New stage-one outputs arrived during the pass: run again under the same lease.
            Ok(Round::Again { watermark, hash }) => {
                lease.input_watermark = watermark;
                lease.last_input_hash = Some(hash);
            }
            Ok(Round::Done) => break Ok(()),
            Err(error) => break Err(error),
        }
    };
    match outcome {
        Ok(()) => {
            if report.skipped.is_none() {
                let state = store.phase_two_state().await?;
                report.pending = unconsolidated(&state);
            }
            Ok(report)
        }
        Err(Error::Model(model_error)) if model_error.is_fatal() => {
            // Credentials or configuration, not this pass: give the lease back without the
            // failure back-off, so the run after the fix consolidates at once.
            let _ = store.release_phase_two(&lease.owner_token).await;
            Err(Error::Model(model_error))
        }
        Err(error) => {
            let failure = PhaseTwoFailure {
                now: now_unix(),
                error: error.to_string(),
                backoff_seconds: options.failure_backoff_seconds,
            };
            // The pass's own error matters more than a failure to record it.
            let _ = store.fail_phase_two(&lease.owner_token, &failure).await;
            Err(error)
        }
    }
}

/// How a pass under a held lease ended.
enum Round {
    /// The lease is finished (completed or, with nothing to consolidate, released).
    Done,
    /// New stage-one outputs arrived during the pass (the input watermark moved to
    /// `watermark`); the lease is still held and the pass runs again. `hash` is what the pass
    /// wrote, so an unchanged selection skips the model.
    Again { watermark: i64, hash: String },
}

/// Missing or damaged memory-root files, when a pass succeeded before (before the first
/// success there is nothing to repair).
async fn damage(store: &dyn WriteStore, root: &MemoryRoot) -> Result<Vec<String>> {
    if store.phase_two_state().await?.last_success_at.is_none() {
        return Ok(Vec::new());
    }
    let selected: Vec<StageOneOutputRecord> = store
        .stage_one_outputs()
        .await?
        .into_iter()
        .filter(|record| record.selected)
        .collect();
    let root = root.clone();
    blocking(move || Ok(root.damage(&selected))).await
}

/// True when stage-one outputs changed after the last successful pass began.
fn unconsolidated(state: &PhaseTwoState) -> bool {
    state.input_watermark > state.last_success_watermark.unwrap_or(-1)
}

/// The input watermark now, when it moved past the lease's (new outputs arrived during the
/// pass) and another pass is allowed; extends the lease meanwhile.
async fn newer_input(
    store: &dyn WriteStore,
    lease: &PhaseTwoLease,
    options: &PhaseTwoOptions,
    may_repeat: bool,
) -> Result<Option<i64>> {
    if !may_repeat {
        return Ok(None);
    }
    if !store
        .heartbeat_phase_two(
            &lease.owner_token,
            Heartbeat::from_now(options.lease_seconds),
        )
        .await?
    {
        return Err(Error::LeaseLost);
    }
    let watermark = store.phase_two_state().await?.input_watermark;
    Ok(Some(watermark).filter(|watermark| *watermark > lease.input_watermark))
}

async fn consolidate(
    store: &dyn WriteStore,
    root: &MemoryRoot,
    model: &dyn ModelClient,
    options: &PhaseTwoOptions,
    lease: &PhaseTwoLease,
    may_repeat: bool,
    report: &mut PhaseTwoReport,
) -> Result<Round> {
    report.passes += 1;
    report.unchanged = false;
    let window = ActivityWindow {
        now: now_unix(),
        max_unused_days: options.max_unused_days,
    };
    report.pruned += store
        .prune_phase_two_outputs(window, options.prune_limit)
        .await?;
    let selected = store
        .select_phase_two_inputs(window, options.max_selected)
        .await?;
    report.selected = selected.len();

    let sync_root = root.clone();
    let sync_selected = selected.clone();
    let (sync, old_memory, old_summary, notes) = blocking(move || {
        let sync = sync_root.sync_inputs(&sync_selected)?;
        let old_memory = sync_root.read(names::MEMORY_FILE)?;
        let old_summary = sync_root.read(names::MEMORY_SUMMARY_FILE)?;
        let notes = sync_root.read_notes()?;
        Ok((sync, old_memory, old_summary, notes))
    })
    .await?;
    report.files_written += sync.files_written + sync.files_removed;
    let baseline = baseline_entries(&selected, &sync.stems);
    let previous = store.phase_two_baseline().await?;
    let changes = selection_changes(&previous, &baseline);
    report.changes = changes.clone();

    let budget = options.summary_token_budget;
    let model_name = model.name();
    let hash = input_hash(
        &model_name,
        budget,
        &selected,
        &notes,
        old_memory.as_deref(),
        old_summary.as_deref(),
    );
    if lease.last_input_hash.as_deref() == Some(hash.as_str())
        && changes.is_empty()
        && artifacts_valid(old_memory.as_deref(), old_summary.as_deref())
    {
        report.unchanged = true;
        return finish(
            store, root, lease, options, may_repeat, &hash, &baseline, report,
        )
        .await;
    }

    if selected.is_empty()
        && notes.is_empty()
        && old_memory
            .as_deref()
            .is_none_or(|text| text.trim().is_empty())
    {
        // Nothing was ever remembered, so a model has nothing to consolidate. The lease is
        // given back without recording a pass, so no cooldown delays the first real one;
        // unless outputs arrived meanwhile, which the next pass takes.
        if let Some(watermark) = newer_input(store, lease, options, may_repeat).await? {
            return Ok(Round::Again { watermark, hash });
        }
        if !store.release_phase_two(&lease.owner_token).await? {
            return Err(Error::LeaseLost);
        }
        report.skipped = Some("no memories to consolidate yet".to_owned());
        return Ok(Round::Done);
    }

    let old_memory = old_memory.unwrap_or_default();
    let summary_files: BTreeMap<String, String> = sync
        .stems
        .iter()
        .map(|(id, stem)| {
            (
                id.clone(),
                format!("{}/{stem}.md", names::ROLLOUT_SUMMARIES_DIR),
            )
        })
        .collect();
    let input = redacted_input(
        &old_memory,
        old_summary.as_deref().unwrap_or(""),
        &selected,
        changes,
        summary_files,
        &notes,
        budget,
    )?;
    // A model that answers that the prompt does not fit gets the new material cut to half,
    // down to a floor; the current files are always sent whole (the guard judges the rewrite
    // against all of them).
    let mut prompt_budget = prompt_budget(model.context_window());
    let response = loop {
        let request = consolidation_request(&input, prompt_budget)?;
        report.model_calls += 1;
        match complete_with_heartbeat(store, model, request, lease, options).await {
            Err(Error::Model(ModelError::ContextOverflow { message }))
                if prompt_budget / 2 >= MIN_ROLLOUT_TOKEN_BUDGET =>
            {
                tracing::debug!(budget = prompt_budget / 2, %message, "consolidation input too long; cutting");
                prompt_budget /= 2;
            }
            other => break other?,
        }
    };
    let mut output: ConsolidationOutput = serde_json::from_str(response.text.trim())
        .map_err(|error| Error::InvalidModelOutput(format!("consolidation: {error}")))?;
    output.memory_md = display_safe(&redact_secrets(&output.memory_md)).into_owned();
    output.memory_summary_md =
        display_safe(&redact_secrets(&output.memory_summary_md)).into_owned();

    // The guard compares against the redacted old text: a secret in a hand-edited MEMORY.md
    // is not an anchor to keep, and a rejected rewrite keeps the redacted text. What only the
    // removed threads (or the old versions of changed ones) supported may go.
    let material = unconsolidated_material(&input.memory_md, &input.selected);
    let forgettable = forgettable(&previous, &baseline);
    let verdict = guard_consolidation(&input.memory_md, &output, &material, &forgettable);
    report.guard_missing = verdict.missing;
    report.forgotten = verdict.forgotten.len();
    let memory_md = verdict.memory_md;
    let summary = fit_summary(&output.memory_summary_md, budget);

    let write_root = root.clone();
    let (memory_for_write, summary_for_write) = (memory_md.clone(), summary.clone());
    report.files_written += blocking(move || {
        let memory = write_root.write_memory(&memory_for_write)?;
        let summary = write_root.write_summary(&summary_for_write)?;
        Ok(usize::from(memory) + usize::from(summary))
    })
    .await?;
    let hash = input_hash(
        &model_name,
        budget,
        &selected,
        &notes,
        Some(&memory_md),
        Some(&summary),
    );
    finish(
        store, root, lease, options, may_repeat, &hash, &baseline, report,
    )
    .await
}

/// What this pass is given for each selected thread: its `raw_memories.md` block and its
/// rollout summary file, the material a later pass compares against.
fn baseline_entries(
    selected: &[StageOneOutputRecord],
    stems: &BTreeMap<String, String>,
) -> Vec<BaselineEntry> {
    selected
        .iter()
        .map(|record| {
            let stem = stems.get(&record.thread_id).map_or("", String::as_str);
            BaselineEntry {
                thread_id: record.thread_id.clone(),
                source_updated_at: record.source_updated_at,
                material: format!(
                    "{}\n{}/{stem}.md\n{}",
                    raw_memory_block(record, stem),
                    names::ROLLOUT_SUMMARIES_DIR,
                    render_rollout_summary(record)
                ),
            }
        })
        .collect()
}

/// How `current` differs from `previous` (the last success's baseline), by thread id.
pub fn selection_changes(
    previous: &[BaselineEntry],
    current: &[BaselineEntry],
) -> SelectionChanges {
    let before: BTreeMap<&str, &BaselineEntry> =
        previous.iter().map(|e| (e.thread_id.as_str(), e)).collect();
    let now: BTreeSet<&str> = current.iter().map(|e| e.thread_id.as_str()).collect();
    let mut changes = SelectionChanges::default();
    for entry in current {
        match before.get(entry.thread_id.as_str()) {
            None => changes.added.push(entry.thread_id.clone()),
            Some(old) if old.material != entry.material => {
                changes.changed.push(entry.thread_id.clone());
            }
            Some(_) => {}
        }
    }
    changes.removed = before
        .keys()
        .filter(|id| !now.contains(*id))
        .map(|id| (*id).to_owned())
        .collect();
    changes.added.sort();
    changes.changed.sort();
    changes
}

/// Anchors only the removed threads, or the replaced versions of changed ones, supported.
fn forgettable(previous: &[BaselineEntry], current: &[BaselineEntry]) -> BTreeSet<String> {
    let current_by_id: BTreeMap<&str, &str> = current
        .iter()
        .map(|e| (e.thread_id.as_str(), e.material.as_str()))
        .collect();
    let replaced: String = previous
        .iter()
        .filter(|old| current_by_id.get(old.thread_id.as_str()) != Some(&old.material.as_str()))
        .map(|old| old.material.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let kept: String = current
        .iter()
        .map(|e| e.material.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    forgettable_anchors(&replaced, &kept)
}

/// Completes the lease after a pass, or asks for another pass when new outputs arrived.
#[allow(clippy::too_many_arguments)]
async fn finish(
    store: &dyn WriteStore,
    root: &MemoryRoot,
    lease: &PhaseTwoLease,
    options: &PhaseTwoOptions,
    may_repeat: bool,
    hash: &str,
    baseline: &[BaselineEntry],
    report: &mut PhaseTwoReport,
) -> Result<Round> {
    if let Some(watermark) = newer_input(store, lease, options, may_repeat).await? {
        return Ok(Round::Again {
            watermark,
            hash: hash.to_owned(),
        });
    }
    // A shared store publishes the root this pass wrote with the completion, so other
    // machines materialize exactly what this lease produced.
    let snapshot = if store.is_shared() {
        let owned = root.clone();
        blocking(move || shared_root::snapshot(&owned)).await?
    } else {
        Vec::new()
    };
    let success = PhaseTwoSuccess {
        now: now_unix(),
        input_hash: hash,
        selected: baseline,
        root: &snapshot,
    };
    let owned = store.complete_phase_two(lease, &success).await?;
    if !owned {
        return Err(Error::LeaseLost);
    }
    if store.is_shared() {
        // Record the revision just published as this root's, so the next run does not take
        // it for another machine's.
        shared_root::sync_shared_root(store, root).await?;
    }
    report.ran = true;
    Ok(Round::Done)
}

/// The consolidation input with every string redacted: phase 1 stored redacted outputs, but
/// `MEMORY.md` may have been edited by hand since.
fn redacted_input(
    memory_md: &str,
    memory_summary_md: &str,
    selected: &[StageOneOutputRecord],
    changes: SelectionChanges,
    rollout_summary_files: BTreeMap<String, String>,
    notes: &[ConsolidationNote],
    summary_token_budget: u64,
) -> Result<ConsolidationInput> {
    let input = ConsolidationInput {
        memory_md: memory_md.to_owned(),
        memory_summary_md: memory_summary_md.to_owned(),
        selected: selected.to_vec(),
        changes,
        rollout_summary_files,
        summary_token_budget,
        notes: notes.to_vec(),
    };
    let mut value = serde_json::to_value(&input).map_err(Error::Serialize)?;
    redact_json_strings(&mut value);
    serde_json::from_value(value).map_err(Error::Serialize)
}

/// Calls the model, extending the lease every heartbeat interval while it runs. Losing the
/// lease abandons the call.
async fn complete_with_heartbeat(
    store: &dyn WriteStore,
    model: &dyn ModelClient,
    request: ModelRequest,
    lease: &PhaseTwoLease,
    options: &PhaseTwoOptions,
) -> Result<memory_protocol::ModelResponse> {
    let call = model.complete(request);
    tokio::pin!(call);
    let mut ticker =
        tokio::time::interval(options.heartbeat_interval.max(Duration::from_millis(10)));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await; // The first tick is immediate; the claim just set the lease.
    loop {
        tokio::select! {
            response = &mut call => return response.map_err(Error::Model),
            _ = ticker.tick() => {
                let beat = Heartbeat::from_now(options.lease_seconds);
                let alive = store.heartbeat_phase_two(&lease.owner_token, beat).await?;
                if !alive {
                    return Err(Error::LeaseLost);
                }
            }
        }
    }
}

/// Raw memories the old `MEMORY.md` holds neither by thread id nor verbatim: what a rejected
/// rewrite appends. Each block names its thread, so a later rejection does not append it again.
fn unconsolidated_material(old_memory: &str, selected: &[StageOneOutputRecord]) -> String {
    selected
        .iter()
        .filter(|record| {
            let raw = record.raw_memory.trim();
            !raw.is_empty()
                && !old_memory.contains(record.thread_id.as_str())
                && !old_memory.contains(raw)
        })
        .map(|record| {
            format!(
                "### Thread `{}` ({})\n\n{}\n\n",
                record.thread_id,
                record.cwd.as_deref().unwrap_or("unknown cwd"),
                record.raw_memory.trim()
            )
        })
        .collect()
}

/// `memory_summary.md` with its version line, its body cut in the middle when the whole would
/// exceed `budget` tokens.
pub fn fit_summary(text: &str, budget: u64) -> String {
    let versioned = with_version_line(text);
    let counter = o200k();
    let budget = usize::try_from(budget).unwrap_or(usize::MAX);
    if counter.count(&versioned) <= budget {
        return versioned;
    }
    let version_line = format!("{}\n", names::MEMORY_SUMMARY_VERSION);
    let body = versioned.strip_prefix(&version_line).unwrap_or(&versioned);
    let body_budget = budget.saturating_sub(counter.count(&version_line));
    let body =
        memory_sanitize::truncate_middle(body, TruncationPolicy::Tokens(body_budget), counter);
    format!("{version_line}{}\n", body.trim_end())
}

fn artifacts_valid(memory: Option<&str>, summary: Option<&str>) -> bool {
    memory.is_some()
        && summary.is_some_and(|text| text.lines().next() == Some(names::MEMORY_SUMMARY_VERSION))
}

/// Hash of everything a pass's result depends on: the model, the budget, the selected outputs'
/// content, the notes and the two memory files (`None`, a missing file, differs from empty).
fn input_hash(
    model: &str,
    budget: u64,
    selected: &[StageOneOutputRecord],
    notes: &[ConsolidationNote],
    memory: Option<&str>,
    summary: Option<&str>,
) -> String {
    let mut hasher = Sha256::new();
    let mut field = |bytes: &[u8]| {
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    field(HASH_VERSION.as_bytes());
    field(model.as_bytes());
    field(&budget.to_le_bytes());
    for record in selected {
        field(record.thread_id.as_bytes());
        field(&record.source_updated_at.to_le_bytes());
        field(record.cwd.as_deref().unwrap_or("\0none").as_bytes());
        field(record.rollout_path.as_bytes());
        field(record.git_branch.as_deref().unwrap_or("\0none").as_bytes());
        field(
            record
                .rollout_slug
                .as_deref()
                .unwrap_or("\0none")
                .as_bytes(),
        );
        field(record.raw_memory.as_bytes());
        field(record.rollout_summary.as_bytes());
    }
    field(&(notes.len() as u64).to_le_bytes());
    for note in notes {
        field(note.path.as_bytes());
        field(note.text.as_bytes());
    }
    for file in [memory, summary] {
        match file {
            Some(text) => {
                field(b"present");
                field(text.as_bytes());
            }
            None => field(b"missing"),
        }
    }
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Records that the memories of `thread_ids` were used now (usage count and last use), which
/// ranks them higher in the next selection. Returns how many stored memories were updated.
pub async fn record_memory_usage(store: &dyn WriteStore, thread_ids: Vec<String>) -> Result<usize> {
    store.record_memory_usage(&thread_ids, now_unix()).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn fitted_summary_has_version_line_and_fits(text in any::<String>(), budget in 1u64..200) {
            let fitted = fit_summary(&text, budget);
            prop_assert!(fitted.starts_with("v1\n"));
            // The version line alone may exceed a budget of one token; the body never adds to it.
            let floor = o200k().count("v1\n") as u64;
            prop_assert!(o200k().count(&fitted) as u64 <= budget.max(floor) + 1);
        }
    }

    #[test]
    fn hash_depends_on_content_not_usage() {
        let record = StageOneOutputRecord {
            thread_id: "t".into(),
            cwd: None,
            rollout_path: "p".into(),
            git_branch: None,
            raw_memory: "m".into(),
            rollout_summary: "s".into(),
            rollout_slug: None,
            source_updated_at: 1,
            generated_at: 2,
            usage_count: 0,
            last_used_at: None,
            selected: false,
        };
        let hash = |records: &[StageOneOutputRecord], notes: &[ConsolidationNote], memory| {
            input_hash("offline", 10, records, notes, memory, None)
        };
        let base = hash(std::slice::from_ref(&record), &[], None);
        let used = StageOneOutputRecord {
            usage_count: 5,
            ..record.clone()
        };
        assert_eq!(base, hash(&[used], &[], None));
        let edited = StageOneOutputRecord {
            raw_memory: "m2".into(),
            ..record.clone()
        };
        assert_ne!(base, hash(&[edited], &[], None));
        assert_ne!(base, hash(std::slice::from_ref(&record), &[], Some("")));
        let note = ConsolidationNote {
            path: "notes/a.md".into(),
            text: "use tabs".into(),
        };
        assert_ne!(base, hash(std::slice::from_ref(&record), &[note], None));
        assert_ne!(base, input_hash("other", 10, &[record], &[], None, None));
    }
}
