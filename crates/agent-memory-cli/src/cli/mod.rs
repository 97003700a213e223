//! Command-line parsing and dispatch. Each subcommand lives in its own module.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod block;
mod cite;
mod claude;
mod codex;
mod compact;
mod consolidate;
mod exit;
mod forget;
mod goal;
mod home;
mod hook;
mod interrupt;
mod json;
mod list;
mod mcp;
mod memory;
mod migrate;
mod note;
mod read;
mod redact;
mod run;
mod search;
mod show;
mod status;
mod store;
mod wm;

/// The exit codes, the same on every command (the README has the same table).
const EXIT_CODES_HELP: &str = "Exit codes:
  0    success
  1    an error: the command failed, something asked for was not found, or `run` finished
       with failed jobs (a later run retries them)
  2    bad command line
  3    memory disabled or unavailable, or a goal tool refused the call (`goal update`)
  130  stopped by Ctrl-C (143: SIGTERM), after giving held leases back
  141  standard output closed by its reader (`... | head -1`)";

/// agent-memory: turn coding-agent session transcripts into durable memories.
#[derive(Debug, Parser)]
#[command(name = "agent-memory", version = env!("AGENT_MEMORY_VERSION"), about, after_help = EXIT_CODES_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Scan a folder of rollouts and extract memories from them (the main job).
    Run(run::RunArgs),
    /// Consolidate the stored memories into the memory root (phase 2 alone).
    Consolidate(consolidate::ConsolidateArgs),
    /// Compact a conversation (a codex rollout or a session JSONL): summarize the older part,
    /// keep the recent part.
    Compact(compact::CompactArgs),
    /// Print the files of the memory root, one of them, or the block injected into sessions.
    Show(show::ShowArgs),
    /// Copy files (or standard input) to standard output with every secret replaced by
    /// `[REDACTED_SECRET]`.
    Redact(redact::RedactArgs),
    /// A thread's goal: set, show, edit, budget, pause, resume, clear, account, next, update.
    Goal(goal::GoalArgs),
    /// Record which memories an assistant message (on standard input) cited.
    Cite(cite::CiteArgs),
    /// Forget one session's memories, or everything with --all.
    Forget(forget::ForgetArgs),
    /// Working memory: merge operations, recover malformed ones, commit, assemble, show.
    Wm(wm::WmArgs),
    /// Where memory stands: state, mode, root, counts, index, budget, notes (exit 3 when
    /// disabled or unavailable).
    Status(status::StatusArgs),
    /// Search memory (passages with every word first, then with some; '"double quotes"' for a
    /// phrase).
    Search(search::SearchArgs),
    /// List the memory root as a tree with sizes.
    List(list::ListArgs),
    /// Read a memory file, a line range or a heading's section.
    Read(read::ReadArgs),
    /// Add a note to memory (redacted, indexed at once, consolidated by phase 2).
    Note(note::NoteArgs),
    /// Print exactly what would be injected this turn.
    Block(block::BlockArgs),
    /// Serve the memory tools over MCP on stdin/stdout.
    // It speaks JSON-RPC on stdout: the introspection commands' `--json` means nothing here.
    #[command(mut_arg("json", |arg| arg.hide(true)))]
    Mcp(mcp::McpArgs),
    /// Bring the state store's schema up to this build and print each owner's version.
    Migrate(migrate::MigrateArgs),
    /// Claude Code's hooks: `hook claude-code` answers one (JSON payload on stdin);
    /// `hook install claude-code [--project]` and `hook uninstall claude-code` manage them in
    /// settings.json.
    Hook(hook::HookArgs),
}

