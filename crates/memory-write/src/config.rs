//! The `[memories]` table of the config file: codex's keys, defaults and ranges.
//!
//! A file value outside its range is clamped and reported as a warning; a value of the wrong
//! type, an unknown key or a TOML syntax error is an error that names the key (or the line).
//! Tables other than `[memories]` belong to other parts of agent-memory and are ignored here.

use std::ops::RangeInclusive;
use std::path::Path;

use memory_protocol::model::ReasoningEffort;

use crate::error::{Error, Result};

/// Most rollouts extracted per startup pass when nothing says otherwise.
pub const DEFAULT_MAX_ROLLOUTS_PER_STARTUP: i64 = 2;
/// Range of `max_rollouts_per_startup`.
pub const MAX_ROLLOUTS_PER_STARTUP_RANGE: RangeInclusive<i64> = 1..=128;
/// Oldest rollout (by last activity) a startup pass extracts, in days.
pub const DEFAULT_MAX_ROLLOUT_AGE_DAYS: i64 = 10;
/// Range of `max_rollout_age_days`.
pub const MAX_ROLLOUT_AGE_DAYS_RANGE: RangeInclusive<i64> = 0..=90;
/// How long a rollout must be idle before it is extracted, in hours.
pub const DEFAULT_MIN_ROLLOUT_IDLE_HOURS: i64 = 6;
/// Range of `min_rollout_idle_hours`.
pub const MIN_ROLLOUT_IDLE_HOURS_RANGE: RangeInclusive<i64> = 1..=48;
/// Below this remaining rate-limit percentage the write path does not run.
pub const DEFAULT_MIN_RATE_LIMIT_REMAINING_PERCENT: i64 = 25;
/// Range of `min_rate_limit_remaining_percent`.
pub const MIN_RATE_LIMIT_REMAINING_PERCENT_RANGE: RangeInclusive<i64> = 0..=100;
/// Most raw memories phase 2 consolidates.
pub const DEFAULT_MAX_RAW_MEMORIES_FOR_CONSOLIDATION: i64 = 256;
/// Range of `max_raw_memories_for_consolidation`.
pub const MAX_RAW_MEMORIES_FOR_CONSOLIDATION_RANGE: RangeInclusive<i64> = 1..=4096;
/// Days an unused memory is kept before pruning.
pub const DEFAULT_MAX_UNUSED_DAYS: i64 = 30;
/// Range of `max_unused_days`.
pub const MAX_UNUSED_DAYS_RANGE: RangeInclusive<i64> = 0..=365;

/// Quiet time after a successful consolidation, in hours (an agent-memory key; codex has a
/// fixed 6 h).
pub const DEFAULT_CONSOLIDATION_COOLDOWN_HOURS: i64 = 6;
/// Range of `consolidation_cooldown_hours`.
pub const CONSOLIDATION_COOLDOWN_HOURS_RANGE: RangeInclusive<i64> = 0..=168;

/// The `[memories]` table as the file wrote it: `None` for a key the file does not set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoriesToml {
    /// `disable_on_external_context` (alias `no_memories_if_mcp_or_web_search`).
    pub disable_on_external_context: Option<bool>,
    /// `generate_memories`: whether newly seen threads are extracted.
    pub generate_memories: Option<bool>,
    /// `use_memories`: whether memories are injected into sessions.
    pub use_memories: Option<bool>,
    /// `dedicated_tools`: whether the memory tools are offered.
    pub dedicated_tools: Option<bool>,
    /// `max_raw_memories_for_consolidation`.
    pub max_raw_memories_for_consolidation: Option<i64>,
    /// `max_unused_days`.
    pub max_unused_days: Option<i64>,
    /// `max_rollout_age_days`.
    pub max_rollout_age_days: Option<i64>,
    /// `max_rollouts_per_startup`.
    pub max_rollouts_per_startup: Option<i64>,
    /// `min_rollout_idle_hours`.
    pub min_rollout_idle_hours: Option<i64>,
    /// `min_rate_limit_remaining_percent`.
    pub min_rate_limit_remaining_percent: Option<i64>,
    /// `extract_model`: a model spec for phase 1.
    pub extract_model: Option<String>,
    /// `consolidation_model`: a model spec for phase 2.
    pub consolidation_model: Option<String>,
    /// `consolidation_cooldown_hours`.
    pub consolidation_cooldown_hours: Option<i64>,
}

