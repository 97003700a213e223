//! Why a rollout a run found was not extracted: one [`SkipReason`] per rollout, counted in the
//! run's report so a user sees what holds each one back (and what to do about it).
//!
//! The classification follows the claim rule (`candidate_filter` in the store) check by check,
//! so a rollout that passes every check is one the run's limit left for later.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use memory_protocol::stage_one::{JobStatus, StageOneJob};
use memory_sanitize::redact_secrets;
use serde::Serialize;

use crate::error::Result;
use crate::store::{ClaimParams, MemoryMode, ThreadRecord, WriteStore};
use crate::store_selection::{StoreSelection, open_existing_store};

/// Why a rollout was not extracted in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Never extracted: a sub-agent's, ephemeral or non-interactive session, or one in which
    /// the user wrote nothing.
    Excluded,
    /// Its memory is disabled (forgotten, or turned off for the thread).
    Disabled,
    /// The session stamped itself `"memory_mode": "disabled"`: codex does so for every session
    /// while its `[memories] generate_memories` is false.
    DisabledBySession,
    /// Extracted already at its current content.
    UpToDate,
    /// Another process is extracting it now.
    Running,
    /// A failed extraction waits for its retry time (`run --retry-failed` retries now).
    BackingOff,
    /// Failed on every attempt; waits for the rollout to change (or `run --retry-failed`).
    GaveUp,
    /// Active too recently: the idle rule (`min_rollout_idle_hours`) holds it back.
    NotIdle,
    /// Last active before the age limit (`max_rollout_age_days`, `--max-age-days`).
    TooOld,
    /// Eligible, but the run's limit (`--limit`, the startup cap) was reached first.
    OverLimit,
}

impl SkipReason {
    /// Every reason, in the order reports list them.
    pub const ALL: [SkipReason; 10] = [
        SkipReason::Excluded,
        SkipReason::Disabled,
        SkipReason::DisabledBySession,
        SkipReason::UpToDate,
        SkipReason::Running,
        SkipReason::BackingOff,
        SkipReason::GaveUp,
        SkipReason::NotIdle,
        SkipReason::TooOld,
        SkipReason::OverLimit,
    ];

    /// The reason in a few words, for a text report (`3 backing off`).
    pub fn describe(self) -> &'static str {
        match self {
            SkipReason::Excluded => "never extracted",
            SkipReason::Disabled => "memory disabled",
            SkipReason::DisabledBySession => {
                "memory disabled by the session (codex's generate_memories = false)"
            }
            SkipReason::UpToDate => "up to date",
            SkipReason::Running => "being extracted elsewhere",
            SkipReason::BackingOff => "backing off after a failure",
            SkipReason::GaveUp => "failed on every attempt",
            SkipReason::NotIdle => "not idle yet",
            SkipReason::TooOld => "too old",
            SkipReason::OverLimit => "over the run's limit",
        }
    }
}

/// The rollouts a run skipped, counted by reason.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SkipCounts {
    /// How many rollouts each reason held back (reasons with none are left out).
    pub by_reason: BTreeMap<SkipReason, usize>,
    /// The earliest time (Unix seconds) a job backing off may be retried.
    pub next_retry_at: Option<i64>,
}

impl SkipCounts {
    /// The rollouts skipped for any reason.
    pub fn total(&self) -> usize {
        self.by_reason.values().sum()
    }

    /// How many `reason` held back.
    pub fn count(&self, reason: SkipReason) -> usize {
        self.by_reason.get(&reason).copied().unwrap_or(0)
    }
}

