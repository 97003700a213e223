//! Thread goals: a long task that continues across turns under a token budget.
//!
//! A thread has at most one goal. The user sets, edits, pauses, resumes and budgets it; the
//! model can only report it complete or blocked (`update_goal`), and, where the host allows,
//! create one without a budget (`create_goal`). Everything here is camelCase on the wire.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Most characters an objective may have, counted after trimming.
pub const MAX_OBJECTIVE_CHARS: usize = 4_000;

/// The objective as stored: `objective` trimmed, or a clear error when the trimmed text is empty
/// or longer than [`MAX_OBJECTIVE_CHARS`] characters.
pub fn validate_objective(objective: &str) -> Result<&str> {
    let trimmed = objective.trim();
    if trimmed.is_empty() {
        return Err(Error::EmptyObjective);
    }
    let chars = trimmed.chars().count();
    if chars > MAX_OBJECTIVE_CHARS {
        return Err(Error::ObjectiveTooLong {
            chars,
            max: MAX_OBJECTIVE_CHARS,
        });
    }
    Ok(trimmed)
}

/// A thread's goal, camelCase on the wire. Times are Unix seconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ThreadGoal {
    /// The thread the goal belongs to.
    pub thread_id: String,
    /// This goal's id; a replaced goal gets a new one, so an update naming the old id is refused.
    pub goal_id: String,
    /// What the user asked for.
    pub objective: String,
    /// Where the goal stands.
    pub status: ThreadGoalStatus,
    /// Why the goal is in its status (the blocker, the breaker, the turn error, the evidence of
    /// completion); `None` while active.
    pub status_reason: Option<String>,
    /// Token budget, when one was set.
    pub token_budget: Option<i64>,
    /// Tokens spent on the goal so far.
    pub tokens_used: i64,
    /// Wall-clock seconds spent on the goal so far.
    pub time_used_seconds: i64,
    /// When the goal was created.
    pub created_at: i64,
    /// When the goal last changed.
    pub updated_at: i64,
}

impl ThreadGoal {
    /// Tokens left in the budget, never negative; `None` without a budget.
    pub fn remaining_tokens(&self) -> Option<i64> {
        self.token_budget
            .map(|budget| budget.saturating_sub(self.tokens_used).max(0))
    }
}

/// Goal status, camelCase on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadGoalStatus {
    /// Being worked on; continues automatically when the thread is idle.
    Active,
    /// Paused by the user, or by the circuit breaker after idle continuations.
    Paused,
    /// Stopped on a blocker the audit confirmed, or by a turn error.
    Blocked,
    /// Stopped because the account's usage limit was hit.
    UsageLimited,
    /// Stopped because the token budget is spent.
    BudgetLimited,
    /// Done, with the completion audit passed.
    Complete,
}

impl ThreadGoalStatus {
    /// Every status, in the order of the transition table.
    pub const ALL: [ThreadGoalStatus; 6] = [
        ThreadGoalStatus::Active,
        ThreadGoalStatus::Paused,
        ThreadGoalStatus::Blocked,
        ThreadGoalStatus::UsageLimited,
        ThreadGoalStatus::BudgetLimited,
        ThreadGoalStatus::Complete,
    ];

    /// True for statuses that end the goal (`budgetLimited`, `complete`).
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            ThreadGoalStatus::BudgetLimited | ThreadGoalStatus::Complete
        )
    }

    /// The status in words, as messages show it (`usage-limited`, `budget-limited`, ...).
    pub fn label(self) -> &'static str {
        match self {
            ThreadGoalStatus::Active => "active",
            ThreadGoalStatus::Paused => "paused",
            ThreadGoalStatus::Blocked => "blocked",
            ThreadGoalStatus::UsageLimited => "usage-limited",
            ThreadGoalStatus::BudgetLimited => "budget-limited",
            ThreadGoalStatus::Complete => "complete",
        }
    }
}

impl std::fmt::Display for ThreadGoalStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// Arguments of the `update_goal` tool: the model can only mark the goal complete or blocked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateGoalArgs {
    /// The new status.
    pub status: UpdateGoalStatus,
    /// For "blocked": the blocker and what is needed from outside to remove it, worded the same
    /// on every report. For "complete": the evidence that proves each requirement.
    #[serde(default)]
    pub reason: Option<String>,
    /// The id of the goal this report is about, as `get_goal` showed it; a report naming a goal
    /// the thread no longer has is refused with the current goal. Optional.
    #[serde(default)]
    pub goal_id: Option<String>,
}

/// The statuses `update_goal` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UpdateGoalStatus {
    /// Every requirement is met and proven by evidence.
    Complete,
    /// A blocker only the user or the outside world can remove; accepted on the third
    /// consecutive goal turn that reports the same one.
    Blocked,
}

/// Arguments of the `create_goal` tool. There is no budget: budgets are the user's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateGoalArgs {
    /// What to achieve, as the user asked for it (at most 4,000 characters after trimming).
    pub objective: String,
}

