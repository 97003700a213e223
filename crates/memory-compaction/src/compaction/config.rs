//! The `[compaction]` table of `config.toml`, read by `memory_config::Config::section`.
//!
//! ```toml
//! [compaction]
//! enabled = true             # false: never compact, not at the threshold, not on request
//! threshold_percent = 85     # compact above this share of the window (1 to 99)
//! threshold_tokens = 150000  # compact above this many tokens (wins over threshold_percent)
//! reserve_tokens = 16384     # kept free for the summary and the next turn
//! keep_recent_tokens = 20000 # recent conversation kept verbatim
//! ```
//!
//! With neither threshold set, a conversation is compacted when it fills its window less the
//! reserve. A missing table or key takes its default; an unknown key, a value of the wrong type
//! or one outside its range is an error naming the key and the file.

use std::ops::RangeInclusive;

use memory_config::{Place, Ranges, Section};
use serde::Deserialize;

use super::settings::{CompactionSettings, DEFAULT_KEEP_RECENT_TOKENS};

/// Range of `threshold_percent`.
pub const THRESHOLD_PERCENT_RANGE: RangeInclusive<i64> = 1..=99;
/// Range of `threshold_tokens` and `reserve_tokens`: at least one token, at most a billion.
pub const TOKENS_RANGE: RangeInclusive<i64> = 1..=1_000_000_000;
/// Range of `keep_recent_tokens` (zero keeps nothing but what a cut requires).
pub const KEEP_RECENT_TOKENS_RANGE: RangeInclusive<i64> = 0..=1_000_000_000;

/// When and how conversations are compacted: the `[compaction]` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CompactionConfig {
    /// `enabled`: when false no compaction runs, whatever the size or the request. Default
    /// true.
    pub enabled: bool,
    /// `threshold_percent`: compact when the context exceeds this share of the window. No
    /// default; range 1 to 99.
    pub threshold_percent: Option<i64>,
    /// `threshold_tokens`: compact when the context exceeds this many tokens; wins over
    /// `threshold_percent`. No default; range 1 to 10^9 (a threshold at or above the window is
    /// held just below it).
    pub threshold_tokens: Option<i64>,
    /// `reserve_tokens`: tokens kept free for the summary and the next turn. Default 16,384
    /// (never less than 15% of the window); range 1 to 10^9.
    pub reserve_tokens: Option<i64>,
    /// `keep_recent_tokens`: tokens of recent conversation kept verbatim. Default 20,000;
    /// range 0 to 10^9.
    pub keep_recent_tokens: i64,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        CompactionConfig {
            enabled: true,
            threshold_percent: None,
            threshold_tokens: None,
            reserve_tokens: None,
            keep_recent_tokens: i64::try_from(DEFAULT_KEEP_RECENT_TOKENS).unwrap_or(i64::MAX),
        }
    }
}

impl Section for CompactionConfig {
    const PLACE: Place = Place::Table("compaction");

    fn settle(&mut self, ranges: &mut Ranges<'_>) -> memory_config::Result<()> {
        if let Some(percent) = self.threshold_percent {
            ranges.require("threshold_percent", percent, THRESHOLD_PERCENT_RANGE)?;
        }
        if let Some(tokens) = self.threshold_tokens {
            ranges.require("threshold_tokens", tokens, TOKENS_RANGE)?;
        }
        if let Some(tokens) = self.reserve_tokens {
            ranges.require("reserve_tokens", tokens, TOKENS_RANGE)?;
        }
        ranges.require(
            "keep_recent_tokens",
            self.keep_recent_tokens,
            KEEP_RECENT_TOKENS_RANGE,
        )
    }
}

impl CompactionConfig {
    /// The settings these keys give (the re-arm band at its default).
    pub fn settings(&self) -> CompactionSettings {
        let tokens = |value: i64| u64::try_from(value).unwrap_or(0);
        CompactionSettings {
            enabled: self.enabled,
            reserve_tokens: self.reserve_tokens.map(tokens),
            keep_recent_tokens: tokens(self.keep_recent_tokens),
            threshold_tokens: self.threshold_tokens.map(tokens),
            threshold_percent: self
                .threshold_percent
                .and_then(|percent| u8::try_from(percent).ok()),
            ..CompactionSettings::default()
        }
    }
}
