//! Which state store a command uses: `<home>/state.sqlite` by default, or a PostgreSQL server
//! shared by several machines, named by `--store URL`, else `AGENT_MEMORY_STORE`, else
//! `[store] url` in the config file.

use std::path::Path;
use std::sync::Arc;

use agent_memory::write::config::MemoriesConfig;
use agent_memory::write::housekeeping::prune_stale_memories;
use agent_memory::write::phase_two::DEFAULT_PRUNE_LIMIT;
use agent_memory::write::store::{SharedStore, WriteStore, now_unix};
use agent_memory::write::{
    AsyncStateStore, ScanOptions, ScanReport, StateStore, scan_rollouts, scan_rollouts_into,
};
use anyhow::{Context, bail};

/// The environment variable that names the store when `--store` is not given.
pub(crate) const STORE_ENV: &str = "AGENT_MEMORY_STORE";

/// The store selection in force: the flag, else the environment, else the config file; `None`
/// (or `sqlite`) for the SQLite file under the home.
pub(crate) fn selected_url(flag: Option<&str>, config: Option<&str>) -> Option<String> {
    flag.map(str::to_owned)
        .or_else(|| std::env::var(STORE_ENV).ok())
        .or_else(|| config.map(str::to_owned))
        .map(|url| url.trim().to_owned())
        .filter(|url| !url.is_empty() && url != "sqlite")
}

/// The store a run works on, after pruning stale memories and registering the rollouts under
/// `rollouts_dir`. Returns the store, how many memories were pruned and the scan.
pub(crate) fn open_and_scan(
    runtime: &tokio::runtime::Runtime,
    home: &Path,
    url: Option<&str>,
    config: &MemoriesConfig,
    rollouts_dir: &Path,
) -> anyhow::Result<(SharedStore, usize, ScanReport)> {
    let scan_options = ScanOptions::from_config(config);
    let Some(url) = url else {
        // The embedded default, exactly as before: synchronous pruning and scanning.
        let mut store = StateStore::open_home(home)?;
        let pruned = prune_stale_memories(&mut store, config, now_unix())?;
        let scan = scan_rollouts(&mut store, rollouts_dir, &scan_options, now_unix())
            .with_context(|| format!("cannot scan {}", rollouts_dir.display()))?;
        return Ok((Arc::new(AsyncStateStore::new(store)), pruned, scan));
    };
    let store = connect(runtime, url)?;
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
fn connect(runtime: &tokio::runtime::Runtime, url: &str) -> anyhow::Result<SharedStore> {
    use agent_memory::write::store::postgres::{PgStore, is_postgres_url};
    if !is_postgres_url(url) {
        bail!("unsupported store {url:?}: use postgres://... or sqlite");
    }
    Ok(Arc::new(runtime.block_on(PgStore::connect(url))?))
}

#[cfg(not(feature = "postgres"))]
fn connect(_runtime: &tokio::runtime::Runtime, url: &str) -> anyhow::Result<SharedStore> {
    let _ = url;
    bail!("this build has no PostgreSQL store (cargo feature `postgres`)")
}