pub(crate) fn main() -> ExitCode {
    // A bad command line exits 2 (clap's convention, listed in the README's exit codes).
    let cli = Cli::parse();
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Consolidate(args) => consolidate::run(args),
        Command::Compact(args) => compact::run(args),
        Command::Show(args) => show::run(args),
        Command::Redact(args) => redact::run(args),
        Command::Goal(args) => goal::run(args),
        Command::Cite(args) => cite::run(args),
        Command::Forget(args) => forget::run(args),
        Command::Wm(args) => wm::run(args),
        Command::Status(args) => status::run(args),
        Command::Search(args) => search::run(args),
        Command::List(args) => list::run(args),
        Command::Read(args) => read::run(args),
        Command::Note(args) => note::run(args),
        Command::Block(args) => block::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Migrate(args) => migrate::run(args),
        Command::Hook(args) => hook::run(args),
    }
}

#[cfg(test)]
mod tests {
    use agent_memory::compaction::compaction::{
        DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS, DEFAULT_WINDOW_TOKENS,
    };
    use agent_memory::introspect::{
        DEFAULT_LIST_DEPTH, DEFAULT_SEARCH_RESULTS, MAX_LIST_DEPTH, MAX_SEARCH_RESULTS,
    };
    use agent_memory::models::openai::{DEFAULT_BASE_URL, OpenAiConfig};
    use agent_memory::protocol::goal::MAX_OBJECTIVE_CHARS;
    use agent_memory::write::store::STATE_FILE_NAME;
    use clap::{CommandFactory, Parser};

    use super::Cli;

    /// Every command and subcommand with its `--help` text, keyed by its path (`goal set`).
    fn every_help() -> Vec<(String, clap::Command, String)> {
        fn walk(
            path: &str,
            command: &clap::Command,
            out: &mut Vec<(String, clap::Command, String)>,
        ) {
            for sub in command.get_subcommands() {
                if sub.get_name() == "help" {
                    continue;
                }
                let path = format!("{path} {}", sub.get_name()).trim().to_owned();
                let help = sub.clone().render_long_help().to_string();
                out.push((path.clone(), sub.clone(), help));
                walk(&path, sub, out);
            }
        }
        let mut root = Cli::command();
        root.build();
        let mut out = Vec::new();
        walk("", &root, &mut out);
        out
    }

    /// The help of `--flag` (the argument with id `id`) of the command at `path`.
    fn flag_help(helps: &[(String, clap::Command, String)], path: &str, id: &str) -> String {
        let (_, command, _) = helps
            .iter()
            .find(|(name, _, _)| name == path)
            .unwrap_or_else(|| panic!("no command `{path}`"));
        let arg = command
            .get_arguments()
            .find(|arg| arg.get_id() == id)
            .unwrap_or_else(|| panic!("`{path}` has no argument `{id}`"));
        let mut text = arg
            .get_long_help()
            .or(arg.get_help())
            .map(ToString::to_string)
            .unwrap_or_default();
        for default in arg.get_default_values() {
            text.push_str(&format!(" [default: {}]", default.to_string_lossy()));
        }
        text
    }

