//! Recording a turn: charging its tokens and time, closing the blocked audit's turn, the
//! circuit breaker, and turn errors.
//!
//! The charge and the switch to budget-limited are one `UPDATE ... RETURNING` statement
//! ([`super::GoalTx::charge`]): the
//! budget check reads the usage the same statement writes, so no interleaving of writers can
//! leave an active goal at or above its budget (the table's `CHECK` constraint would refuse it
//! anyway). Everything else a turn changes happens in the same transaction.

use super::backend::TurnInsert;
use super::{BUDGET_LIMIT_REASON, GoalStore, read_expected};
use crate::error::{Error, Result};
use crate::status::{SystemEvent, system_transition};
use crate::steering::render_steering;
use memory_protocol::goal::{
    GoalAccountResult, GoalSteering, GoalSteeringKind, GoalTurnError, GoalTurnRecord,
    GoalTurnTrigger, ThreadGoalStatus,
};

/// Most tokens one turn may report (any one count, and the charge).
pub const MAX_TURN_TOKENS: i64 = 1_000_000_000_000;
/// Most seconds one turn may report.
pub const MAX_TURN_SECONDS: i64 = 1_000_000_000;
/// Consecutive idle continuation turns that trip the circuit breaker.
pub const IDLE_CONTINUATION_LIMIT: u32 = 3;
/// Longest turn id accepted, in characters.
const MAX_TURN_ID_CHARS: usize = 200;

/// A turn's tokens, as the host reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnTokens {
    /// The tokens to charge, already computed.
    Charged(i64),
    /// The usage breakdown; the charge is `input - cached_input + output`.
    Breakdown {
        /// Input tokens, cached ones included.
        input: i64,
        /// Cached input tokens.
        cached_input: i64,
        /// Output tokens.
        output: i64,
    },
}

impl TurnTokens {
    /// The tokens to charge, or why they cannot be charged.
    pub fn charge(self) -> Result<i64> {
        let check = |name: &str, value: i64| {
            if (0..=MAX_TURN_TOKENS).contains(&value) {
                Ok(value)
            } else {
                Err(Error::InvalidTurn(format!(
                    "{name} must be between 0 and {MAX_TURN_TOKENS}, got {value}"
                )))
            }
        };
        match self {
            TurnTokens::Charged(tokens) => check("tokens", tokens),
            TurnTokens::Breakdown {
                input,
                cached_input,
                output,
            } => {
                let input = check("input tokens", input)?;
                let cached = check("cached input tokens", cached_input)?;
                let output = check("output tokens", output)?;
                if cached > input {
                    return Err(Error::InvalidTurn(format!(
                        "cached input tokens ({cached}) exceed input tokens ({input})"
                    )));
                }
                check("the charge", input - cached + output)
            }
        }
    }
}

/// One finished turn, as the host reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnUsage {
    /// The turn's id, stable across retries (the host's own turn id, or one derived from it):
    /// recording the same id again charges nothing.
    pub turn_id: String,
    /// What started the turn.
    pub trigger: GoalTurnTrigger,
    /// Plan-mode turns are recorded but not charged.
    pub plan_mode: bool,
    /// The turn's tokens.
    pub tokens: TurnTokens,
    /// Wall-clock seconds of the turn.
    pub seconds: i64,
    /// Tool calls other than the goal tools.
    pub tool_calls: i64,
    /// How the turn ended in error, if it did.
    pub error: Option<GoalTurnError>,
}

