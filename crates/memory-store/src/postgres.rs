//! The one PostgreSQL stack every owner runs on: a deadpool pool of tokio-postgres
//! connections, reached by a `postgres://` URL, optionally kept in a schema of its own.

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

use crate::error::{Error, Result};
use crate::identifier::valid_identifier;

/// A connection taken from a [`PgPool`]; it goes back to the pool when dropped. Derefs to a
/// `tokio_postgres::Client`.
pub type PgClient = deadpool_postgres::Client;

/// How to reach and lay out a PostgreSQL store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgOptions {
    /// Most connections held open at once (default 2). Store calls are short next to a model
    /// call (a job claims in one statement and records in one), so two connections serve a
    /// phase-1 run's eight jobs in flight; every connection is a server process that warms
    /// its caches on its first statements, and on a server whose cores are busy more of them
    /// only queue for those cores (`docs/benchmarks.md`, fleet: a fleet of four processes ran
    /// faster with 4 a process than with 10, and with 2 than with 4).
    pub pool_size: usize,
    /// Keep the tables in this schema (created when missing) instead of the connection's
    /// default, so several memories can share one database. Lowercase letters, digits and `_`
    /// only.
    pub schema: Option<String>,
    /// How long to wait for the server before calling it unreachable.
    pub connect_timeout: Duration,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            pool_size: 2,
            schema: None,
            connect_timeout: Duration::from_secs(10),
        }
    }
}

/// True for a `postgres://` or `postgresql://` URL, the store selections that mean this backend.
pub fn is_postgres_url(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

/// A pool of connections to one server (and schema). Cheap to clone: clones share the pool.
#[derive(Clone)]
pub struct PgPool {
    pool: Pool,
    /// The server as shown in messages: host, port and database, never the password.
    display_url: String,
}

impl std::fmt::Debug for PgPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgPool")
            .field("url", &self.display_url)
            .finish_non_exhaustive()
    }
}

impl PgPool {
    /// Connects to `url` (creating the options' schema when missing). An unreachable server
    /// is [`Error::Unreachable`]; a URL or schema name that cannot be used is
    /// [`Error::StoreUrl`].
    pub async fn connect(url: &str, options: &PgOptions) -> Result<PgPool> {
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
                    message: format!(
                        "schema name {schema:?} is not lowercase letters, digits and _"
                    ),
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
            .map_err(|source| Error::Pool {
                url: display_url.clone(),
                source,
            })?;
        let pool = PgPool { pool, display_url };
        if let Some(schema) = &options.schema {
            pool.client()
                .await?
                .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
                .await?;
        }
        Ok(pool)
    }

    /// A pooled connection; a failure to get one means the server cannot be reached.
    pub async fn client(&self) -> Result<PgClient> {
        self.pool.get().await.map_err(|source| Error::Unreachable {
            url: self.display_url.clone(),
            source,
        })
    }

    /// The server as shown in messages (no password).
    pub fn display_url(&self) -> &str {
        &self.display_url
    }
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
pub fn display_url_of_text(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://…{}", &url[..scheme], &url[at..])
        }
        _ => url.to_owned(),
    }
}

/// A pool error with its cause: tokio-postgres's own message for a failed connection is
/// terse ("error connecting to server"), the reason is in its source.
pub(crate) fn pool_error_message(error: &deadpool_postgres::PoolError) -> String {
    match error {
        deadpool_postgres::PoolError::Backend(error) => postgres_message(error),
        other => other.to_string(),
    }
}

/// A tokio-postgres error with its cause and, for server errors, the server's message.
pub fn postgres_message(error: &tokio_postgres::Error) -> String {
    if let Some(db) = error.as_db_error() {
        return format!("{}: {}", db.code().code(), db.message());
    }
    match std::error::Error::source(error) {
        Some(source) => format!("{error}: {source}"),
        None => error.to_string(),
    }
}