/// What the goal tools return when they do what was asked, camelCase on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GoalToolResponse {
    /// The goal after the call, if the thread has one.
    pub goal: Option<ThreadGoal>,
    /// Tokens left, `max(budget - used, 0)`, when the goal has a budget.
    pub remaining_tokens: Option<i64>,
    /// After a completion: what to report about the budget spent.
    pub completion_budget_report: Option<String>,
}

/// What the goal tools return when they refuse a call, camelCase on the wire. Nothing about
/// the call changes if it is repeated, so a refusal is never retryable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GoalToolRefusal {
    /// Why the call was refused.
    pub code: GoalRefusalCode,
    /// What was refused, why, and what is still needed.
    pub message: String,
    /// Whether repeating the same call could succeed; always false.
    pub retryable: bool,
    /// For a blocked report: the consecutive goal turns that reported the current blocker.
    pub reports_so_far: Option<u32>,
    /// For a blocked report: how many consecutive reports the audit needs.
    pub reports_required: Option<u32>,
    /// The goal as it stands, if the thread has one.
    pub goal: Option<ThreadGoal>,
}

/// Why a goal tool refused a call, camelCase on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum GoalRefusalCode {
    /// The arguments do not match the tool's schema, or ask for something only the user can do.
    InvalidArguments,
    /// The thread has no goal.
    NoGoal,
    /// The thread already has an unfinished goal; only the user can replace it.
    UnfinishedGoal,
    /// The goal changed (it was replaced) since the turn began.
    StaleGoal,
    /// The user changed the objective and the model has not seen the new one yet; the refusal
    /// carries it.
    ObjectiveUpdated,
    /// The goal's status does not allow this report (it is paused, limited or complete).
    StatusNotAllowed,
    /// A blocked report needs a reason that names the blocker.
    ReasonRequired,
    /// The blocker was counted; the audit needs more consecutive goal turns reporting it.
    BlockedAuditPending,
    /// This blocker was already reported in the current turn; it counts once per turn.
    AlreadyReportedThisTurn,
}

/// What starts a goal turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum GoalTurnTrigger {
    /// The user sent a message.
    User,
    /// The host sent the goal's continuation while the thread was idle.
    Continuation,
}

/// How a turn ended in error, when it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum GoalTurnError {
    /// The account's usage limit was hit; an active goal becomes usage-limited.
    UsageLimit,
    /// Any other error that ended the turn; an active goal becomes blocked.
    Other,
}

/// One turn as the goal store recorded it, camelCase on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GoalTurnRecord {
    /// The turn's id, unique within its goal.
    pub turn_id: String,
    /// The goal the turn was charged to.
    pub goal_id: String,
    /// What started the turn.
    pub trigger: GoalTurnTrigger,
    /// Plan-mode turns are recorded but not charged.
    pub plan_mode: bool,
    /// Input tokens, when the host reported the breakdown.
    pub input_tokens: Option<i64>,
    /// Cached input tokens, when the host reported the breakdown.
    pub cached_input_tokens: Option<i64>,
    /// Output tokens, when the host reported the breakdown.
    pub output_tokens: Option<i64>,
    /// Tokens charged to the goal: input minus cached input plus output; zero in plan mode.
    pub tokens_charged: i64,
    /// Wall-clock seconds of the turn.
    pub seconds: i64,
    /// Tool calls other than the goal tools.
    pub tool_calls: i64,
    /// Goal-tool calls made during the turn.
    pub goal_tool_calls: i64,
    /// Goal-tool calls refused during the turn.
    pub refused_goal_tool_calls: i64,
    /// How the turn ended in error, if it did.
    pub error: Option<GoalTurnError>,
    /// The goal's status once the turn was recorded.
    pub status_after: ThreadGoalStatus,
    /// When the turn was recorded.
    pub recorded_at: i64,
}

/// What recording a turn did, camelCase on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GoalAccountResult {
    /// The goal after the turn.
    pub goal: ThreadGoal,
    /// The turn as recorded.
    pub turn: GoalTurnRecord,
    /// True when this turn spent the last of the budget and switched the goal to budget-limited.
    pub budget_limit_reached: bool,
    /// True when this turn tripped the circuit breaker and paused the goal.
    pub breaker_tripped: bool,
    /// True when the turn id was already recorded: this call charged and counted nothing, and
    /// `turn` echoes the request with nothing charged.
    #[serde(default)]
    pub already_recorded: bool,
}

/// A hidden message the host sends as user-role input the UI does not show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GoalSteering {
    /// Which prompt it is.
    pub kind: GoalSteeringKind,
    /// The internal-context source, always `goal`.
    pub source: String,
    /// The message text, wrapped in the internal-context tag.
    pub text: String,
}

/// Which steering prompt a [`GoalSteering`] carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum GoalSteeringKind {
    /// Keep working toward the active goal.
    Continuation,
    /// The budget is spent: wrap up. Sent once per budget-limited stop.
    BudgetLimit,
    /// The user edited the objective. Sent once per edit.
    ObjectiveUpdated,
    /// The host compacted the conversation: the active goal restated (objective, budget, the
    /// completion and blocked audits) for the next request, whether or not a continuation is
    /// due. It is not a continuation: nothing about the goal changes.
    AfterCompaction,
}
