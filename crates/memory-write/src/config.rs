//! The write path's tables of `config.toml`: `[memories]` (codex's keys, defaults and ranges)
//! and `[store]` (which state store, and this machine's name on a shared one). Both are read by
//! `memory_config::Config::section`.
//!
//! A `[memories]` number outside its range is clamped with a warning, as codex does; `[store]`
//! values are trimmed and a blank one counts as absent.

use std::ops::RangeInclusive;

use memory_config::{EnvKey, Place, Ranges, Section};
use serde::Deserialize;

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

/// The `[memories]` table, with codex's keys. Numbers outside their range are clamped into it
/// with a warning.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoriesConfig {
    /// `disable_on_external_context` (codex's older name `no_memories_if_mcp_or_web_search` is
    /// accepted): mark threads polluted when they used web search or external context. Default
    /// false.
    #[serde(alias = "no_memories_if_mcp_or_web_search")]
    pub disable_on_external_context: bool,
    /// `generate_memories`: newly seen threads are extracted (`false` registers them with
    /// memory disabled). Default true.
    pub generate_memories: bool,
    /// `use_memories`: memories are injected into sessions. Default true.
    pub use_memories: bool,
    /// `dedicated_tools`: the memory tools are offered. Default false.
    pub dedicated_tools: bool,
    /// `max_raw_memories_for_consolidation`: most raw memories phase 2 consolidates. Default
    /// 256, range 1 to 4096.
    pub max_raw_memories_for_consolidation: i64,
    /// `max_unused_days`: days an unused memory is kept. Default 30, range 0 to 365.
    pub max_unused_days: i64,
    /// `max_rollout_age_days`: oldest rollout a pass extracts, in days, range 0 to 90. Unset,
    /// a pass over codex's sessions uses 10 and a folder the user names has no age limit
    /// ([`MemoriesConfig::rollout_age_days`]).
    pub max_rollout_age_days: Option<i64>,
    /// `max_rollouts_per_startup`: most rollouts extracted per pass, range 1 to 128. Unset, a
    /// pass over codex's sessions uses 2 and a folder the user names has no limit
    /// ([`MemoriesConfig::rollouts_per_startup`]).
    pub max_rollouts_per_startup: Option<i64>,
    /// `min_rollout_idle_hours`: hours a rollout must be idle before extraction. Default 6,
    /// range 1 to 48.
    pub min_rollout_idle_hours: i64,
    /// `min_rate_limit_remaining_percent`: below this remaining rate-limit percentage the
    /// write path does not run. Default 25, range 0 to 100.
    pub min_rate_limit_remaining_percent: i64,
    /// `extract_model`: a model spec for phase 1. Default: the host's choice.
    pub extract_model: Option<String>,
    /// `consolidation_model`: a model spec for phase 2. Default: the extraction model.
    pub consolidation_model: Option<String>,
    /// `consolidation_cooldown_hours`: quiet time after a successful consolidation. Default 6,
    /// range 0 to 168.
    pub consolidation_cooldown_hours: i64,
}

impl Default for MemoriesConfig {
    fn default() -> Self {
        MemoriesConfig {
            disable_on_external_context: false,
            generate_memories: true,
            use_memories: true,
            dedicated_tools: false,
            max_raw_memories_for_consolidation: DEFAULT_MAX_RAW_MEMORIES_FOR_CONSOLIDATION,
            max_unused_days: DEFAULT_MAX_UNUSED_DAYS,
            max_rollout_age_days: None,
            max_rollouts_per_startup: None,
            min_rollout_idle_hours: DEFAULT_MIN_ROLLOUT_IDLE_HOURS,
            min_rate_limit_remaining_percent: DEFAULT_MIN_RATE_LIMIT_REMAINING_PERCENT,
            extract_model: None,
            consolidation_model: None,
            consolidation_cooldown_hours: DEFAULT_CONSOLIDATION_COOLDOWN_HOURS,
        }
    }
}

