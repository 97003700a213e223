//! What every command that works on a home shares: its options, finding the home, loading
//! its config, and starting the async runtime.

use std::path::{Path, PathBuf};

use agent_memory::write::config::{MemoriesConfig, MemoriesToml, load_config_file};
use anyhow::{Context, bail};

/// Environment variable naming the agent-memory home.
const HOME_ENV: &str = "AGENT_MEMORY_HOME";
/// Folder under the user's home directory used when neither `--home` nor the environment
/// names one.
const DEFAULT_HOME: &str = ".agent-memory";
/// Config file looked for in the home when `--config` is not given.
const CONFIG_FILE_NAME: &str = "config.toml";

/// The options of every command that runs the write path.
#[derive(Debug, clap::Args)]
pub(crate) struct CommonArgs {
    /// agent-memory home (default: $AGENT_MEMORY_HOME, else ~/.agent-memory).
    #[arg(long)]
    pub(crate) home: Option<PathBuf>,
    /// Model: `offline` (built in, no network), `openai:NAME` or `openai-chat:NAME`.
    #[arg(long)]
    pub(crate) model: Option<String>,
    /// Base URL of an OpenAI-compatible server.
    #[arg(long)]
    pub(crate) base_url: Option<String>,
    /// Config file with a `[memories]` table (default: `<home>/config.toml` when present).
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
}

/// The home a command works in: the flag, else `$AGENT_MEMORY_HOME`, else `~/.agent-memory`.
/// It is per user, never the current folder, so running from another folder finds the same
/// memories.
pub(crate) fn resolve_home(flag: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(home) = flag.map(Path::to_path_buf).or_else(|| {
        std::env::var_os(HOME_ENV)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    }) {
        return Ok(home);
    }
    match std::env::home_dir().filter(|dir| !dir.as_os_str().is_empty()) {
        Some(user_home) => Ok(user_home.join(DEFAULT_HOME)),
        None => bail!("cannot find your home folder: pass --home DIR or set ${HOME_ENV}"),
    }
}

/// The config file (the flag, else `<home>/config.toml` when present, else defaults) as written
/// and as resolved. Clamping warnings go to stderr.
pub(crate) fn load_config(
    flag: Option<&Path>,
    home: &Path,
) -> anyhow::Result<(MemoriesToml, MemoriesConfig)> {
    let default = home.join(CONFIG_FILE_NAME);
    let file = match flag {
        Some(path) => load_config_file(path)?,
        None if default.is_file() => load_config_file(&default)?,
        None => MemoriesToml::default(),
    };
    let (config, warnings) = MemoriesConfig::resolve(&file);
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
    Ok((file, config))
}

/// A multi-threaded runtime for the async write path.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}
