//! Claude Code: where it keeps its configuration and its session transcripts.
//!
//! Claude Code writes each session to `projects/<encoded cwd>/<session>.jsonl` under its
//! configuration folder, `$CLAUDE_CONFIG_DIR` or `~/.claude`. `agent-memory run --claude`
//! reads that `projects` folder; the transcripts are read by the write path like codex
//! rollouts.

use std::path::PathBuf;

use anyhow::bail;

/// Environment variable naming Claude Code's configuration folder.
const CONFIG_DIR_ENV: &str = "CLAUDE_CONFIG_DIR";
/// Claude Code's configuration folder under the user's home when `$CLAUDE_CONFIG_DIR` is not set.
const DEFAULT_CONFIG_DIR: &str = ".claude";
/// The transcripts folder, under the configuration folder.
const PROJECTS_DIR: &str = "projects";

/// Claude Code's configuration folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub(crate) fn config_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os(CONFIG_DIR_ENV).filter(|value| !value.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    match std::env::home_dir().filter(|dir| !dir.as_os_str().is_empty()) {
        Some(user_home) => Ok(user_home.join(DEFAULT_CONFIG_DIR)),
        None => bail!("cannot find your home folder: set ${CONFIG_DIR_ENV}"),
    }
}

/// Claude Code's transcripts folder, which must exist.
pub(crate) fn projects_dir() -> anyhow::Result<PathBuf> {
    let projects = config_dir()?.join(PROJECTS_DIR);
    if !projects.is_dir() {
        bail!(
            "{} does not exist: no Claude Code sessions to read (set ${CONFIG_DIR_ENV}, or run \
             `agent-memory run DIR`)",
            projects.display()
        );
    }
    Ok(projects)
}
