//! The goal tools a host's model calls: `get_goal`, `create_goal`, `update_goal`.
//!
//! A call either does what it asks ([`GoalToolOutcome::Answered`]) or is refused
//! ([`GoalToolOutcome::Refused`]) with a code, a message that says what is still needed, and
//! `retryable: false`: repeating a refused call gives the same answer. Refusals are part of the
//! conversation with the model, not errors; `Err` is kept for failures of the store itself.
//!
//! `update_goal` with status `blocked` goes through the blocked audit (see [`crate::audit`]):
//! it is refused with "reports so far: n/3" until the third consecutive goal turn reports the
//! same blocker. Every update or create call and every refusal is counted on the open turn, so
//! the turn record shows a turn whose only activity was refused goal-tool calls.
//!
//! The goal in every answer and refusal is the model's view of it: the objective and status
//! reason secret-redacted and display-safe, as the steering prompts show them.

use memory_protocol::goal::{
    CreateGoalArgs, GoalRefusalCode, GoalToolRefusal, GoalToolResponse, ThreadGoal,
    ThreadGoalStatus, UpdateGoalArgs, UpdateGoalStatus, validate_objective,
};
use memory_protocol::tools::{CREATE_GOAL_TOOL, GET_GOAL_TOOL, UPDATE_GOAL_TOOL};
use memory_sanitize::redact_secrets;
use serde_json::Value;

use crate::audit::{BLOCKER_REPORTS_REQUIRED, BlockedReport, MAX_REASON_CHARS, normalize_blocker};
use crate::error::{Error, Result};
use crate::status::{GoalAction, transition};
use crate::steering::{shown_goal, shown_text};
use crate::store::{GoalRow, GoalStore, validate_thread_id};

/// Who is calling: the thread, and the goal id the turn started with when the host knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GoalToolContext<'a> {
    /// The thread whose model made the call.
    pub thread_id: &'a str,
    /// The goal the turn works on; a call naming a replaced goal is refused.
    pub goal_id: Option<&'a str>,
}

impl<'a> GoalToolContext<'a> {
    /// A call on `thread_id`'s current goal, whatever its id.
    pub fn thread(thread_id: &'a str) -> GoalToolContext<'a> {
        GoalToolContext {
            thread_id,
            goal_id: None,
        }
    }
}

/// What a goal tool call came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoalToolOutcome {
    /// The call did what it asked.
    Answered(GoalToolResponse),
    /// The call was refused; nothing it asked for happened.
    Refused(GoalToolRefusal),
}

impl GoalToolOutcome {
    /// True for a refusal.
    pub fn is_refused(&self) -> bool {
        matches!(self, GoalToolOutcome::Refused(_))
    }

    /// The answer as the model receives it: the response or the refusal as JSON.
    pub fn to_json(&self) -> Value {
        let value = match self {
            GoalToolOutcome::Answered(response) => serde_json::to_value(response),
            GoalToolOutcome::Refused(refusal) => serde_json::to_value(refusal),
        };
        // Both types serialize to JSON objects without fallible parts.
        value.unwrap_or(Value::Null)
    }
}

impl GoalStore {
    /// Runs the goal tool `name` with the model's `arguments` (a JSON object, or a string
    /// holding one, as function-call APIs deliver them). An unknown tool name is an error of
    /// the host, not a refusal.
    pub fn call_goal_tool(
        &mut self,
        context: &GoalToolContext<'_>,
        name: &str,
        arguments: &Value,
    ) -> Result<GoalToolOutcome> {
        let arguments = match arguments {
            Value::String(text) => match serde_json::from_str::<Value>(text) {
                Ok(value) => value,
                Err(error) => {
                    return self
                        .refuse_arguments(context, format!("arguments are not JSON: {error}"));
                }
            },
            Value::Null => Value::Object(serde_json::Map::new()),
            other => other.clone(),
        };
        match name {
            GET_GOAL_TOOL => self.get_goal_tool(context),
            CREATE_GOAL_TOOL => match serde_json::from_value::<CreateGoalArgs>(arguments.clone()) {
                Ok(args) => self.create_goal_tool(context, &args),
                Err(error) => {
                    let message = if arguments.get("token_budget").is_some() {
                        "create_goal takes no budget: token budgets are set only by the user"
                            .to_owned()
                    } else {
                        format!("invalid create_goal arguments: {error}")
                    };
                    self.refuse_arguments(context, message)
                }
            },
            UPDATE_GOAL_TOOL => match serde_json::from_value::<UpdateGoalArgs>(arguments.clone()) {
                Ok(args) => self.update_goal_tool(context, &args),
                Err(error) => {
                    let status = arguments.get("status").and_then(Value::as_str);
                    let message = match status {
                        Some(status) if status != "complete" && status != "blocked" => format!(
                            "update_goal can only mark the goal complete or blocked, not \
                             {status:?}: pausing, resuming, budgets and limits belong to the \
                             user and the system"
                        ),
                        _ => format!("invalid update_goal arguments: {error}"),
                    };
                    self.refuse_arguments(context, message)
                }
            },
            other => Err(Error::UnknownTool(other.to_owned())),
        }
    }

