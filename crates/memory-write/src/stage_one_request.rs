//! One rollout to one stage-one model request, and the model's answer back to an output.
//!
//! Loading (read -> filter -> redact each item -> serialize -> redact the text) happens once per
//! job; rendering (truncate head+tail to a token budget -> render the prompts) may happen again
//! with a smaller budget when the model says the input did not fit.

use std::path::{Path, PathBuf};

use memory_prompts::UntrustedText;
use memory_prompts::memories::{StageOneInputContext, stage_one_input, stage_one_system};
use memory_protocol::stage_one::StageOneInput;
use memory_protocol::{ModelRequest, ResponseItem, StageOneOutput, TaskKind};
use memory_sanitize::{
    TruncationPolicy, o200k, redact_json_strings, redact_secrets, truncate_middle,
};
use memory_transcript::{filter_for_memory, serialize_for_memory};

use crate::error::{Error, Result};
use crate::store::ClaimedJob;

/// Smallest token budget a rollout is cut to when a model keeps answering that the input does
/// not fit; below it the job fails instead.
pub const MIN_ROLLOUT_TOKEN_BUDGET: u64 = 2_000;

/// What loading a rollout found.
#[derive(Debug, Clone, PartialEq)]
pub enum Loaded {
    /// Material a model can extract from.
    Material(RolloutMaterial),
    /// Nothing a model could extract from; no call is needed. The text says why.
    Nothing(String),
}

/// A rollout's filtered, redacted items and their serialized text.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutMaterial {
    items: Vec<ResponseItem>,
    text: String,
}

/// A rendered request and what its transcript part came to.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedRequest {
    /// The request to send.
    pub request: ModelRequest,
    /// Bytes of transcript material in it, after truncation.
    pub contents_bytes: usize,
}

/// Reads, filters and redacts one session file: a codex rollout (streamed) or a Claude Code
/// transcript with its subagents' files.
pub fn load_rollout(path: &Path) -> Result<Loaded> {
    let read = crate::session_file::read_session_file(path)?;
    if read.lines.is_empty() {
        return match read.diagnostics.first() {
            None => Ok(Loaded::Nothing("the rollout file is empty".to_owned())),
            Some(first) => Err(Error::UnreadableRollout {
                path: path.to_path_buf(),
                message: format!(
                    "no readable lines ({} malformed; first: {first})",
                    read.diagnostics.len()
                ),
            }),
        };
    }
    let items = filter_for_memory(read.lines.into_iter().map(|line| line.item));
    if items.is_empty() {
        return Ok(Loaded::Nothing(
            "the rollout has no messages or tool activity to extract from".to_owned(),
        ));
    }
    let items = items
        .into_iter()
        .map(|item| redact_item(item, path))
        .collect::<Result<Vec<_>>>()?;
    let text = redact_secrets(&serialize_for_memory(&items)).into_owned();
    Ok(Loaded::Material(RolloutMaterial { items, text }))
}

/// The loaded rollout as a shared store keeps it: its filtered, redacted items as a JSON
/// array (`[]` when there is nothing to extract from). [`load_stored_items`] reads it back.
pub fn stored_items(loaded: &Loaded) -> Result<String> {
    let items: &[ResponseItem] = match loaded {
        Loaded::Material(material) => &material.items,
        Loaded::Nothing(_) => &[],
    };
    serde_json::to_string(items).map_err(Error::Serialize)
}

/// Loads a rollout from its stored items (see [`stored_items`]). Each item and the text are
/// redacted again on this machine, as a file's are: the items were written by another
/// machine, maybe by an older build whose rules caught less.
pub fn load_stored_items(thread_id: &str, items: &str) -> Result<Loaded> {
    let source = PathBuf::from(format!("stored rollout of {thread_id}"));
    let items: Vec<ResponseItem> =
        serde_json::from_str(items).map_err(|e| Error::UnreadableRollout {
            path: source.clone(),
            message: format!("the stored items are not valid: {e}"),
        })?;
    let items = items
        .into_iter()
        .map(|item| redact_item(item, &source))
        .collect::<Result<Vec<_>>>()?;
    if items.is_empty() {
        return Ok(Loaded::Nothing(
            "the rollout has no messages or tool activity to extract from".to_owned(),
        ));
    }
    let text = redact_secrets(&serialize_for_memory(&items)).into_owned();
    Ok(Loaded::Material(RolloutMaterial { items, text }))
}

