//! The `[goals]` table of `config.toml`, read by `memory_config::Config::section`.
//!
//! ```toml
//! [goals]
//! max_token_budget = 100000000   # the largest budget a user may set
//! default_token_budget = 2000000 # the budget of a goal set without one (none when absent)
//! min_continuation_seconds = 0   # least time between two continuation prompts
//! mcp_turn_gap_seconds = 30      # over MCP, a quiet gap this long ends the open turn
//! ```
//!
//! A missing table or key takes its default; an unknown key, a value of the wrong type or one
//! outside its range is an error naming the key and the file.

use std::ops::RangeInclusive;
use std::time::Duration;

use memory_config::{Place, Ranges, Section};
use serde::{Deserialize, Deserializer};

/// The largest token budget a user may set when the config says nothing.
pub const DEFAULT_MAX_TOKEN_BUDGET: i64 = 100_000_000;
/// Range of `max_token_budget`.
pub const MAX_TOKEN_BUDGET_RANGE: RangeInclusive<i64> = 1..=1_000_000_000_000;
/// Range of `min_continuation_seconds` (up to a day).
pub const MIN_CONTINUATION_SECONDS_RANGE: RangeInclusive<i64> = 0..=86_400;
/// The quiet gap between goal-tool calls that ends the open turn over MCP, when the config
/// says nothing.
pub const DEFAULT_MCP_TURN_GAP_SECONDS: u64 = 30;
/// Range of `mcp_turn_gap_seconds` (a second to a day).
pub const MCP_TURN_GAP_SECONDS_RANGE: RangeInclusive<i64> = 1..=86_400;

/// How goals behave: the `[goals]` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GoalConfig {
    /// `max_token_budget`: the largest token budget a user may set (the model never sets one).
    /// Default 100,000,000, range 1 to 10^12.
    pub max_token_budget: i64,
    /// `default_token_budget`: the budget a goal gets when it is set (or created by the model)
    /// without one; `None` (the default) leaves such goals without a budget. Range 1 to
    /// `max_token_budget`.
    pub default_token_budget: Option<i64>,
    /// `min_continuation_seconds`: least time between two continuation prompts of one goal;
    /// zero for none. Default 0, range 0 to 86,400 (a day).
    #[serde(
        rename = "min_continuation_seconds",
        deserialize_with = "continuation_seconds"
    )]
    pub min_continuation_interval: Duration,
    /// `mcp_turn_gap_seconds`: a host that reports no turns (an MCP client) has its goal turns
    /// delimited by quiet gaps: a goal-tool call arriving this long after the previous one
    /// starts a new turn (see [`crate::GapTurns`]). Default 30, range 1 to 86,400.
    #[serde(rename = "mcp_turn_gap_seconds", deserialize_with = "turn_gap_seconds")]
    pub mcp_turn_gap: Duration,
}

impl Default for GoalConfig {
    fn default() -> Self {
        GoalConfig {
            max_token_budget: DEFAULT_MAX_TOKEN_BUDGET,
            default_token_budget: None,
            min_continuation_interval: Duration::ZERO,
            mcp_turn_gap: Duration::from_secs(DEFAULT_MCP_TURN_GAP_SECONDS),
        }
    }
}

impl Section for GoalConfig {
    const PLACE: Place = Place::Table("goals");

    fn settle(&mut self, ranges: &mut Ranges<'_>) -> memory_config::Result<()> {
        ranges.require(
            "max_token_budget",
            self.max_token_budget,
            MAX_TOKEN_BUDGET_RANGE,
        )?;
        match self.default_token_budget {
            Some(budget) => {
                ranges.require("default_token_budget", budget, 1..=self.max_token_budget)
            }
            None => Ok(()),
        }
    }
}

fn continuation_seconds<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    seconds(deserializer, MIN_CONTINUATION_SECONDS_RANGE)
}

fn turn_gap_seconds<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    seconds(deserializer, MCP_TURN_GAP_SECONDS_RANGE)
}

/// Whole seconds in `range`; the range is the expectation an error reports.
fn seconds<'de, D: Deserializer<'de>>(
    deserializer: D,
    range: RangeInclusive<i64>,
) -> Result<Duration, D::Error> {
    let seconds = i64::deserialize(deserializer)?;
    match u64::try_from(seconds) {
        Ok(whole) if range.contains(&seconds) => Ok(Duration::from_secs(whole)),
        _ => Err(serde::de::Error::invalid_value(
            serde::de::Unexpected::Signed(seconds),
            &format!("between {} and {}", range.start(), range.end()).as_str(),
        )),
    }
}
