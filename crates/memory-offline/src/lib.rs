//! The built-in offline engine: a [`ModelClient`] that needs no network and no language model.
//!
//! It answers every task kind from the request's structured input, never from the prompt text,
//! one module per task family: [`stage_one`](self) for extraction, `consolidate` for phase 2,
//! `compaction` for the compaction summaries (first, update, turn prefix, short), and
//! `working_memory` for creating and updating a session's working memory (see below). A kind
//! it has no answer for is [`ModelError::UnsupportedTask`], naming the kind.
//!
//! Compaction summaries are read from the window's cleaned messages: the goal from the
//! requests, constraints from stated preferences, Done and In Progress from verified steps
//! (checks that passed, fixes, changes that applied, failures nothing fixed), decisions, next
//! steps, the last unanswered user message verbatim, the files read and modified, and the
//! commands that failed and passed. An update merges into the previous summary and drops no
//! Done item. Every answer stays within the request's output cap.
//!
//! Stage-one extraction reads the filtered, redacted response items of one rollout and writes
//! them in [`memory_protocol::memory_format`], the format the stage-one prompt asks a model
//! for. The work is split by concern:
//!
//! - `transcript`: the timeline (messages, command runs paired with their outputs, patches);
//!   `tool_output` and `patches` read outputs and patches (command lines are read by
//!   `memory_transcript::shell`, the one shell tokeniser);
//! - `user_text`: what the user asked, the preferences they stated, how they reacted;
//! - `tasks`: the session split into tasks; `outcome` judges each from evidence; `lessons`
//!   pairs failures with what made them pass;
//! - `stage_one`: the rendering.
//!
//! The output is deterministic and says once that it was made without a language model. A
//! rollout with nothing reusable in it (no tool activity and no stated preference: only
//! conversation) gets the empty no-op answer.
//!
//! The working memory is read from a session's messages: the title from the first request,
//! files from tool-call arguments and patches, errors from failed commands (with whether a
//! later run passed) and the user's corrections, open issues from questions no reply followed
//! and failures nothing fixed, facts from stated rules and explained decisions. A create
//! request gets the whole document; an update gets one operation per section.
//!
//! # Example
//!
//! A compaction summary, written offline from the request's structured input.
//!
//! ```
//! use memory_offline::OfflineEngine;
//! use memory_protocol::compaction::{ConversationMessage, SummaryInput};
//! use memory_protocol::{ModelClient, ModelRequest, TaskKind};
//!
//! let input = SummaryInput {
//!     messages: vec![ConversationMessage::User {
//!         text: "Port the ledger module to integer cents.".to_owned(),
//!     }],
//!     previous_summary: None,
//!     focus: None,
//!     additional_context: Vec::new(),
//!     max_output_tokens: 2_000,
//! };
//! let request = ModelRequest {
//!     task: TaskKind::CompactionSummary,
//!     instructions: String::new(),
//!     input: String::new(),
//!     structured_input: serde_json::to_value(&input)?,
//!     output_schema: None,
//!     reasoning_effort: None,
//!     max_output_tokens: Some(2_000),
//! };
//! let runtime = tokio::runtime::Builder::new_current_thread().build()?;
//! let answer = runtime.block_on(OfflineEngine::new().complete(request))?;
//! assert!(answer.text.starts_with("## Goal"), "{}", answer.text);
//! assert!(answer.text.contains("integer cents"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod compaction;
mod compaction_doc;
mod consolidate;
mod lessons;
mod outcome;
mod patches;
mod stage_one;
mod tasks;
mod text;
mod tool_output;
mod transcript;
mod user_text;
mod working_memory;

use async_trait::async_trait;
use memory_protocol::stage_one::StageOneInput;
use memory_protocol::{
    ModelClient, ModelError, ModelRequest, ModelResponse, StageOneOutput, TaskKind,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The engine's name in reports and model specs.
pub const OFFLINE_MODEL_NAME: &str = "offline";

/// The sentence every rollout summary carries once.
pub const OFFLINE_NOTICE: &str = "Generated offline by agent-memory from the transcript's \
    structure (requests, commands, exit codes, patches), without a language model.";

/// Longest `raw_memory` produced, in characters.
pub const MAX_RAW_MEMORY_CHARS: usize = 6_000;

/// Longest `rollout_summary` produced, in characters.
pub const MAX_SUMMARY_CHARS: usize = 10_000;

/// Longest slug produced, in characters.
pub const MAX_SLUG_CHARS: usize = 60;

/// The built-in offline engine. See the [module docs](self).
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineEngine;

impl OfflineEngine {
    /// A new engine; it holds no state.
    pub fn new() -> OfflineEngine {
        OfflineEngine
    }

    /// Extracts a stage-one output from one rollout's structured input.
    pub fn stage_one(&self, input: &StageOneInput) -> StageOneOutput {
        stage_one::extract_memory(input)
    }
}

#[async_trait]
impl ModelClient for OfflineEngine {
    fn name(&self) -> String {
        OFFLINE_MODEL_NAME.to_owned()
    }

    fn context_window(&self) -> Option<u64> {
        None
    }

    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        match request.task {
            TaskKind::StageOneExtraction => answer(&request, stage_one::extract_memory),
            TaskKind::Consolidation => answer(&request, consolidate::consolidate),
            TaskKind::CompactionSummary => answer_text(&request, compaction::summary),
            TaskKind::CompactionUpdate => answer_text(&request, compaction::update),
            TaskKind::TurnPrefixSummary => answer_text(&request, compaction::turn_prefix),
            TaskKind::ShortSummary => answer_text(&request, compaction::short_summary),
            TaskKind::WorkingMemoryCreate => answer_text(&request, working_memory::create),
            TaskKind::WorkingMemoryUpdate => answer(&request, working_memory::update),
        }
    }
}

/// Answers one request: reads its structured input as `I`, runs `respond`, and returns the
/// output as JSON text. Each task family's module supplies `respond`.
fn answer<I, O>(
    request: &ModelRequest,
    respond: impl FnOnce(&I) -> O,
) -> Result<ModelResponse, ModelError>
where
    I: DeserializeOwned,
    O: Serialize,
{
    let input: I = structured_input(request)?;
    let text = serde_json::to_string(&respond(&input)).map_err(|e| ModelError::Other {
        message: format!("cannot serialize the offline output: {e}"),
    })?;
    Ok(ModelResponse { text, usage: None })
}

/// [`answer`] for tasks whose output is plain text (Markdown), not JSON.
fn answer_text<I: DeserializeOwned>(
    request: &ModelRequest,
    respond: impl FnOnce(&I) -> String,
) -> Result<ModelResponse, ModelError> {
    let input: I = structured_input(request)?;
    Ok(ModelResponse {
        text: respond(&input),
        usage: None,
    })
}

fn structured_input<I: DeserializeOwned>(request: &ModelRequest) -> Result<I, ModelError> {
    serde_json::from_value(request.structured_input.clone()).map_err(|e| {
        ModelError::InvalidRequest {
            message: format!(
                "the offline engine cannot read the structured input of a {} request: {e}",
                request.task.as_str()
            ),
        }
    })
}