/// The `[memories]` settings with defaults applied and numbers clamped into range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoriesConfig {
    /// Mark threads polluted when they used web search or external context.
    pub disable_on_external_context: bool,
    /// Newly seen threads are extracted (`false` registers them with memory disabled).
    pub generate_memories: bool,
    /// Memories are injected into sessions.
    pub use_memories: bool,
    /// The memory tools are offered.
    pub dedicated_tools: bool,
    /// Most raw memories phase 2 consolidates.
    pub max_raw_memories_for_consolidation: i64,
    /// Days an unused memory is kept.
    pub max_unused_days: i64,
    /// Oldest rollout a startup pass extracts, in days.
    pub max_rollout_age_days: i64,
    /// Most rollouts extracted per startup pass.
    pub max_rollouts_per_startup: i64,
    /// Hours a rollout must be idle before extraction.
    pub min_rollout_idle_hours: i64,
    /// Below this remaining rate-limit percentage the write path does not run.
    pub min_rate_limit_remaining_percent: i64,
    /// Model spec for phase 1, when set.
    pub extract_model: Option<String>,
    /// Model spec for phase 2, when set.
    pub consolidation_model: Option<String>,
    /// Quiet time after a successful consolidation, in hours.
    pub consolidation_cooldown_hours: i64,
}

impl Default for MemoriesConfig {
    fn default() -> Self {
        MemoriesConfig::resolve(&MemoriesToml::default()).0
    }
}

impl MemoriesConfig {
    /// Applies defaults and clamps numbers into their ranges. Returns the settings and one
    /// warning per clamped value.
    pub fn resolve(file: &MemoriesToml) -> (MemoriesConfig, Vec<String>) {
        let mut warnings = Vec::new();
        let mut clamp =
            |key: &str, value: Option<i64>, default: i64, range: RangeInclusive<i64>| {
                let value = value.unwrap_or(default);
                let clamped = value.clamp(*range.start(), *range.end());
                if clamped != value {
                    warnings.push(format!(
                        "memories.{key} = {value} is outside {}..={}; using {clamped}",
                        range.start(),
                        range.end()
                    ));
                }
                clamped
            };
        let config = MemoriesConfig {
            disable_on_external_context: file.disable_on_external_context.unwrap_or(false),
            generate_memories: file.generate_memories.unwrap_or(true),
            use_memories: file.use_memories.unwrap_or(true),
            dedicated_tools: file.dedicated_tools.unwrap_or(false),
            max_raw_memories_for_consolidation: clamp(
                "max_raw_memories_for_consolidation",
                file.max_raw_memories_for_consolidation,
                DEFAULT_MAX_RAW_MEMORIES_FOR_CONSOLIDATION,
                MAX_RAW_MEMORIES_FOR_CONSOLIDATION_RANGE,
            ),
            max_unused_days: clamp(
                "max_unused_days",
                file.max_unused_days,
                DEFAULT_MAX_UNUSED_DAYS,
                MAX_UNUSED_DAYS_RANGE,
            ),
            max_rollout_age_days: clamp(
                "max_rollout_age_days",
                file.max_rollout_age_days,
                DEFAULT_MAX_ROLLOUT_AGE_DAYS,
                MAX_ROLLOUT_AGE_DAYS_RANGE,
            ),
            max_rollouts_per_startup: clamp(
                "max_rollouts_per_startup",
                file.max_rollouts_per_startup,
                DEFAULT_MAX_ROLLOUTS_PER_STARTUP,
                MAX_ROLLOUTS_PER_STARTUP_RANGE,
            ),
            min_rollout_idle_hours: clamp(
                "min_rollout_idle_hours",
                file.min_rollout_idle_hours,
                DEFAULT_MIN_ROLLOUT_IDLE_HOURS,
                MIN_ROLLOUT_IDLE_HOURS_RANGE,
            ),
            min_rate_limit_remaining_percent: clamp(
                "min_rate_limit_remaining_percent",
                file.min_rate_limit_remaining_percent,
                DEFAULT_MIN_RATE_LIMIT_REMAINING_PERCENT,
                MIN_RATE_LIMIT_REMAINING_PERCENT_RANGE,
            ),
            extract_model: file.extract_model.clone(),
            consolidation_model: file.consolidation_model.clone(),
            consolidation_cooldown_hours: clamp(
                "consolidation_cooldown_hours",
                file.consolidation_cooldown_hours,
                DEFAULT_CONSOLIDATION_COOLDOWN_HOURS,
                CONSOLIDATION_COOLDOWN_HOURS_RANGE,
            ),
        };
        (config, warnings)
    }
}

