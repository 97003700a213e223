//! Housekeeping that runs at the start of every run, before anything is extracted.

use crate::config::MemoriesConfig;
use crate::error::Result;
use crate::phase_two::DEFAULT_PRUNE_LIMIT;
use crate::store::{ActivityWindow, WriteStore};

/// Deletes stored memories the last consolidation did not select and that have been idle
/// longer than `max_unused_days` (see [`WriteStore::prune_phase_two_outputs`]), at most
/// [`DEFAULT_PRUNE_LIMIT`] per call. Returns how many went.
pub(crate) async fn prune_stale_memories(
    store: &dyn WriteStore,
    config: &MemoriesConfig,
    now: i64,
) -> Result<usize> {
    let window = ActivityWindow {
        now,
        max_unused_days: config.max_unused_days,
    };
    store
        .prune_phase_two_outputs(window, DEFAULT_PRUNE_LIMIT)
        .await
}
