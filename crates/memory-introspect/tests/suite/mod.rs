//! Integration tests of memory-introspect: states and their exact text, token budgets, the
//! tools, the index, and one test per user report the issue lists.

mod budgets;
mod cache;
mod editing;
mod home;
mod index;
mod project_scope;
mod provenance;
mod reads;
mod recall_search;
mod reports;
mod states;
mod tools;

use std::path::{Path, PathBuf};

use memory_introspect::{IntrospectConfig, Introspector};

/// The fixed clock of every test: 2026-03-14 09:40:02 UTC.
pub(crate) const NOW: i64 = 1_773_481_202;

/// A temporary agent-memory home.
pub(crate) struct Home {
    pub(crate) dir: tempfile::TempDir,
}

impl Home {
    pub(crate) fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn root(&self) -> PathBuf {
        self.dir.path().join("memories")
    }

    /// Writes `text` to `rel` under the memory root, creating folders, modified at [`NOW`]
    /// (the block shows memory's last write, so tests fix it as they fix the clock).
    pub(crate) fn write(&self, rel: &str, text: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(NOW.unsigned_abs());
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(at)
            .unwrap();
        path
    }

    pub(crate) fn introspector(&self) -> Introspector {
        self.with_config(IntrospectConfig::default())
    }

    pub(crate) fn with_config(&self, config: IntrospectConfig) -> Introspector {
        Introspector::open(self.path(), config)
            .unwrap()
            .with_clock(|| NOW)
    }

    /// A memory root as phase 2 leaves it: summary, handbook, one session summary.
    pub(crate) fn consolidated(&self) {
        self.write(
            "memory_summary.md",
            "v1\n## User\nKeeps a ledger in Rust; prefers strict parsers.\n",
        );
        self.write(
            "MEMORY.md",
            "# Memory\n\n## Project `/src/ledger`\n\n### 2026-03-14 · March import · thread `t-1`\n\n- [pitfall] the bank writes midnight as 24:00; normalize it in `parse_timestamp`\n- run `cargo test -p ledger-import`\n",
        );
        self.write(
            "rollout_summaries/2026-03-14T09-12-44-jqmb-march.md",
            "thread_id: t-1\nupdated_at: 2026-03-14T09:40:02Z\n\n# Fixed the March statement import by normalizing 24:00 timestamps.\n",
        );
        self.write(
            "raw_memories.md",
            "# Raw memories\n\nNo raw memories yet.\n",
        );
    }
}
