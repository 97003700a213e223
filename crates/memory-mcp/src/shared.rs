//! A server's link to a shared store: memory tools read the fleet's newest memory root, and a
//! note saved here is sent to the store before the call returns.

use std::time::{Duration, Instant};

use memory_write::memory_root::MemoryRoot;
use memory_write::shared_root::sync_shared_root;
use memory_write::store::SharedStore;

/// Longest a memory tool reads this machine's copy of a shared memory without asking the store
/// for a newer revision. A check is one query (and the notes), so it stays short.
const SHARED_SYNC_INTERVAL: Duration = Duration::from_secs(3);

/// This machine's link to a shared store.
pub struct SharedLink {
    store: SharedStore,
    root: MemoryRoot,
    /// When the last sync finished; held during a sync, so concurrent calls wait for one.
    last_sync: tokio::sync::Mutex<Option<Instant>>,
}

impl std::fmt::Debug for SharedLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedLink")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SyncWhen {
    Now,
    /// Unless the last sync is younger than [`SHARED_SYNC_INTERVAL`].
    Due,
}

impl SharedLink {
    /// The link between `store` and this machine's memory root `root`.
    pub fn new(store: SharedStore, root: MemoryRoot) -> SharedLink {
        SharedLink {
            store,
            root,
            last_sync: tokio::sync::Mutex::new(None),
        }
    }

    /// Syncs the memory root with the store now, as a host does before it opens the memory
    /// the server reads; a failure is a warning on stderr and the server goes on with this
    /// machine's copy.
    pub async fn sync_now(&self) {
        self.sync(SyncWhen::Now).await;
    }

    /// Syncs the memory root with the store; a failure is a warning on stderr (stdout may be
    /// the protocol) and the tools go on with this machine's copy.
    pub(crate) async fn sync(&self, when: SyncWhen) {
        let mut last = self.last_sync.lock().await;
        if when == SyncWhen::Due && last.is_some_and(|at| at.elapsed() < SHARED_SYNC_INTERVAL) {
            return;
        }
        match sync_shared_root(self.store.as_ref(), &self.root).await {
            Ok(_) => *last = Some(Instant::now()),
            Err(error) => eprint!(
                "{}",
                memory_sanitize::display_safe(&memory_sanitize::redact_secrets(&format!(
                    "warning: cannot sync with the shared store ({error}); using this machine's copy\n"
                )))
            ),
        }
    }
}