    /// `get_goal`: the goal and what is left of its budget. It changes nothing.
    pub fn get_goal_tool(&self, context: &GoalToolContext<'_>) -> Result<GoalToolOutcome> {
        let goal = self.get(context.thread_id)?;
        Ok(GoalToolOutcome::Answered(response(goal, None)))
    }

    /// `create_goal`: starts an active goal without a budget, unless the thread has an
    /// unfinished goal, which only the user can replace.
    pub fn create_goal_tool(
        &mut self,
        context: &GoalToolContext<'_>,
        args: &CreateGoalArgs,
    ) -> Result<GoalToolOutcome> {
        validate_thread_id(context.thread_id)?;
        // The objective is model output: redacted before it is stored.
        let objective = redact_secrets(&args.objective);
        let objective = match validate_objective(&objective) {
            Ok(objective) => objective.to_owned(),
            Err(error) => {
                return self.refuse_arguments(context, format!("invalid objective: {error}"));
            }
        };
        let now = self.now_ms();
        let budget = self.config().default_token_budget;
        let mut tx = self.write(context.thread_id)?;
        // Any goal on the thread, a complete one included, belongs to the user: re-creating a
        // finished goal would shed its budget, a pause or the circuit breaker.
        if let Some(mut existing) = tx.read_row(context.thread_id)? {
            existing.turn_goal_tool_calls = existing.turn_goal_tool_calls.saturating_add(1);
            existing.turn_refused_goal_tool_calls =
                existing.turn_refused_goal_tool_calls.saturating_add(1);
            tx.write_row(&existing)?;
            tx.commit()?;
            let message = if existing.status == ThreadGoalStatus::Complete {
                "This thread's goal is complete. Only the user sets the next goal on this \
                 thread; tell the user what you propose."
                    .to_owned()
            } else {
                format!(
                    "This thread already has an unfinished goal (status: {}). Only the user can \
                     replace or clear it: keep working toward it, or tell the user what you \
                     propose instead.",
                    existing.status
                )
            };
            return Ok(refusal(
                GoalRefusalCode::UnfinishedGoal,
                message,
                None,
                Some(existing.to_goal()),
            ));
        }
        let row = GoalRow::new(context.thread_id, &objective, budget, now);
        tx.insert_row(&row, now)?;
        tx.commit()?;
        Ok(GoalToolOutcome::Answered(response(
            Some(row.to_goal()),
            None,
        )))
    }

    /// `update_goal`: marks the goal complete, or reports a blocker to the blocked audit.
    pub fn update_goal_tool(
        &mut self,
        context: &GoalToolContext<'_>,
        args: &UpdateGoalArgs,
    ) -> Result<GoalToolOutcome> {
        validate_thread_id(context.thread_id)?;
        let now = self.now_ms();
        let mut tx = self.write(context.thread_id)?;
        let Some(mut row) = tx.read_row(context.thread_id)? else {
            return Ok(refusal(
                GoalRefusalCode::NoGoal,
                "This thread has no goal, so there is nothing to update.".to_owned(),
                None,
                None,
            ));
        };
        if let Some(expected) = args.goal_id.as_deref().or(context.goal_id)
            && expected != row.goal_id
        {
            return Ok(refusal(
                GoalRefusalCode::StaleGoal,
                format!(
                    "Goal {expected} is no longer this thread's goal: the user replaced it, and \
                     nothing changed. The current goal is {} (attached): work toward it instead.",
                    row.goal_id
                ),
                None,
                Some(row.to_goal()),
            ));
        }
        row.turn_goal_tool_calls = row.turn_goal_tool_calls.saturating_add(1);
        let outcome = match args.status {
            UpdateGoalStatus::Complete => complete(&mut row, args.reason.as_deref()),
            UpdateGoalStatus::Blocked => report_blocked(&mut row, args.reason.as_deref()),
        };
        if outcome.is_err() {
            row.turn_refused_goal_tool_calls = row.turn_refused_goal_tool_calls.saturating_add(1);
        } else {
            row.updated_at_ms = now;
        }
        tx.write_row(&row)?;
        tx.commit()?;
        Ok(match outcome {
            Ok(report) => GoalToolOutcome::Answered(response(Some(row.to_goal()), report)),
            Err(refused) => refusal(
                refused.code,
                refused.message,
                refused.reports,
                Some(row.to_goal()),
            ),
        })
    }

