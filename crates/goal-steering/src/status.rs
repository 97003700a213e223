//! The goal status machine: which action is legal from which status, and where it leads.
//!
//! Two kinds of change exist. [`GoalAction`]s are asked for by the user (`set`, `edit`,
//! `budget`, `pause`, `resume`, `clear`) or the model (`update_goal`); an illegal one is an
//! [`InvalidTransition`] that names the legal next actions. [`SystemEvent`]s happen to a goal
//! (its budget runs out, a turn fails, the circuit breaker trips); they never fail and only
//! move an active goal. `docs/goals.md` holds the same table; the tests walk every cell.

use memory_protocol::goal::ThreadGoalStatus;

/// Something a user or the model asks to do with a goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GoalAction {
    /// Set a new goal while the old one is complete.
    Set,
    /// Set a new goal in place of the current one, whatever its status.
    Replace,
    /// Change the objective, keeping usage and budget.
    Edit,
    /// Raise, lower or remove the token budget.
    Budget,
    /// Stop continuation until resumed.
    Pause,
    /// Continue a paused, blocked or usage-limited goal.
    Resume,
    /// Remove the goal.
    Clear,
    /// `update_goal` with status `complete`.
    Complete,
    /// `update_goal` with status `blocked` (accepted only by the blocked audit).
    Block,
}

impl GoalAction {
    /// Every action, in the order messages list them.
    pub const ALL: [GoalAction; 9] = [
        GoalAction::Resume,
        GoalAction::Pause,
        GoalAction::Edit,
        GoalAction::Budget,
        GoalAction::Clear,
        GoalAction::Set,
        GoalAction::Replace,
        GoalAction::Complete,
        GoalAction::Block,
    ];

    /// The action as a user or model issues it (`goal resume`, `update_goal complete`, ...).
    pub fn label(self) -> &'static str {
        match self {
            GoalAction::Set => "set",
            GoalAction::Replace => "set --replace",
            GoalAction::Edit => "edit",
            GoalAction::Budget => "budget",
            GoalAction::Pause => "pause",
            GoalAction::Resume => "resume",
            GoalAction::Clear => "clear",
            GoalAction::Complete => "update_goal complete",
            GoalAction::Block => "update_goal blocked",
        }
    }
}

impl std::fmt::Display for GoalAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// Something that happens to a goal; it moves an active goal and leaves any other as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SystemEvent {
    /// A turn's charge brought usage to the budget.
    BudgetSpent,
    /// A turn ended on the account's usage limit.
    UsageLimitError,
    /// A turn ended on any other error.
    TurnError,
    /// Three consecutive continuation turns made no tool call other than goal tools.
    BreakerTripped,
}

impl SystemEvent {
    /// Every event.
    pub const ALL: [SystemEvent; 4] = [
        SystemEvent::BudgetSpent,
        SystemEvent::UsageLimitError,
        SystemEvent::TurnError,
        SystemEvent::BreakerTripped,
    ];
}

/// An action that is not legal from the goal's status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidTransition {
    /// What was asked.
    pub action: GoalAction,
    /// The goal's status.
    pub from: ThreadGoalStatus,
    /// What is legal from that status.
    pub legal: Vec<GoalAction>,
}

impl std::fmt::Display for InvalidTransition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot {} a goal that is {}; legal next actions: ",
            self.action, self.from
        )?;
        for (index, action) in self.legal.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            f.write_str(action.label())?;
        }
        Ok(())
    }
}

impl std::error::Error for InvalidTransition {}

/// Where `action` takes a goal in status `from`: `Some(status)`, or `None` when the goal is
/// removed (`clear`). `over_budget` says whether usage is at or above the budget the goal has
/// after the action (always false without a budget); it decides between active and
/// budget-limited for `budget` and `resume`.
pub fn transition(
    from: ThreadGoalStatus,
    action: GoalAction,
    over_budget: bool,
) -> Result<Option<ThreadGoalStatus>, InvalidTransition> {
    target(from, action, over_budget).ok_or_else(|| InvalidTransition {
        action,
        from,
        legal: legal_actions(from),
    })
}

/// The actions legal from `status`.
pub fn legal_actions(status: ThreadGoalStatus) -> Vec<GoalAction> {
    GoalAction::ALL
        .into_iter()
        .filter(|action| target(status, *action, false).is_some())
        .collect()
}

/// Where `event` takes a goal in status `from`.
pub fn system_transition(from: ThreadGoalStatus, event: SystemEvent) -> ThreadGoalStatus {
    use ThreadGoalStatus::{Active, Blocked, BudgetLimited, Paused, UsageLimited};
    match (from, event) {
        (Active, SystemEvent::BudgetSpent) => BudgetLimited,
        (Active, SystemEvent::UsageLimitError) => UsageLimited,
        (Active, SystemEvent::TurnError) => Blocked,
        (Active, SystemEvent::BreakerTripped) => Paused,
        (other, _) => other,
    }
}

/// The table itself: `None` for an illegal action, `Some(None)` for removal.
fn target(
    from: ThreadGoalStatus,
    action: GoalAction,
    over_budget: bool,
) -> Option<Option<ThreadGoalStatus>> {
    use ThreadGoalStatus::{Active, Blocked, BudgetLimited, Complete, Paused, UsageLimited};
    let running = if over_budget { BudgetLimited } else { Active };
    let to = match (action, from) {
        (GoalAction::Clear, _) => return Some(None),
        (GoalAction::Replace, _) | (GoalAction::Set, Complete) => Active,
        (GoalAction::Set, _) => return None,
        (GoalAction::Edit | GoalAction::Budget | GoalAction::Complete, Complete) => return None,
        (GoalAction::Edit, status) => status,
        (GoalAction::Budget, Active | BudgetLimited) => running,
        (GoalAction::Budget, status) => status,
        (GoalAction::Pause, Active) => Paused,
        (GoalAction::Resume, Paused | Blocked | UsageLimited) => running,
        (GoalAction::Complete, _) => Complete,
        (GoalAction::Block, Active) => Blocked,
        (GoalAction::Pause | GoalAction::Resume | GoalAction::Block, _) => return None,
    };
    Some(Some(to))
}
