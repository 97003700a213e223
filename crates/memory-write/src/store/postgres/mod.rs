//! The state store on PostgreSQL (feature `postgres`): one memory for a fleet of machines.
//!
//! The same tables as the SQLite store, with the same rules, reached through a connection pool
//! (deadpool-postgres over tokio-postgres; `docs/ARCHITECTURE.md` says why). What differs is
//! how exclusion is had without SQLite's single writer:
//!
//! - a stage-one claim is one statement: it picks its thread with `FOR UPDATE SKIP LOCKED`, so
//!   concurrent claimers pass over each other's candidates instead of queueing on them, and
//!   takes the job with an upsert whose `WHERE` re-checks the job row under its lock, so a
//!   claimer that read an older snapshot can never lease a job another one just took;
//! - the phase-2 lease is the one `phase2_lease` row, read `FOR UPDATE` by every claim; a lost
//!   connection rolls its transaction back and the lease keeps the expiry rule, so nothing is
//!   held by a client that vanished;
//! - migrations run under a transaction-scoped advisory lock and are versioned per owner in
//!   `schema_versions`, so machines opening a fresh database at once apply each exactly once.
//!
//! Lease owners are recorded as in SQLite: the dead-owner shortcut applies to owners on the
//! same host; other hosts' leases expire.

mod forget;
mod phase_two;
mod schema;
mod shared_root;
mod stage_one;
mod threads;
mod write_store;

use std::sync::atomic::{AtomicBool, Ordering};

pub use memory_store::postgres::PgOptions as PgStoreOptions;
pub use memory_store::postgres::is_postgres_url;
use memory_store::postgres::{PgClient, PgPool};
use tokio_postgres::types::ToSql;

use super::LeaseOwner;
use crate::error::Result;

/// The state store on a PostgreSQL server. Cheap to share: calls take pooled connections.
pub struct PgStore {
    pool: PgPool,
    owner: LeaseOwner,
    /// Set once this process gave its leases back: no more stage-one claims.
    claims_closed: AtomicBool,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("url", &self.pool.display_url())
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects to `url` with default options and brings the schema up to date.
    pub async fn connect(url: &str) -> Result<PgStore> {
        PgStore::connect_with(url, &PgStoreOptions::default()).await
    }

    /// Connects to `url` and brings the schema up to date. An unreachable server, and a schema
    /// written by a newer build, are [`Error::Store`](crate::Error::Store)
    /// ([`memory_store::Error::Unreachable`], [`memory_store::Error::SchemaTooNew`]).
    pub async fn connect_with(url: &str, options: &PgStoreOptions) -> Result<PgStore> {
        let pool = PgPool::connect(url, options).await?;
        let store = PgStore {
            pool,
            owner: LeaseOwner::current(),
            claims_closed: AtomicBool::new(false),
        };
        let mut client = store.client().await?;
        schema::migrate(&mut client).await?;
        Ok(store)
    }

    /// The server as shown in messages (no password).
    pub fn display_url(&self) -> &str {
        self.pool.display_url()
    }

    /// The identity this store records on the leases it takes.
    pub fn lease_owner(&self) -> &LeaseOwner {
        &self.owner
    }

    /// Registers rollouts and records leases from now on under `owner`: a machine id other
    /// than the host name, or a test that plays another machine.
    pub fn set_lease_owner(&mut self, owner: LeaseOwner) {
        self.owner = owner;
    }

    /// A pooled connection; a failure to get one means the server cannot be reached.
    async fn client(&self) -> Result<PgClient> {
        Ok(self.pool.client().await?)
    }

    /// Runs one statement on a pooled connection; how many rows it changed.
    async fn execute(&self, statement: &str, values: &[&(dyn ToSql + Sync)]) -> Result<u64> {
        let client = self.client().await?;
        Ok(client.execute(statement, values).await?)
    }

    fn claims_closed(&self) -> bool {
        self.claims_closed.load(Ordering::SeqCst)
    }

    /// The machine this store registers rollouts and takes leases as.
    pub fn machine_id(&self) -> &str {
        &self.owner.host
    }
}

/// Every integer column is `BIGINT`; counts and sizes cross as `i64`.
fn to_i64<T: TryInto<i64>>(value: T) -> i64 {
    value.try_into().unwrap_or(i64::MAX)
}
