//! Which state store a command uses: `<home>/state.sqlite` by default, or a PostgreSQL server
//! shared by several machines, named by `--store URL`, else `AGENT_MEMORY_STORE`, else
//! `[store] url` in the config file; and the machine id a shared store knows this machine by.

use std::path::Path;
use std::sync::Arc;

use agent_memory::goals::{GoalConfig, GoalStore};
use agent_memory::write::config::{MemoriesConfig, StoreToml};
use agent_memory::write::housekeeping::prune_stale_memories;
use agent_memory::write::memory_root::MemoryRoot;
use agent_memory::write::phase_two::DEFAULT_PRUNE_LIMIT;
use agent_memory::write::shared_root::sync_shared_root;
use agent_memory::write::store::{SharedStore, WriteStore, now_unix};
use agent_memory::write::{
    AsyncStateStore, ScanOptions, ScanReport, StateStore, scan_rollouts, scan_rollouts_into,
};
use anyhow::{Context, bail};

use super::home::runtime;

/// The environment variable that names the store when `--store` is not given.
pub(crate) const STORE_ENV: &str = "AGENT_MEMORY_STORE";
/// The environment variable that names this machine when `--machine-id` is not given.
pub(crate) const MACHINE_ID_ENV: &str = "AGENT_MEMORY_MACHINE_ID";

/// The store options every command that reaches the state store takes.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct StoreArgs {
    /// The state store: `postgres://USER@HOST:PORT/DB` for one store shared by several
    /// machines, or `sqlite` (default: $AGENT_MEMORY_STORE, else `[store] url` in the config
    /// file, else <home>/state.sqlite).
    #[arg(long, value_name = "URL")]
    store: Option<String>,
    /// The name this machine registers its rollouts and takes leases under on a shared store
    /// (default: $AGENT_MEMORY_MACHINE_ID, else `[store] machine_id`, else the host name).
    /// Two machines must not share one.
    #[arg(long, value_name = "ID")]
    machine_id: Option<String>,
}

/// The store in force: the flag, else the environment, else the config file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct StoreSelection {
    /// `None` for the SQLite file under the home.
    pub(crate) url: Option<String>,
    /// `None` for the host name.
    pub(crate) machine_id: Option<String>,
}

impl StoreArgs {
    pub(crate) fn selection(&self, config: &StoreToml) -> StoreSelection {
        let pick = |flag: &Option<String>, env: &str, file: &Option<String>| {
            flag.clone()
                .or_else(|| std::env::var(env).ok())
                .or_else(|| file.clone())
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())
        };
        StoreSelection {
            url: pick(&self.store, STORE_ENV, &config.url).filter(|url| url != "sqlite"),
            machine_id: pick(&self.machine_id, MACHINE_ID_ENV, &config.machine_id),
        }
    }
}

/// Opens the selected store (migrating it to this build's schema).
pub(crate) fn open(
    runtime: &tokio::runtime::Runtime,
    home: &Path,
    selection: &StoreSelection,
) -> anyhow::Result<SharedStore> {
    match &selection.url {
        // One machine: the machine id only matters to a shared store.
        None => Ok(Arc::new(AsyncStateStore::new(StateStore::open_home(home)?))),
        Some(url) => connect(runtime, url, selection.machine_id.as_deref()),
    }
}

/// This process, under a configured machine id instead of the host name.
#[cfg(feature = "postgres")]
fn as_machine(machine_id: &str) -> agent_memory::write::store::LeaseOwner {
    agent_memory::write::store::LeaseOwner {
        host: machine_id.to_owned(),
        ..agent_memory::write::store::LeaseOwner::current()
    }
}

/// The store a run works on, after pruning stale memories and registering the rollouts under
/// `rollouts_dir`. Returns the store, how many memories were pruned and the scan.
pub(crate) fn open_and_scan(
    runtime: &tokio::runtime::Runtime,
    home: &Path,
    selection: &StoreSelection,
    config: &MemoriesConfig,
    rollouts_dir: &Path,
) -> anyhow::Result<(SharedStore, usize, ScanReport)> {
    let scan_options = ScanOptions::from_config(config);
    let Some(url) = &selection.url else {
        // The embedded default, exactly as before: synchronous pruning and scanning.
        let mut store = StateStore::open_home(home)?;
        let pruned = prune_stale_memories(&mut store, config, now_unix())?;
        let scan = scan_rollouts(&mut store, rollouts_dir, &scan_options, now_unix())
            .with_context(|| format!("cannot scan {}", rollouts_dir.display()))?;
        return Ok((Arc::new(AsyncStateStore::new(store)), pruned, scan));
    };
    let store = connect(runtime, url, selection.machine_id.as_deref())?;
    runtime.block_on(async {
        let pruned = store
            .prune_phase_two_outputs(now_unix(), config.max_unused_days, DEFAULT_PRUNE_LIMIT)
            .await?;
        let scan = scan_rollouts_into(store.as_ref(), rollouts_dir, &scan_options, now_unix())
            .await
            .with_context(|| format!("cannot scan {}", rollouts_dir.display()))?;
        Ok((store, pruned, scan))
    })
}

#[cfg(feature = "postgres")]
fn connect(
    runtime: &tokio::runtime::Runtime,
    url: &str,
    machine_id: Option<&str>,
) -> anyhow::Result<SharedStore> {
    use agent_memory::write::store::postgres::{PgStore, is_postgres_url};
    if !is_postgres_url(url) {
        bail!("unsupported store {url:?}: use postgres://... or sqlite");
    }
    let mut store = runtime.block_on(PgStore::connect(url))?;
    if let Some(machine_id) = machine_id {
        store.set_lease_owner(as_machine(machine_id));
    }
    Ok(Arc::new(store))
}

#[cfg(not(feature = "postgres"))]
fn connect(
    _runtime: &tokio::runtime::Runtime,
    url: &str,
    _machine_id: Option<&str>,
) -> anyhow::Result<SharedStore> {
    let _ = url;
    bail!("this build has no PostgreSQL store (cargo feature `postgres`)")
}

/// The goals on the shared PostgreSQL store at `url` (its goal tables migrated to this build).
#[cfg(feature = "postgres")]
pub(crate) fn connect_goals(url: &str, config: GoalConfig) -> anyhow::Result<GoalStore> {
    use agent_memory::goals::PgGoalOptions;
    use agent_memory::write::store::postgres::is_postgres_url;
    if !is_postgres_url(url) {
        bail!("unsupported store {url:?}: use postgres://... or sqlite");
    }
    Ok(GoalStore::connect(url, &PgGoalOptions::default(), config)?)
}

#[cfg(not(feature = "postgres"))]
pub(crate) fn connect_goals(url: &str, config: GoalConfig) -> anyhow::Result<GoalStore> {
    let _ = (url, config);
    bail!("this build has no PostgreSQL store (cargo feature `postgres`)")
}

/// Syncs `<home>/memories` with the selected store when it is shared (see
/// [`agent_memory::write::shared_root::sync_shared_root`]); nothing on the SQLite file.
pub(crate) fn sync_shared_memory(home: &Path, selection: &StoreSelection) -> anyhow::Result<()> {
    if selection.url.is_none() {
        return Ok(());
    }
    let runtime = runtime()?;
    let store = open(&runtime, home, selection)?;
    let root = MemoryRoot::under_home(home);
    runtime.block_on(sync_shared_root(store.as_ref(), &root))?;
    Ok(())
}