    #[test]
    fn every_help_states_the_defaults_the_code_uses() {
        let helps = every_help();
        assert!(helps.len() > 20, "{} commands", helps.len());
        let home = format!(
            "${}, else ~/{}",
            super::home::HOME_ENV,
            super::home::DEFAULT_HOME
        );
        let mut with_home = 0;
        for (path, command, help) in &helps {
            assert!(!help.contains("./.agent-memory"), "{path}: {help}");
            if command.get_arguments().any(|arg| arg.get_id() == "home") {
                with_home += 1;
                let text = flag_help(&helps, path, "home");
                assert!(text.contains(&home), "{path} --home: {text}");
            }
        }
        assert!(with_home > 15, "{with_home} commands take --home");
        let expected = [
            (
                "compact",
                "window",
                format!("else {DEFAULT_WINDOW_TOKENS})"),
            ),
            (
                "compact",
                "window",
                format!("at least {}", super::compact::MIN_WINDOW_TOKENS),
            ),
            (
                "compact",
                "keep_recent",
                format!("else {DEFAULT_KEEP_RECENT_TOKENS})"),
            ),
            (
                "compact",
                "reserve",
                format!("else {DEFAULT_RESERVE_TOKENS};"),
            ),
            (
                "search",
                "max_results",
                format!("1 to {MAX_SEARCH_RESULTS}; default {DEFAULT_SEARCH_RESULTS}"),
            ),
            (
                "block",
                "max_recall",
                format!("[default: {}]", super::block::DEFAULT_RECALL_HITS),
            ),
            (
                "run",
                "consolidation_wait",
                format!("[default: {}]", super::run::DEFAULT_CONSOLIDATION_WAIT_SECS),
            ),
            (
                "consolidate",
                "consolidation_wait",
                format!("[default: {}]", super::run::DEFAULT_CONSOLIDATION_WAIT_SECS),
            ),
        ];
        let expected = expected.into_iter().chain([
            (
                "list",
                "depth",
                format!("1 to {MAX_LIST_DEPTH}; default {DEFAULT_LIST_DEPTH}"),
            ),
            (
                "goal set",
                "objective",
                format!("at most {MAX_OBJECTIVE_CHARS} characters"),
            ),
            (
                "goal edit",
                "objective",
                format!("at most {MAX_OBJECTIVE_CHARS} characters"),
            ),
        ]);
        for (path, id, default) in expected {
            let text = flag_help(&helps, path, id);
            assert!(
                text.contains(&default),
                "{path} --{id}: {text:?} lacks {default:?}"
            );
        }
        // Flags shared by many commands: each one's help, wherever it appears.
        let shared = [
            ("base_url", format!("else {DEFAULT_BASE_URL})")),
            (
                "request_timeout",
                format!(
                    "(default {})",
                    OpenAiConfig::new("any").request_timeout.as_secs()
                ),
            ),
            ("store", format!("else <home>/{STATE_FILE_NAME})")),
        ];
        for (id, default) in shared {
            let mut seen = 0;
            for (path, command, _) in &helps {
                if command.get_arguments().any(|arg| arg.get_id() == id) {
                    seen += 1;
                    let text = flag_help(&helps, path, id);
                    assert!(
                        text.contains(&default),
                        "{path} --{id}: {text:?} lacks {default:?}"
                    );
                }
            }
            assert!(seen > 3, "--{id} on {seen} commands");
        }
    }

    fn readme() -> String {
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
            .unwrap_or_default()
    }

    /// The README's section that starts with `heading`, up to the next heading.
    fn readme_section(readme: &str, heading: &str) -> String {
        let start = readme
            .find(heading)
            .unwrap_or_else(|| panic!("no {heading}"));
        let rest = &readme[start + heading.len()..];
        let end = rest.find("\n#").unwrap_or(rest.len());
        rest[..end].to_owned()
    }

    /// Words of a README command, split as a shell would (double quotes group), with optional
    /// parts (`[--project]`) given.
    fn shell_words(line: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut word = String::new();
        let mut quoted = false;
        for ch in line.replace(['[', ']'], "").chars() {
            match ch {
                '"' => quoted = !quoted,
                ch if ch.is_whitespace() && !quoted => {
                    if !word.is_empty() {
                        words.push(std::mem::take(&mut word));
                    }
                }
                ch => word.push(ch),
            }
        }
        if !word.is_empty() {
            words.push(word);
        }
        words
    }

