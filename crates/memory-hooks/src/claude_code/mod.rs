//! Claude Code's hooks, answered event by event.
//!
//! Claude Code runs `agent-memory hook claude-code` with a JSON payload on stdin
//! ([`HookPayload`]); [`answer`] says what to print:
//!
//! - `SessionStart` (`startup`, `resume`, `clear`): the memory block, as additional context.
//!   A resumed session that already holds the same block gets nothing.
//! - `SessionStart` (`compact`): the compaction dropped every earlier injection, so the reminder
//!   that earlier context was summarized, the goal restated and the memory block with the
//!   pinned instruction files (`CLAUDE.md`) come back together.
//! - `UserPromptSubmit`: the recall fence for the prompt, without the passages this session
//!   already received since its last compaction (kept in [`SessionState`]).
//! - `Stop`: the goal adapter ([`goal_steering::GoalStore::claude_code_stop`]).
//! - `PreCompact`: instructions for the summarizer to keep the goal and the rules.
//! - `SessionEnd`: the transcript is listed as ended (`ended.jsonl` in the state folder).
//!
//! Every answer stays under Claude Code's limit of [`MAX_OUTPUT_CHARS`] characters (a longer
//! output would reach the model only as a 2 KB preview); other events get no output.

mod instruction_files;
mod session_state;
pub mod settings;

use std::path::{Path, PathBuf};

use goal_steering::GoalStore;
use goal_steering::SteeringEvent;
use goal_steering::claude_code::StopHookInput;
use memory_introspect::{BlockOptions, Introspector};
use memory_prompts::UntrustedText;
use memory_prompts::hooks::{BeforeCompactionContext, after_compaction, before_compaction};
use memory_protocol::goal::ThreadGoalStatus;
use memory_sanitize::{TruncationPolicy, o200k, truncate_middle};
use serde::Deserialize;
use serde_json::json;

pub use session_state::SessionState;

use crate::error::{Error, Result};

/// The most characters Claude Code passes whole to the model from one hook output.
pub const MAX_OUTPUT_CHARS: usize = 10_000;
/// What an answer is held to: the limit, less room for Claude Code's own wrapping words.
const OUTPUT_BUDGET_BYTES: usize = 9_500;
/// Passages recalled per prompt.
pub const RECALL_HITS: usize = 3;

/// What Claude Code passes every hook (the fields these answers read; others are ignored).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct HookPayload {
    /// The session.
    pub session_id: String,
    /// The event: `SessionStart`, `UserPromptSubmit`, `Stop`, `PreCompact`, `SessionEnd`, ...
    pub hook_event_name: String,
    /// The session's transcript.
    #[serde(default)]
    pub transcript_path: Option<PathBuf>,
    /// The session's working directory.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// `SessionStart`: `startup`, `resume`, `clear` or `compact`.
    #[serde(default)]
    pub source: Option<String>,
    /// `UserPromptSubmit`: the prompt.
    #[serde(default)]
    pub prompt: Option<String>,
    /// `SessionEnd`: why it ended.
    #[serde(default)]
    pub reason: Option<String>,
}

impl HookPayload {
    /// Parses a hook's stdin.
    pub fn parse(text: &str) -> Result<HookPayload> {
        serde_json::from_str(text).map_err(Error::Payload)
    }
}

/// What a hook answers with.
pub struct HookContext<'a> {
    /// The home's memory.
    pub memory: &'a Introspector,
    /// The goal store (`None` when the host keeps no goals).
    pub goals: Option<&'a mut GoalStore>,
    /// Where per-session state is kept (`<home>/hooks/claude-code`).
    pub state_dir: PathBuf,
    /// Claude Code's configuration folder, for the user's own `CLAUDE.md`.
    pub claude_config_dir: Option<PathBuf>,
}

/// Answers one hook payload (the hook's whole stdin): the text to print, empty for nothing.
pub fn answer(stdin: &str, ctx: &mut HookContext<'_>) -> Result<String> {
    let payload = HookPayload::parse(stdin)?;
    let text = match payload.hook_event_name.as_str() {
        "SessionStart" => session_start(&payload, ctx)?,
        "UserPromptSubmit" => user_prompt_submit(&payload, ctx)?,
        "Stop" => return stop(stdin, ctx),
        "PreCompact" => return pre_compact(&payload, ctx),
        "SessionEnd" => {
            session_end(&payload, ctx)?;
            return Ok(String::new());
        }
        _ => return Ok(String::new()),
    };
    Ok(match text {
        Some(text) => additional_context(&payload.hook_event_name, &text),
        None => String::new(),
    })
}

/// The JSON form of added context, which Claude Code hands the model as a system message.
fn additional_context(event: &str, text: &str) -> String {
    let output = json!({
        "hookSpecificOutput": {"hookEventName": event, "additionalContext": text}
    });
    format!("{output}\n")
}