impl GoalStore {
    /// Records a finished turn of the thread's goal, in one transaction:
    ///
    /// - charges its tokens (none in plan mode) and seconds, switching an active goal to
    ///   budget-limited in the same statement when usage reaches the budget; a goal in any
    ///   other status is still charged, since the turn spent the tokens;
    /// - if the goal was active, closes the blocked audit's turn (a turn without a blocked
    ///   report resets the count) and counts it for the circuit breaker: a continuation turn
    ///   without a tool call other than goal tools is idle, and the third idle one in a row
    ///   pauses the goal; a user turn or a working continuation resets the count;
    /// - a usage-limit error moves an active goal to usage-limited, any other error to blocked.
    pub fn record_turn(
        &mut self,
        thread_id: &str,
        expected_goal_id: Option<&str>,
        usage: &TurnUsage,
    ) -> Result<GoalAccountResult> {
        let charge = if usage.plan_mode {
            usage.tokens.charge().map(|_| 0)?
        } else {
            usage.tokens.charge()?
        };
        if !(0..=MAX_TURN_SECONDS).contains(&usage.seconds) {
            return Err(Error::InvalidTurn(format!(
                "seconds must be between 0 and {MAX_TURN_SECONDS}, got {}",
                usage.seconds
            )));
        }
        if usage.tool_calls < 0 {
            return Err(Error::InvalidTurn(format!(
                "tool calls must not be negative, got {}",
                usage.tool_calls
            )));
        }
        validate_turn_id(&usage.turn_id)?;
        let now = self.now_ms();
        let mut tx = self.write(thread_id)?;
        let before = read_expected(tx.as_mut(), thread_id, expected_goal_id)?;
        let seq = tx.turn_count(&before.goal_id)?;
        let turn_id = usage.turn_id.clone();
        let mut turn = GoalTurnRecord {
            turn_id,
            goal_id: before.goal_id.clone(),
            trigger: usage.trigger,
            plan_mode: usage.plan_mode,
            input_tokens: None,
            cached_input_tokens: None,
            output_tokens: None,
            tokens_charged: charge,
            seconds: usage.seconds,
            tool_calls: usage.tool_calls,
            goal_tool_calls: 0,
            refused_goal_tool_calls: 0,
            error: usage.error,
            status_after: before.status,
            recorded_at: now.div_euclid(1000),
        };
        if let TurnTokens::Breakdown {
            input,
            cached_input,
            output,
        } = usage.tokens
        {
            turn.input_tokens = Some(input);
            turn.cached_input_tokens = Some(cached_input);
            turn.output_tokens = Some(output);
        }
        if tx.turn_recorded(&before.goal_id, &turn.turn_id)? {
            // A retry of a recorded turn: nothing is charged or counted again.
            turn.tokens_charged = 0;
            turn.seconds = 0;
            return Ok(GoalAccountResult {
                goal: before.to_goal(),
                turn,
                budget_limit_reached: false,
                breaker_tripped: false,
                already_recorded: true,
            });
        }
        // Tokens a mid-turn budget check already charged for this turn are not charged twice.
        let charge = charge
            .saturating_sub(before.charged_mid_turn(&turn.turn_id))
            .max(0);

        // The charge and the budget check, in one statement.
        let status_after_charge = tx.charge(&before.charge(charge, usage.seconds, now))?;
        let budget_limit_reached = before.status == ThreadGoalStatus::Active
            && status_after_charge == ThreadGoalStatus::BudgetLimited;

        let mut row = read_expected(tx.as_mut(), thread_id, Some(&before.goal_id))?;
        let goal_tool_calls = row.turn_goal_tool_calls;
        let refused_goal_tool_calls = row.turn_refused_goal_tool_calls;
        row.turn_goal_tool_calls = 0;
        row.turn_refused_goal_tool_calls = 0;
        row.partial_turn_id = None;
        row.partial_turn_tokens = 0;
        let mut breaker_tripped = false;
        if before.status == ThreadGoalStatus::Active {
            row.audit.close_turn();
            row.idle_continuations = match (usage.trigger, usage.tool_calls) {
                (GoalTurnTrigger::Continuation, 0) => row.idle_continuations.saturating_add(1),
                _ => 0,
            };
            let event = match usage.error {
                Some(GoalTurnError::UsageLimit) => Some(SystemEvent::UsageLimitError),
                Some(GoalTurnError::Other) => Some(SystemEvent::TurnError),
                None if row.idle_continuations >= IDLE_CONTINUATION_LIMIT => {
                    Some(SystemEvent::BreakerTripped)
                }
                None => None,
            };
            if let Some(event) = event {
                let to = system_transition(row.status, event);
                if to != row.status {
                    breaker_tripped = event == SystemEvent::BreakerTripped;
                    row.enter(to, Some(event_reason(event, refused_goal_tool_calls)));
                    row.idle_continuations = 0;
                    row.audit.reset();
                }
            }
        }
        tx.write_row(&row)?;

        turn.goal_tool_calls = goal_tool_calls;
        turn.refused_goal_tool_calls = refused_goal_tool_calls;
        turn.status_after = row.status;
        tx.insert_turn(&TurnInsert {
            thread_id: &row.thread_id,
            seq: seq + 1,
            turn: &turn,
            recorded_at_ms: now,
        })?;
        tx.commit()?;
        Ok(GoalAccountResult {
            goal: row.to_goal(),
            turn,
            budget_limit_reached,
            breaker_tripped,
            already_recorded: false,
        })
    }

