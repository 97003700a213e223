//! The built-in offline engine: a [`ModelClient`] that needs no network and no language model.
//!
//! It answers every task kind from the request's structured input, never from the prompt text,
//! one module per task family: [`stage_one`](self) for extraction, `consolidate` for phase 2,
//! `working_memory` for creating and updating a session's working memory (see below).
//! A kind it has no answer for is [`ModelError::UnsupportedTask`], naming the kind.
//!
//! Stage-one extraction reads the filtered, redacted response items of one rollout: what the user asked,
//! the preferences they stated, the commands run and how they ended, which failures a later
//! run fixed and with what change, the files changed, the errors seen and the final answer, and
//! writes them in the raw-memory and rollout-summary formats. The output is deterministic and
//! says it was made without a language model. A rollout with nothing reusable in it (no
//! command, file change, preference or error: only conversation) gets the empty no-op answer.
//!
//! The working memory is read from a session's messages: the title from the first request,
//! files from tool-call arguments and patches, errors from failed commands (with whether a
//! later run passed) and the user's corrections, open issues from questions no reply followed
//! and failures nothing fixed, facts from stated rules and explained decisions. A create
//! request gets the whole document; an update gets one operation per section.

mod consolidate;
mod extract;
mod stage_one;
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

/// The sentence every non-empty output carries.
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
            TaskKind::WorkingMemoryCreate => answer_text(&request, working_memory::create),
            TaskKind::WorkingMemoryUpdate => answer(&request, working_memory::update),
            task => Err(ModelError::UnsupportedTask {
                model: OFFLINE_MODEL_NAME.to_owned(),
                task,
            }),
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
    let input: I = read_input(request)?;
    let text = serde_json::to_string(&respond(&input)).map_err(|e| ModelError::Other {
        message: format!("cannot serialize the offline output: {e}"),
    })?;
    Ok(ModelResponse { text, usage: None })
}

/// Answers one request whose output is plain text (a markdown document), not JSON.
fn answer_text<I>(
    request: &ModelRequest,
    respond: impl FnOnce(&I) -> String,
) -> Result<ModelResponse, ModelError>
where
    I: DeserializeOwned,
{
    let input: I = read_input(request)?;
    Ok(ModelResponse {
        text: respond(&input),
        usage: None,
    })
}

fn read_input<I: DeserializeOwned>(request: &ModelRequest) -> Result<I, ModelError> {
    serde_json::from_value(request.structured_input.clone()).map_err(|e| {
        ModelError::InvalidRequest {
            message: format!(
                "the offline engine cannot read the structured input of a {} request: {e}",
                request.task.as_str()
            ),
        }
    })
}
