//! Housekeeping that runs at the start of every run, before anything is extracted.

use crate::config::MemoriesConfig;
use crate::error::Result;
use crate::phase_two::DEFAULT_PRUNE_LIMIT;
use crate::store::WriteStore;

/// Deletes stored memories the last consolidation did not select and that have been idle
/// longer than `max_unused_days` (see [`WriteStore::prune_phase_two_outputs`]), at most
/// [`DEFAULT_PRUNE_LIMIT`] per call. Returns how many went.
pub(crate) async fn prune_stale_memories(
    store: &dyn WriteStore,
    config: &MemoriesConfig,
    now: i64,
) -> Result<usize> {
    store
        .prune_phase_two_outputs(now, config.max_unused_days, DEFAULT_PRUNE_LIMIT)
        .await
}
