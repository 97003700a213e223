//! [`Introspector`]: one home's memory, as the model sees it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use memory_protocol::introspect::{MemoryIndexState, MemorySnapshot};

use crate::config::IntrospectConfig;
use crate::error::{Error, Result};
use crate::index::{MemoryIndex, MemoryRead};
use crate::scan::{RootScan, Walk, WalkCache};

type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The state an index error leaves the index in: a file that exists and cannot be opened is
/// unavailable, one that cannot be made is missing, and an open index whose query failed is
/// stale until it is opened again.
pub(crate) fn index_state(error: &Error) -> MemoryIndexState {
    match error {
        Error::IndexOpen { existed: true, .. } => MemoryIndexState::Unavailable,
        Error::IndexOpen { existed: false, .. } | Error::IndexFolder { .. } => {
            MemoryIndexState::Missing
        }
        _ => MemoryIndexState::Stale,
    }
}

/// One home's memory: the root, the settings, the search index. Every rendering and every
/// tool call of the home goes through one of these, so they agree on the root and the state.
/// It is `Send + Sync`; the index connection is shared behind a mutex.
pub struct Introspector {
    home: PathBuf,
    root: PathBuf,
    index_path: PathBuf,
    config: IntrospectConfig,
    clock: Clock,
    index: Mutex<Option<MemoryIndex>>,
    /// What earlier walks of the root saw, for [`Walk::Cached`].
    walks: Mutex<WalkCache>,
    cwd: Option<PathBuf>,
}

impl std::fmt::Debug for Introspector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspector")
            .field("root", &self.root)
            .field("config", &self.config)
            .field("cwd", &self.cwd)
            .finish_non_exhaustive()
    }
}

impl Introspector {
    /// The memory of the agent-memory home `home` (made absolute), with `config`. Touches
    /// nothing on disk.
    pub fn open(home: &Path, config: IntrospectConfig) -> Result<Introspector> {
        let root = crate::memory_root(home)?;
        let index_path = crate::index_file(home)?;
        let home = root
            .parent()
            .map(Path::to_path_buf)
            .ok_or_else(|| Error::Home {
                path: home.to_owned(),
                error: std::io::Error::other("the home has no folder"),
            })?;
        Ok(Introspector {
            home,
            root,
            index_path,
            config,
            clock: Arc::new(now_unix),
            index: Mutex::new(None),
            walks: Mutex::new(WalkCache::default()),
            cwd: None,
        })
    }

    /// The same home's state and settings over another memory root (made absolute), such as
    /// the one codex reads (`$CODEX_HOME/memories`). That root gets its own search index in
    /// the home, named after its path, so switching roots never re-indexes the home's own.
    pub fn with_root(mut self, root: &Path) -> Result<Introspector> {
        let root = std::path::absolute(root).map_err(|error| Error::Home {
            path: root.to_owned(),
            error,
        })?;
        let stem = crate::version_of(root.as_os_str().as_encoded_bytes());
        let own = crate::index_file(&self.home)?;
        let name = format!(
            "{}.{stem}.sqlite",
            own.file_stem().unwrap_or_default().to_string_lossy()
        );
        self.index_path = own.with_file_name(name);
        self.root = root;
        Ok(self)
    }

    /// Uses `clock` (Unix seconds) instead of the system clock, for reproducible output.
    pub fn with_clock(mut self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> Introspector {
        self.clock = Arc::new(clock);
        self
    }

    /// Scopes this memory to the project the agent works in at `cwd` (made absolute): the
    /// block then holds the global profile and that project's memories only (the other
    /// projects' stay reachable by search), and a note is saved as that folder's.
    pub fn with_cwd(mut self, cwd: &Path) -> Result<Introspector> {
        let plain = crate::project::plain(cwd).map_err(|error| Error::Cwd {
            path: cwd.to_owned(),
            error,
        })?;
        self.cwd = Some(plain);
        Ok(self)
    }

    /// The working directory this memory is scoped to, if any ([`Introspector::with_cwd`]).
    pub fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// The home folder (absolute).
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The memory root (absolute), from [`crate::memory_root`].
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The root as the model is shown it: the configured alias, else the absolute path.
    pub fn display_root(&self) -> String {
        self.config
            .root_alias
            .clone()
            .unwrap_or_else(|| self.root.to_string_lossy().into_owned())
    }

    /// The settings.
    pub fn config(&self) -> &IntrospectConfig {
        &self.config
    }

    /// The current time, Unix seconds.
    pub(crate) fn now(&self) -> i64 {
        (self.clock)()
    }

    /// Walks the root as `walk` says (see [`crate::scan::Walk`]).
    pub(crate) fn walk(&self, walk: Walk) -> std::io::Result<std::sync::Arc<RootScan>> {
        self.walks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .scan(&self.root, walk, SystemTime::now())
    }

    /// Runs `call` on the index file, opening it first when needed. A failed call drops the
    /// connection so the next call opens the file again.
    pub(crate) fn with_index<T>(
        &self,
        call: impl FnOnce(&mut MemoryIndex) -> Result<T>,
    ) -> Result<T> {
        let mut slot = self.index.lock().unwrap_or_else(PoisonError::into_inner);
        let index = match slot.as_mut() {
            Some(index) => index,
            None => slot.insert(MemoryIndex::open(&self.index_path)?),
        };
        call(index).inspect_err(|_| {
            // Opened again for the next call, which sees whatever was fixed meanwhile.
            *slot = None;
        })
    }

    /// Keeps `snapshot` as the numbers of the block just injected: `memory_status` reports it,
    /// and the next block says so when the state changed.
    pub fn record_injection(&self, snapshot: &MemorySnapshot) -> Result<()> {
        self.with_index(|index| index.record_injection(snapshot))
    }

    /// The last recorded injection's numbers, if any.
    pub(crate) fn last_injection(&self) -> Option<MemorySnapshot> {
        self.with_index(|index| index.last_injection())
            .ok()
            .flatten()
    }

    /// The reads `memory_read` served at or after `since` (Unix seconds), with the threads
    /// they used: the input of usage-based selection on the write path.
    pub fn reads_since(&self, since: i64) -> Result<Vec<MemoryRead>> {
        self.with_index(|index| index.reads_since(since))
    }
}

fn now_unix() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |duration| {
            i64::try_from(duration.as_secs()).unwrap_or(i64::MAX)
        })
}
