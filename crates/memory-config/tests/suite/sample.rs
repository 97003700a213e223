//! A sample owner with one key of each kind the real owners use.

use memory_config::{EnvKey, Place, Ranges, Result, Section};
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Mode {
    Writable,
    ReadOnly,
}

/// The `[sample]` table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct Sample {
    /// Default true.
    pub(super) enabled: bool,
    /// Default 10, 1 to 100 (an error outside).
    pub(super) limit: i64,
    /// Default 5, clamped into 0 to 20.
    pub(super) days: i64,
    /// Default 3; any `u32`.
    pub(super) retries: u32,
    /// Default none; the environment's `SAMPLE_URL` wins.
    pub(super) url: Option<String>,
    /// Default writable.
    pub(super) mode: Mode,
}

impl Default for Sample {
    fn default() -> Self {
        Sample {
            enabled: true,
            limit: 10,
            days: 5,
            retries: 3,
            url: None,
            mode: Mode::Writable,
        }
    }
}

impl Section for Sample {
    const PLACE: Place = Place::Table("sample");
    const ENV: &'static [EnvKey] = &[
        EnvKey {
            variable: "SAMPLE_URL",
            key: "url",
        },
        EnvKey {
            variable: "SAMPLE_LIMIT",
            key: "limit",
        },
    ];

    fn settle(&mut self, ranges: &mut Ranges<'_>) -> Result<()> {
        ranges.require("limit", self.limit, 1..=100)?;
        ranges.clamp("days", &mut self.days, 0..=20);
        Ok(())
    }
}

/// Top-level keys beside a host agent's own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct TopLevel {
    pub(super) sample_window: Option<u64>,
}

impl Section for TopLevel {
    const PLACE: Place = Place::TopLevel(&["sample_window"]);

    fn settle(&mut self, ranges: &mut Ranges<'_>) -> Result<()> {
        if let Some(window) = self.sample_window {
            ranges.require_at_least("sample_window", window, 1)?;
        }
        Ok(())
    }
}
