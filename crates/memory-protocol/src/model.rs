//! The model client: how every crate talks to a language model.
//!
//! A request carries its task kind and the structured input its prompt was rendered from, so
//! an engine without a language model (the built-in offline engine, tests) answers from
//! structure and never parses prompt text back.

use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    /// Phase 1: extract a [`crate::StageOneOutput`] from one rollout.
    StageOneExtraction,
    /// Phase 2: consolidate stage-one outputs into the memory files.
    Consolidation,
    /// Compaction: the first hand-off summary.
    CompactionSummary,
    /// Compaction: update a previous summary with new messages.
    CompactionUpdate,
    /// Compaction: a short PR-style summary.
    ShortSummary,
    /// Compaction: summary of the prefix of a split turn.
    TurnPrefixSummary,
    /// Working memory: create the document.
    WorkingMemoryCreate,
    /// Working memory: per-section operations.
    WorkingMemoryUpdate,
}

impl TaskKind {
    /// Every kind, in declaration order.
    pub const ALL: [TaskKind; 8] = [
        TaskKind::StageOneExtraction,
        TaskKind::Consolidation,
        TaskKind::CompactionSummary,
        TaskKind::CompactionUpdate,
        TaskKind::ShortSummary,
        TaskKind::TurnPrefixSummary,
        TaskKind::WorkingMemoryCreate,
        TaskKind::WorkingMemoryUpdate,
    ];

    /// The kind as it appears on the wire (`stage_one_extraction`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::StageOneExtraction => "stage_one_extraction",
            TaskKind::Consolidation => "consolidation",
            TaskKind::CompactionSummary => "compaction_summary",
            TaskKind::CompactionUpdate => "compaction_update",
            TaskKind::ShortSummary => "short_summary",
            TaskKind::TurnPrefixSummary => "turn_prefix_summary",
            TaskKind::WorkingMemoryCreate => "working_memory_create",
            TaskKind::WorkingMemoryUpdate => "working_memory_update",
        }
    }
}

impl std::fmt::Display for TaskKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How hard the model should think.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningEffort {
    /// Minimal reasoning.
    Minimal,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
}

/// How a request asks a server for JSON that matches the output schema. Servers differ in what
/// they take: OpenAI takes a strict `json_schema`; llama.cpp's and some others' servers refuse
/// it but take `json_object` with the schema beside it; a few take neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StructuredOutputMode {
    /// A strict JSON Schema the server enforces (`response_format.type = "json_schema"`).
    JsonSchema,
    /// Any JSON object, with the schema passed beside it and in the instructions
    /// (`response_format.type = "json_object"`).
    JsonObject,
    /// No output format parameter: the schema is in the instructions and the client checks the
    /// answer, asking once for a repair.
    Instructions,
}

impl StructuredOutputMode {
    /// The mode as it is written in reports (`json_schema`, `json_object`, `instructions`).
    pub fn as_str(self) -> &'static str {
        match self {
            StructuredOutputMode::JsonSchema => "json_schema",
            StructuredOutputMode::JsonObject => "json_object",
            StructuredOutputMode::Instructions => "instructions",
        }
    }

    /// The mode to try after a server refused this one, `None` after the last.
    pub fn fallback(self) -> Option<StructuredOutputMode> {
        match self {
            StructuredOutputMode::JsonSchema => Some(StructuredOutputMode::JsonObject),
            StructuredOutputMode::JsonObject => Some(StructuredOutputMode::Instructions),
            StructuredOutputMode::Instructions => None,
        }
    }
}

impl std::fmt::Display for StructuredOutputMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A request to a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelRequest {
    /// What the request is for.
    pub task: TaskKind,
    /// System instructions (the rendered system prompt).
    pub instructions: String,
    /// The user input (the rendered input prompt).
    pub input: String,
    /// The structured data `input` was rendered from, already filtered and redacted.
    pub structured_input: serde_json::Value,
    /// A strict JSON Schema the output must match, when the task wants JSON.
    pub output_schema: Option<serde_json::Value>,
    /// Reasoning effort, when the model supports it.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Cap on output tokens.
    pub max_output_tokens: Option<u32>,
}

/// Token usage of one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenUsage {
    /// Input tokens, cached ones included.
    pub input_tokens: u64,
    /// Input tokens served from cache.
    pub cached_input_tokens: u64,
    /// Output tokens, reasoning included.
    pub output_tokens: u64,
    /// Reasoning tokens within `output_tokens`.
    pub reasoning_output_tokens: u64,
}

