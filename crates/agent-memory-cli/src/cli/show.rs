//! `agent-memory show`: prints the files of the memory root, or one of them, or the memory
//! injection (`--injection`, the same text as `agent-memory block`).

use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

use agent_memory::protocol::names::memory_root as names;
use agent_memory::write::safe_file::read_regular_file;
use anyhow::{Context, bail};

use super::block::injection;
use super::codex::RootArgs;
use super::exit::{outln, print_safe};
use super::home::resolve_home;
use super::memory::{MemoryArgs, open_memory};

/// Arguments of `agent-memory show`.
#[derive(Debug, clap::Args)]
pub(crate) struct ShowArgs {
    /// One file to print, relative to the memory root (e.g. `MEMORY.md`).
    file: Option<PathBuf>,
    /// agent-memory home (default: $AGENT_MEMORY_HOME, else ~/.agent-memory).
    #[arg(long)]
    home: Option<PathBuf>,
    /// Config file (default: `<home>/config.toml` when present): `[memories] use_memories` and
    /// the `[introspect]` table decide what `--injection` prints.
    #[arg(long)]
    config: Option<PathBuf>,
    #[command(flatten)]
    root: RootArgs,
    /// Print the memory injection a session receives (the same as `agent-memory block`).
    #[arg(long, conflicts_with = "file")]
    injection: bool,
}

pub(crate) fn run(args: ShowArgs) -> ExitCode {
    match execute(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => super::exit::report_error(&error),
    }
}

/// A file of the memory root as text: only a regular file is read (a FIFO put in its place
/// cannot hang `show`), and bytes that are not UTF-8 show as U+FFFD. `None` when missing.
fn read_text(path: &Path) -> std::io::Result<Option<String>> {
    Ok(read_regular_file(path)?.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
}

fn execute(args: &ShowArgs) -> anyhow::Result<()> {
    if args.injection {
        let memory = open_memory(&MemoryArgs {
            home: args.home.clone(),
            config: args.config.clone(),
            json: false,
            store: super::store::StoreArgs::default(),
            root: args.root.clone(),
        })?;
        print_safe(&injection(&memory)?.text);
        return Ok(());
    }
    let home = resolve_home(args.home.as_deref())?;
    let root = args.root.memory_root(&home)?;
    if !root.dir().is_dir() {
        bail!(
            "no memory root at {}: run `agent-memory run` or `agent-memory consolidate` first",
            root.dir().display()
        );
    }
    if let Some(file) = &args.file {
        let path = safe_join(root.dir(), file)?;
        let text = read_text(&path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .with_context(|| format!("{} does not exist", path.display()))?;
        // Files may have been edited by hand: nothing a terminal would act on is printed.
        print_safe(&text);
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
        match read_text(&path) {
            Ok(Some(text)) => {
                print_safe(&format!("==> {shown} <==\n"));
                print_safe(&text);
                if !text.ends_with('\n') {
                    outln!();
                }
                outln!();
            }
            Ok(None) => print_safe(&format!("==> {shown} <== (missing)\n\n")),
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