/// Why `thread` is not claimable under `params` at `now`, given its job and the watermark of
/// its stored output; [`SkipReason::OverLimit`] when nothing in the claim rule holds it back.
pub fn classify(
    thread: &ThreadRecord,
    job: Option<&StageOneJob>,
    extracted_watermark: Option<i64>,
    params: &ClaimParams,
    now: i64,
) -> SkipReason {
    let watermark = thread.source_watermark;
    if thread.session.exclusion.is_some() {
        return SkipReason::Excluded;
    }
    match thread.memory_mode {
        MemoryMode::Enabled => {}
        MemoryMode::DisabledBySession => return SkipReason::DisabledBySession,
        MemoryMode::Disabled | MemoryMode::Polluted => return SkipReason::Disabled,
    }
    let extracted = extracted_watermark.is_some_and(|at| at >= watermark)
        || job
            .and_then(|job| job.last_success_watermark)
            .is_some_and(|at| at >= watermark);
    if extracted {
        return SkipReason::UpToDate;
    }
    if job.is_some_and(|job| {
        job.status == JobStatus::Running && job.lease_expires_at.is_some_and(|at| at > now)
    }) {
        return SkipReason::Running;
    }
    if let Some(job) = job.filter(|job| job.input_watermark >= watermark) {
        if job.retry_after_at.is_some_and(|at| at > now) {
            return SkipReason::BackingOff;
        }
        if job.attempts >= params.max_attempts {
            return SkipReason::GaveUp;
        }
    }
    let idle_cutoff = now.saturating_sub(params.min_idle_hours.saturating_mul(3600));
    if thread.last_activity_at > idle_cutoff
        && !params.ended_thread_ids.contains(&thread.session.id)
    {
        return SkipReason::NotIdle;
    }
    let too_old = params
        .max_age_days
        .map(|days| now.saturating_sub(days.saturating_mul(86_400)))
        .is_some_and(|cutoff| thread.last_activity_at < cutoff);
    if too_old {
        return SkipReason::TooOld;
    }
    SkipReason::OverLimit
}

/// Counts why the rollouts under `rollout_prefix` (a folder path ending in a separator) were
/// not extracted, leaving out the threads in `claimed` (this run's jobs).
pub async fn count_skips(
    store: &dyn WriteStore,
    rollout_prefix: &str,
    claimed: &HashSet<&str>,
    params: &ClaimParams,
    now: i64,
) -> Result<SkipCounts> {
    // Paths are stored redacted, so the prefix is compared in the same form.
    let prefix = redact_secrets(rollout_prefix);
    let jobs: HashMap<String, StageOneJob> = store
        .stage_one_jobs()
        .await?
        .into_iter()
        .map(|job| (job.thread_id.clone(), job))
        .collect();
    let outputs: HashMap<String, i64> = store
        .stage_one_outputs()
        .await?
        .into_iter()
        .map(|output| (output.thread_id, output.source_updated_at))
        .collect();
    let mut counts = SkipCounts::default();
    for thread in store.threads().await? {
        if !thread.session.rollout_path.starts_with(prefix.as_ref())
            || claimed.contains(thread.session.id.as_str())
        {
            continue;
        }
        let job = jobs.get(&thread.session.id);
        let reason = classify(
            &thread,
            job,
            outputs.get(&thread.session.id).copied(),
            params,
            now,
        );
        if let Some(at) = job
            .and_then(|job| job.retry_after_at)
            .filter(|_| reason == SkipReason::BackingOff)
        {
            counts.next_retry_at = Some(counts.next_retry_at.map_or(at, |soonest| soonest.min(at)));
        }
        *counts.by_reason.entry(reason).or_default() += 1;
    }
    Ok(counts)
}

/// A failed extraction, for `status`: which rollout, how often it failed, why, and when it is
/// retried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailedJob {
    /// The thread.
    pub thread_id: String,
    /// Its rollout file (as stored: redacted).
    pub rollout_path: String,
    /// Failed attempts for the rollout's current content.
    pub attempts: u32,
    /// The last failure.
    pub last_error: Option<String>,
    /// When a run may retry it (Unix seconds); `None` when it waits for the rollout to change.
    pub retry_after_at: Option<i64>,
}

/// Every failed extraction in the store `selection` names for `home`, oldest retry first;
/// none when the home has no store yet (nothing is created).
pub async fn failed_jobs_of_home(
    home: &Path,
    selection: &StoreSelection,
) -> Result<Vec<FailedJob>> {
    match open_existing_store(home, selection).await? {
        Some(store) => failed_jobs(store.as_ref(), &ClaimParams::default()).await,
        None => Ok(Vec::new()),
    }
}

