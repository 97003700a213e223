//! Steering: the hidden message a host sends when a goal's thread is idle.
//!
//! [`GoalStore::next_steering`] decides in the same write transaction that records
//! what it hands out, so a goal paused, blocked, limited or completed a moment ago never gets
//! one more continuation. In order:
//!
//! 1. a budget-limited goal whose budget-limit prompt is due gets it, once;
//! 2. any goal that is not active gets nothing;
//! 3. an active goal whose objective was edited gets the objective-updated prompt, once;
//! 4. an active goal gets the continuation prompt, unless the configured minimum interval since
//!    the last one has not passed.
//!
//! After a compaction ([`SteeringEvent::Compacted`]) the hidden goal context the conversation
//! carried is gone, so the goal is restated for the next request whatever is due: an active
//! goal gets its objective, budget and audits (the continuation prompt's text, kind
//! `afterCompaction`, counted as no continuation), a budget-limited one the budget-limit
//! prompt; a goal that is not running gets nothing.
//!
//! The circuit breaker lives in turn recording (`record_turn`): it pauses the goal, and a
//! paused goal gets nothing here. Every message is wrapped as hidden internal context with the
//! source `goal`; the objective in it is secret-redacted, display-safe and escaped as XML text.

use memory_prompts::goals::{
    BudgetLimitContext, ContinuationContext, ObjectiveUpdatedContext, budget_limit, continuation,
    objective_updated,
};
use memory_protocol::goal::{GoalSteering, GoalSteeringKind, ThreadGoal, ThreadGoalStatus};
use memory_protocol::names::internal_context;
use memory_sanitize::{display_safe, redact_secrets};

use crate::error::Result;
use crate::store::{GoalStore, validate_thread_id};

/// What the host reports when it asks for a steering message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SteeringEvent {
    /// The thread is idle: the next continuation (or notice), if one is due.
    Idle,
    /// The host compacted the conversation: the goal restated for the next request.
    Compacted,
}

impl GoalStore {
    /// The message for `event` on the thread, if any: [`GoalStore::next_steering`] when idle,
    /// the goal restated after a compaction.
    pub fn steering_for(
        &mut self,
        thread_id: &str,
        event: SteeringEvent,
    ) -> Result<Option<GoalSteering>> {
        match event {
            SteeringEvent::Idle => self.next_steering(thread_id),
            SteeringEvent::Compacted => self.after_compaction(thread_id),
        }
    }

    /// The goal restated after a compaction (see the module docs). A pending budget-limit
    /// notice is delivered by it; a pending objective-updated notice stays due (the
    /// completion refusal still delivers it).
    fn after_compaction(&mut self, thread_id: &str) -> Result<Option<GoalSteering>> {
        validate_thread_id(thread_id)?;
        let mut tx = self.write(thread_id)?;
        let Some(mut row) = tx.read_row(thread_id)? else {
            return Ok(None);
        };
        let kind = match row.status {
            ThreadGoalStatus::Active => GoalSteeringKind::AfterCompaction,
            ThreadGoalStatus::BudgetLimited => {
                row.budget_notice_pending = false;
                GoalSteeringKind::BudgetLimit
            }
            _ => return Ok(None),
        };
        let steering = render_steering(kind, &row.to_goal())?;
        tx.write_row(&row)?;
        tx.commit()?;
        Ok(Some(steering))
    }

    /// The message to send the thread's model now, if any, recorded as handed out.
    pub fn next_steering(&mut self, thread_id: &str) -> Result<Option<GoalSteering>> {
        validate_thread_id(thread_id)?;
        let now = self.now_ms();
        let min_interval =
            i64::try_from(self.config().min_continuation_interval.as_millis()).unwrap_or(i64::MAX);
        let mut tx = self.write(thread_id)?;
        let Some(mut row) = tx.read_row(thread_id)? else {
            return Ok(None);
        };
        let kind = match row.status {
            ThreadGoalStatus::BudgetLimited if row.budget_notice_pending => {
                row.budget_notice_pending = false;
                GoalSteeringKind::BudgetLimit
            }
            ThreadGoalStatus::Active if row.objective_notice_pending => {
                row.objective_notice_pending = false;
                row.last_continuation_at_ms = Some(now);
                GoalSteeringKind::ObjectiveUpdated
            }
            ThreadGoalStatus::Active => {
                let due = row
                    .last_continuation_at_ms
                    .is_none_or(|last| now >= last.saturating_add(min_interval));
                if !due {
                    return Ok(None);
                }
                row.last_continuation_at_ms = Some(now);
                row.continuations_issued = row.continuations_issued.saturating_add(1);
                GoalSteeringKind::Continuation
            }
            _ => return Ok(None),
        };
        // Rendered before the commit: a prompt that fails to render hands out nothing.
        let steering = render_steering(kind, &row.to_goal())?;
        tx.write_row(&row)?;
        tx.commit()?;
        Ok(Some(steering))
    }
}

/// The steering message of `kind` for `goal`, wrapped as hidden internal context.
pub fn render_steering(kind: GoalSteeringKind, goal: &ThreadGoal) -> Result<GoalSteering> {
    let shown = shown_goal(goal.clone());
    let prompt = match kind {
        // After a compaction the goal is restated in the continuation prompt's words: the
        // objective, the budget lines and both audits.
        GoalSteeringKind::Continuation | GoalSteeringKind::AfterCompaction => {
            continuation(&ContinuationContext::from(&shown))?
        }
        GoalSteeringKind::BudgetLimit => budget_limit(&BudgetLimitContext::from(&shown))?,
        GoalSteeringKind::ObjectiveUpdated => {
            objective_updated(&ObjectiveUpdatedContext::from(&shown))?
        }
    };
    Ok(GoalSteering {
        kind,
        source: internal_context::GOAL_SOURCE.to_owned(),
        text: internal_context_message(internal_context::GOAL_SOURCE, &prompt),
    })
}

/// `text` as any goal output shows it (to the model or on a terminal): secrets redacted,
/// control characters and bidirectional controls replaced by visible stand-ins.
pub(crate) fn shown_text(text: &str) -> String {
    display_safe(&redact_secrets(text)).into_owned()
}

/// `goal` as tools and steering show it: its objective and status reason through
/// [`shown_text`].
pub(crate) fn shown_goal(mut goal: ThreadGoal) -> ThreadGoal {
    goal.objective = shown_text(&goal.objective);
    goal.status_reason = goal.status_reason.as_deref().map(shown_text);
    goal
}

/// `body` wrapped as a hidden internal-context message from `source`.
pub fn internal_context_message(source: &str, body: &str) -> String {
    let tag = internal_context::TAG;
    format!(
        "<{tag} source=\"{source}\">\n{}\n</{tag}>",
        body.trim_end_matches('\n')
    )
}
