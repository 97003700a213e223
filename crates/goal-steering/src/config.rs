//! The `[goals]` table of the config file.
//!
//! ```toml
//! [goals]
//! max_token_budget = 100000000   # the largest budget a user may set
//! min_continuation_seconds = 0   # least time between two continuation prompts
//! ```
//!
//! A missing table or key takes its default. An unknown key, a value of the wrong type or one
//! outside its range is an error that names the key. Other tables belong to other parts of
//! agent-memory and are ignored here.

use std::ops::RangeInclusive;
use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};

/// The largest token budget a user may set when the config says nothing.
pub const DEFAULT_MAX_TOKEN_BUDGET: i64 = 100_000_000;
/// Range of `max_token_budget`.
pub const MAX_TOKEN_BUDGET_RANGE: RangeInclusive<i64> = 1..=1_000_000_000_000;
/// Range of `min_continuation_seconds` (up to a day).
pub const MIN_CONTINUATION_SECONDS_RANGE: RangeInclusive<i64> = 0..=86_400;

/// How goals behave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GoalConfig {
    /// The largest token budget a user may set. The model never sets one.
    pub max_token_budget: i64,
    /// Least time between two continuation prompts of one goal; zero for none.
    pub min_continuation_interval: Duration,
}

impl Default for GoalConfig {
    fn default() -> Self {
        GoalConfig {
            max_token_budget: DEFAULT_MAX_TOKEN_BUDGET,
            min_continuation_interval: Duration::ZERO,
        }
    }
}

impl GoalConfig {
    /// The `[goals]` table of the config file at `path`; defaults when the file is missing.
    pub fn load(path: &Path) -> Result<GoalConfig> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(GoalConfig::default());
            }
            Err(error) => {
                return Err(Error::Io {
                    path: path.to_owned(),
                    error,
                });
            }
        };
        GoalConfig::parse(&text).map_err(|message| Error::Config {
            path: path.to_owned(),
            message,
        })
    }

    /// The `[goals]` table of config text. The error names the offending key, or the line of a
    /// syntax error.
    pub fn parse(text: &str) -> Result<GoalConfig, String> {
        let document: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| format!("invalid toml: {}", e.to_string().trim_end()))?;
        let mut config = GoalConfig::default();
        let Some(goals) = document.get("goals") else {
            return Ok(config);
        };
        let toml::Value::Table(table) = goals else {
            return Err(format!(
                "`goals` must be a table, found {}",
                goals.type_str()
            ));
        };
        for (key, value) in table {
            match key.as_str() {
                "max_token_budget" => {
                    config.max_token_budget = integer(key, value, MAX_TOKEN_BUDGET_RANGE)?;
                }
                "min_continuation_seconds" => {
                    let seconds = integer(key, value, MIN_CONTINUATION_SECONDS_RANGE)?;
                    config.min_continuation_interval =
                        Duration::from_secs(u64::try_from(seconds).unwrap_or(0));
                }
                _ => return Err(format!("unknown key `goals.{key}`")),
            }
        }
        Ok(config)
    }
}

fn integer(key: &str, value: &toml::Value, range: RangeInclusive<i64>) -> Result<i64, String> {
    let Some(number) = value.as_integer() else {
        return Err(format!(
            "`goals.{key}` must be an integer, found {}",
            value.type_str()
        ));
    };
    if !range.contains(&number) {
        return Err(format!(
            "`goals.{key}` must be between {} and {}, found {number}",
            range.start(),
            range.end()
        ));
    }
    Ok(number)
}