fn session_start(payload: &HookPayload, ctx: &mut HookContext<'_>) -> Result<Option<String>> {
    let mut state = SessionState::load(&ctx.state_dir, &payload.session_id)?;
    let compacted = payload.source.as_deref() == Some("compact");
    let text = if compacted {
        // Everything injected before is gone with the compaction: recall may offer it again.
        state.recalled.clear();
        Some(after_compaction_context(payload, ctx, &mut state)?)
    } else {
        let block = ctx.memory.render_block(&BlockOptions::default())?;
        let already = state.block_hash.as_deref() == Some(block.content_hash.as_str());
        if already || block.text.trim().is_empty() {
            None
        } else {
            ctx.memory.record_injection(&block.snapshot)?;
            state.block_hash = Some(block.content_hash);
            Some(fit(&block.text, OUTPUT_BUDGET_BYTES).into_owned())
        }
    };
    state.save(&ctx.state_dir, &payload.session_id)?;
    Ok(text)
}

/// The context after a compaction: the reminder, the goal restated, the memory block with the
/// pinned instruction files; the block loses its files, then its middle, to stay in budget.
fn after_compaction_context(
    payload: &HookPayload,
    ctx: &mut HookContext<'_>,
    state: &mut SessionState,
) -> Result<String> {
    let mut head = after_compaction()?;
    if let Some(goals) = ctx.goals.as_deref_mut()
        && let Some(steering) = goals.steering_for(&payload.session_id, SteeringEvent::Compacted)?
    {
        head.push_str("\n\n");
        head.push_str(&steering.text);
    }
    let head = fit(&head, OUTPUT_BUDGET_BYTES / 2).into_owned();
    let room = OUTPUT_BUDGET_BYTES.saturating_sub(head.len() + 2);
    let files = instruction_files::pinned(payload.cwd.as_deref(), ctx.claude_config_dir.as_deref());
    let mut block = ctx.memory.render_block(&BlockOptions {
        host_files: files,
        ..BlockOptions::default()
    })?;
    if block.text.len() > room {
        block = ctx.memory.render_block(&BlockOptions::default())?;
    }
    ctx.memory.record_injection(&block.snapshot)?;
    state.block_hash = Some(block.content_hash.clone());
    Ok(format!("{head}\n\n{}", fit(&block.text, room)))
}

fn user_prompt_submit(payload: &HookPayload, ctx: &mut HookContext<'_>) -> Result<Option<String>> {
    let Some(prompt) = payload.prompt.as_deref().filter(|p| !p.trim().is_empty()) else {
        return Ok(None);
    };
    let mut state = SessionState::load(&ctx.state_dir, &payload.session_id)?;
    let recall = ctx
        .memory
        .recall_excluding(prompt, RECALL_HITS, &state.recalled)?;
    if recall.text.trim().is_empty() {
        return Ok(None);
    }
    state.recalled.extend(recall.passages.iter().cloned());
    state.save(&ctx.state_dir, &payload.session_id)?;
    Ok(Some(fit(&recall.text, OUTPUT_BUDGET_BYTES).into_owned()))
}

fn stop(stdin: &str, ctx: &mut HookContext<'_>) -> Result<String> {
    let Some(goals) = ctx.goals.as_deref_mut() else {
        return Ok(String::new());
    };
    let input = StopHookInput::parse(stdin)?;
    let outcome = goals.claude_code_stop(&input, None)?;
    Ok(match outcome.block {
        Some(mut block) => {
            block.reason = fit(&block.reason, OUTPUT_BUDGET_BYTES).into_owned();
            format!(
                "{}\n",
                serde_json::to_string(&block).map_err(Error::Encode)?
            )
        }
        None => String::new(),
    })
}

/// Plain text, which Claude Code appends to the summarizer's instructions.
fn pre_compact(payload: &HookPayload, ctx: &mut HookContext<'_>) -> Result<String> {
    let objective = match ctx.goals.as_deref_mut() {
        Some(goals) => goals
            .get(&payload.session_id)?
            .filter(|goal| goal.status == ThreadGoalStatus::Active)
            .map(|goal| UntrustedText::new(goal.objective)),
        None => None,
    };
    let text = before_compaction(&BeforeCompactionContext { objective })?;
    Ok(fit(&text, OUTPUT_BUDGET_BYTES).into_owned())
}

/// The session's state stays: `--resume` continues the same history, which still holds what
/// was injected.
fn session_end(payload: &HookPayload, ctx: &mut HookContext<'_>) -> Result<()> {
    if let Some(transcript) = &payload.transcript_path {
        session_state::record_ended(
            &ctx.state_dir,
            &payload.session_id,
            transcript,
            payload.reason.as_deref(),
        )?;
    }
    Ok(())
}

/// `text` cut to at most `bytes` bytes (its head and tail kept, so a fence keeps its tags).
fn fit(text: &str, bytes: usize) -> std::borrow::Cow<'_, str> {
    truncate_middle(text, TruncationPolicy::Bytes(bytes), o200k())
}

/// The per-session state file of `session` under `state_dir` (for tests and `status`).
pub fn session_state_path(state_dir: &Path, session: &str) -> PathBuf {
    session_state::path(state_dir, session)
}