/// Loads the rollout a job names: its stored items when the store shares rollouts, else the
/// file.
pub fn load_job_rollout(job: &ClaimedJob) -> Result<Loaded> {
    match &job.stored_items {
        Some(items) => load_stored_items(&job.thread_id, items),
        None => load_rollout(&job.open_path),
    }
}

/// Renders the stage-one request for `job` with the transcript cut to `token_budget` tokens
/// (head and tail kept).
pub fn render_request(
    job: &ClaimedJob,
    material: &RolloutMaterial,
    token_budget: u64,
) -> Result<RenderedRequest> {
    let limit = usize::try_from(token_budget).unwrap_or(usize::MAX);
    let contents = truncate_middle(&material.text, TruncationPolicy::Tokens(limit), o200k());
    let truncated = contents.len() != material.text.len();
    let contents_bytes = contents.len();
    let cwd = job.cwd.clone().unwrap_or_default();
    let instructions = stage_one_system()?;
    let input = stage_one_input(&StageOneInputContext {
        rollout_path: UntrustedText::new(job.rollout_path.clone()),
        rollout_cwd: UntrustedText::new(cwd),
        rollout_contents: UntrustedText::new(contents.into_owned()),
    })?;
    let structured = StageOneInput {
        thread_id: job.thread_id.clone(),
        rollout_path: job.rollout_path.clone(),
        rollout_cwd: job.cwd.clone(),
        items: material.items.clone(),
        truncated,
    };
    let structured_input = serde_json::to_value(&structured).map_err(Error::Serialize)?;
    Ok(RenderedRequest {
        request: ModelRequest {
            task: TaskKind::StageOneExtraction,
            instructions,
            input,
            structured_input,
            output_schema: Some(StageOneOutput::output_schema()),
            // Sent only when the user configured one on the model: many models refuse it.
            reasoning_effort: None,
            max_output_tokens: None,
        },
        contents_bytes,
    })
}

/// Loads a rollout and renders its request for a model with this context window, in one step.
pub fn prepare_stage_one_request(
    job: &ClaimedJob,
    context_window: Option<u64>,
) -> Result<Option<RenderedRequest>> {
    match load_job_rollout(job)? {
        Loaded::Nothing(_) => Ok(None),
        Loaded::Material(material) => render_request(
            job,
            &material,
            memory_protocol::input_token_budget(context_window),
        )
        .map(Some),
    }
}

/// Redacts every string of an item (message text, tool arguments, tool output).
fn redact_item(item: ResponseItem, path: &Path) -> Result<ResponseItem> {
    let broken = |e: &dyn std::fmt::Display| Error::UnreadableRollout {
        path: PathBuf::from(path),
        message: format!("cannot re-encode an item for redaction: {e}"),
    };
    let mut value = serde_json::to_value(&item).map_err(|e| broken(&e))?;
    redact_json_strings(&mut value);
    ResponseItem::from_value(value).map_err(|e| broken(&e))
}

/// Parses a model answer strictly as a [`StageOneOutput`] and redacts its three fields.
pub fn parse_stage_one_output(text: &str) -> Result<StageOneOutput> {
    let output: StageOneOutput = serde_json::from_str(text)
        .map_err(|e| Error::InvalidModelOutput(format!("not a valid stage-one output: {e}")))?;
    Ok(StageOneOutput {
        raw_memory: redact_secrets(&output.raw_memory).into_owned(),
        rollout_summary: redact_secrets(&output.rollout_summary).into_owned(),
        rollout_slug: output
            .rollout_slug
            .map(|slug| redact_secrets(&slug).into_owned()),
    })
}
