//! `agent-memory hook`: answering Claude Code's hooks, and installing them.
//!
//! `hook claude-code` reads a hook's JSON payload on stdin and prints the answer
//! [`agent_memory::hooks::claude_code::answer`] gives (the memory block, recall, the goal's
//! continuation, instructions before a compaction; nothing for other events). `hook install
//! claude-code` writes our hooks into Claude Code's `settings.json` (`$CLAUDE_CONFIG_DIR`, or
//! `.claude/settings.json` of the current folder with `--project`); `hook uninstall
//! claude-code` removes exactly them.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agent_memory::hooks::claude_code::settings::{self, Change};
use agent_memory::hooks::claude_code::{HookContext, HookPayload, answer};
use agent_memory::sanitize::{display_safe, redact_secrets};
use anyhow::Context;

use super::claude;
use super::exit::{outln, report_error, write_stdout};
use super::home::resolve_home;
use super::memory::{MemoryArgs, open_memory};

/// The most hook input read from stdin.
const MAX_HOOK_INPUT_BYTES: u64 = 1024 * 1024;
/// Where the hooks keep their state, under the home.
const STATE_DIR: [&str; 2] = ["hooks", "claude-code"];

/// Arguments of `agent-memory hook`.
#[derive(Debug, clap::Args)]
pub(crate) struct HookArgs {
    #[command(subcommand)]
    command: HookCommand,
}

#[derive(Debug, clap::Subcommand)]
enum HookCommand {
    /// Answer a Claude Code hook: reads its JSON payload on stdin, prints the answer.
    // Its stdout is Claude Code's protocol: the introspection commands' `--json` means nothing.
    #[command(mut_arg("json", |arg| arg.hide(true)))]
    ClaudeCode {
        #[command(flatten)]
        memory: MemoryArgs,
    },
    /// Add our hooks to an agent's settings, leaving every other setting as it is.
    Install {
        /// The agent.
        agent: HookAgent,
        /// The project's settings (`.claude/settings.json` here) instead of the user's.
        #[arg(long)]
        project: bool,
        /// agent-memory home the hooks use (default: $AGENT_MEMORY_HOME, else ~/.agent-memory).
        #[arg(long)]
        home: Option<PathBuf>,
    },
    /// Remove exactly our hooks from an agent's settings.
    Uninstall {
        /// The agent.
        agent: HookAgent,
        /// The project's settings (`.claude/settings.json` here) instead of the user's.
        #[arg(long)]
        project: bool,
        /// agent-memory home the hooks used (default: $AGENT_MEMORY_HOME, else ~/.agent-memory).
        #[arg(long)]
        home: Option<PathBuf>,
    },
}

/// Agents `hook install` knows.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum HookAgent {
    /// Claude Code.
    ClaudeCode,
}

pub(crate) fn run(args: HookArgs) -> ExitCode {
    match execute(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => report_error(&error),
    }
}

fn execute(args: HookArgs) -> anyhow::Result<()> {
    match args.command {
        HookCommand::ClaudeCode { memory } => {
            let mut text = String::new();
            std::io::stdin()
                .take(MAX_HOOK_INPUT_BYTES)
                .read_to_string(&mut text)
                .context("cannot read the hook's JSON on standard input")?;
            let home = resolve_home(memory.home.as_deref())?;
            // The memory as the session's project sees it: the global profile and the
            // memories of the folder Claude Code runs in (unscoped when it cannot be).
            let cwd = HookPayload::parse(&text)
                .ok()
                .and_then(|payload| payload.cwd);
            let introspector = open_memory(&memory)?;
            let introspector = match cwd {
                Some(cwd) => match introspector.with_cwd(&cwd) {
                    Ok(scoped) => scoped,
                    Err(_) => open_memory(&memory)?,
                },
                None => introspector,
            };
            let selection = memory
                .store
                .selection(&super::home::load_config(None, &home)?.store);
            let mut goals = super::goal::open_at(&home, &selection)?;
            let mut ctx = HookContext {
                memory: &introspector,
                goals: Some(&mut goals),
                state_dir: state_dir(&home),
                claude_config_dir: claude::config_dir().ok(),
            };
            let output = answer(&text, &mut ctx)?;
            // Claude Code reads stdout as the answer: JSON, plain text or nothing at all.
            write_stdout(display_safe(&redact_secrets(&output)).as_bytes());
            Ok(())
        }
        HookCommand::Install {
            agent: HookAgent::ClaudeCode,
            project,
            home,
        } => {
            let (settings_file, home) = (settings_file(project)?, resolve_home(home.as_deref())?);
            let program = std::env::current_exe().context("cannot find this program's path")?;
            let command = settings::hook_command(&program, Some(&home));
            let change = settings::install(&settings_file, &command, &backup_dir(&home))?;
            outln!(
                "{}: {}",
                settings_file.display(),
                match change {
                    Change::Written | Change::Restored => "hooks installed",
                    Change::Unchanged => "hooks already installed",
                }
            );
            outln!("command: {command}");
            Ok(())
        }
        HookCommand::Uninstall {
            agent: HookAgent::ClaudeCode,
            project,
            home,
        } => {
            let (settings_file, home) = (settings_file(project)?, resolve_home(home.as_deref())?);
            let change = settings::uninstall(&settings_file, &backup_dir(&home))?;
            outln!(
                "{}: {}",
                settings_file.display(),
                match change {
                    Change::Restored => "hooks removed; the file is as it was before install",
                    Change::Written => "hooks removed",
                    Change::Unchanged => "no hooks of ours found",
                }
            );
            Ok(())
        }
    }
}

/// The settings file: the project's (`.claude/settings.json` of the current folder) or the
/// user's (`settings.json` in Claude Code's configuration folder).
fn settings_file(project: bool) -> anyhow::Result<PathBuf> {
    if project {
        let here = std::env::current_dir().context("cannot read the current folder")?;
        Ok(here.join(".claude").join("settings.json"))
    } else {
        Ok(claude::config_dir()?.join("settings.json"))
    }
}

fn state_dir(home: &Path) -> PathBuf {
    STATE_DIR
        .iter()
        .fold(home.to_path_buf(), |dir, part| dir.join(part))
}

fn backup_dir(home: &Path) -> PathBuf {
    state_dir(home).join("installed")
}
