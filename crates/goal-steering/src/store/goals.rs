//! What the user does with a goal: set, replace, edit, budget, pause, resume, clear.
//!
//! Each call reads the goal in its own write transaction, asks the status machine
//! whether the action is legal, and writes the result. Calls that take `expected_goal_id`
//! refuse to touch a goal that was replaced since the caller last read it.

use memory_protocol::goal::{ThreadGoal, ThreadGoalStatus, validate_objective};

use super::{GoalRow, GoalStore, read_expected, validate_thread_id};
use crate::error::{Error, Result};
use crate::status::{GoalAction, transition};

/// A goal to set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGoal {
    /// What to achieve; trimmed, not empty, at most 4,000 characters.
    pub objective: String,
    /// The user's token budget: positive and at most the configured maximum; `None` takes
    /// the configured `default_token_budget` (none when that is unset).
    pub token_budget: Option<i64>,
    /// Replace an unfinished goal instead of refusing.
    pub replace: bool,
    /// The goal id the caller saw on the thread, if any: a thread holding another goal refuses
    /// the call with [`Error::StaleGoal`] naming the current one.
    pub expected_goal_id: Option<String>,
}

impl GoalStore {
    /// Sets the thread's goal. A thread without a goal, or whose goal is complete, gets the new
    /// one; an unfinished goal is replaced only when `goal.replace` is set, and otherwise the
    /// call fails with [`Error::UnfinishedGoal`]. A new goal starts active with no usage; the
    /// goal it replaces is archived with its usage and turns.
    pub fn set_goal(&mut self, thread_id: &str, goal: &NewGoal) -> Result<ThreadGoal> {
        validate_thread_id(thread_id)?;
        let objective = validate_objective(&goal.objective)?;
        let token_budget =
            self.validate_budget(goal.token_budget.or(self.config().default_token_budget))?;
        let now = self.now_ms();
        let mut tx = self.write(thread_id)?;
        let existing = tx.read_row(thread_id)?;
        if let Some(expected) = &goal.expected_goal_id
            && existing.as_ref().is_none_or(|row| &row.goal_id != expected)
        {
            return Err(match existing {
                Some(row) => Error::StaleGoal {
                    thread_id: thread_id.to_owned(),
                    expected: expected.clone(),
                    found: row.goal_id,
                },
                None => Error::NoGoal {
                    thread_id: thread_id.to_owned(),
                },
            });
        }
        if let Some(existing) = existing {
            let action = if goal.replace {
                GoalAction::Replace
            } else {
                GoalAction::Set
            };
            if transition(existing.status, action, false).is_err() {
                return Err(Error::UnfinishedGoal {
                    thread_id: thread_id.to_owned(),
                    status: existing.status,
                });
            }
        }
        let row = GoalRow::new(thread_id, objective, token_budget, now);
        tx.insert_row(&row, now)?;
        tx.commit()?;
        Ok(row.to_goal())
    }

    /// Changes the objective, keeping the goal id, usage, budget and status. The
    /// objective-updated prompt becomes due, and the blocked audit and the circuit breaker
    /// start over. The same objective again changes nothing.
    pub fn edit_objective(
        &mut self,
        thread_id: &str,
        expected_goal_id: Option<&str>,
        objective: &str,
    ) -> Result<ThreadGoal> {
        let objective = validate_objective(objective)?;
        self.edit_goal(thread_id, expected_goal_id, |row| {
            transition(row.status, GoalAction::Edit, false)?;
            if row.objective == objective {
                return Ok(false);
            }
            row.objective = objective.to_owned();
            row.objective_notice_pending = true;
            row.audit.reset();
            row.idle_continuations = 0;
            Ok(true)
        })
    }

    /// Raises, lowers or removes (`None`) the token budget. Raising it above usage, or removing
    /// it, revives a budget-limited goal; lowering it to usage or below stops an active one.
    pub fn set_budget(
        &mut self,
        thread_id: &str,
        expected_goal_id: Option<&str>,
        token_budget: Option<i64>,
    ) -> Result<ThreadGoal> {
        let token_budget = self.validate_budget(token_budget)?;
        self.edit_goal(thread_id, expected_goal_id, |row| {
            let to = transition(row.status, GoalAction::Budget, row.over(token_budget))?
                .unwrap_or(row.status);
            row.token_budget = token_budget;
            if to != row.status {
                row.enter(to, None);
                if to == ThreadGoalStatus::Active {
                    // A revived goal continues from a clean slate.
                    row.idle_continuations = 0;
                    row.audit.reset();
                }
            }
            Ok(true)
        })
    }

    /// Pauses an active goal: no continuation until it is resumed.
    pub fn pause(&mut self, thread_id: &str, expected_goal_id: Option<&str>) -> Result<ThreadGoal> {
        self.user_status_change(thread_id, expected_goal_id, GoalAction::Pause)
    }

    /// Resumes a paused, blocked or usage-limited goal. It becomes active again (budget-limited
    /// when usage is already at the budget), with a fresh blocked audit and circuit breaker.
    pub fn resume(
        &mut self,
        thread_id: &str,
        expected_goal_id: Option<&str>,
    ) -> Result<ThreadGoal> {
        self.user_status_change(thread_id, expected_goal_id, GoalAction::Resume)
    }

    /// Removes the thread's goal, archiving it with its usage (its turn records stay);
    /// returns the goal as it was. No continuation is handed out for it afterwards.
    pub fn clear(&mut self, thread_id: &str, expected_goal_id: Option<&str>) -> Result<ThreadGoal> {
        let now = self.now_ms();
        let mut tx = self.write(thread_id)?;
        let row = read_expected(tx.as_mut(), thread_id, expected_goal_id)?;
        tx.archive_goal(&row.goal_id, now)?;
        tx.commit()?;
        Ok(row.to_goal())
    }

    fn user_status_change(
        &mut self,
        thread_id: &str,
        expected_goal_id: Option<&str>,
        action: GoalAction,
    ) -> Result<ThreadGoal> {
        self.edit_goal(thread_id, expected_goal_id, |row| {
            let to =
                transition(row.status, action, row.over(row.token_budget))?.unwrap_or(row.status);
            let reason = (action == GoalAction::Pause).then(|| "paused by the user".to_owned());
            row.enter(to, reason);
            // Pausing or resuming starts the audit and the breaker over.
            row.audit.reset();
            row.idle_continuations = 0;
            Ok(true)
        })
    }

    /// One edit of the goal the caller expects, in a write transaction: `change` updates the
    /// row and says whether there is anything to write (the edit's time is set when there is).
    fn edit_goal(
        &mut self,
        thread_id: &str,
        expected_goal_id: Option<&str>,
        change: impl FnOnce(&mut GoalRow) -> Result<bool>,
    ) -> Result<ThreadGoal> {
        let now = self.now_ms();
        let mut tx = self.write(thread_id)?;
        let mut row = read_expected(tx.as_mut(), thread_id, expected_goal_id)?;
        if change(&mut row)? {
            row.updated_at_ms = now;
            tx.write_row(&row)?;
        }
        tx.commit()?;
        Ok(row.to_goal())
    }
}