/// Reads the `[memories]` table of a config file.
pub fn load_config_file(path: &Path) -> Result<MemoriesToml> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse_config(&text).map_err(|error| error.in_file(path))
}

/// Parses the `[memories]` table of config text. The error names the offending key, or the
/// line of a syntax error.
pub fn parse_config(text: &str) -> Result<MemoriesToml> {
    parse_memories(text).map_err(Error::InvalidConfig)
}

/// The model settings of a config file: top-level keys, as codex writes them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelToml {
    /// `model_context_window`: the model's context window in tokens.
    pub context_window: Option<u64>,
    /// `model_reasoning_effort`: `minimal`, `low`, `medium` or `high`.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// `model_request_timeout_seconds`: limit on one HTTP request.
    pub request_timeout_seconds: Option<u64>,
    /// `model_request_max_retries`: retries of one call after a rate limit or server error.
    pub request_max_retries: Option<u32>,
}

/// Reads the model settings of a config file.
pub fn load_model_config_file(path: &Path) -> Result<ModelToml> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse_model_config(&text).map_err(|error| error.in_file(path))
}

/// Parses the model settings (top-level `model_*` keys) of config text; other top-level keys
/// belong to the host agent and are ignored.
pub fn parse_model_config(text: &str) -> Result<ModelToml> {
    let document: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        Error::InvalidConfig(format!("invalid toml: {}", e.to_string().trim_end()))
    })?;
    let mut parsed = ModelToml::default();
    let positive = |key: &str, value: &toml::Value| -> Result<u64> {
        let number = integer(key, value).map_err(Error::InvalidConfig)?;
        u64::try_from(number)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                Error::InvalidConfig(format!("`{key}` must be positive, found {number}"))
            })
    };
    for (key, value) in &document {
        match key.as_str() {
            "model_context_window" => parsed.context_window = Some(positive(key, value)?),
            "model_request_timeout_seconds" => {
                parsed.request_timeout_seconds = Some(positive(key, value)?);
            }
            "model_request_max_retries" => {
                let number = integer(key, value).map_err(Error::InvalidConfig)?;
                parsed.request_max_retries = Some(u32::try_from(number).map_err(|_| {
                    Error::InvalidConfig(format!("`{key}` must be 0 or more, found {number}"))
                })?);
            }
            "model_reasoning_effort" => {
                let text = string(key, value).map_err(Error::InvalidConfig)?;
                parsed.reasoning_effort = Some(parse_reasoning_effort(&text).ok_or_else(|| {
                    Error::InvalidConfig(format!(
                        "`{key}` must be minimal, low, medium or high, found `{text}`"
                    ))
                })?);
            }
            _ => {}
        }
    }
    Ok(parsed)
}

/// The `[store]` table of a config file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreToml {
    /// `url = "postgres://..."` keeps the state in a PostgreSQL server shared by several
    /// machines; absent (or `"sqlite"`), the state stays in `<home>/state.sqlite`.
    pub url: Option<String>,
    /// `machine_id = "..."`: the name this machine registers its rollouts and takes leases
    /// under on a shared store (default: the host name). Two machines must not share one.
    pub machine_id: Option<String>,
}