impl MemoriesConfig {
    /// `max_rollouts_per_startup`, else codex's startup default.
    pub fn rollouts_per_startup(&self) -> i64 {
        self.max_rollouts_per_startup
            .unwrap_or(DEFAULT_MAX_ROLLOUTS_PER_STARTUP)
    }

    /// `max_rollout_age_days`, else codex's startup default.
    pub fn rollout_age_days(&self) -> i64 {
        self.max_rollout_age_days
            .unwrap_or(DEFAULT_MAX_ROLLOUT_AGE_DAYS)
    }
}

impl Section for MemoriesConfig {
    const PLACE: Place = Place::Table("memories");

    fn settle(&mut self, ranges: &mut Ranges<'_>) -> memory_config::Result<()> {
        ranges.clamp(
            "max_raw_memories_for_consolidation",
            &mut self.max_raw_memories_for_consolidation,
            MAX_RAW_MEMORIES_FOR_CONSOLIDATION_RANGE,
        );
        ranges.clamp(
            "max_unused_days",
            &mut self.max_unused_days,
            MAX_UNUSED_DAYS_RANGE,
        );
        if let Some(days) = &mut self.max_rollout_age_days {
            ranges.clamp("max_rollout_age_days", days, MAX_ROLLOUT_AGE_DAYS_RANGE);
        }
        if let Some(count) = &mut self.max_rollouts_per_startup {
            ranges.clamp(
                "max_rollouts_per_startup",
                count,
                MAX_ROLLOUTS_PER_STARTUP_RANGE,
            );
        }
        ranges.clamp(
            "min_rollout_idle_hours",
            &mut self.min_rollout_idle_hours,
            MIN_ROLLOUT_IDLE_HOURS_RANGE,
        );
        ranges.clamp(
            "min_rate_limit_remaining_percent",
            &mut self.min_rate_limit_remaining_percent,
            MIN_RATE_LIMIT_REMAINING_PERCENT_RANGE,
        );
        ranges.clamp(
            "consolidation_cooldown_hours",
            &mut self.consolidation_cooldown_hours,
            CONSOLIDATION_COOLDOWN_HOURS_RANGE,
        );
        Ok(())
    }
}

/// The environment variable that names the store over the config file.
pub const STORE_ENV: &str = "AGENT_MEMORY_STORE";
/// The environment variable that names this machine over the config file.
pub const MACHINE_ID_ENV: &str = "AGENT_MEMORY_MACHINE_ID";

/// The `[store]` table, overridden by the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreConfig {
    /// `url` (environment: `AGENT_MEMORY_STORE`): `postgres://...` keeps the state in a
    /// PostgreSQL server shared by several machines; absent, blank or `"sqlite"`, the state
    /// stays in `<home>/state.sqlite`.
    pub url: Option<String>,
    /// `machine_id` (environment: `AGENT_MEMORY_MACHINE_ID`): the name this machine registers
    /// its rollouts and takes leases under on a shared store (default: the host name). Two
    /// machines must not share one.
    pub machine_id: Option<String>,
}

