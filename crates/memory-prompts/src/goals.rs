//! Goal-steering prompts: the hidden continuation prompt, the budget-limit wrap-up and the
//! objective-updated notice. Objectives are escaped as XML text, so they cannot form any tag.

use memory_protocol::goal::ThreadGoal;

use crate::engine::Vars;
use crate::error::Result;
use crate::registry::goals::{BUDGET_LIMIT, CONTINUATION, OBJECTIVE_UPDATED};
use crate::untrusted::UntrustedText;

/// Shown for the budget when the goal has none.
pub const NO_BUDGET: &str = "none";
/// Shown for the remaining tokens when the goal has no budget.
pub const UNBOUNDED: &str = "unbounded";

/// A goal's token accounting, as the prompts show it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GoalBudget {
    /// Tokens spent on the goal so far.
    pub tokens_used: i64,
    /// The token budget, when one was set.
    pub token_budget: Option<i64>,
}

impl GoalBudget {
    /// `max(0, budget - used)`; `None` without a budget.
    pub fn remaining_tokens(&self) -> Option<i64> {
        self.token_budget
            .map(|budget| budget.saturating_sub(self.tokens_used).max(0))
    }

    /// `tokens_used`, `token_budget` (or [`NO_BUDGET`]) and `tokens_remaining` (or
    /// [`UNBOUNDED`]).
    fn add_to(self, vars: Vars) -> Vars {
        let vars = vars.number("tokens_used", self.tokens_used);
        match (self.token_budget, self.remaining_tokens()) {
            (Some(budget), Some(remaining)) => vars
                .number("token_budget", budget)
                .number("tokens_remaining", remaining),
            _ => vars
                .constant("token_budget", NO_BUDGET)
                .constant("tokens_remaining", UNBOUNDED),
        }
    }
}

impl From<&ThreadGoal> for GoalBudget {
    fn from(goal: &ThreadGoal) -> Self {
        Self {
            tokens_used: goal.tokens_used,
            token_budget: goal.token_budget,
        }
    }
}

/// What the continuation prompt is rendered from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContinuationContext {
    /// The goal's objective.
    pub objective: UntrustedText,
    /// Its token accounting.
    pub budget: GoalBudget,
}

impl From<&ThreadGoal> for ContinuationContext {
    fn from(goal: &ThreadGoal) -> Self {
        Self {
            objective: UntrustedText::new(goal.objective.as_str()),
            budget: goal.into(),
        }
    }
}

/// The continuation prompt, sent when the thread is idle and its goal is active: the objective
/// in `<objective>`, the budget lines, and the audited complete and blocked exits.
pub fn continuation(ctx: &ContinuationContext) -> Result<String> {
    continuation_vars(ctx).render()
}

pub(crate) fn continuation_vars(ctx: &ContinuationContext) -> Vars {
    let vars = Vars::new(&CONTINUATION).xml_text("objective", &ctx.objective);
    ctx.budget.add_to(vars)
}

/// What the budget-limit prompt is rendered from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BudgetLimitContext {
    /// The goal's objective.
    pub objective: UntrustedText,
    /// Wall-clock seconds spent on the goal.
    pub time_used_seconds: i64,
    /// Its token accounting.
    pub budget: GoalBudget,
}

impl From<&ThreadGoal> for BudgetLimitContext {
    fn from(goal: &ThreadGoal) -> Self {
        Self {
            objective: UntrustedText::new(goal.objective.as_str()),
            time_used_seconds: goal.time_used_seconds,
            budget: goal.into(),
        }
    }
}

/// The budget-limit prompt, injected once when the goal's budget runs out: wrap up, report.
pub fn budget_limit(ctx: &BudgetLimitContext) -> Result<String> {
    budget_limit_vars(ctx).render()
}

pub(crate) fn budget_limit_vars(ctx: &BudgetLimitContext) -> Vars {
    let vars = Vars::new(&BUDGET_LIMIT)
        .xml_text("objective", &ctx.objective)
        .number("time_used_seconds", ctx.time_used_seconds);
    ctx.budget.add_to(vars)
}

/// What the objective-updated prompt is rendered from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectiveUpdatedContext {
    /// The new objective.
    pub objective: UntrustedText,
    /// The goal's token accounting.
    pub budget: GoalBudget,
}

impl From<&ThreadGoal> for ObjectiveUpdatedContext {
    fn from(goal: &ThreadGoal) -> Self {
        Self {
            objective: UntrustedText::new(goal.objective.as_str()),
            budget: goal.into(),
        }
    }
}

/// The objective-updated prompt, injected when the user edits an active goal's objective: the
/// new objective supersedes the old one.
pub fn objective_updated(ctx: &ObjectiveUpdatedContext) -> Result<String> {
    objective_updated_vars(ctx).render()
}

pub(crate) fn objective_updated_vars(ctx: &ObjectiveUpdatedContext) -> Vars {
    let vars = Vars::new(&OBJECTIVE_UPDATED).xml_text("objective", &ctx.objective);
    ctx.budget.add_to(vars)
}