/// Parses the `[store]` table of a config file (see [`StoreToml`]); unknown keys are errors.
pub fn parse_store_config(text: &str) -> Result<StoreToml> {
    let document: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        Error::InvalidConfig(format!("invalid toml: {}", e.to_string().trim_end()))
    })?;
    let Some(table) = document.get("store") else {
        return Ok(StoreToml::default());
    };
    let table = table
        .as_table()
        .ok_or_else(|| Error::InvalidConfig("`store` must be a table".to_owned()))?;
    let mut store = StoreToml::default();
    for (key, value) in table {
        let value = match key.as_str() {
            "url" | "machine_id" => string(&format!("store.{key}"), value)
                .map_err(Error::InvalidConfig)?
                .trim()
                .to_owned(),
            other => {
                return Err(Error::InvalidConfig(format!(
                    "unknown key `store.{other}` (known: url, machine_id)"
                )));
            }
        };
        let value = (!value.is_empty()).then_some(value);
        match key.as_str() {
            "url" => store.url = value,
            _ => store.machine_id = value,
        }
    }
    Ok(store)
}

/// Reads the `[store]` table of a config file (see [`parse_store_config`]).
pub fn load_store_config(path: &Path) -> Result<StoreToml> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse_store_config(&text).map_err(|error| error.in_file(path))
}

/// `minimal`, `low`, `medium` or `high`, in any case.
pub fn parse_reasoning_effort(text: &str) -> Option<ReasoningEffort> {
    match text.trim().to_ascii_lowercase().as_str() {
        "minimal" => Some(ReasoningEffort::Minimal),
        "low" => Some(ReasoningEffort::Low),
        "medium" => Some(ReasoningEffort::Medium),
        "high" => Some(ReasoningEffort::High),
        _ => None,
    }
}

fn parse_memories(text: &str) -> std::result::Result<MemoriesToml, String> {
    let document: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("invalid toml: {}", e.to_string().trim_end()))?;
    let Some(memories) = document.get("memories") else {
        return Ok(MemoriesToml::default());
    };
    let toml::Value::Table(table) = memories else {
        return Err(format!(
            "`memories` must be a table, found {}",
            memories.type_str()
        ));
    };
    let mut parsed = MemoriesToml::default();
    for (key, value) in table {
        let field = format!("memories.{key}");
        match key.as_str() {
            "disable_on_external_context" | "no_memories_if_mcp_or_web_search" => {
                parsed.disable_on_external_context = Some(boolean(&field, value)?);
            }
            "generate_memories" => parsed.generate_memories = Some(boolean(&field, value)?),
            "use_memories" => parsed.use_memories = Some(boolean(&field, value)?),
            "dedicated_tools" => parsed.dedicated_tools = Some(boolean(&field, value)?),
            "max_raw_memories_for_consolidation" => {
                parsed.max_raw_memories_for_consolidation = Some(integer(&field, value)?);
            }
            "max_unused_days" => parsed.max_unused_days = Some(integer(&field, value)?),
            "max_rollout_age_days" => parsed.max_rollout_age_days = Some(integer(&field, value)?),
            "max_rollouts_per_startup" => {
                parsed.max_rollouts_per_startup = Some(integer(&field, value)?);
            }
            "min_rollout_idle_hours" => {
                parsed.min_rollout_idle_hours = Some(integer(&field, value)?);
            }
            "min_rate_limit_remaining_percent" => {
                parsed.min_rate_limit_remaining_percent = Some(integer(&field, value)?);
            }
            "extract_model" => parsed.extract_model = Some(string(&field, value)?),
            "consolidation_model" => parsed.consolidation_model = Some(string(&field, value)?),
            "consolidation_cooldown_hours" => {
                parsed.consolidation_cooldown_hours = Some(integer(&field, value)?);
            }
            _ => return Err(format!("unknown key `{field}`")),
        }
    }
    Ok(parsed)
}

fn boolean(field: &str, value: &toml::Value) -> std::result::Result<bool, String> {
    value
        .as_bool()
        .ok_or_else(|| wrong_type(field, "a boolean", value))
}

