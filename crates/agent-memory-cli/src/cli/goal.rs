//! `agent-memory goal ...`: a thread's goal from the command line. The user's actions (set,
//! edit, budget, pause, resume, clear), what a host does each turn (account, next), and the
//! model's `update_goal` tool, run exactly as a model call would run it.
//!
//! Every subcommand takes `--home DIR` and `--json`; JSON output is the camelCase wire types.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agent_memory::config::Config;
use agent_memory::goals::claude_code::StopHookInput;
use agent_memory::goals::{
    GoalConfig, GoalStore, GoalToolContext, GoalToolOutcome, NewGoal, STATE_FILE_NAME,
    SteeringEvent, TurnTokens, TurnUsage,
};
use agent_memory::protocol::goal::{
    GoalAccountResult, GoalSteering, GoalTurnError, GoalTurnTrigger, MAX_OBJECTIVE_CHARS,
    ThreadGoal,
};
use agent_memory::protocol::tools::UPDATE_GOAL_TOOL;
use agent_memory::sanitize::{display_safe, redact_json_strings, redact_secrets};
use anyhow::Context;
use serde::Serialize;
use serde_json::json;

use super::exit::NotFound;
use super::home::{CONFIG_FILE_NAME, load_config, resolve_home};
use agent_memory::write::store_selection::StoreSelection;

use super::store::StoreArgs;

/// Arguments of `agent-memory goal`.
#[derive(Debug, clap::Args)]
pub(crate) struct GoalArgs {
    #[command(subcommand)]
    command: GoalCommand,
}

/// Where the goals are: every goal subcommand takes these.
#[derive(Debug, clap::Args)]
struct Location {
    /// agent-memory home (default: $AGENT_MEMORY_HOME, else ~/.agent-memory).
    #[arg(long)]
    home: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArgs,
}

