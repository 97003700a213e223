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
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

use super::LeaseOwner;
use crate::error::{Error, Result};

/// How to reach and lay out a PostgreSQL store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgStoreOptions {
    /// Most connections held open at once (default 2). Store calls are short next to a model
    /// call (a job claims in one statement and records in one), so two connections serve a
    /// phase-1 run's eight jobs in flight; every connection is a server process that warms
    /// its caches on its first statements, and on a server whose cores are busy more of them
    /// only queue for those cores (`docs/benchmarks.md`, fleet: a fleet of four processes ran
    /// faster with 4 a process than with 10, and with 2 than with 4).
    pub pool_size: usize,
    /// Keep the tables in this schema (created when missing) instead of the connection's
    /// default, so several memories can share one database. Letters, digits and `_` only.
    pub schema: Option<String>,
    /// How long to wait for the server before calling it unreachable.
    pub connect_timeout: Duration,
}

impl Default for PgStoreOptions {
    fn default() -> Self {
        PgStoreOptions {
            pool_size: 2,
            schema: None,
            connect_timeout: Duration::from_secs(10),
        }
    }
}

/// The state store on a PostgreSQL server. Cheap to share: calls take pooled connections.
pub struct PgStore {
    pool: Pool,
    /// The server as shown in messages: host, port and database, never the password.
    display_url: String,
    owner: LeaseOwner,
    /// Set once this process gave its leases back: no more stage-one claims.
    claims_closed: AtomicBool,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("url", &self.display_url)
            .finish_non_exhaustive()
    }
}

/// True for a `postgres://` or `postgresql://` URL, the store selections that mean this backend.
pub fn is_postgres_url(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

impl PgStore {
    /// Connects to `url` with default options and brings the schema up to date.
    pub async fn connect(url: &str) -> Result<PgStore> {
        PgStore::connect_with(url, &PgStoreOptions::default()).await
    }

    /// Connects to `url` and brings the schema up to date. An unreachable server is
    /// [`Error::Unreachable`]; a schema written by a newer build is [`Error::SchemaTooNew`].
    pub async fn connect_with(url: &str, options: &PgStoreOptions) -> Result<PgStore> {
        let mut config: tokio_postgres::Config = url.parse().map_err(|e| Error::StoreUrl {
            url: display_url_of_text(url),
            message: format!("{e}"),
        })?;
        let display_url = display_url(&config);
        config.connect_timeout(options.connect_timeout);
        config.application_name("agent-memory");
        // Settings for every pooled session, after any `options` the URL gives. Generic plans:
        // each statement is prepared once per connection and run thousands of times, and with
        // the server's default the claim's five-table query was planned again at every run
        // (its optional filters make custom plans look cheaper), half a millisecond of server
        // time a claim; the generic plan uses the same claimable index. Needs PostgreSQL 12.
        let mut session = config.get_options().map(str::to_owned).unwrap_or_default();
        session.push_str(" -c plan_cache_mode=force_generic_plan");
        if let Some(schema) = &options.schema {
            if !valid_identifier(schema) {
                return Err(Error::StoreUrl {
                    url: display_url,
                    message: format!("schema name {schema:?} is not letters, digits and _"),
                });
            }
            session.push_str(&format!(" -c search_path={schema}"));
        }
        config.options(session.trim_start());
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .build()
            .map_err(|e| Error::Unreachable {
                url: display_url.clone(),
                message: e.to_string(),
            })?;
        let store = PgStore {
            pool,
            display_url,
            owner: LeaseOwner::current(),
            claims_closed: AtomicBool::new(false),
        };
        let mut client = store.client().await?;
        if let Some(schema) = &options.schema {
            client
                .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
                .await?;
        }
        schema::migrate(&mut client).await?;
        Ok(store)
    }

    /// The server as shown in messages (no password).
    pub fn display_url(&self) -> &str {
        &self.display_url
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
    async fn client(&self) -> Result<deadpool_postgres::Client> {
        self.pool.get().await.map_err(|e| Error::Unreachable {
            url: self.display_url.clone(),
            message: pool_error_message(&e),
        })
    }

    fn claims_closed(&self) -> bool {
        self.claims_closed.load(Ordering::SeqCst)
    }

    /// The machine this store registers rollouts and takes leases as.
    pub fn machine_id(&self) -> &str {
        &self.owner.host
    }
}

fn valid_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name.len() <= 63
}

/// `postgres://HOST:PORT/DB` from a parsed config: what a message may show.
fn display_url(config: &tokio_postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        #[cfg(unix)]
        Some(tokio_postgres::config::Host::Unix(path)) => path.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config.get_dbname().or(config.get_user()).unwrap_or("");
    format!("postgres://{host}:{port}/{db}")
}

/// A URL that did not parse, shown without anything between `://` and `@` (a password).
fn display_url_of_text(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://…{}", &url[..scheme], &url[at..])
        }
        _ => url.to_owned(),
    }
}

/// A pool error with its cause: tokio-postgres's own message for a failed connection is
/// terse ("error connecting to server"), the reason is in its source.
fn pool_error_message(error: &deadpool_postgres::PoolError) -> String {
    match error {
        deadpool_postgres::PoolError::Backend(error) => postgres_message(error),
        other => other.to_string(),
    }
}

/// A tokio-postgres error with its cause and, for server errors, the server's message.
pub(crate) fn postgres_message(error: &tokio_postgres::Error) -> String {
    if let Some(db) = error.as_db_error() {
        return format!("{}: {}", db.code().code(), db.message());
    }
    match std::error::Error::source(error) {
        Some(source) => format!("{error}: {source}"),
        None => error.to_string(),
    }
}

/// Every integer column is `BIGINT`; counts and sizes cross as `i64`.
fn to_i64<T: TryInto<i64>>(value: T) -> i64 {
    value.try_into().unwrap_or(i64::MAX)
}
