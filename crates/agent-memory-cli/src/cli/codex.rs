//! Codex drop-in: where codex keeps its sessions and its memory root, and the option that
//! points a command at codex's memory root instead of the agent-memory home's.
//!
//! Codex reads `$CODEX_HOME/memories` (`~/.codex/memories` by default) with the same layout
//! agent-memory writes (`memory_summary.md` starting `v1`, `MEMORY.md`, `raw_memories.md`,
//! `rollout_summaries/`), so `agent-memory run --codex` fills it and codex's own read path
//! picks it up unchanged. The state database and config stay in the agent-memory home.
//! Codex's `[memories] version = "v2"` (it then reads `memories_v2/`) is refused.

use std::path::{Path, PathBuf};

use agent_memory::protocol::names::memory_root as names;
use agent_memory::write::codex_home::check_memories_version;
use agent_memory::write::memory_root::MemoryRoot;
use anyhow::bail;

/// Environment variable naming codex's home.
const CODEX_HOME_ENV: &str = "CODEX_HOME";
/// Codex's home under the user's home folder when `$CODEX_HOME` is not set.
const DEFAULT_CODEX_HOME: &str = ".codex";
/// Codex's sessions folder, under its home.
const SESSIONS_DIR: &str = "sessions";

/// Which memory root a command works on.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct RootArgs {
    /// Use codex's memory root ($CODEX_HOME/memories, default ~/.codex/memories) instead of
    /// `<home>/memories`.
    #[arg(long)]
    pub(crate) codex: bool,
}

impl RootArgs {
    /// The memory root: codex's with `--codex` (refused when codex is set to read another
    /// layout), else the one under `home`.
    pub(crate) fn memory_root(&self, home: &Path) -> anyhow::Result<MemoryRoot> {
        if self.codex {
            let codex_home = codex_home()?;
            check_memories_version(&codex_home)?;
            Ok(MemoryRoot::at(codex_home.join(names::DIR)))
        } else {
            Ok(MemoryRoot::under_home(home))
        }
    }
}

/// Codex's home: `$CODEX_HOME`, else `~/.codex`.
pub(crate) fn codex_home() -> anyhow::Result<PathBuf> {
    if let Some(home) = std::env::var_os(CODEX_HOME_ENV).filter(|value| !value.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    match std::env::home_dir().filter(|dir| !dir.as_os_str().is_empty()) {
        Some(user_home) => Ok(user_home.join(DEFAULT_CODEX_HOME)),
        None => bail!("cannot find your home folder: set ${CODEX_HOME_ENV}"),
    }
}

/// Codex's sessions folder, which must exist.
pub(crate) fn sessions_dir() -> anyhow::Result<PathBuf> {
    let sessions = codex_home()?.join(SESSIONS_DIR);
    if !sessions.is_dir() {
        bail!(
            "{} does not exist: no codex sessions to read (set ${CODEX_HOME_ENV}, or run \
             `agent-memory run DIR`)",
            sessions.display()
        );
    }
    Ok(sessions)
}
