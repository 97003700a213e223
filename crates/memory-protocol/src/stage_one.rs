//! Phase 1 (stage one) of the write path: per-rollout extraction.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the model returns for one rollout: a raw memory, a summary of the rollout and an
/// optional slug naming it. Strict: unknown fields are rejected.
///
/// All three fields empty is the no-op answer (nothing in the rollout is worth keeping).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StageOneOutput {
    /// Reusable learnings from the rollout, in the raw-memory format.
    pub raw_memory: String,
    /// A summary of the rollout, in the rollout-summary format.
    pub rollout_summary: String,
    /// A short lowercase name for the rollout (`null` or empty when none fits).
    #[serde(default)]
    pub rollout_slug: Option<String>,
}

impl StageOneOutput {
    /// True when the model found nothing worth keeping: the raw memory or the summary is empty
    /// (after trimming whitespace).
    pub fn is_no_output(&self) -> bool {
        self.raw_memory.trim().is_empty() || self.rollout_summary.trim().is_empty()
    }

    /// The JSON Schema sent to the model as its strict output format. Every key is required
    /// and the slug is nullable, as strict structured-output modes demand.
    pub fn output_schema() -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "raw_memory": { "type": "string" },
                "rollout_summary": { "type": "string" },
                "rollout_slug": { "type": ["string", "null"] }
            },
            "required": ["raw_memory", "rollout_summary", "rollout_slug"],
            "additionalProperties": false
        })
    }
}

/// Status of a leased job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    /// Waiting to be claimed.
    Pending,
    /// Claimed by a worker holding a lease.
    Running,
    /// Finished successfully for its input watermark.
    Done,
    /// Failed; retried after `retry_after_at` while attempts remain.
    Error,
}

impl JobStatus {
    /// The status as stored and written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Pending => "pending",
            JobStatus::Running => "running",
            JobStatus::Done => "done",
            JobStatus::Error => "error",
        }
    }

    /// Parses a stored status.
    pub fn parse(text: &str) -> Option<JobStatus> {
        match text {
            "pending" => Some(JobStatus::Pending),
            "running" => Some(JobStatus::Running),
            "done" => Some(JobStatus::Done),
            "error" => Some(JobStatus::Error),
            _ => None,
        }
    }
}

/// A stage-one job: extracting memories from one thread's rollout. Times are Unix seconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StageOneJob {
    /// The thread whose rollout is extracted.
    pub thread_id: String,
    /// Job status.
    pub status: JobStatus,
    /// Token of the worker holding the lease; only it can finish the job.
    pub owner_token: Option<String>,
    /// When the lease expires; an expired lease can be reclaimed.
    pub lease_expires_at: Option<i64>,
    /// Failed attempts for the current input watermark.
    pub attempts: u32,
    /// Earliest time a failed job may be retried.
    pub retry_after_at: Option<i64>,
    /// Error text of the last failure.
    pub last_error: Option<String>,
    /// Source watermark (rollout modification time, Unix seconds) this job extracts.
    pub input_watermark: i64,
    /// Watermark of the last successful extraction.
    pub last_success_watermark: Option<i64>,
}

/// A stored stage-one output: what phase 2 selects and consolidates. Times are Unix seconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StageOneOutputRecord {
    /// The thread the output was extracted from.
    pub thread_id: String,
    /// Working directory of the thread.
    pub cwd: Option<String>,
    /// Path of the rollout file.
    pub rollout_path: String,
    /// Git branch the session recorded, when it did.
    #[serde(default)]
    pub git_branch: Option<String>,
    /// The raw memory.
    pub raw_memory: String,
    /// The rollout summary.
    pub rollout_summary: String,
    /// The slug, when the model gave one.
    pub rollout_slug: Option<String>,
    /// Source watermark the output was extracted from.
    pub source_updated_at: i64,
    /// When the output was generated.
    pub generated_at: i64,
    /// How many times the memory was used.
    pub usage_count: u64,
    /// When the memory was last used.
    pub last_used_at: Option<i64>,
    /// Whether the last phase-2 pass selected it.
    pub selected: bool,
}

/// The structured input of a stage-one request ([`crate::TaskKind::StageOneExtraction`]): what
/// the prompt was rendered from, already filtered and redacted. The prompt text may hold a
/// truncated serialization of `items`; `items` is complete.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StageOneInput {
    /// Thread id of the rollout.
    pub thread_id: String,
    /// Path of the rollout file.
    pub rollout_path: String,
    /// Working directory recorded in the rollout, when known.
    pub rollout_cwd: Option<String>,
    /// The kept response items, in order.
    pub items: Vec<crate::rollout::ResponseItem>,
    /// True when the prompt holds a truncated serialization of `items`.
    pub truncated: bool,
}