impl TokenUsage {
    /// Input plus output tokens.
    pub fn total(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// Adds another call's usage.
    pub fn add(&mut self, other: &TokenUsage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.cached_input_tokens = self
            .cached_input_tokens
            .saturating_add(other.cached_input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.reasoning_output_tokens = self
            .reasoning_output_tokens
            .saturating_add(other.reasoning_output_tokens);
    }
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelResponse {
    /// The output text (JSON text when the request had an output schema).
    pub text: String,
    /// Token usage, when the model reported it.
    pub usage: Option<TokenUsage>,
}

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum ModelError {
    /// The input does not fit the model's context window.
    #[error("context window exceeded: {message}")]
    ContextOverflow {
        /// What the model said.
        message: String,
    },
    /// Too many requests; retry after the given time when known.
    #[error("rate limited: {message}")]
    RateLimited {
        /// Milliseconds to wait, when the server said.
        retry_after_ms: Option<u64>,
        /// What the model said.
        message: String,
    },
    /// Missing or rejected credentials.
    #[error("authentication failed: {message}")]
    Authentication {
        /// What went wrong.
        message: String,
    },
    /// A failure worth retrying: a timeout, a dropped connection, a server error.
    #[error("transient failure: {message}")]
    Transient {
        /// What went wrong.
        message: String,
    },
    /// The model answered, but not in the required form.
    #[error("invalid model output: {message}")]
    InvalidOutput {
        /// What was wrong.
        message: String,
    },
    /// The model or server is set up wrong in a way no retry can fix: an unknown model, an
    /// endpoint that does not exist, a malformed base URL, a parameter the server refuses.
    #[error("model configuration problem: {message}")]
    Configuration {
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The request itself is unusable (its structured input does not match its task kind,
    /// say); sending it again cannot help.
    #[error("invalid model request: {message}")]
    InvalidRequest {
        /// What was wrong.
        message: String,
    },
    /// This model has no answer for the request's task kind.
    #[error("the {model} model does not handle {task} requests")]
    UnsupportedTask {
        /// The model's name.
        model: String,
        /// The task kind it was asked for.
        task: TaskKind,
    },
    /// Anything else.
    #[error("model call failed: {message}")]
    Other {
        /// What went wrong.
        message: String,
    },
}

impl ModelError {
    /// How long to wait before retrying, when the server said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ModelError::RateLimited {
                retry_after_ms: Some(ms),
                ..
            } => Some(Duration::from_millis(*ms)),
            _ => None,
        }
    }

    /// True for failures that may succeed when retried later.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ModelError::RateLimited { .. } | ModelError::Transient { .. }
        )
    }

    /// True for failures that every further request to this model would repeat until the
    /// user changes something (credentials, model name, base URL, a refused parameter). A
    /// caller should stop sending requests and give back the work it holds unspent.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            ModelError::Authentication { .. }
                | ModelError::Configuration { .. }
                | ModelError::UnsupportedTask { .. }
        )
    }
}

/// The last rate-limit figures a server reported (`x-ratelimit-*` headers), for callers that
/// stop spending quota when little is left.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateLimitSnapshot {
    /// Requests allowed in the current window.
    pub limit_requests: Option<u64>,
    /// Requests left in the current window.
    pub remaining_requests: Option<u64>,
    /// Tokens allowed in the current window.
    pub limit_tokens: Option<u64>,
    /// Tokens left in the current window.
    pub remaining_tokens: Option<u64>,
    /// When the snapshot was taken, Unix seconds.
    pub observed_at: i64,
}

impl RateLimitSnapshot {
    /// The remaining share (0 to 100) of the tightest window the server reported, or `None`
    /// when it reported no complete limit/remaining pair.
    pub fn remaining_percent(&self) -> Option<f64> {
        let share = |remaining: Option<u64>, limit: Option<u64>| match (remaining, limit) {
            (Some(remaining), Some(limit)) if limit > 0 => {
                Some((remaining as f64 / limit as f64 * 100.0).clamp(0.0, 100.0))
            }
            _ => None,
        };
        [
            share(self.remaining_requests, self.limit_requests),
            share(self.remaining_tokens, self.limit_tokens),
        ]
        .into_iter()
        .flatten()
        .reduce(f64::min)
    }
}

/// Where a model's context window figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContextWindowSource {
    /// Set by the user (`--context-window`, or `model_context_window` in the config).
    Configured,
    /// Reported by the server (vLLM's `/v1/models`, llama.cpp's `/props`, ...).
    Server,
    /// A built-in table of well-known models.
    KnownModel,
    /// Nothing said: the default budget applies.
    Default,
}

/// A model's input window and where the figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextWindow {
    /// The window in tokens; `None` when unknown.
    pub tokens: Option<u64>,
    /// Where it came from.
    pub source: ContextWindowSource,
}

/// Budget of the input when a model's window is unknown, in tokens.
pub const DEFAULT_INPUT_TOKEN_BUDGET: u64 = 150_000;
/// Share of a window a model can use for input in practice, in percent: the rest goes to the
/// system prompt, tool definitions and the reply.
pub const EFFECTIVE_CONTEXT_WINDOW_PERCENT: u64 = 95;
/// Share of the effective window that transcript material may fill, in percent.
pub const INPUT_SHARE_PERCENT: u64 = 70;

/// The token budget of the transcript material in one request to a model with this window:
/// `window × 95% × 70%` (at least 1), else [`DEFAULT_INPUT_TOKEN_BUDGET`].
pub fn input_token_budget(context_window: Option<u64>) -> u64 {
    match context_window {
        Some(window) if window > 0 => {
            let effective = u128::from(window) * u128::from(EFFECTIVE_CONTEXT_WINDOW_PERCENT) / 100;
            let budget = effective * u128::from(INPUT_SHARE_PERCENT) / 100;
            u64::try_from(budget).unwrap_or(u64::MAX).max(1)
        }
        _ => DEFAULT_INPUT_TOKEN_BUDGET,
    }
}

/// A language model, or anything that answers like one.
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// A name for reports and logs, such as `offline` or `openai:gpt-5-mini`.
    fn name(&self) -> String;

    /// The model's input window in tokens, when known.
    fn context_window(&self) -> Option<u64>;

    /// Sends one request.
    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError>;

    /// The last rate-limit figures the server reported, when it reports any.
    fn rate_limit(&self) -> Option<RateLimitSnapshot> {
        None
    }

    /// How this client asks for structured output now (it may have stepped down after a
    /// server refused a mode); `None` for a model with no server, such as the offline engine.
    fn structured_output(&self) -> Option<StructuredOutputMode> {
        None
    }
}
