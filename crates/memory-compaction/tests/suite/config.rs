//! The `[compaction]` table of `config.toml` and the due check built on the trigger.

use memory_compaction::compaction::{
    CompactionConfig, CompactionSettings, ContextSize, ThresholdSource, check_due,
};
use memory_config::{Config, Origin};
use proptest::prelude::*;

fn load(text: &str) -> memory_config::Result<CompactionConfig> {
    Config::parse(
        text,
        Origin::File("/home/u/.agent-memory/config.toml".into()),
    )?
    .with_environment(Vec::<(String, String)>::new())
    .section::<CompactionConfig>()
    .map(|loaded| loaded.value)
}

#[test]
fn a_missing_table_gives_the_library_defaults() {
    let config = load("model = \"x\"\n").unwrap();
    assert_eq!(config, CompactionConfig::default());
    assert_eq!(config.settings(), CompactionSettings::default());
}

#[test]
fn every_key_reaches_the_settings() {
    let config = load(
        "[compaction]\nenabled = false\nthreshold_percent = 85\nthreshold_tokens = 150000\n\
         reserve_tokens = 20000\nkeep_recent_tokens = 8000\n",
    )
    .unwrap();
    let settings = config.settings();
    assert!(!settings.enabled);
    assert_eq!(settings.threshold_percent, Some(85));
    assert_eq!(settings.threshold_tokens, Some(150_000));
    assert_eq!(settings.reserve_tokens, Some(20_000));
    assert_eq!(settings.keep_recent_tokens, 8_000);
}

#[test]
fn unknown_keys_and_out_of_range_values_name_the_key_and_the_file() {
    let unknown = load("[compaction]\nthreshold = 5\n")
        .unwrap_err()
        .to_string();
    assert!(unknown.contains("compaction.threshold"), "{unknown}");
    assert!(unknown.contains("config.toml"), "{unknown}");
    for (text, key) in [
        ("threshold_percent = 100", "compaction.threshold_percent"),
        ("threshold_percent = 0", "compaction.threshold_percent"),
        ("threshold_tokens = 0", "compaction.threshold_tokens"),
        ("reserve_tokens = -1", "compaction.reserve_tokens"),
        ("keep_recent_tokens = -5", "compaction.keep_recent_tokens"),
    ] {
        let error = load(&format!("[compaction]\n{text}\n"))
            .unwrap_err()
            .to_string();
        assert!(error.contains(key), "{text}: {error}");
        assert!(error.contains("config.toml"), "{text}: {error}");
    }
    let wrong_type = load("[compaction]\nenabled = \"yes\"\n")
        .unwrap_err()
        .to_string();
    assert!(wrong_type.contains("compaction.enabled"), "{wrong_type}");
}

fn size(tokens: u64, after: Option<u64>) -> ContextSize {
    ContextSize {
        provider_tokens: None,
        estimated_tokens: tokens,
        tokens_after_last_compaction: after,
    }
}

#[test]
fn the_due_check_says_why() {
    let defaults = CompactionSettings::default();
    let below = check_due(200_000, &size(12_000, None), &defaults);
    assert!(!below.due);
    assert_eq!(below.threshold, 170_000);
    assert_eq!(below.source, ThresholdSource::WindowLessReserve(30_000));
    assert_eq!(
        below.reason(),
        "the context holds 12000 tokens, 158000 below the threshold (the 200000-token window less the 30000-token reserve: 170000)"
    );
    let above = check_due(200_000, &size(180_000, None), &defaults);
    assert!(above.due);
    assert_eq!(
        above.reason(),
        "the context holds 180000 tokens, above the threshold (the 200000-token window less the 30000-token reserve: 170000)"
    );
    let percent = CompactionSettings {
        threshold_percent: Some(50),
        ..CompactionSettings::default()
    };
    let half = check_due(200_000, &size(100_001, None), &percent);
    assert!(half.due);
    assert!(
        half.reason()
            .contains("50% of the 200000-token window: 100000"),
        "{}",
        half.reason()
    );
    // A compaction that left the context near the threshold: the trigger waits to re-arm.
    let waiting = check_due(200_000, &size(175_000, Some(168_000)), &defaults);
    assert!(!waiting.due);
    assert!(
        waiting.reason().contains("the trigger re-arms at 202000"),
        "{}",
        waiting.reason()
    );
    let disabled = CompactionSettings {
        enabled: false,
        ..CompactionSettings::default()
    };
    let off = check_due(200_000, &size(199_000, None), &disabled);
    assert!(!off.due);
    assert_eq!(
        off.reason(),
        "compaction is disabled ([compaction] enabled = false)"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, rng_seed: proptest::test_runner::RngSeed::Fixed(27), ..ProptestConfig::default() })]

    /// Any text in the table is settings or an error, never a panic.
    #[test]
    fn any_table_text_loads_or_fails_cleanly(body in "[a-z_ =0-9\"\\-\n.]{0,80}") {
        let _ = load(&format!("[compaction]\n{body}"));
    }

    /// The due check agrees with the trigger it explains.
    #[test]
    fn the_due_check_agrees_with_should_compact(
        window in 0u64..400_000,
        tokens in 0u64..500_000,
        after in proptest::option::of(0u64..400_000),
        percent in proptest::option::of(1u8..100),
    ) {
        let settings = CompactionSettings { threshold_percent: percent, ..CompactionSettings::default() };
        let context = size(tokens, after);
        let report = check_due(window, &context, &settings);
        prop_assert_eq!(report.due, memory_compaction::compaction::should_compact(window, &context, &settings));
        prop_assert!(!report.reason().is_empty());
    }
}