    /// Refuses a call whose arguments do not parse, counting it on the open turn.
    fn refuse_arguments(
        &mut self,
        context: &GoalToolContext<'_>,
        message: String,
    ) -> Result<GoalToolOutcome> {
        validate_thread_id(context.thread_id)?;
        let mut tx = self.write(context.thread_id)?;
        let goal = match tx.read_row(context.thread_id)? {
            Some(mut row) => {
                row.turn_goal_tool_calls = row.turn_goal_tool_calls.saturating_add(1);
                row.turn_refused_goal_tool_calls =
                    row.turn_refused_goal_tool_calls.saturating_add(1);
                tx.write_row(&row)?;
                Some(row.to_goal())
            }
            None => None,
        };
        tx.commit()?;
        Ok(refusal(
            GoalRefusalCode::InvalidArguments,
            message,
            None,
            goal,
        ))
    }
}

/// Why an update was refused, before it becomes a [`GoalToolRefusal`].
struct Refused {
    code: GoalRefusalCode,
    message: String,
    reports: Option<u32>,
}

impl Refused {
    fn new(code: GoalRefusalCode, message: String) -> Refused {
        Refused {
            code,
            message,
            reports: None,
        }
    }
}

/// Marks the goal complete; the completion budget report on success.
fn complete(row: &mut GoalRow, reason: Option<&str>) -> Result<Option<String>, Refused> {
    if transition(row.status, GoalAction::Complete, false).is_err() {
        return Err(Refused::new(
            GoalRefusalCode::StatusNotAllowed,
            "The goal is already complete; there is nothing left to report.".to_owned(),
        ));
    }
    if row.objective_notice_pending {
        // This refusal is how the model learns the new objective, so the notice is delivered.
        row.objective_notice_pending = false;
        return Err(Refused::new(
            GoalRefusalCode::ObjectiveUpdated,
            format!(
                "Not completed: the user changed the objective, and the completion audit must \
                 be made against the new one. The objective is now: {}. Check every \
                 requirement of it against evidence before reporting complete again.",
                shown_text(&row.objective)
            ),
        ));
    }
    let reason = clean_reason(reason)?;
    row.enter(
        ThreadGoalStatus::Complete,
        Some(reason.unwrap_or_else(|| "marked complete by the model".to_owned())),
    );
    row.audit.reset();
    row.idle_continuations = 0;
    row.objective_notice_pending = false;
    Ok(completion_budget_report(&row.to_goal()))
}

