//! `agent-memory show`: prints the files of the memory root, or one of them, or the memory
//! injection (`--injection`, the same text as `agent-memory block`).

use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

use agent_memory::protocol::names::memory_root as names;
use agent_memory::write::memory_root::MemoryRoot;
use anyhow::{Context, bail};

use super::block::injection;
use super::home::resolve_home;
use super::memory::{MemoryArgs, open_memory};

/// Arguments of `agent-memory show`.
#[derive(Debug, clap::Args)]
pub(crate) struct ShowArgs {
    /// One file to print, relative to the memory root (e.g. `MEMORY.md`).
    file: Option<PathBuf>,
    /// agent-memory home (default: $AGENT_MEMORY_HOME, else ./.agent-memory).
    #[arg(long)]
    home: Option<PathBuf>,
    /// Print the memory injection a session receives (the same as `agent-memory block`).
    #[arg(long, conflicts_with = "file")]
    injection: bool,
}

pub(crate) fn run(args: ShowArgs) -> ExitCode {
    match execute(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn execute(args: &ShowArgs) -> anyhow::Result<()> {
    if args.injection {
        let memory = open_memory(&MemoryArgs {
            home: args.home.clone(),
            config: None,
            json: false,
        })?;
        print!("{}", injection(&memory)?.text);
        return Ok(());
    }
    let home = resolve_home(args.home.as_deref());
    let root = MemoryRoot::under_home(&home);
    if !root.dir().is_dir() {
        bail!(
            "no memory root at {}: run `agent-memory run` or `agent-memory consolidate` first",
            root.dir().display()
        );
    }
    if let Some(file) = &args.file {
        let path = safe_join(root.dir(), file)?;
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        print!("{text}");
        return Ok(());
    }
    let mut files: Vec<PathBuf> = [
        names::MEMORY_SUMMARY_FILE,
        names::MEMORY_FILE,
        names::RAW_MEMORIES_FILE,
    ]
    .iter()
    .map(|name| root.file(name))
    .collect();
    let mut summaries: Vec<PathBuf> = match std::fs::read_dir(root.rollout_summaries_dir()) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
            .collect(),
        Err(_) => Vec::new(),
    };
    summaries.sort();
    files.extend(summaries);
    for path in files {
        let shown = path
            .strip_prefix(&home)
            .unwrap_or(&path)
            .display()
            .to_string();
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                println!("==> {shown} <==");
                print!("{text}");
                if !text.ends_with('\n') {
                    println!();
                }
                println!();
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                println!("==> {shown} <== (missing)\n");
            }
            Err(error) => bail!("cannot read {}: {error}", path.display()),
        }
    }
    Ok(())
}

/// `root/relative`, refusing absolute paths and `..`, so `show` never reads outside the root.
fn safe_join(root: &Path, relative: &Path) -> anyhow::Result<PathBuf> {
    let normal = relative
        .components()
        .all(|component| matches!(component, Component::Normal(_) | Component::CurDir));
    if !normal || relative.as_os_str().is_empty() {
        bail!(
            "{} is not a path inside the memory root (no `..`, no absolute paths)",
            relative.display()
        );
    }
    Ok(root.join(relative))
}