    #[test]
    fn every_command_the_readme_shows_parses() {
        let readme = readme();
        // Shell blocks, and the inline commands of "Use it with your agent".
        let mut commands: Vec<String> = readme
            .split("```sh\n")
            .skip(1)
            .filter_map(|block| block.split("```").next())
            .flat_map(str::lines)
            .map(|line| line.split(" #").next().unwrap_or(line).trim().to_owned())
            .filter(|line| line.starts_with("agent-memory "))
            .collect();
        let agents = readme_section(&readme, "### Use it with your agent");
        let flat = agents.replace("\n  ", " ").replace('\n', " ");
        commands.extend(
            flat.split('`')
                .skip(1)
                .step_by(2)
                .filter(|span| span.starts_with("agent-memory "))
                .map(str::to_owned),
        );
        assert!(commands.len() > 12, "{commands:?}");
        let mut failures = Vec::new();
        for command in &commands {
            let words = shell_words(command);
            if let Err(error) = Cli::try_parse_from(&words) {
                failures.push(format!("{command}: {error}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn the_readme_lists_every_command_once() {
        let readme = readme();
        let table = readme_section(&readme, "## CLI");
        let rows: Vec<&str> = table
            .lines()
            .filter(|line| line.starts_with("| `agent-memory "))
            .filter_map(|line| line.split(" | ").next())
            .collect();
        let mut seen = std::collections::BTreeSet::new();
        for row in &rows {
            assert!(seen.insert(*row), "listed twice: {row}");
        }
        for command in Cli::command().get_subcommands() {
            let name = format!("| `agent-memory {}", command.get_name());
            if command.get_name() == "help" {
                continue;
            }
            assert!(
                rows.iter()
                    .any(|row| row.starts_with(&format!("{name} ")) || row == &format!("{name}`")),
                "the README's table has no row for {name}"
            );
        }
    }

    #[test]
    fn the_help_and_the_readme_give_the_same_exit_codes() {
        let readme = readme();
        let table = readme_section(&readme, "### Exit codes");
        let numbers = |text: &str| -> std::collections::BTreeSet<u8> {
            text.split(|ch: char| !ch.is_ascii_digit())
                .filter_map(|word| word.parse().ok())
                .collect()
        };
        let in_readme: Vec<u8> = table
            .lines()
            .filter_map(|line| line.strip_prefix("| "))
            .filter_map(|line| line.split(" |").next())
            .flat_map(numbers)
            .collect();
        let in_help: Vec<u8> = super::EXIT_CODES_HELP
            .lines()
            .skip(1)
            .filter_map(|line| line.split_whitespace().next())
            .filter_map(|word| word.parse().ok())
            .collect();
        assert_eq!(in_readme, [0, 1, 2, 3, 130, 143, 141]);
        assert_eq!(in_help, [0, 1, 2, 3, 130, 141]);
        assert!(super::EXIT_CODES_HELP.contains("143: SIGTERM"));
        // Each code means one thing: the words that define it appear in both, and only there.
        let row = |code: u8| {
            table
                .lines()
                .find(|line| line.starts_with(&format!("| {code} |")))
                .unwrap_or_default()
                .to_owned()
        };
        let help = |code: u8| {
            super::EXIT_CODES_HELP
                .split(&format!("\n  {code} "))
                .nth(1)
                .and_then(|rest| rest.split("\n  1").next())
                .and_then(|rest| rest.split("\n  2").next())
                .and_then(|rest| rest.split("\n  3").next())
                .unwrap_or_default()
                .to_owned()
        };
        for (code, words) in [
            (1, "not found"),
            (1, "`run` finished"),
            (3, "disabled or unavailable"),
            (3, "refused the call"),
        ] {
            assert!(row(code).contains(words), "README {code}: {}", row(code));
            assert!(help(code).contains(words), "--help {code}: {}", help(code));
            let other = if code == 1 { 3 } else { 1 };
            assert!(
                !row(other).contains(words),
                "README {other}: {}",
                row(other)
            );
            assert!(
                !help(other).contains(words),
                "--help {other}: {}",
                help(other)
            );
        }
        assert_eq!(
            super::exit::UNAVAILABLE_OR_REFUSED,
            3,
            "the code the tables give"
        );
    }

    #[test]
    fn the_version_names_the_package_version() {
        let version = Cli::command()
            .get_version()
            .map(str::to_owned)
            .unwrap_or_default();
        assert!(version.starts_with(env!("CARGO_PKG_VERSION")), "{version}");
        // Built from a checkout (as the tests are), it names the commit too.
        let in_checkout = std::process::Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .is_ok_and(|output| output.status.success());
        if in_checkout {
            assert!(version.contains(" (commit "), "{version}");
        }
    }
}
