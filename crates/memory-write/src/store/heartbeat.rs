//! A heartbeat on a held lease, the same for a stage-one job and the phase-2 lease.

/// One heartbeat: at `now`, the lease is extended to `now + lease_seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heartbeat {
    /// The current time, Unix seconds.
    pub now: i64,
    /// How long the lease lasts from `now`.
    pub lease_seconds: i64,
}

impl Heartbeat {
    /// A heartbeat at the current time.
    pub fn from_now(lease_seconds: i64) -> Heartbeat {
        Heartbeat {
            now: super::now_unix(),
            lease_seconds,
        }
    }

    /// When the extended lease expires.
    pub fn expires_at(&self) -> i64 {
        self.now.saturating_add(self.lease_seconds)
    }
}
