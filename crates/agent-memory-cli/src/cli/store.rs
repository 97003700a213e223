//! The store options every command that reaches the state store takes; which store they select
//! is [`agent_memory::write::store_selection`]'s to decide.

use std::path::Path;

use agent_memory::write::config::StoreConfig;
use agent_memory::write::store::SharedStore;
use agent_memory::write::store_selection::{StoreSelection, open_store, sync_selected_memory};

use super::home::runtime;

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

impl StoreArgs {
    /// The store in force: the flag, else the environment, else the config file.
    pub(crate) fn selection(&self, config: &StoreConfig) -> StoreSelection {
        StoreSelection::resolve(self.store.as_deref(), self.machine_id.as_deref(), config)
    }
}

/// Opens the selected store (migrating it to this build's schema).
pub(crate) fn open(
    runtime: &tokio::runtime::Runtime,
    home: &Path,
    selection: &StoreSelection,
) -> anyhow::Result<SharedStore> {
    Ok(runtime.block_on(open_store(home, selection))?)
}

/// Syncs `<home>/memories` with the selected store when it is shared; nothing on the SQLite
/// file.
pub(crate) fn sync_shared_memory(home: &Path, selection: &StoreSelection) -> anyhow::Result<()> {
    if selection.url.is_none() {
        return Ok(());
    }
    Ok(runtime()?.block_on(sync_selected_memory(home, selection))?)
}
