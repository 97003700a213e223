//! Phase 2: consolidate the selected stage-one outputs, and the notes agents added, into the
//! memory root. (What a session is shown of memory is `memory-introspect`'s.)
//!
//! One pass: claim the global lease -> prune stale outputs -> select -> sync `raw_memories.md`
//! and `rollout_summaries/` -> read `notes/` -> hash the inputs (an unchanged hash since the last success skips
//! the model) -> render the prompts -> one [`ModelClient`] call with a strict output schema,
//! heartbeating the lease meanwhile -> redact -> guard `MEMORY.md` against silent loss -> fit
//! the summary to its budget -> write both files atomically -> record success. Any error after
//! the claim records a failure (with backoff) and is returned.

use std::time::Duration;

use memory_prompts::UntrustedText;
use memory_prompts::memories::{ConsolidationContext, consolidation_input, consolidation_system};
use memory_protocol::consolidation::{ConsolidationInput, ConsolidationNote, ConsolidationOutput};
use memory_protocol::names::memory_root as names;
use memory_protocol::stage_one::StageOneOutputRecord;
use memory_protocol::{ModelClient, ModelError, ModelRequest, TaskKind, input_token_budget};
use memory_sanitize::{TokenCounter, TruncationPolicy, o200k, redact_json_strings, redact_secrets};
use sha2::{Digest, Sha256};

use crate::config::MemoriesConfig;
use crate::consolidation_guard::guard_consolidation;
use crate::error::{Error, Result};
use crate::memory_root::{
    MemoryRoot, render_raw_memories, render_rollout_summary, with_version_line,
};
use crate::stage_one_request::MIN_ROLLOUT_TOKEN_BUDGET;
use crate::store::{
    AsyncStateStore, PhaseTwoClaim, PhaseTwoClaimParams, PhaseTwoLease, PhaseTwoSuccess, now_unix,
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
}

/// Runs one phase-2 pass (see the module docs).
pub async fn run_phase_two(
    store: &AsyncStateStore,
    root: &MemoryRoot,
    model: &dyn ModelClient,
    options: &PhaseTwoOptions,
) -> Result<PhaseTwoReport> {
    let params = PhaseTwoClaimParams {
        now: now_unix(),
        lease_seconds: options.lease_seconds,
        cooldown_seconds: options.cooldown_seconds,
        force: options.force,
    };
    let claim = store
        .call(move |store| store.claim_phase_two(params))
        .await?;
    let lease = match claim {
        PhaseTwoClaim::Claimed(lease) => lease,
        skipped => {
            return Ok(PhaseTwoReport {
                skipped: skipped.skip_reason().map(str::to_owned),
                ..PhaseTwoReport::default()
            });
        }
    };
    let mut report = PhaseTwoReport::default();
    match consolidate(store, root, model, options, &lease, &mut report).await {
        Ok(()) => Ok(report),
        Err(Error::Model(model_error)) if model_error.is_fatal() => {
            // Credentials or configuration, not this pass: give the lease back without the
            // failure back-off, so the run after the fix consolidates at once.
            let token = lease.owner_token.clone();
            let _ = store
                .call(move |store| store.release_phase_two(&token))
                .await;
            Err(Error::Model(model_error))
        }
        Err(error) => {
            let token = lease.owner_token.clone();
            let message = error.to_string();
            let backoff = options.failure_backoff_seconds;
            // The pass's own error matters more than a failure to record it.
            let _ = store
                .call(move |store| store.fail_phase_two(&token, now_unix(), &message, backoff))
                .await;
            Err(error)
        }
    }
}

