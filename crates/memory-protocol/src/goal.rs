//! Thread goals: a long task that continues across turns under a token budget.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A thread's goal, camelCase on the wire. Times are Unix seconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ThreadGoal {
    /// The thread the goal belongs to.
    pub thread_id: String,
    /// What the user asked for.
    pub objective: String,
    /// Where the goal stands.
    pub status: ThreadGoalStatus,
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
    /// Paused by the user.
    Paused,
    /// Stopped on a blocker the audit confirmed.
    Blocked,
    /// Stopped because the account's usage limit was hit.
    UsageLimited,
    /// Stopped because the token budget is spent.
    BudgetLimited,
    /// Done, with the completion audit passed.
    Complete,
}

impl ThreadGoalStatus {
    /// True for statuses that end the goal (`budgetLimited`, `complete`).
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            ThreadGoalStatus::BudgetLimited | ThreadGoalStatus::Complete
        )
    }
}

/// Arguments of the `update_goal` tool: the model can only mark the goal complete or blocked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateGoalArgs {
    /// The new status.
    pub status: UpdateGoalStatus,
}

/// The statuses `update_goal` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UpdateGoalStatus {
    /// Every requirement is met and verified.
    Complete,
    /// The same blocker stopped progress on three consecutive goal turns.
    Blocked,
}

/// Arguments of the `create_goal` tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateGoalArgs {
    /// What to achieve (at most 4,000 characters after trimming).
    pub objective: String,
    /// Token budget; the configured maximum when absent.
    #[serde(default)]
    pub token_budget: Option<i64>,
}

/// What the goal tools return, camelCase on the wire.
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
