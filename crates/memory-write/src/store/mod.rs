//! The state store: one SQLite file, `<home>/state.sqlite`.
//!
//! The file is the coordination point between processes: WAL mode so readers never block the
//! writer, a busy timeout so concurrent writers wait instead of failing, and `BEGIN IMMEDIATE`
//! for every read-then-write (claims, registrations), so two processes never claim one job.
//! Versioned migrations (`memory-store`'s migrator, owner `memory-write`) create every
//! write-path table, including the phase-2 lease row.
//!
//! [`StateStore`] implements [`WriteStore`] like every other backend: each call runs its
//! SQLite work on tokio's blocking pool, one at a time (SQLite serializes writers anyway), so
//! the runtime never waits on SQLite.

mod backend;
mod forget;
mod heartbeat;
mod lease_owner;
mod phase_two;
#[cfg(feature = "postgres")]
pub mod postgres;
mod stage_one;
mod stored_paths;
mod tables;
mod threads;
mod write_store;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use memory_store::ddl::Dialect;
use memory_store::migrate::Schema;
use memory_store::names::schema_owners::MEMORY_WRITE;
use memory_store::sqlite::DEFAULT_BUSY_TIMEOUT;
use rusqlite::Connection;

use crate::error::{Error, Result};

pub use self::backend::{SharedStore, WriteStore};
pub use self::forget::{ForgetReport, ResetReport, ThreadMatch};
pub use self::heartbeat::Heartbeat;
pub use self::lease_owner::{LeaseOwner, ReleasedLeases};
pub use self::phase_two::{
    ActivityWindow, BaselineEntry, PhaseTwoClaim, PhaseTwoClaimParams, PhaseTwoFailure,
    PhaseTwoLease, PhaseTwoState, PhaseTwoSuccess,
};
pub use self::stage_one::{
    ClaimParams, ClaimedJob, DEFAULT_MAX_ATTEMPTS, StageOneFailure, StageOneSuccess,
};
pub use self::threads::{
    Exclusion, KnownFile, MemoryMode, SessionFacts, StoredRollout, ThreadRecord,
    ThreadRegistration, UpsertCounts,
};

/// File name of the state database under the agent-memory home.
pub const STATE_FILE_NAME: &str = "state.sqlite";

/// The SQLite state store: a [`WriteStore`] over one file. Every method that writes runs in its
/// own transaction. Cloning gives another handle on the same connection.
#[derive(Clone)]
pub struct StateStore {
    db: Arc<Mutex<Db>>,
    path: Arc<Path>,
}

/// The open connection and what this process keeps beside it. Only ever used on a blocking
/// thread, behind [`StateStore`]'s lock.
pub(crate) struct Db {
    pub(crate) conn: Connection,
    /// Recorded on every lease this store takes.
    owner: LeaseOwner,
    /// Set once this process gave its leases back: no more stage-one claims.
    claims_closed: bool,
    /// Real rollout paths of threads stored under a redacted path, learned by this process's
    /// scans; never written to the file.
    real_paths: HashMap<String, PathBuf>,
}

impl std::fmt::Debug for StateStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// One migration per schema version; index `i` brings the schema to version `i + 1`. Tables
/// this list does not name (other crates keep theirs in the same file) are never touched.
/// Version 2 (lease owners) also redacts stored paths, in code ([`Db::migrate`]).
fn migrations() -> [String; 3] {
    tables::shared_versions(Dialect::Sqlite)
}

impl StateStore {
    /// Opens (creating when missing) `<home>/state.sqlite`, creating `home` too.
    pub fn open_home(home: &Path) -> Result<StateStore> {
        std::fs::create_dir_all(home).map_err(|e| Error::io(home, e))?;
        StateStore::open(&home.join(STATE_FILE_NAME))
    }

    /// Opens (creating when missing) the database at `path` and brings its schema up to date.
    /// Opening is blocking work; async callers open on the blocking pool
    /// ([`StateStore::open_home_async`]).
    pub fn open(path: &Path) -> Result<StateStore> {
        let open_error = |source| memory_store::Error::Open {
            path: path.to_owned(),
            source,
        };
        let conn = memory_store::sqlite::open(path, DEFAULT_BUSY_TIMEOUT)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(open_error)?;
        stored_paths::prepare_connection(&conn).map_err(open_error)?;
        let mut db = Db {
            conn,
            owner: LeaseOwner::current(),
            claims_closed: false,
            real_paths: HashMap::new(),
        };
        db.migrate()?;
        Ok(StateStore {
            db: Arc::new(Mutex::new(db)),
            path: Arc::from(path),
        })
    }

    /// [`StateStore::open_home`] on tokio's blocking pool.
    pub async fn open_home_async(home: &Path) -> Result<StateStore> {
        let home = home.to_owned();
        crate::blocking::blocking(move || StateStore::open_home(&home)).await
    }

    /// Path of the database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The identity this store records on the leases it takes.
    pub fn lease_owner(&self) -> LeaseOwner {
        self.lock().owner.clone()
    }

    /// Records leases taken from now on under `owner` instead of the current process: for tests
    /// that play another process or another host.
    #[cfg(feature = "fault-injection")]
    pub fn set_lease_owner(&self, owner: LeaseOwner) {
        self.lock().owner = owner;
    }

    /// Sets how long a writer waits for another process's write transaction (60 seconds by
    /// default), for tests of a busy database.
    #[cfg(feature = "fault-injection")]
    pub fn set_lock_timeout(&self, timeout: std::time::Duration) -> Result<()> {
        Ok(memory_store::sqlite::set_lock_timeout(
            &self.lock().conn,
            timeout,
        )?)
    }

    /// The connection, for quick calls that do not touch the database.
    fn lock(&self) -> MutexGuard<'_, Db> {
        // A panic inside an earlier call cannot leave SQLite half-written: its open
        // transaction rolled back when dropped, so the poisoned store is still usable.
        self.db.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `call` with the connection on tokio's blocking pool.
    async fn call<T, F>(&self, call: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Db) -> Result<T> + Send + 'static,
    {
        let db = Arc::clone(&self.db);
        crate::blocking::blocking(move || {
            let mut db = db.lock().unwrap_or_else(PoisonError::into_inner);
            call(&mut db)
        })
        .await
    }
}

impl Db {
    /// The schema version of the open database.
    fn schema_version(&self) -> Result<i64> {
        Ok(memory_store::migrate::sqlite_version(
            &self.conn,
            MEMORY_WRITE,
        )?)
    }

    fn migrate(&mut self) -> Result<()> {
        let migrations = migrations();
        let schema = Schema {
            owner: MEMORY_WRITE,
            migrations: &migrations,
            legacy_user_version: true,
        };
        memory_store::migrate::migrate_sqlite(&mut self.conn, &schema, |tx, version| {
            if version == 2 {
                // Rows written before paths were redacted are redacted in place.
                stored_paths::redact_stored_paths(tx)?;
            }
            Ok(())
        })?;
        Ok(())
    }
}

/// The current time in Unix seconds.
pub fn now_unix() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
