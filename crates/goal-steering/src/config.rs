//! The `[goals]` table of `config.toml`, read by `memory_config::Config::section`.
//!
//! ```toml
//! [goals]
//! max_token_budget = 100000000   # the largest budget a user may set
//! default_token_budget = 2000000 # the budget of a goal set without one (none when absent)
//! min_continuation_seconds = 0   # least time between two continuation prompts
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
    #[serde(rename = "min_continuation_seconds", deserialize_with = "seconds")]
    pub min_continuation_interval: Duration,
}

impl Default for GoalConfig {
    fn default() -> Self {
        GoalConfig {
            max_token_budget: DEFAULT_MAX_TOKEN_BUDGET,
            default_token_budget: None,
            min_continuation_interval: Duration::ZERO,
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

/// Whole seconds in [`MIN_CONTINUATION_SECONDS_RANGE`]; the range is the expectation an
/// error reports.
fn seconds<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    let seconds = i64::deserialize(deserializer)?;
    match u64::try_from(seconds) {
        Ok(whole) if MIN_CONTINUATION_SECONDS_RANGE.contains(&seconds) => {
            Ok(Duration::from_secs(whole))
        }
        _ => Err(serde::de::Error::invalid_value(
            serde::de::Unexpected::Signed(seconds),
            &format!(
                "between {} and {}",
                MIN_CONTINUATION_SECONDS_RANGE.start(),
                MIN_CONTINUATION_SECONDS_RANGE.end()
            )
            .as_str(),
        )),
    }
}