/// Options of the goal subcommands that print for a person or a script.
#[derive(Debug, clap::Args)]
struct Output {
    #[command(flatten)]
    location: Location,
    /// Print JSON (the camelCase wire types) instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Subcommand)]
enum GoalCommand {
    /// Set the thread's goal (refused while an unfinished goal exists, unless --replace).
    Set {
        /// The thread.
        thread: String,
        #[arg(help = format!("What to achieve (at most {MAX_OBJECTIVE_CHARS} characters)"))]
        objective: String,
        /// Token budget (at most `[goals] max_token_budget`); none when omitted.
        #[arg(long)]
        budget: Option<i64>,
        /// Replace the thread's unfinished goal.
        #[arg(long)]
        replace: bool,
        /// The goal id you last saw on the thread: refused, naming the current id, when the
        /// thread now holds another goal.
        #[arg(long = "goal", value_name = "GOAL_ID")]
        goal: Option<String>,
        #[command(flatten)]
        output: Output,
    },
    /// Print one thread's goal, or every goal in the home.
    Show {
        /// The thread; every goal when omitted.
        thread: Option<String>,
        #[command(flatten)]
        output: Output,
    },
    /// Change the objective, keeping usage and budget; the model is told once.
    Edit {
        /// The thread.
        thread: String,
        #[arg(help = format!("The new objective (at most {MAX_OBJECTIVE_CHARS} characters)"))]
        objective: String,
        /// The goal id you last saw on the thread: refused, naming the current id, when the
        /// thread now holds another goal.
        #[arg(long = "goal", value_name = "GOAL_ID")]
        goal: Option<String>,
        #[command(flatten)]
        output: Output,
    },
    /// Raise, lower or remove (`none`) the token budget.
    Budget {
        /// The thread.
        thread: String,
        /// Tokens, or `none`.
        #[arg(value_parser = parse_budget, value_name = "N|none")]
        budget: Budget,
        /// The goal id you last saw on the thread: refused, naming the current id, when the
        /// thread now holds another goal.
        #[arg(long = "goal", value_name = "GOAL_ID")]
        goal: Option<String>,
        #[command(flatten)]
        output: Output,
    },
    /// Pause the goal: no continuation until resumed.
    Pause {
        /// The thread.
        thread: String,
        /// The goal id you last saw on the thread: refused, naming the current id, when the
        /// thread now holds another goal.
        #[arg(long = "goal", value_name = "GOAL_ID")]
        goal: Option<String>,
        #[command(flatten)]
        output: Output,
    },
    /// Resume a paused, blocked or usage-limited goal.
    Resume {
        /// The thread.
        thread: String,
        /// The goal id you last saw on the thread: refused, naming the current id, when the
        /// thread now holds another goal.
        #[arg(long = "goal", value_name = "GOAL_ID")]
        goal: Option<String>,
        #[command(flatten)]
        output: Output,
    },
    /// Remove the goal and its turn records.
    Clear {
        /// The thread.
        thread: String,
        /// The goal id you last saw on the thread: refused, naming the current id, when the
        /// thread now holds another goal.
        #[arg(long = "goal", value_name = "GOAL_ID")]
        goal: Option<String>,
        #[command(flatten)]
        output: Output,
    },
    /// Record a finished turn: charge its tokens and time (once per turn id). With --partial,
    /// the budget check at a tool finish inside the running turn.
    Account(AccountArgs),
    /// Print the hidden message to send the model now, or nothing.
    Next {
        /// The thread.
        thread: String,
        /// The conversation was just compacted: print the goal restated for the next request
        /// (objective, remaining budget, audits) even when no continuation is due.
        #[arg(long)]
        after_compaction: bool,
        #[command(flatten)]
        output: Output,
    },
    /// Run as an agent's hook. `claude-code`: reads Claude Code's `Stop` hook JSON on stdin,
    /// records the turn that ended (tokens from its transcript) and prints
    /// `{"decision":"block","reason":...}` while the goal is active, nothing when it is not.
    Hook {
        /// The agent whose hook this is.
        #[arg(value_enum)]
        host: HookHost,
        /// The goal's thread (default: the payload's `session_id`).
        #[arg(long)]
        thread: Option<String>,
        // No --json: the hook's stdout is the agent's protocol (the decision, or nothing).
        #[command(flatten)]
        location: Location,
    },
    /// Run the `update_goal` tool as the model would, and print its answer.
    Update {
        /// The thread.
        thread: String,
        /// The status to report.
        #[arg(long, value_enum)]
        status: UpdateStatus,
        /// The blocker (for blocked) or the evidence (for complete).
        #[arg(long)]
        reason: Option<String>,
        /// The goal id you last saw on the thread: refused, naming the current id, when the
        /// thread now holds another goal.
        #[arg(long = "goal", value_name = "GOAL_ID")]
        goal: Option<String>,
        #[command(flatten)]
        output: Output,
    },
}

/// Arguments of `agent-memory goal account`.
#[derive(Debug, clap::Args)]
struct AccountArgs {
    /// The thread.
    thread: String,
    /// The turn's id, stable across retries (the host's own turn id): recording it again
    /// charges nothing.
    #[arg(long)]
    turn: String,
    /// The goal's continuation started the turn (default: the user).
    #[arg(long, conflicts_with = "user")]
    continuation: bool,
    /// The user started the turn (the default).
    #[arg(long)]
    user: bool,
    /// The turn is still running: charge what it has spent so far (cumulative tokens) and
    /// print the budget-limit notice to inject now when that reaches the budget.
    #[arg(long, conflicts_with_all = ["plan_mode", "error", "seconds", "tool_calls"])]
    partial: bool,
    /// The turn ran in plan mode: recorded, not charged.
    #[arg(long)]
    plan_mode: bool,
    /// Tokens to charge.
    #[arg(long, required_unless_present = "input", conflicts_with_all = ["input", "cached", "output"])]
    tokens: Option<i64>,
    /// Input tokens, cached ones included (charge: input - cached + output).
    #[arg(long, requires_all = ["cached", "output"])]
    input: Option<i64>,
    /// Cached input tokens.
    #[arg(long, requires = "input")]
    cached: Option<i64>,
    /// Output tokens.
    #[arg(long, requires = "input")]
    output: Option<i64>,
    /// Wall-clock seconds of the turn.
    #[arg(long, default_value_t = 0)]
    seconds: i64,
    /// Tool calls other than the goal tools.
    #[arg(long, default_value_t = 0)]
    tool_calls: i64,
    /// How the turn ended in error.
    #[arg(long, value_enum)]
    error: Option<TurnErrorArg>,
    /// The goal id the turn worked on: refused, naming the current id, when the thread now
    /// holds another goal.
    #[arg(long = "goal", value_name = "GOAL_ID")]
    goal: Option<String>,
    #[command(flatten)]
    out: Output,
}

/// A budget argument: tokens or none.
#[derive(Debug, Clone, Copy)]
struct Budget(Option<i64>);

fn parse_budget(text: &str) -> Result<Budget, String> {
    if text.eq_ignore_ascii_case("none") {
        return Ok(Budget(None));
    }
    text.parse::<i64>()
        .map(|tokens| Budget(Some(tokens)))
        .map_err(|_| format!("expected a number of tokens or `none`, got {text:?}"))
}

/// Agents `goal hook` speaks for.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum HookHost {
    /// Claude Code's `Stop` hook.
    ClaudeCode,
}

