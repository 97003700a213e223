//! The Claude Code host adapter: a `Stop` hook that records the turn that just ended and keeps
//! the goal going.
//!
//! Claude Code runs a `Stop` hook when the model ends its turn and passes it JSON on stdin
//! ([`StopHookInput`]). [`GoalStore::claude_code_stop`] reads the session transcript the payload
//! names, records the turn that just ended with the tokens its API answers reported, and then
//! asks for the next steering message: while the goal is active the answer is a block
//! (`{"decision": "block", "reason": <continuation>}`), which makes Claude Code send the reason
//! to the model as a new turn; otherwise nothing, and Claude Code stops. Claude Code never
//! stops a hook that keeps blocking, so the goal's own stops (pause, block, budget, complete,
//! the circuit breaker after three idle continuations) are what end the loop.
//!
//! The transcript is JSONL. A turn starts at a `user` line whose content is text (the user's
//! prompt, or the `Stop hook feedback` Claude Code writes after a block) and runs to the end of
//! the file. Every content block of an API answer is its own `assistant` line carrying the
//! whole `message.usage`, so usage is counted once per `message.id`. A turn is identified by
//! the id of its last API answer, so a hook run twice on the same transcript charges once.

use std::io::Read;
use std::path::{Path, PathBuf};

use memory_protocol::goal::{
    GoalAccountResult, GoalSteering, GoalSteeringKind, GoalTurnTrigger, ThreadGoalStatus,
};
use memory_transcript::claude_code::{AnswerBlock, parse_transcript};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::store::{GoalStore, TurnTokens, TurnUsage};

/// The most transcript bytes read; a longer file is read from its end (the last turn is there).
pub const MAX_TRANSCRIPT_BYTES: u64 = 64 * 1024 * 1024;

/// Tool names that are the goal tools themselves (as Claude Code names MCP tools, the server's
/// prefix before them); calls to them do not count as work for the circuit breaker.
const GOAL_TOOL_SUFFIXES: [&str; 3] = ["get_goal", "update_goal", "create_goal"];

/// What Claude Code passes a `Stop` hook on stdin (fields this adapter reads; others ignored).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct StopHookInput {
    /// The session, which is the goal's thread unless the host names another.
    pub session_id: String,
    /// The session transcript (JSONL).
    pub transcript_path: PathBuf,
    /// True when the turn that just ended was started by this hook's previous block.
    #[serde(default)]
    pub stop_hook_active: bool,
    /// The text of the model's last answer.
    #[serde(default)]
    pub last_assistant_message: Option<String>,
    /// The event name, `Stop` (or `SubagentStop`, which this adapter ignores).
    #[serde(default)]
    pub hook_event_name: Option<String>,
}

impl StopHookInput {
    /// Parses the hook's stdin.
    pub fn parse(text: &str) -> Result<StopHookInput> {
        serde_json::from_str(text).map_err(Error::StopPayload)
    }
}

/// What the hook prints for Claude Code: a block that continues the session with `reason`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StopHookBlock {
    /// Always `block`.
    pub decision: &'static str,
    /// The steering message, which Claude Code hands the model as the next turn's input.
    pub reason: String,
}

/// What one `Stop` event came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopHookOutcome {
    /// The turn as recorded; `None` when the thread has no goal (nothing is recorded).
    pub account: Option<GoalAccountResult>,
    /// The block to print while the goal is active; `None` lets Claude Code stop.
    pub block: Option<StopHookBlock>,
}

/// The last turn of a Claude Code transcript, as the goal store charges it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptTurn {
    /// A stable id: the last API answer's `message.id` (or the opening line's `uuid`).
    pub turn_id: String,
    /// Input tokens, cache reads and writes included.
    pub input_tokens: i64,
    /// Cache-read input tokens.
    pub cached_input_tokens: i64,
    /// Output tokens.
    pub output_tokens: i64,
    /// Tool calls other than the goal tools.
    pub tool_calls: i64,
    /// API answers counted (distinct `message.id`s).
    pub answers: usize,
}