/// Counts a blocked report; blocks the goal on the third consecutive goal turn.
fn report_blocked(row: &mut GoalRow, reason: Option<&str>) -> Result<Option<String>, Refused> {
    if row.status != ThreadGoalStatus::Active {
        return Err(Refused::new(
            GoalRefusalCode::StatusNotAllowed,
            blocked_not_allowed(row.status),
        ));
    }
    let so_far = row.audit.reports;
    let needs_reason = || Refused {
        code: GoalRefusalCode::ReasonRequired,
        message: format!(
            "A blocked report needs a reason that names the blocker and what is needed from \
             outside to remove it; this call was not counted (reports so far: \
             {so_far}/{BLOCKER_REPORTS_REQUIRED})."
        ),
        reports: Some(so_far),
    };
    let Some(reason) = clean_reason(reason)? else {
        return Err(needs_reason());
    };
    let key = normalize_blocker(&reason);
    if key.is_empty() {
        return Err(needs_reason());
    }
    match row.audit.report(key, reason.clone()) {
        BlockedReport::Accepted => {
            row.enter(ThreadGoalStatus::Blocked, Some(reason));
            row.audit.reset();
            row.idle_continuations = 0;
            Ok(None)
        }
        BlockedReport::Counted { reports } => Err(Refused {
            code: GoalRefusalCode::BlockedAuditPending,
            message: format!(
                "Blocked not accepted yet: reports so far: {reports}/{BLOCKER_REPORTS_REQUIRED}. \
                 The goal stays active. The system accepts a blocked report on the third \
                 consecutive goal turn that names the same blocker. Still needed: {} more \
                 consecutive goal turn(s) reporting this same blocker, if it persists; meanwhile \
                 keep working on whatever else the objective needs. Do not repeat this call in \
                 this turn.",
                BLOCKER_REPORTS_REQUIRED.saturating_sub(reports)
            ),
            reports: Some(reports),
        }),
        BlockedReport::AlreadyReported { reports } => Err(Refused {
            code: GoalRefusalCode::AlreadyReportedThisTurn,
            message: format!(
                "This blocker was already reported in this turn and counts once per turn \
                 (reports so far: {reports}/{BLOCKER_REPORTS_REQUIRED}). Still needed: {} more \
                 consecutive goal turn(s) reporting it, if it persists. Calling again in this \
                 turn changes nothing.",
                BLOCKER_REPORTS_REQUIRED.saturating_sub(reports)
            ),
            reports: Some(reports),
        }),
    }
}

/// Why `blocked` cannot be reported from `status`.
fn blocked_not_allowed(status: ThreadGoalStatus) -> String {
    match status {
        ThreadGoalStatus::BudgetLimited => "The goal is budget-limited: its budget is spent and \
            only the user can raise it, so a blocked report cannot replace that status. Wrap up \
            this turn: summarize progress, what remains, and the next step."
            .to_owned(),
        ThreadGoalStatus::Complete => "The goal is already complete.".to_owned(),
        ThreadGoalStatus::Blocked => "The goal is already blocked.".to_owned(),
        ThreadGoalStatus::Paused | ThreadGoalStatus::UsageLimited => format!(
            "The goal is {status}, so it is not running and there is nothing to report as \
             blocked; pausing, resuming and limits belong to the user and the system."
        ),
        ThreadGoalStatus::Active => "The goal is active.".to_owned(),
    }
}

/// A reason trimmed and redacted; `None` when blank; refused when too long.
fn clean_reason(reason: Option<&str>) -> Result<Option<String>, Refused> {
    let Some(reason) = reason.map(str::trim).filter(|reason| !reason.is_empty()) else {
        return Ok(None);
    };
    let chars = reason.chars().count();
    if chars > MAX_REASON_CHARS {
        return Err(Refused::new(
            GoalRefusalCode::InvalidArguments,
            format!(
                "The reason has {chars} characters; at most {MAX_REASON_CHARS} are allowed. \
                 Nothing changed."
            ),
        ));
    }
    Ok(Some(redact_secrets(reason).into_owned()))
}

/// What to tell the user about the budget after a completion; `None` when the goal had no
/// budget and no recorded time.
fn completion_budget_report(goal: &ThreadGoal) -> Option<String> {
    let tokens = match (goal.token_budget, goal.remaining_tokens()) {
        (Some(budget), Some(remaining)) => format!(
            "{} tokens of a {budget}-token budget ({remaining} left)",
            goal.tokens_used
        ),
        _ if goal.time_used_seconds > 0 => format!("{} tokens (no budget)", goal.tokens_used),
        _ => return None,
    };
    Some(format!(
        "The goal is complete. Tell the user what was achieved and what it cost: {tokens} and \
         {} seconds of goal time, as of the last recorded turn.",
        goal.time_used_seconds
    ))
}

fn response(
    goal: Option<ThreadGoal>,
    completion_budget_report: Option<String>,
) -> GoalToolResponse {
    GoalToolResponse {
        remaining_tokens: goal.as_ref().and_then(ThreadGoal::remaining_tokens),
        goal: goal.map(shown_goal),
        completion_budget_report,
    }
}

fn refusal(
    code: GoalRefusalCode,
    message: String,
    reports: Option<u32>,
    goal: Option<ThreadGoal>,
) -> GoalToolOutcome {
    GoalToolOutcome::Refused(GoalToolRefusal {
        code,
        message,
        retryable: false,
        reports_so_far: reports,
        reports_required: reports.map(|_| BLOCKER_REPORTS_REQUIRED),
        goal: goal.map(shown_goal),
    })
}