/// The most hook input read from stdin.
const MAX_HOOK_INPUT_BYTES: u64 = 1024 * 1024;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum UpdateStatus {
    Complete,
    Blocked,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum TurnErrorArg {
    UsageLimit,
    Other,
}

pub(crate) fn run(args: GoalArgs) -> ExitCode {
    let json = args.command.json();
    match execute(args) {
        Ok(code) => code,
        Err(error) => super::exit::report_error_as(&error, json),
    }
}

impl GoalCommand {
    /// Whether the subcommand was asked for JSON (errors are then one JSON object too).
    fn json(&self) -> bool {
        let output = match self {
            GoalCommand::Set { output, .. }
            | GoalCommand::Show { output, .. }
            | GoalCommand::Edit { output, .. }
            | GoalCommand::Budget { output, .. }
            | GoalCommand::Pause { output, .. }
            | GoalCommand::Resume { output, .. }
            | GoalCommand::Clear { output, .. }
            | GoalCommand::Next { output, .. }
            | GoalCommand::Update { output, .. } => output,
            GoalCommand::Account(account) => &account.out,
            GoalCommand::Hook { .. } => return false,
        };
        output.json
    }
}

fn execute(args: GoalArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        GoalCommand::Set {
            thread,
            objective,
            budget,
            replace,
            goal,
            output,
        } => {
            let mut store = open(&output.location)?;
            let goal = store.set_goal(
                &thread,
                &NewGoal {
                    objective,
                    token_budget: budget,
                    replace,
                    expected_goal_id: goal,
                },
            )?;
            print_goal(&output, &goal)
        }
        GoalCommand::Show { thread, output } => show(thread.as_deref(), &output),
        GoalCommand::Edit {
            thread,
            objective,
            goal,
            output,
        } => {
            let goal =
                open(&output.location)?.edit_objective(&thread, goal.as_deref(), &objective)?;
            print_goal(&output, &goal)
        }
        GoalCommand::Budget {
            thread,
            budget,
            goal,
            output,
        } => {
            let goal = open(&output.location)?.set_budget(&thread, goal.as_deref(), budget.0)?;
            print_goal(&output, &goal)
        }
        GoalCommand::Pause {
            thread,
            goal,
            output,
        } => {
            let goal = open(&output.location)?.pause(&thread, goal.as_deref())?;
            print_goal(&output, &goal)
        }
        GoalCommand::Resume {
            thread,
            goal,
            output,
        } => {
            let goal = open(&output.location)?.resume(&thread, goal.as_deref())?;
            print_goal(&output, &goal)
        }
        GoalCommand::Clear {
            thread,
            goal,
            output,
        } => {
            let goal = open(&output.location)?.clear(&thread, goal.as_deref())?;
            if output.json {
                print_json(&goal)?;
            } else {
                emit(&format!(
                    "cleared goal {} of thread {}\n",
                    goal.goal_id, goal.thread_id
                ))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        GoalCommand::Account(args) => account(args),
        GoalCommand::Next {
            thread,
            after_compaction,
            output,
        } => {
            let event = if after_compaction {
                SteeringEvent::Compacted
            } else {
                SteeringEvent::Idle
            };
            let mut store = open(&output.location)?;
            // A thread without a goal is not found, as for `goal show`; a goal that needs no
            // steering now prints nothing.
            if store.get(&thread)?.is_none() {
                return Err(NotFound(format!("thread {thread} has no goal")).into());
            }
            let steering = store.steering_for(&thread, event)?;
            print_steering(&output, steering)
        }
        GoalCommand::Hook {
            host: HookHost::ClaudeCode,
            thread,
            location,
        } => {
            let mut text = String::new();
            std::io::stdin()
                .take(MAX_HOOK_INPUT_BYTES)
                .read_to_string(&mut text)
                .context("cannot read the hook's JSON on standard input")?;
            let input = StopHookInput::parse(&text)?;
            let outcome = open(&location)?.claude_code_stop(&input, thread.as_deref())?;
            // Claude Code reads stdout as the hook's decision: the block, or nothing at all.
            if let Some(block) = outcome.block {
                emit(&format!("{}\n", serde_json::to_string(&block)?))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        GoalCommand::Update {
            thread,
            status,
            reason,
            goal,
            output,
        } => {
            let status = match status {
                UpdateStatus::Complete => "complete",
                UpdateStatus::Blocked => "blocked",
            };
            let arguments = json!({"status": status, "reason": reason});
            let outcome = open(&output.location)?.call_goal_tool(
                &GoalToolContext {
                    thread_id: &thread,
                    goal_id: goal.as_deref(),
                },
                UPDATE_GOAL_TOOL,
                &arguments,
            )?;
            if output.json {
                print_json(&outcome.to_json())?;
            } else {
                let mut text = String::new();
                match &outcome {
                    GoalToolOutcome::Answered(response) => {
                        if let Some(goal) = &response.goal {
                            text.push_str(&goal_text(goal));
                        }
                        if let Some(report) = &response.completion_budget_report {
                            text.push_str(&format!("{report}\n"));
                        }
                    }
                    GoalToolOutcome::Refused(refusal) => {
                        text.push_str(&format!("{}\n", refusal.message));
                    }
                }
                emit(&text)?;
            }
            Ok(if outcome.is_refused() {
                // The tool refused the call; its answer is still printed.
                ExitCode::from(super::exit::UNAVAILABLE_OR_REFUSED)
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

fn account(args: AccountArgs) -> anyhow::Result<ExitCode> {
    let tokens = match (args.tokens, args.input, args.cached, args.output) {
        (Some(tokens), _, _, _) => TurnTokens::Charged(tokens),
        (None, Some(input), Some(cached_input), Some(output)) => TurnTokens::Breakdown {
            input,
            cached_input,
            output,
        },
        _ => anyhow::bail!("give --tokens N, or --input N --cached N --output N"),
    };
    if args.partial {
        let steering = open(&args.out.location)?.check_budget_mid_turn(
            &args.thread,
            args.goal.as_deref(),
            &args.turn,
            tokens,
        )?;
        return print_steering(&args.out, steering);
    }
    let usage = TurnUsage {
        turn_id: args.turn,
        trigger: if args.continuation {
            GoalTurnTrigger::Continuation
        } else {
            GoalTurnTrigger::User
        },
        plan_mode: args.plan_mode,
        tokens,
        seconds: args.seconds,
        tool_calls: args.tool_calls,
        error: args.error.map(|error| match error {
            TurnErrorArg::UsageLimit => GoalTurnError::UsageLimit,
            TurnErrorArg::Other => GoalTurnError::Other,
        }),
    };
    let result =
        open(&args.out.location)?.record_turn(&args.thread, args.goal.as_deref(), &usage)?;
    if args.out.json {
        print_json(&result)?;
    } else {
        emit(&account_text(&result))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A steering message to send the model now (`{"steering": ...}` with --json), or nothing.
fn print_steering(output: &Output, steering: Option<GoalSteering>) -> anyhow::Result<ExitCode> {
    if output.json {
        #[derive(Serialize)]
        struct Next {
            steering: Option<GoalSteering>,
        }
        print_json(&Next { steering })?;
    } else if let Some(steering) = steering {
        emit(&format!("{}\n", steering.text))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn show(thread: Option<&str>, output: &Output) -> anyhow::Result<ExitCode> {
    let home = resolve_home(output.location.home.as_deref())?;
    let selection = selection(&home, &output.location)?;
    // Reading never creates a home: without a state file (or a shared store) there are no
    // goals.
    let store = if selection.url.is_some() || home.join(STATE_FILE_NAME).is_file() {
        Some(open_at(&home, &selection)?)
    } else {
        None
    };
    match thread {
        Some(thread) => {
            let goal = match &store {
                Some(store) => store.get(thread)?,
                None => None,
            };
            match (goal, output.json) {
                (None, _) => {
                    return Err(NotFound(format!("thread {thread} has no goal")).into());
                }
                (Some(goal), true) => print_json(&goal)?,
                (Some(goal), false) => emit(&goal_text(&goal))?,
            }
        }
        None => {
            let goals = match &store {
                Some(store) => store.list()?,
                None => Vec::new(),
            };
            if output.json {
                print_json(&goals)?;
            } else if goals.is_empty() {
                emit(&format!("no goals in {}\n", home.display()))?;
            } else {
                let lines: String = goals
                    .iter()
                    .map(|goal| {
                        format!(
                            "{}\t{}\t{}\t{}\n",
                            goal.thread_id,
                            goal.status,
                            tokens_text(goal),
                            one_line(&goal.objective)
                        )
                    })
                    .collect();
                emit(&lines)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn open(location: &Location) -> anyhow::Result<GoalStore> {
    let home = resolve_home(location.home.as_deref())?;
    open_at(&home, &selection(&home, location)?)
}

/// The store the goal commands use: the flag, else the environment, else the home's config.
fn selection(home: &Path, location: &Location) -> anyhow::Result<StoreSelection> {
    Ok(location.store.selection(&load_config(None, home)?.store))
}

/// The goal store of `selection`: the goal tables of `<home>/state.sqlite`, or of the shared
/// PostgreSQL store every machine of a fleet reads.
pub(crate) fn open_at(home: &Path, selection: &StoreSelection) -> anyhow::Result<GoalStore> {
    let config = Config::load_if_present(&home.join(CONFIG_FILE_NAME))?
        .section::<GoalConfig>()?
        .value;
    match &selection.url {
        None => GoalStore::open_home(home, config)
            .with_context(|| format!("cannot open the goal store in {}", home.display())),
        Some(_) => connect_goals(selection, config),
    }
}

/// The goals on the shared PostgreSQL store of `selection` (its goal tables migrated to this
/// build).
#[cfg(feature = "postgres")]
fn connect_goals(selection: &StoreSelection, config: GoalConfig) -> anyhow::Result<GoalStore> {
    use agent_memory::goals::PgGoalOptions;
    let url = selection.shared_url()?.unwrap_or_default();
    Ok(GoalStore::connect(url, &PgGoalOptions::default(), config)?)
}

#[cfg(not(feature = "postgres"))]
fn connect_goals(selection: &StoreSelection, config: GoalConfig) -> anyhow::Result<GoalStore> {
    let _ = config;
    selection.shared_url()?;
    anyhow::bail!("this build has no PostgreSQL store (cargo feature `postgres`)")
}

fn print_goal(output: &Output, goal: &ThreadGoal) -> anyhow::Result<ExitCode> {
    if output.json {
        print_json(goal)?;
    } else {
        emit(&goal_text(goal))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn goal_text(goal: &ThreadGoal) -> String {
    let mut text = format!(
        "thread     {}\ngoal       {}\nstatus     {}\n",
        goal.thread_id, goal.goal_id, goal.status
    );
    if let Some(reason) = &goal.status_reason {
        text.push_str(&format!("reason     {}\n", one_line(reason)));
    }
    text.push_str(&format!(
        "objective  {}\ntokens     {}\ntime       {} s\n",
        one_line(&goal.objective),
        tokens_text(goal),
        goal.time_used_seconds
    ));
    text
}

fn account_text(result: &GoalAccountResult) -> String {
    let turn = &result.turn;
    if result.already_recorded {
        return format!(
            "turn {} was already recorded: nothing charged; goal {}, {}\n",
            turn.turn_id,
            result.goal.status,
            tokens_text(&result.goal)
        );
    }
    let plan = if turn.plan_mode { " (plan mode)" } else { "" };
    let mut text = format!(
        "recorded {}{plan}: charged {} tokens; goal {}, {}\n",
        turn.turn_id,
        turn.tokens_charged,
        result.goal.status,
        tokens_text(&result.goal)
    );
    if result.budget_limit_reached {
        text.push_str("the budget is spent: the goal is now budget-limited\n");
    }
    if result.breaker_tripped
        && let Some(reason) = &result.goal.status_reason
    {
        text.push_str(&format!("the goal is paused: {reason}\n"));
    }
    text
}

fn tokens_text(goal: &ThreadGoal) -> String {
    match (goal.token_budget, goal.remaining_tokens()) {
        (Some(budget), Some(remaining)) => format!(
            "{} used of {budget} ({remaining} remaining)",
            goal.tokens_used
        ),
        _ => format!("{} used (no budget)", goal.tokens_used),
    }
}

/// `text` on one line, so a multi-line objective cannot break the layout.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Prints `value` as pretty JSON, every string secret-redacted and the text display-safe
/// (still valid JSON: the stand-ins are ordinary characters).
fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    let mut value = serde_json::to_value(value)?;
    redact_json_strings(&mut value);
    emit(&format!("{}\n", serde_json::to_string_pretty(&value)?))
}

/// Writes `text` to standard output secret-redacted and display-safe: objectives, reasons and
/// steering text are the user's or the model's words, and an escape sequence in them must not
/// reach the terminal (a closed pipe ends the command, see [`super::exit::write_stdout`]).
fn emit(text: &str) -> anyhow::Result<()> {
    super::exit::write_stdout(display_safe(&redact_secrets(text)).as_bytes());
    Ok(())
}