/// Reads the last turn of the transcript text `jsonl` (with `memory-transcript`'s Claude Code
/// reader, which merges the lines of one answer). Lines that are not JSON objects, and line
/// kinds the reader does not know, are skipped; a transcript without any turn is an error.
pub fn last_turn(jsonl: &str) -> Result<TranscriptTurn> {
    let transcript = parse_transcript(jsonl);
    let turn = transcript.last_turn().ok_or_else(|| {
        Error::HookInput("the transcript holds no turn (no user prompt line)".to_owned())
    })?;
    let (mut input, mut cached, mut output, mut tool_calls) = (0i64, 0i64, 0i64, 0i64);
    for answer in &turn.answers {
        for block in &answer.blocks {
            if let AnswerBlock::ToolUse(call) = block
                && !GOAL_TOOL_SUFFIXES
                    .iter()
                    .any(|goal| call.name.ends_with(goal))
            {
                tool_calls = tool_calls.saturating_add(1);
            }
        }
        // An answer without an id cannot be told from a repeat of another: it is not charged.
        if answer.message_id.is_some() {
            input = input.saturating_add(answer.usage.total_input());
            cached = cached.saturating_add(answer.usage.cache_read_input_tokens);
            output = output.saturating_add(answer.usage.output_tokens);
        }
    }
    let last_answer = turn
        .answers
        .iter()
        .rev()
        .find_map(|answer| answer.message_id.as_deref());
    let turn_id = last_answer.or(turn.opening_uuid).ok_or_else(|| {
        Error::HookInput(
            "the transcript's last turn has neither an answer id nor a line uuid".to_owned(),
        )
    })?;
    Ok(TranscriptTurn {
        turn_id: format!("claude-code:{turn_id}"),
        input_tokens: input,
        cached_input_tokens: cached,
        output_tokens: output,
        tool_calls,
        answers: turn
            .answers
            .iter()
            .filter(|answer| answer.message_id.is_some())
            .count(),
    })
}

/// Reads at most [`MAX_TRANSCRIPT_BYTES`] of the transcript at `path` (its end when longer).
pub fn read_transcript(path: &Path) -> Result<String> {
    use std::io::{Seek, SeekFrom};
    let io = |error| Error::Io {
        path: path.to_owned(),
        error,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    if len > MAX_TRANSCRIPT_BYTES {
        file.seek(SeekFrom::Start(len - MAX_TRANSCRIPT_BYTES))
            .map_err(io)?;
    }
    let mut bytes = Vec::new();
    file.take(MAX_TRANSCRIPT_BYTES)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

impl GoalStore {
    /// Handles Claude Code's `Stop` event for the goal of `thread` (the session id when
    /// `None`): records the turn that ended (tokens from the transcript, a continuation when
    /// `stop_hook_active`), then returns the block that continues the goal while it is active.
    /// A thread without a goal records nothing and never blocks; a `SubagentStop` is ignored.
    pub fn claude_code_stop(
        &mut self,
        input: &StopHookInput,
        thread: Option<&str>,
    ) -> Result<StopHookOutcome> {
        let nothing = StopHookOutcome {
            account: None,
            block: None,
        };
        if input
            .hook_event_name
            .as_deref()
            .is_some_and(|name| name != "Stop")
        {
            return Ok(nothing);
        }
        let thread = thread.unwrap_or(&input.session_id);
        if self.get(thread)?.is_none() {
            return Ok(nothing);
        }
        let turn = last_turn(&read_transcript(&input.transcript_path)?)?;
        let usage = TurnUsage {
            turn_id: turn.turn_id,
            trigger: if input.stop_hook_active {
                GoalTurnTrigger::Continuation
            } else {
                GoalTurnTrigger::User
            },
            plan_mode: false,
            tokens: TurnTokens::Breakdown {
                input: turn.input_tokens,
                cached_input: turn.cached_input_tokens,
                output: turn.output_tokens,
            },
            seconds: 0,
            tool_calls: turn.tool_calls,
            error: None,
        };
        let account = self.record_turn(thread, None, &usage)?;
        // Only an active goal continues. A goal that stopped leaves its notices (the
        // budget-limit wrap-up) to a host that can deliver them inside a turn.
        let steering = if account.goal.status == ThreadGoalStatus::Active {
            self.next_steering(thread)?
        } else {
            None
        };
        let block = steering.filter(continues).map(|steering| StopHookBlock {
            decision: "block",
            reason: steering.text,
        });
        Ok(StopHookOutcome {
            account: Some(account),
            block,
        })
    }
}

/// Whether `steering` asks the model to keep working (the goal is active).
fn continues(steering: &GoalSteering) -> bool {
    matches!(
        steering.kind,
        GoalSteeringKind::Continuation | GoalSteeringKind::ObjectiveUpdated
    )
}
