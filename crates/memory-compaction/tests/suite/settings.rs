//! Settings, budgets and the trigger.

use memory_compaction::compaction::{
    Budgets, CompactionSettings, ContextSize, DEFAULT_RESERVE_TOKENS, should_compact,
    trigger_tokens,
};

fn defaults() -> CompactionSettings {
    CompactionSettings::default()
}

#[test]
fn the_reserve_is_at_least_fifteen_percent_of_the_window() {
    assert_eq!(DEFAULT_RESERVE_TOKENS, 16_384);
    assert_eq!(defaults().reserve_for(100_000), 16_384);
    assert_eq!(defaults().reserve_for(200_000), 30_000);
    assert_eq!(defaults().reserve_for(1_000_000), 150_000);
    let explicit = CompactionSettings {
        reserve_tokens: Some(40_000),
        ..defaults()
    };
    assert_eq!(explicit.reserve_for(200_000), 40_000);
}

#[test]
fn small_windows_keep_a_usable_threshold() {
    // A defaulted reserve would leave almost nothing of a 19k window: 15% is used instead.
    assert_eq!(defaults().reserve_for(19_000), 2_850);
    assert_eq!(defaults().threshold_for(19_000), 16_150);
    // An explicit reserve is honoured while it leaves room.
    let explicit = CompactionSettings {
        reserve_tokens: Some(16_384),
        ..defaults()
    };
    assert_eq!(explicit.threshold_for(19_000), 2_616);
    // A reserve larger than the window falls back to 15%.
    let too_big = CompactionSettings {
        reserve_tokens: Some(50_000),
        ..defaults()
    };
    assert_eq!(too_big.reserve_for(20_000), 3_000);
    for window in 1..=10 {
        let reserve = defaults().reserve_for(window);
        let threshold = defaults().threshold_for(window);
        assert!(reserve >= 1, "{window}");
        assert!(threshold < window, "{window}: {threshold}");
    }
}

#[test]
fn thresholds_match_the_worked_examples() {
    for (window, threshold) in [
        (200_000, 170_000),
        (1_000_000, 850_000),
        (128_000, 108_800),
        (32_000, 15_616),
    ] {
        assert_eq!(defaults().threshold_for(window), threshold, "{window}");
    }
}

#[test]
fn tokens_win_over_percent_and_both_are_clamped() {
    let both = CompactionSettings {
        threshold_tokens: Some(50_000),
        threshold_percent: Some(90),
        ..defaults()
    };
    assert_eq!(both.threshold_for(200_000), 50_000);
    let too_many = CompactionSettings {
        threshold_tokens: Some(500_000),
        ..defaults()
    };
    assert_eq!(too_many.threshold_for(200_000), 199_999);
    let percent = CompactionSettings {
        threshold_percent: Some(150),
        ..defaults()
    };
    assert_eq!(percent.threshold_for(200_000), 198_000);
    let low = CompactionSettings {
        threshold_percent: Some(60),
        ..defaults()
    };
    assert_eq!(low.threshold_for(200_000), 120_000);
}

#[test]
fn budgets_follow_their_formulas() {
    let b = Budgets::new(200_000, &defaults(), 0);
    assert_eq!(b.reserve, 30_000);
    assert_eq!(b.output, 16_384, "min(0.8 x 30000, 16384)");
    assert_eq!(b.input, 160_000 - 16_384 - 16_384);
    assert_eq!(b.floor, 16_384);
    assert_eq!(b.short_summary, 512);
    assert_eq!(b.turn_prefix, 15_000);

    let small = CompactionSettings {
        reserve_tokens: Some(10_000),
        ..defaults()
    };
    let b = Budgets::new(40_000, &small, 0);
    assert_eq!(b.output, 8_000);
    assert_eq!(b.floor, 5_000);
    assert_eq!(b.input, 32_000 - 8_000 - 8_000);
    assert_eq!(b.short_summary, 512);
    assert_eq!(b.turn_prefix, 5_000);

    let b = Budgets::new(40_000, &defaults(), 0);
    assert_eq!(b.output, 13_107);
    assert_eq!(b.input, 5_786);

    let huge = CompactionSettings {
        reserve_tokens: Some(150_000),
        ..defaults()
    };
    assert_eq!(Budgets::new(1_000_000, &huge, 0).output, 16_384);

    // A carried summary larger than the output cap is set aside in full; the floor holds.
    let b = Budgets::new(200_000, &defaults(), 50_000);
    assert_eq!(b.input, 160_000 - 16_384 - 50_000);
    assert_eq!(Budgets::new(40_000, &defaults(), 50_000).input, 5_000);
    assert_eq!(Budgets::new(4_000, &defaults(), 0).floor, 1_024);
}

fn size(estimated: u64, provider: Option<u64>, after: Option<u64>) -> ContextSize {
    ContextSize {
        provider_tokens: provider,
        estimated_tokens: estimated,
        tokens_after_last_compaction: after,
    }
}

#[test]
fn the_trigger_uses_the_larger_of_provider_and_estimate() {
    let s = defaults();
    assert!(!should_compact(200_000, &size(170_000, None, None), &s));
    assert!(should_compact(200_000, &size(170_001, None, None), &s));
    // A stale, low provider figure cannot hide a full context, nor a low estimate.
    assert!(should_compact(
        200_000,
        &size(180_000, Some(20_000), None),
        &s
    ));
    assert!(should_compact(
        200_000,
        &size(20_000, Some(180_000), None),
        &s
    ));
    assert!(!should_compact(0, &size(u64::MAX, None, None), &s));
}

#[test]
fn disabled_compaction_never_triggers_pi_6472() {
    let off = CompactionSettings {
        enabled: false,
        ..defaults()
    };
    assert_eq!(trigger_tokens(200_000, None, &off), None);
    for tokens in [0, 170_001, 199_999, 200_000, 10_000_000] {
        assert!(!should_compact(
            200_000,
            &size(tokens, Some(tokens), None),
            &off
        ));
    }
}

#[test]
fn the_trigger_rearms_only_after_the_context_grows_again() {
    let s = defaults();
    // A compaction that got well below the threshold: the threshold applies.
    assert_eq!(trigger_tokens(200_000, Some(40_000), &s), Some(170_000));
    // One that could not (a huge kept message): wait for 20% of the threshold of growth.
    assert_eq!(trigger_tokens(200_000, Some(160_000), &s), Some(194_000));
    assert!(!should_compact(
        200_000,
        &size(175_000, None, Some(160_000)),
        &s
    ));
    assert!(should_compact(
        200_000,
        &size(194_001, None, Some(160_000)),
        &s
    ));
    let tight = CompactionSettings {
        rearm_percent: 100,
        ..defaults()
    };
    assert_eq!(
        trigger_tokens(200_000, Some(160_000), &tight),
        Some(170_000)
    );
}

/// pi #7821: checking only at the end of a turn let a long tool loop run to 109% of the window.
/// Checked between tool steps, the trigger fires on the first step over the threshold, long
/// before the window is full, whatever the turn is doing.
#[test]
fn checked_between_tool_steps_a_long_loop_compacts_before_the_window_pi_7821() {
    let s = defaults();
    let window = 200_000;
    let mut context = 120_000;
    let mut fired_at = None;
    for step in 0..40 {
        context += 6_000; // one tool call and its output
        if should_compact(window, &size(context, None, None), &s) {
            fired_at = Some((step, context));
            break;
        }
    }
    let (step, context) = fired_at.unwrap();
    assert_eq!(step, 8);
    assert!(context > 170_000 && context < window, "{context}");
}
