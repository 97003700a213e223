//! The rate-limit guard: the write path spends the user's model quota, so it does not run
//! when too little of it is left.

use async_trait::async_trait;

/// Reports how much of the model quota remains.
#[async_trait]
pub trait RateLimitProbe: Send + Sync {
    /// The remaining percentage (0 to 100) of the tightest rate-limit window, or `None` when
    /// unknown (an API key without quota windows, or a failed lookup).
    async fn remaining_percent(&self) -> Option<f64>;
}

/// True when the write path may run: the remaining percentage is unknown or at least
/// `min_remaining_percent` (clamped to 0..=100).
pub(crate) fn rate_limit_allows(
    remaining_percent: Option<f64>,
    min_remaining_percent: i64,
) -> bool {
    let minimum = min_remaining_percent.clamp(0, 100) as f64;
    match remaining_percent {
        // NaN says nothing useful; treat it as unknown, like a failed lookup.
        Some(remaining) if !remaining.is_nan() => remaining >= minimum,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_is_inclusive_and_configurable() {
        // 89.9% used leaves 10.1%: passes a 10% minimum, fails an 11% one.
        assert!(rate_limit_allows(Some(10.1), 10));
        assert!(!rate_limit_allows(Some(10.1), 11));
        // 75.1% used fails at 25, 74.9% passes, exactly 25% left passes.
        assert!(!rate_limit_allows(Some(24.9), 25));
        assert!(rate_limit_allows(Some(25.1), 25));
        assert!(rate_limit_allows(Some(25.0), 25));
        assert!(rate_limit_allows(None, 100));
        assert!(!rate_limit_allows(Some(0.0), 1));
        assert!(rate_limit_allows(Some(0.0), -5));
    }
}