fn integer(field: &str, value: &toml::Value) -> std::result::Result<i64, String> {
    value
        .as_integer()
        .ok_or_else(|| wrong_type(field, "an integer", value))
}

fn string(field: &str, value: &toml::Value) -> std::result::Result<String, String> {
    value
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| wrong_type(field, "a string", value))
}

fn wrong_type(field: &str, expected: &str, value: &toml::Value) -> String {
    format!("`{field}` must be {expected}, found {}", value.type_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_table_names_a_url_and_a_machine_id_and_refuses_others() {
        let parsed = parse_store_config(
            "[store]\nurl = \"postgres://agent@db/memory\"\nmachine_id = \" ci-runner-3 \"\n",
        )
        .unwrap();
        assert_eq!(parsed.url.as_deref(), Some("postgres://agent@db/memory"));
        assert_eq!(parsed.machine_id.as_deref(), Some("ci-runner-3"));
        assert_eq!(parse_store_config("").unwrap(), StoreToml::default());
        let blank = parse_store_config("[store]\nmachine_id = \"  \"\n").unwrap();
        assert_eq!(blank.machine_id, None);
        let unknown = parse_store_config("[store]\nhost = \"x\"\n").unwrap_err();
        assert!(
            unknown.to_string().contains("known: url, machine_id"),
            "{unknown}"
        );
        let wrong = parse_store_config("[store]\nmachine_id = 3\n").unwrap_err();
        assert!(wrong.to_string().contains("must be a string"), "{wrong}");
    }

    #[test]
    fn defaults_match_codex() {
        let config = MemoriesConfig::default();
        assert_eq!(config.max_rollouts_per_startup, 2);
        assert_eq!(config.max_rollout_age_days, 10);
        assert_eq!(config.min_rollout_idle_hours, 6);
        assert_eq!(config.min_rate_limit_remaining_percent, 25);
        assert_eq!(config.max_raw_memories_for_consolidation, 256);
        assert_eq!(config.max_unused_days, 30);
        assert!(config.generate_memories && config.use_memories);
        assert!(!config.dedicated_tools && !config.disable_on_external_context);
        assert_eq!(config.consolidation_cooldown_hours, 6);
    }

    #[test]
    fn the_consolidation_cooldown_is_configurable_and_reaches_phase_two() {
        let file = parse_config(
            "[memories]
consolidation_cooldown_hours = 1
",
        )
        .unwrap();
        let (config, warnings) = MemoriesConfig::resolve(&file);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(config.consolidation_cooldown_hours, 1);
        let options = crate::phase_two::PhaseTwoOptions::from_config(&config);
        assert_eq!(options.cooldown_seconds, 3600);
        let too_long = parse_config("[memories]\nconsolidation_cooldown_hours = 1000\n").unwrap();
        assert_eq!(
            MemoriesConfig::resolve(&too_long)
                .0
                .consolidation_cooldown_hours,
            168
        );
    }

    #[test]
    fn out_of_range_values_are_clamped_with_a_warning() {
        let file = parse_config(
            "[memories]\nmax_rollouts_per_startup = 500\nmin_rollout_idle_hours = 0\n\
             max_rollout_age_days = 5\n",
        )
        .unwrap();
        let (config, warnings) = MemoriesConfig::resolve(&file);
        assert_eq!(config.max_rollouts_per_startup, 128);
        assert_eq!(config.min_rollout_idle_hours, 1);
        assert_eq!(config.max_rollout_age_days, 5);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("memories.max_rollouts_per_startup = 500"));
    }

    #[test]
    fn errors_name_the_key() {
        let wrong_type = parse_config("[memories]\nmax_rollout_age_days = \"ten\"\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            wrong_type,
            "`memories.max_rollout_age_days` must be an integer, found string"
        );
        let unknown = parse_config("[memories]\nmax_rollouts = 3\n")
            .unwrap_err()
            .to_string();
        assert_eq!(unknown, "unknown key `memories.max_rollouts`");
        let not_table = parse_config("memories = 3\n").unwrap_err().to_string();
        assert!(not_table.contains("`memories` must be a table"));
        let syntax = parse_config("[memories\n").unwrap_err().to_string();
        assert!(syntax.starts_with("invalid toml:"), "{syntax}");
    }

    #[test]
    fn model_settings_are_top_level_keys_as_codex_writes_them() {
        let text = "model = \"gpt-5\"\nmodel_context_window = 128000\n\
                    model_reasoning_effort = \"Low\"\nmodel_request_timeout_seconds = 30\n\
                    model_request_max_retries = 2\n[memories]\nextract_model = \"gpt-5-mini\"\n";
        let model = parse_model_config(text).unwrap();
        assert_eq!(
            model,
            ModelToml {
                context_window: Some(128_000),
                reasoning_effort: Some(ReasoningEffort::Low),
                request_timeout_seconds: Some(30),
                request_max_retries: Some(2),
            }
        );
        assert_eq!(parse_model_config("").unwrap(), ModelToml::default());
        for (bad, expected) in [
            ("model_context_window = 0", "must be positive"),
            ("model_context_window = \"big\"", "must be an integer"),
            (
                "model_reasoning_effort = \"max\"",
                "must be minimal, low, medium or high",
            ),
            ("model_request_max_retries = -1", "must be 0 or more"),
        ] {
            let err = parse_model_config(bad).unwrap_err().to_string();
            assert!(err.contains(expected), "{bad}: {err}");
        }
    }

    #[test]
    fn other_tables_and_the_alias_are_accepted() {
        let file = parse_config(
            "[model]\nname = \"x\"\n[memories]\nno_memories_if_mcp_or_web_search = true\n\
             extract_model = \"openai:gpt-5-mini\"\n",
        )
        .unwrap();
        assert_eq!(file.disable_on_external_context, Some(true));
        assert_eq!(file.extract_model.as_deref(), Some("openai:gpt-5-mini"));
        assert_eq!(file.max_rollout_age_days, None);
    }

    proptest::proptest! {
        #[test]
        fn parse_store_config_never_panics(text in ".{0,200}") {
            let _ = parse_store_config(&text);
        }

        #[test]
        fn parse_config_never_panics(text in ".{0,200}") {
            let _ = parse_config(&text);
        }

        #[test]
        fn resolved_numbers_are_always_in_range(
            a in proptest::num::i64::ANY,
            b in proptest::num::i64::ANY,
            c in proptest::num::i64::ANY,
            d in proptest::num::i64::ANY,
        ) {
            let file = MemoriesToml {
                max_rollouts_per_startup: Some(a),
                max_rollout_age_days: Some(b),
                min_rollout_idle_hours: Some(c),
                min_rate_limit_remaining_percent: Some(d),
                ..MemoriesToml::default()
            };
            let (config, warnings) = MemoriesConfig::resolve(&file);
            proptest::prop_assert!(MAX_ROLLOUTS_PER_STARTUP_RANGE.contains(&config.max_rollouts_per_startup));
            proptest::prop_assert!(MAX_ROLLOUT_AGE_DAYS_RANGE.contains(&config.max_rollout_age_days));
            proptest::prop_assert!(MIN_ROLLOUT_IDLE_HOURS_RANGE.contains(&config.min_rollout_idle_hours));
            proptest::prop_assert!(MIN_RATE_LIMIT_REMAINING_PERCENT_RANGE.contains(&config.min_rate_limit_remaining_percent));
            let expected = [
                !MAX_ROLLOUTS_PER_STARTUP_RANGE.contains(&a),
                !MAX_ROLLOUT_AGE_DAYS_RANGE.contains(&b),
                !MIN_ROLLOUT_IDLE_HOURS_RANGE.contains(&c),
                !MIN_RATE_LIMIT_REMAINING_PERCENT_RANGE.contains(&d),
            ].iter().filter(|clamped| **clamped).count();
            proptest::prop_assert_eq!(warnings.len(), expected);
        }
    }
}
