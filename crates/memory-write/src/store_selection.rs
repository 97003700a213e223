//! Which state store a host uses: `<home>/state.sqlite` by default, or a PostgreSQL server
//! shared by several machines, named by the host's own option (the CLI's `--store URL`), else
//! the loaded [`StoreConfig`] (`AGENT_MEMORY_STORE`, else `[store] url` in the config file); and
//! the machine id a shared store knows this machine by.

use std::path::Path;
use std::sync::Arc;

use crate::config::StoreConfig;
use crate::memory_root::MemoryRoot;
use crate::shared_root::sync_shared_root;
use crate::store::{STATE_FILE_NAME, SharedStore, StateStore};
use crate::{Error, Result};

/// The store in force: the host's option, else the environment, else the config file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreSelection {
    /// `None` for the SQLite file under the home.
    pub url: Option<String>,
    /// `None` for the host name.
    pub machine_id: Option<String>,
}

impl StoreSelection {
    /// The selection from the host's options (`store`, `machine_id`), else the loaded
    /// `[store]` settings (the environment over the config file, see [`StoreConfig`]). Values
    /// are trimmed; an empty one counts as absent, and the store `sqlite` means the SQLite file.
    pub fn resolve(
        store: Option<&str>,
        machine_id: Option<&str>,
        config: &StoreConfig,
    ) -> StoreSelection {
        let pick = |option: Option<&str>, loaded: &Option<String>| {
            option
                .map(str::to_owned)
                .or_else(|| loaded.clone())
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())
        };
        StoreSelection {
            url: pick(store, &config.url).filter(|url| url != "sqlite"),
            machine_id: pick(machine_id, &config.machine_id),
        }
    }

    /// The shared store's URL, checked to name a backend this build has; `None` for the SQLite
    /// file.
    pub fn shared_url(&self) -> Result<Option<&str>> {
        let Some(url) = self.url.as_deref() else {
            return Ok(None);
        };
        check_url(url)?;
        Ok(Some(url))
    }
}

#[cfg(feature = "postgres")]
fn check_url(url: &str) -> Result<()> {
    if crate::store::postgres::is_postgres_url(url) {
        Ok(())
    } else {
        Err(Error::UnsupportedStore {
            url: url.to_owned(),
        })
    }
}

#[cfg(not(feature = "postgres"))]
fn check_url(_url: &str) -> Result<()> {
    Err(Error::NoPostgres)
}

/// Opens the selected store (migrating it to this build's schema).
pub async fn open_store(home: &Path, selection: &StoreSelection) -> Result<SharedStore> {
    match selection.shared_url()? {
        // One machine: the machine id only matters to a shared store.
        None => Ok(Arc::new(StateStore::open_home_async(home).await?)),
        Some(url) => connect(url, selection.machine_id.as_deref()).await,
    }
}

/// Opens the selected store only when it exists: `None` for a home without a state file, so a
/// command that only reads (`status`) creates nothing.
pub async fn open_existing_store(
    home: &Path,
    selection: &StoreSelection,
) -> Result<Option<SharedStore>> {
    if selection.url.is_none() && !home.join(STATE_FILE_NAME).is_file() {
        return Ok(None);
    }
    open_store(home, selection).await.map(Some)
}

#[cfg(feature = "postgres")]
async fn connect(url: &str, machine_id: Option<&str>) -> Result<SharedStore> {
    use crate::store::LeaseOwner;
    use crate::store::postgres::PgStore;
    let mut store = PgStore::connect(url).await?;
    if let Some(machine_id) = machine_id {
        // This process, under the configured machine id instead of the host name.
        store.set_lease_owner(LeaseOwner {
            host: machine_id.to_owned(),
            ..LeaseOwner::current()
        });
    }
    Ok(Arc::new(store))
}

#[cfg(not(feature = "postgres"))]
async fn connect(_url: &str, _machine_id: Option<&str>) -> Result<SharedStore> {
    Err(Error::NoPostgres)
}

/// Syncs `<home>/memories` with the selected store when it is shared (see
/// [`sync_shared_root`]); nothing on the SQLite file.
pub async fn sync_selected_memory(home: &Path, selection: &StoreSelection) -> Result<()> {
    if selection.url.is_none() {
        return Ok(());
    }
    let store = open_store(home, selection).await?;
    let root = MemoryRoot::under_home(home);
    sync_shared_root(store.as_ref(), &root).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_and_blank_values_select_the_file() {
        let file = StoreConfig {
            url: Some("postgres://db/memory".to_owned()),
            machine_id: Some(" laptop ".to_owned()),
        };
        let chosen = StoreSelection::resolve(Some("sqlite"), None, &file);
        assert_eq!(chosen.url, None);
        let blank = StoreSelection::resolve(Some("  "), Some("ci-1"), &StoreConfig::default());
        assert_eq!(blank.machine_id.as_deref(), Some("ci-1"));
        let option = StoreSelection::resolve(Some(" postgres://other/db "), None, &file);
        assert_eq!(option.url.as_deref(), Some("postgres://other/db"));
    }

    #[cfg(feature = "postgres")]
    #[test]
    fn an_unknown_scheme_is_an_error_naming_it() {
        let selection = StoreSelection {
            url: Some("mysql://db".to_owned()),
            machine_id: None,
        };
        let error = selection.shared_url().unwrap_err().to_string();
        assert_eq!(
            error,
            "unsupported store \"mysql://db\": use postgres://... or sqlite"
        );
    }
}