impl Section for StoreConfig {
    const PLACE: Place = Place::Table("store");
    const ENV: &'static [EnvKey] = &[
        EnvKey {
            variable: STORE_ENV,
            key: "url",
        },
        EnvKey {
            variable: MACHINE_ID_ENV,
            key: "machine_id",
        },
    ];

    fn settle(&mut self, _ranges: &mut Ranges<'_>) -> memory_config::Result<()> {
        for value in [&mut self.url, &mut self.machine_id] {
            *value = value
                .take()
                .map(|text| text.trim().to_owned())
                .filter(|text| !text.is_empty());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use memory_config::{Config, Error, Loaded, Origin};

    use super::*;

    const NO_ENV: [(&str, &str); 0] = [];

    fn memories(text: &str) -> Loaded<MemoriesConfig> {
        Config::parse(text, Origin::Text)
            .unwrap()
            .with_environment(NO_ENV)
            .section()
            .unwrap()
    }

    fn memories_error(text: &str) -> Error {
        Config::parse(text, Origin::Text)
            .unwrap()
            .with_environment(NO_ENV)
            .section::<MemoriesConfig>()
            .unwrap_err()
    }

    fn store(text: &str, env: &[(&str, &str)]) -> memory_config::Result<StoreConfig> {
        Ok(Config::parse(text, Origin::Text)?
            .with_environment(env.iter().copied())
            .section::<StoreConfig>()?
            .value)
    }

    #[test]
    fn the_store_table_names_a_url_and_a_machine_id_and_refuses_others() {
        let parsed = store(
            "[store]\nurl = \"postgres://agent@db/memory\"\nmachine_id = \" ci-runner-3 \"\n",
            &[],
        )
        .unwrap();
        assert_eq!(parsed.url.as_deref(), Some("postgres://agent@db/memory"));
        assert_eq!(parsed.machine_id.as_deref(), Some("ci-runner-3"));
        assert_eq!(store("", &[]).unwrap(), StoreConfig::default());
        let blank = store("[store]\nmachine_id = \"  \"\n", &[]).unwrap();
        assert_eq!(blank.machine_id, None);
        let unknown = store("[store]\nhost = \"x\"\n", &[]).unwrap_err();
        assert_eq!(
            unknown.to_string(),
            "config text: unknown key `store.host` (known: url, machine_id)"
        );
        let wrong = store("[store]\nmachine_id = 3\n", &[]).unwrap_err();
        assert!(wrong.to_string().contains("must be a string"), "{wrong}");
    }

    #[test]
    fn the_environment_names_the_store_over_the_file() {
        let file = "[store]\nurl = \"postgres://file/db\"\nmachine_id = \"laptop\"\n";
        let env = store(
            file,
            &[(STORE_ENV, " postgres://env/db "), (MACHINE_ID_ENV, "ci-7")],
        )
        .unwrap();
        assert_eq!(env.url.as_deref(), Some("postgres://env/db"));
        assert_eq!(env.machine_id.as_deref(), Some("ci-7"));
        // A variable set but blank still wins: it selects the SQLite file.
        let blank = store(file, &[(STORE_ENV, "")]).unwrap();
        assert_eq!(blank.url, None);
        assert_eq!(blank.machine_id.as_deref(), Some("laptop"));
    }

    #[test]
    fn defaults_match_codex() {
        let config = MemoriesConfig::default();
        assert_eq!(config.rollouts_per_startup(), 2);
        assert_eq!(config.rollout_age_days(), 10);
        assert_eq!(config.min_rollout_idle_hours, 6);
        assert_eq!(config.min_rate_limit_remaining_percent, 25);
        assert_eq!(config.max_raw_memories_for_consolidation, 256);
        assert_eq!(config.max_unused_days, 30);
        assert!(config.generate_memories && config.use_memories);
        assert!(!config.dedicated_tools && !config.disable_on_external_context);
        assert_eq!(config.consolidation_cooldown_hours, 6);
        assert_eq!(memories("").value, config);
    }

    #[test]
    fn the_consolidation_cooldown_is_configurable_and_reaches_phase_two() {
        let loaded = memories("[memories]\nconsolidation_cooldown_hours = 1\n");
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        assert_eq!(loaded.value.consolidation_cooldown_hours, 1);
        let options = crate::phase_two::PhaseTwoOptions::from_config(&loaded.value);
        assert_eq!(options.cooldown_seconds, 3600);
        let too_long = memories("[memories]\nconsolidation_cooldown_hours = 1000\n");
        assert_eq!(too_long.value.consolidation_cooldown_hours, 168);
    }

    #[test]
    fn out_of_range_values_are_clamped_with_a_warning() {
        let loaded = memories(
            "[memories]\nmax_rollouts_per_startup = 500\nmin_rollout_idle_hours = 0\n\
             max_rollout_age_days = 5\n",
        );
        let config = loaded.value;
        assert_eq!(config.max_rollouts_per_startup, Some(128));
        assert_eq!(config.min_rollout_idle_hours, 1);
        assert_eq!(config.max_rollout_age_days, Some(5));
        let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            warnings,
            [
                "memories.max_rollouts_per_startup = 500 is outside 1..=128; using 128",
                "memories.min_rollout_idle_hours = 0 is outside 1..=48; using 1",
            ]
        );
    }

    #[test]
    fn errors_name_the_key() {
        assert_eq!(
            memories_error("[memories]\nmax_rollout_age_days = \"ten\"\n").to_string(),
            "config text: `memories.max_rollout_age_days` must be an integer, found string"
        );
        let unknown = memories_error("[memories]\nmax_rollouts = 3\n").to_string();
        assert!(
            unknown.starts_with("config text: unknown key `memories.max_rollouts` (known: "),
            "{unknown}"
        );
        assert_eq!(
            memories_error("memories = 3\n").to_string(),
            "config text: `memories` must be a table, found integer"
        );
        let syntax = Config::parse("[memories\n", Origin::Text).unwrap_err();
        assert!(
            syntax.to_string().starts_with("config text: invalid toml:"),
            "{syntax}"
        );
    }

    #[test]
    fn other_tables_and_the_alias_are_accepted() {
        let config = memories(
            "[model]\nname = \"x\"\n[memories]\nno_memories_if_mcp_or_web_search = true\n\
             extract_model = \"openai:gpt-5-mini\"\n",
        )
        .value;
        assert!(config.disable_on_external_context);
        assert_eq!(config.extract_model.as_deref(), Some("openai:gpt-5-mini"));
        assert_eq!(config.max_rollout_age_days, None);
    }

    proptest::proptest! {
        #[test]
        fn loading_any_text_never_panics(text in ".{0,200}") {
            if let Ok(config) = Config::parse(&text, Origin::Text) {
                let config = config.with_environment(NO_ENV);
                let _ = config.section::<MemoriesConfig>();
                let _ = config.section::<StoreConfig>();
            }
        }

        #[test]
        fn loaded_numbers_are_always_in_range(
            a in proptest::num::i64::ANY,
            b in proptest::num::i64::ANY,
            c in proptest::num::i64::ANY,
            d in proptest::num::i64::ANY,
        ) {
            let loaded = memories(&format!(
                "[memories]\nmax_rollouts_per_startup = {a}\nmax_rollout_age_days = {b}\n\
                 min_rollout_idle_hours = {c}\nmin_rate_limit_remaining_percent = {d}\n"
            ));
            let config = loaded.value;
            proptest::prop_assert!(MAX_ROLLOUTS_PER_STARTUP_RANGE.contains(&config.rollouts_per_startup()));
            proptest::prop_assert!(MAX_ROLLOUT_AGE_DAYS_RANGE.contains(&config.rollout_age_days()));
            proptest::prop_assert!(MIN_ROLLOUT_IDLE_HOURS_RANGE.contains(&config.min_rollout_idle_hours));
            proptest::prop_assert!(MIN_RATE_LIMIT_REMAINING_PERCENT_RANGE.contains(&config.min_rate_limit_remaining_percent));
            let expected = [
                !MAX_ROLLOUTS_PER_STARTUP_RANGE.contains(&a),
                !MAX_ROLLOUT_AGE_DAYS_RANGE.contains(&b),
                !MIN_ROLLOUT_IDLE_HOURS_RANGE.contains(&c),
                !MIN_RATE_LIMIT_REMAINING_PERCENT_RANGE.contains(&d),
            ].iter().filter(|clamped| **clamped).count();
            proptest::prop_assert_eq!(loaded.warnings.len(), expected);
        }
    }
}