/// Every failed extraction in `store`, oldest retry first.
pub async fn failed_jobs(store: &dyn WriteStore, params: &ClaimParams) -> Result<Vec<FailedJob>> {
    let threads: HashMap<String, String> = store
        .threads()
        .await?
        .into_iter()
        .map(|thread| (thread.session.id, thread.session.rollout_path))
        .collect();
    let mut failed: Vec<FailedJob> = store
        .stage_one_jobs()
        .await?
        .into_iter()
        .filter(|job| job.status == JobStatus::Error)
        .map(|job| FailedJob {
            rollout_path: threads.get(&job.thread_id).cloned().unwrap_or_default(),
            attempts: job.attempts,
            last_error: job.last_error,
            retry_after_at: (job.attempts < params.max_attempts)
                .then_some(job.retry_after_at)
                .flatten(),
            thread_id: job.thread_id,
        })
        .collect();
    failed.sort_by_key(|job| (job.retry_after_at.is_none(), job.retry_after_at));
    Ok(failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SessionFacts;

    const NOW: i64 = 1_800_000_000;
    const HOUR: i64 = 3600;

    fn thread(last_activity_at: i64) -> ThreadRecord {
        ThreadRecord {
            session: SessionFacts {
                id: "t".to_owned(),
                rollout_path: "/r/t.jsonl".to_owned(),
                cwd: None,
                git_branch: None,
                source: Some("cli".to_owned()),
                exclusion: None,
                created_at: last_activity_at,
            },
            updated_at: last_activity_at,
            last_activity_at,
            memory_mode: MemoryMode::Enabled,
            source_watermark: last_activity_at,
            source_fingerprint: "f".to_owned(),
            file_size: 1,
            file_mtime_ns: 0,
            machine_id: None,
        }
    }

    fn failed(attempts: u32, retry_after_at: i64, watermark: i64) -> StageOneJob {
        StageOneJob {
            thread_id: "t".to_owned(),
            status: JobStatus::Error,
            owner_token: None,
            lease_expires_at: None,
            attempts,
            retry_after_at: Some(retry_after_at),
            last_error: Some("boom".to_owned()),
            input_watermark: watermark,
            last_success_watermark: None,
        }
    }

    #[test]
    fn each_rule_of_the_claim_names_its_own_reason() {
        let params = ClaimParams::default();
        let idle = thread(NOW - 24 * HOUR);
        let wm = idle.source_watermark;
        let classify_at = |thread: &ThreadRecord, job: Option<&StageOneJob>, out: Option<i64>| {
            classify(thread, job, out, &params, NOW)
        };
        assert_eq!(classify_at(&idle, None, None), SkipReason::OverLimit);
        assert_eq!(classify_at(&idle, None, Some(wm)), SkipReason::UpToDate);
        // An output of an older version of the rollout does not make it up to date.
        assert_eq!(
            classify_at(&idle, None, Some(wm - 1)),
            SkipReason::OverLimit
        );
        let backing_off = failed(1, NOW + 60, wm);
        assert_eq!(
            classify_at(&idle, Some(&backing_off), None),
            SkipReason::BackingOff
        );
        let gave_up = failed(params.max_attempts, NOW - 60, wm);
        assert_eq!(classify_at(&idle, Some(&gave_up), None), SkipReason::GaveUp);
        // A failure of an older version no longer holds the rollout back.
        let stale = failed(params.max_attempts, NOW + 60, wm - 1);
        assert_eq!(
            classify_at(&idle, Some(&stale), None),
            SkipReason::OverLimit
        );
        let running = StageOneJob {
            status: JobStatus::Running,
            lease_expires_at: Some(NOW + 60),
            retry_after_at: None,
            ..failed(0, 0, wm)
        };
        assert_eq!(
            classify_at(&idle, Some(&running), None),
            SkipReason::Running
        );
        assert_eq!(
            classify_at(&thread(NOW - HOUR), None, None),
            SkipReason::NotIdle
        );
        assert_eq!(
            classify_at(&thread(NOW - 400 * 24 * HOUR), None, None),
            SkipReason::TooOld
        );
        let mut excluded = idle.clone();
        excluded.session.exclusion = Some(crate::store::Exclusion::Subagent);
        assert_eq!(classify_at(&excluded, None, None), SkipReason::Excluded);
        let disabled = ThreadRecord {
            memory_mode: MemoryMode::Disabled,
            ..idle
        };
        assert_eq!(classify_at(&disabled, None, None), SkipReason::Disabled);
        let stamped = ThreadRecord {
            memory_mode: MemoryMode::DisabledBySession,
            ..disabled
        };
        assert_eq!(
            classify_at(&stamped, None, None),
            SkipReason::DisabledBySession
        );
    }

    #[test]
    fn reasons_serialize_as_snake_case_keys() {
        let counts = SkipCounts {
            by_reason: SkipReason::ALL.iter().map(|reason| (*reason, 1)).collect(),
            next_retry_at: None,
        };
        let value = serde_json::to_value(&counts).unwrap();
        let keys: Vec<&str> = value["by_reason"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "backing_off",
                "disabled",
                "disabled_by_session",
                "excluded",
                "gave_up",
                "not_idle",
                "over_limit",
                "running",
                "too_old",
                "up_to_date"
            ]
        );
        assert_eq!(counts.total(), 10);
    }
}
