//! Retrying one call: exponential backoff with jitter on failures a wait can fix.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use memory_protocol::ModelError;

/// How a call retries rate limits, server errors, timeouts and refused connections.
///
/// Try `n` (from 1) that fails with a retryable error waits
/// `min(initial_backoff × 2^(n-1), max_backoff)`, scaled by a random factor in `[0.5, 1.0]` so
/// many clients do not retry in step, before the next try. A `Retry-After` from the server
/// replaces that wait when it is at most `max_retry_after`; a longer one ends the call at once,
/// since waiting that long inside one call would stall the whole run. After `max_tries` tries
/// the last error is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries per call, the first included (at least 1).
    pub max_tries: u32,
    /// Wait after the first failed try.
    pub initial_backoff: Duration,
    /// Longest computed wait.
    pub max_backoff: Duration,
    /// Longest `Retry-After` honoured inside a call.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    /// Seven tries, waits of 1 s doubling to at most 30 s, `Retry-After` honoured up to 2 min.
    fn default() -> Self {
        RetryPolicy {
            max_tries: 7,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn none() -> RetryPolicy {
        RetryPolicy {
            max_tries: 1,
            ..RetryPolicy::default()
        }
    }

    /// How long to wait after try `tries_so_far` failed with `error`, or `None` to give up.
    /// `unit_random` is a number in `[0, 1)` that sets the jitter.
    pub fn delay_after(
        &self,
        tries_so_far: u32,
        error: &ModelError,
        unit_random: f64,
    ) -> Option<Duration> {
        if !error.is_retryable() || tries_so_far >= self.max_tries.max(1) {
            return None;
        }
        if let Some(asked) = error.retry_after() {
            return (asked <= self.max_retry_after).then_some(asked);
        }
        let exponent = tries_so_far.saturating_sub(1).min(30);
        let base = self
            .initial_backoff
            .saturating_mul(1u32 << exponent)
            .min(self.max_backoff);
        let factor = 0.5 + 0.5 * unit_random.clamp(0.0, 1.0);
        Some(base.mul_f64(factor))
    }
}

/// A number in `[0, 1)` for jitter. Not for anything secret: a SplitMix64 step over a
/// process-wide counter seeded from the clock.
pub(super) fn jitter_unit() -> f64 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut z = STATE
        .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
        .wrapping_add(seed);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn transient() -> ModelError {
        ModelError::Transient {
            message: "503".to_owned(),
        }
    }

    fn rate_limited(ms: Option<u64>) -> ModelError {
        ModelError::RateLimited {
            retry_after_ms: ms,
            message: "429".to_owned(),
        }
    }

    #[test]
    fn backoff_doubles_up_to_the_cap_and_stops_after_the_last_try() {
        let policy = RetryPolicy::default();
        let full = |tries| policy.delay_after(tries, &transient(), 1.0 - f64::EPSILON);
        let waits: Vec<Duration> = (1..7).filter_map(full).collect();
        assert_eq!(waits.len(), 6);
        for pair in waits.windows(2) {
            assert!(pair[1] >= pair[0], "{waits:?}");
        }
        assert!(waits[0] <= Duration::from_secs(1));
        assert!(waits[5] <= Duration::from_secs(30));
        assert_eq!(full(7), None, "seven tries in all");
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_cap() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.delay_after(1, &rate_limited(Some(7_000)), 0.0),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            policy.delay_after(1, &rate_limited(Some(3_600_000)), 0.0),
            None,
            "an hour is not waited out inside one call"
        );
        let backoff = policy.delay_after(1, &rate_limited(None), 0.0).unwrap();
        assert_eq!(backoff, Duration::from_millis(500));
    }

    #[test]
    fn what_a_wait_cannot_fix_is_not_retried() {
        let policy = RetryPolicy::default();
        for error in [
            ModelError::Authentication {
                message: "401".to_owned(),
            },
            ModelError::Configuration {
                message: "404".to_owned(),
            },
            ModelError::ContextOverflow {
                message: "too long".to_owned(),
            },
            ModelError::InvalidOutput {
                message: "not json".to_owned(),
            },
        ] {
            assert_eq!(policy.delay_after(1, &error, 0.5), None, "{error}");
        }
        assert_eq!(RetryPolicy::none().delay_after(1, &transient(), 0.5), None);
    }

    proptest! {
        #[test]
        fn delays_stay_within_half_and_all_of_the_backoff(tries in 1u32..40, unit in 0.0f64..1.0) {
            let policy = RetryPolicy { max_tries: 50, ..RetryPolicy::default() };
            let delay = policy.delay_after(tries, &transient(), unit).unwrap();
            prop_assert!(delay <= policy.max_backoff);
            let exponent = (tries - 1).min(30);
            let base = policy.initial_backoff.saturating_mul(1u32 << exponent).min(policy.max_backoff);
            prop_assert!(delay >= base.mul_f64(0.5));
        }

        #[test]
        fn jitter_is_a_unit_number(_n in 0u8..50) {
            let unit = jitter_unit();
            prop_assert!((0.0..1.0).contains(&unit));
        }
    }
}