    /// Ends the open goal turn without recording one, for hosts that cannot report turns (an
    /// MCP client; see [`crate::GapTurns`]): the blocked audit's turn closes (a turn without a
    /// blocked report breaks the streak, and the next report counts for a new turn). Nothing
    /// is charged and the circuit breaker does not count it. No goal, or a goal that is not
    /// active, is left alone.
    pub fn end_open_turn(&mut self, thread_id: &str) -> Result<()> {
        super::validate_thread_id(thread_id)?;
        let mut tx = self.write(thread_id)?;
        let Some(mut row) = tx.read_row(thread_id)? else {
            return Ok(());
        };
        if row.status != ThreadGoalStatus::Active {
            return Ok(());
        }
        row.audit.close_turn();
        tx.write_row(&row)?;
        tx.commit()
    }

    /// The budget check at a tool finish inside a running turn: charges what the turn
    /// `turn_id` has spent so far (`tokens`, cumulative for the turn) beyond what earlier
    /// checks of the same turn charged, and, when that brings an active goal to its budget,
    /// switches it to budget-limited and returns the budget-limit prompt to inject into the
    /// running turn, once (it is not handed out again between turns). [`GoalStore::record_turn`]
    /// with the same turn id later charges only the rest.
    pub fn check_budget_mid_turn(
        &mut self,
        thread_id: &str,
        expected_goal_id: Option<&str>,
        turn_id: &str,
        tokens: TurnTokens,
    ) -> Result<Option<GoalSteering>> {
        validate_turn_id(turn_id)?;
        let so_far = tokens.charge()?;
        let now = self.now_ms();
        let mut tx = self.write(thread_id)?;
        let before = read_expected(tx.as_mut(), thread_id, expected_goal_id)?;
        if before.status != ThreadGoalStatus::Active
            || tx.turn_recorded(&before.goal_id, turn_id)?
        {
            return Ok(None);
        }
        let already = before.charged_mid_turn(turn_id);
        let delta = so_far.saturating_sub(already).max(0);
        let status = tx.charge(&before.charge(delta, 0, now))?;
        let mut row = read_expected(tx.as_mut(), thread_id, Some(&before.goal_id))?;
        row.partial_turn_id = Some(turn_id.to_owned());
        row.partial_turn_tokens = already.saturating_add(delta);
        let steering = if status == ThreadGoalStatus::BudgetLimited {
            // Delivered now, inside the turn: no extra turn is spent on the wrap-up notice.
            row.budget_notice_pending = false;
            Some(render_steering(
                GoalSteeringKind::BudgetLimit,
                &row.to_goal(),
            )?)
        } else {
            None
        };
        tx.write_row(&row)?;
        tx.commit()?;
        Ok(steering)
    }
}

/// The status reason a system event leaves on the goal.
fn event_reason(event: SystemEvent, refused_goal_tool_calls: i64) -> String {
    match event {
        SystemEvent::BudgetSpent => BUDGET_LIMIT_REASON.to_owned(),
        SystemEvent::UsageLimitError => "a turn hit the account's usage limit".to_owned(),
        SystemEvent::TurnError => "a turn ended with an error".to_owned(),
        SystemEvent::BreakerTripped => format!(
            "circuit breaker: {IDLE_CONTINUATION_LIMIT} consecutive continuation turns made no \
             tool call other than goal tools ({refused_goal_tool_calls} refused goal-tool calls \
             in the last one); resume the goal to continue"
        ),
    }
}

/// A turn id: not empty, at most 200 characters, no control characters.
fn validate_turn_id(turn_id: &str) -> Result<()> {
    if turn_id.trim().is_empty()
        || turn_id.chars().count() > MAX_TURN_ID_CHARS
        || turn_id.chars().any(char::is_control)
    {
        return Err(Error::InvalidTurn(format!(
            "a turn id must be 1 to {MAX_TURN_ID_CHARS} characters without control characters"
        )));
    }
    Ok(())
}