async fn consolidate(
    store: &AsyncStateStore,
    root: &MemoryRoot,
    model: &dyn ModelClient,
    options: &PhaseTwoOptions,
    lease: &PhaseTwoLease,
    report: &mut PhaseTwoReport,
) -> Result<()> {
    let (max_unused_days, prune_limit, max_selected) = (
        options.max_unused_days,
        options.prune_limit,
        options.max_selected,
    );
    report.pruned = store
        .call(move |store| store.prune_phase_two_outputs(now_unix(), max_unused_days, prune_limit))
        .await?;
    let selected = store
        .call(move |store| store.select_phase_two_inputs(now_unix(), max_selected, max_unused_days))
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
        && artifacts_valid(old_memory.as_deref(), old_summary.as_deref())
    {
        report.unchanged = true;
        return finish(store, lease, &hash, &selected, report).await;
    }

    if selected.is_empty()
        && notes.is_empty()
        && old_memory
            .as_deref()
            .is_none_or(|text| text.trim().is_empty())
    {
        // Nothing was ever remembered, so a model has nothing to consolidate. The lease is
        // given back without recording a pass, so no cooldown delays the first real one.
        let token = lease.owner_token.clone();
        if !store
            .call(move |store| store.release_phase_two(&token))
            .await?
        {
            return Err(Error::LeaseLost);
        }
        report.skipped = Some("no memories to consolidate yet".to_owned());
        return Ok(());
    }

    let old_memory = old_memory.unwrap_or_default();
    let input = redacted_input(
        &old_memory,
        old_summary.as_deref().unwrap_or(""),
        &selected,
        &notes,
        budget,
    )?;
    // A model that answers that the prompt does not fit gets the new material cut to half,
    // down to a floor; the current files are always sent whole (the guard judges the rewrite
    // against all of them).
    let mut prompt_budget = input_token_budget(model.context_window());
    let response = loop {
        let request = consolidation_request(&input, &sync.stems, prompt_budget)?;
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
    output.memory_md = redact_secrets(&output.memory_md).into_owned();
    output.memory_summary_md = redact_secrets(&output.memory_summary_md).into_owned();

    // The guard compares against the redacted old text: a secret in a hand-edited MEMORY.md
    // is not an anchor to keep, and a rejected rewrite keeps the redacted text.
    let material = unconsolidated_material(&input.memory_md, &input.selected);
    let verdict = guard_consolidation(&input.memory_md, &output, &material);
    report.guard_missing = verdict.missing;
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
    finish(store, lease, &hash, &selected, report).await
}

async fn finish(
    store: &AsyncStateStore,
    lease: &PhaseTwoLease,
    hash: &str,
    selected: &[StageOneOutputRecord],
    report: &mut PhaseTwoReport,
) -> Result<()> {
    let lease = lease.clone();
    let hash = hash.to_owned();
    let consumed: Vec<(String, i64)> = selected
        .iter()
        .map(|record| (record.thread_id.clone(), record.source_updated_at))
        .collect();
    let owned = store
        .call(move |store| {
            let success = PhaseTwoSuccess {
                now: now_unix(),
                input_hash: &hash,
                selected: &consumed,
            };
            store.complete_phase_two(&lease, &success)
        })
        .await?;
    if !owned {
        return Err(Error::LeaseLost);
    }
    report.ran = true;
    Ok(())
}

/// The consolidation input with every string redacted: phase 1 stored redacted outputs, but
/// `MEMORY.md` may have been edited by hand since.
fn redacted_input(
    memory_md: &str,
    memory_summary_md: &str,
    selected: &[StageOneOutputRecord],
    notes: &[ConsolidationNote],
    summary_token_budget: u64,
) -> Result<ConsolidationInput> {
    let input = ConsolidationInput {
        memory_md: memory_md.to_owned(),
        memory_summary_md: memory_summary_md.to_owned(),
        selected: selected.to_vec(),
        summary_token_budget,
        notes: notes.to_vec(),
    };
    let mut value = serde_json::to_value(&input).map_err(Error::Serialize)?;
    redact_json_strings(&mut value);
    serde_json::from_value(value).map_err(Error::Serialize)
}

fn consolidation_request(
    input: &ConsolidationInput,
    stems: &std::collections::BTreeMap<String, String>,
    prompt_budget: u64,
) -> Result<ModelRequest> {
    let prompt_budget = usize::try_from(prompt_budget).unwrap_or(usize::MAX);
    let empty = String::new();
    let raw_memories = render_raw_memories(
        input
            .selected
            .iter()
            .map(|record| (record, stems.get(&record.thread_id).unwrap_or(&empty))),
    );
    let rollout_summaries: String = input
        .selected
        .iter()
        .map(|record| {
            let stem = stems.get(&record.thread_id).unwrap_or(&empty);
            format!(
                "### {}/{stem}.md\n\n{}\n",
                names::ROLLOUT_SUMMARIES_DIR,
                render_rollout_summary(record)
            )
        })
        .collect();
    // The new material shares the prompt: raw memories first, then the summaries; the current
    // files are sent whole, since the guard judges the rewrite against all of them.
    let notes: String = input
        .notes
        .iter()
        .map(|note| format!("## {}\n\n{}\n\n", note.path, note.text.trim()))
        .collect();
    let raw_memories = truncate(&raw_memories, prompt_budget / 2);
    let rollout_summaries = truncate(&rollout_summaries, prompt_budget / 4);
    let context = ConsolidationContext {
        memory_md: UntrustedText::new(input.memory_md.as_str()),
        memory_summary_md: UntrustedText::new(input.memory_summary_md.as_str()),
        raw_memories: UntrustedText::new(raw_memories),
        rollout_summaries: UntrustedText::new(rollout_summaries),
        summary_token_budget: input.summary_token_budget,
        notes: (!notes.is_empty())
            .then(|| UntrustedText::new(truncate(notes.trim_end(), prompt_budget / 8))),
    };
    Ok(ModelRequest {
        task: TaskKind::Consolidation,
        instructions: consolidation_system()?,
        input: consolidation_input(&context)?,
        structured_input: serde_json::to_value(input).map_err(Error::Serialize)?,
        output_schema: Some(ConsolidationOutput::output_schema()),
        // Sent only when the user configured one on the model: many models refuse it.
        reasoning_effort: None,
        max_output_tokens: None,
    })
}

fn truncate(text: &str, max_tokens: usize) -> String {
    memory_sanitize::truncate_middle(text, TruncationPolicy::Tokens(max_tokens), o200k())
        .into_owned()
}

/// Calls the model, extending the lease every heartbeat interval while it runs. Losing the
/// lease abandons the call.
async fn complete_with_heartbeat(
    store: &AsyncStateStore,
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
                let token = lease.owner_token.clone();
                let lease_seconds = options.lease_seconds;
                let alive = store
                    .call(move |store| store.heartbeat_phase_two(&token, now_unix(), lease_seconds))
                    .await?;
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
pub async fn record_memory_usage(
    store: &AsyncStateStore,
    thread_ids: Vec<String>,
) -> Result<usize> {
    store
        .call(move |store| store.record_memory_usage(&thread_ids, now_unix()))
        .await
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| Error::Task(error.to_string()))?
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
