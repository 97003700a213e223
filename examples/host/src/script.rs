//! The JSON script a scripted run replays: the projects, the sessions, what the user says and
//! does each turn, and every reply the model gives.
//!
//! A script is data, read strictly (an unknown key is an error naming it). The model's replies
//! are listed turn by turn; [`crate::ScriptedModel`] replays them in order, so a run is
//! deterministic and needs no network.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{HostError, Result};
use crate::host::ContextStrategy;

/// A whole scripted run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// The model's context window, in tokens; every request must fit it.
    pub window_tokens: u64,
    /// Tokens of recent conversation a compaction keeps verbatim.
    #[serde(default = "default_keep_recent_tokens")]
    pub keep_recent_tokens: u64,
    /// Compact when the conversation passes this share of its part of the window (1..=99);
    /// `None` compacts at the window less its reserve.
    #[serde(default)]
    pub threshold_percent: Option<u8>,
    /// What the host does at the threshold: `compaction` (when absent) or `working-memory`.
    /// The command line's `--context` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextStrategy>,
    /// The projects, by name: each is a working directory with its own memory.
    pub projects: BTreeMap<String, ProjectScript>,
    /// The sessions, run in order.
    pub sessions: Vec<SessionScript>,
}

fn default_keep_recent_tokens() -> u64 {
    2_000
}

/// One project: the files it starts with (an `AGENTS.md` among them is pinned) and facts that
/// belong to it alone (no request in another project may hold them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectScript {
    /// Files written into the project's folder before the first session, by relative path.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// Texts only this project's requests may hold.
    #[serde(default)]
    pub private_facts: Vec<String>,
}

/// One session: a project, an optional goal the user sets at its start, and its turns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionScript {
    /// The project's name (a key of [`Script::projects`]).
    pub project: String,
    /// The goal the user sets when the session starts.
    #[serde(default)]
    pub goal: Option<GoalScript>,
    /// Texts recall must bring into this session's requests (facts an earlier session
    /// established).
    #[serde(default)]
    pub expect_recalled: Vec<String>,
    /// The turns, in order.
    pub turns: Vec<TurnScript>,
}

/// A goal the user sets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoalScript {
    /// What to achieve.
    pub objective: String,
    /// The user's token budget.
    #[serde(default)]
    pub token_budget: Option<i64>,
}

/// One turn: what the user does, then the model's replies until one without tool calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnScript {
    /// What the user does to the goal before the turn.
    #[serde(default)]
    pub goal_action: Option<GoalAction>,
    /// The user's message. With `continue_goal`, it is sent only when no goal continuation is
    /// due.
    #[serde(default)]
    pub user: Option<String>,
    /// A goal continuation turn: the host asks goal steering for the hidden continuation and
    /// sends it instead of a user message.
    #[serde(default)]
    pub continue_goal: bool,
    /// Compact before this turn whatever the threshold says (the user asked for it).
    #[serde(default)]
    pub compact: bool,
    /// The model's replies in this turn; the last one should have no tool calls.
    pub replies: Vec<Reply>,
}

/// A user action on the goal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum GoalAction {
    /// Pause the goal.
    Pause,
    /// Resume a paused goal.
    Resume,
    /// Replace the objective.
    Edit(String),
}

/// One model reply: text and tool calls.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    /// The assistant's text (may be empty).
    #[serde(default)]
    pub text: String,
    /// The tool calls, run in order before the next request.
    #[serde(default)]
    pub tool_calls: Vec<ScriptedCall>,
}

/// A tool call in a script.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// The tool's name (`shell`, a memory tool or a goal tool).
    pub name: String,
    /// The arguments, a JSON object.
    #[serde(default)]
    pub arguments: Value,
}

impl Script {
    /// Reads a script from JSON and checks that every session names a known project.
    pub fn from_json(text: &str) -> Result<Script> {
        let script: Script =
            serde_json::from_str(text).map_err(|error| HostError::Script(error.to_string()))?;
        script.validate()?;
        Ok(script)
    }

    /// Every session names a project of the script, and the window is not zero.
    pub fn validate(&self) -> Result<()> {
        if self.window_tokens == 0 {
            return Err(HostError::Script(
                "window_tokens must be positive".to_owned(),
            ));
        }
        for (index, session) in self.sessions.iter().enumerate() {
            if !self.projects.contains_key(&session.project) {
                return Err(HostError::Script(format!(
                    "session {} names project {:?}, which the script does not define",
                    index + 1,
                    session.project
                )));
            }
        }
        for (index, turn) in self.sessions.iter().flat_map(|s| &s.turns).enumerate() {
            // A turn ends at the first reply without tool calls, so a script whose turns end
            // anywhere else would hand one turn's replies to the next.
            let ends = turn
                .replies
                .iter()
                .position(|reply| reply.tool_calls.is_empty());
            if ends != Some(turn.replies.len().saturating_sub(1)) || turn.replies.is_empty() {
                return Err(HostError::Script(format!(
                    "turn {} must end with its only reply without tool calls",
                    index + 1
                )));
            }
            if turn.user.is_none() && !turn.continue_goal {
                return Err(HostError::Script(format!(
                    "turn {} has neither a user message nor continue_goal",
                    index + 1
                )));
            }
        }
        for name in self.projects.keys() {
            let plain = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !plain {
                return Err(HostError::Script(format!(
                    "project name {name:?} must be letters, digits, `-` or `_`"
                )));
            }
        }
        Ok(())
    }

    /// Every reply of every session, in the order a run asks for them.
    pub fn replies(&self) -> Vec<Reply> {
        self.sessions
            .iter()
            .flat_map(|session| &session.turns)
            .flat_map(|turn| turn.replies.iter().cloned())
            .collect()
    }
}
