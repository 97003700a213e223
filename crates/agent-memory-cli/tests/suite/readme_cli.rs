//! The README's commands and snippets, run as written: the install line, the quick start with
//! its throw-away home, the codex MCP registration (started as codex starts it), the Claude Code
//! line, and the Rust host (the code at the end of this file is the README's block, compared
//! line by line, compiled and run here).

use std::path::PathBuf;
use std::process::Command;

use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn readme() -> String {
    std::fs::read_to_string(workspace().join("README.md")).unwrap()
}

/// The README's "Use it with your agent" section.
fn agent_section() -> String {
    let readme = readme();
    let start = readme.find("### Use it with your agent").unwrap();
    let rest = &readme[start + 1..];
    let end = rest
        .find("\n## ")
        .into_iter()
        .chain(rest.find("\n### "))
        .chain(rest.find("\n**What gets remembered.**"))
        .min()
        .unwrap_or(rest.len());
    rest[..end].to_owned()
}

/// The fenced blocks of language `lang` in `text`, without the indentation of their fence (a
/// block inside a list item is indented).
fn fenced(text: &str, lang: &str) -> Vec<String> {
    let opening = format!("```{lang}");
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed != opening {
            continue;
        }
        let indent = line.len() - trimmed.len();
        let mut block = String::new();
        for line in lines.by_ref() {
            if line.trim_start() == "```" {
                break;
            }
            block.push_str(line.get(indent..).unwrap_or(""));
            block.push('\n');
        }
        blocks.push(block);
    }
    blocks
}

/// The inline code spans of `text` (between single backticks), with line breaks as spaces.
fn code_spans(text: &str) -> Vec<String> {
    let flat = text.replace("\n  ", " ").replace('\n', " ");
    flat.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_install_line_names_the_folder_of_this_binary() {
    let readme = readme();
    let line = readme
        .lines()
        .find(|line| line.starts_with("cargo install --path "))
        .unwrap();
    let folder = line.trim_start_matches("cargo install --path ").trim();
    let manifest: toml::Table = toml::from_str(
        &std::fs::read_to_string(workspace().join(folder).join("Cargo.toml")).unwrap(),
    )
    .unwrap();
    let bins: Vec<&str> = manifest["bin"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|bin| bin["name"].as_str())
        .collect();
    assert_eq!(bins, ["agent-memory"], "{folder}");
    let built = Path::new(env!("CARGO_BIN_EXE_agent-memory"));
    assert_eq!(built.file_stem().unwrap(), "agent-memory");
    assert!(
        readme.contains("Install the `agent-memory` binary"),
        "the README names the binary it installs"
    );
}

#[test]
fn the_quick_start_runs_as_written_and_leaves_the_real_home_alone() {
    let block = fenced(&readme(), "sh")
        .into_iter()
        .find(|block| block.contains("agent-memory run examples/rollouts"))
        .unwrap();
    assert!(block.contains("--home \"$home\""), "{block}");
    // The installed binary is this build's; the user's home is a fresh folder that must stay
    // untouched.
    let user = tempfile::tempdir().unwrap();
    // `mktemp -d` makes the throw-away home in here, removed with the test.
    let scratch = tempfile::tempdir().unwrap();
    let binaries = Path::new(env!("CARGO_BIN_EXE_agent-memory"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        binaries.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &block])
        .current_dir(workspace())
        .env("PATH", path)
        .env("HOME", user.path())
        .env("TMPDIR", scratch.path())
        .env_remove("AGENT_MEMORY_HOME")
        .env_remove("AGENT_MEMORY_STORE")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("state: ready"), "{stdout}");
    assert!(
        stdout.lines().any(|line| line.contains("cargo test")),
        "search finds the words: {stdout}"
    );
    let left: Vec<_> = std::fs::read_dir(user.path()).unwrap().collect();
    assert!(left.is_empty(), "the real home got {left:?}");
}

/// The codex `[mcp_servers]` table: its command is this binary, and started with its args the
/// way codex starts it, it answers `initialize` and lists the memory tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_codex_mcp_registration_starts_a_server_that_lists_the_memory_tools() {
    let section = agent_section();
    let tables = fenced(&section, "toml");
    assert_eq!(tables.len(), 1, "{section}");
    let config: toml::Table = toml::from_str(&tables[0]).unwrap();
    let server = config["mcp_servers"]["agent-memory"].as_table().unwrap();
    assert_eq!(server["command"].as_str(), Some("agent-memory"));
    let args: Vec<String> = server["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|arg| arg.as_str().unwrap().to_owned())
        .collect();

    let home = tempfile::tempdir().unwrap();
    let transport = TokioChildProcess::new(
        tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-memory")).configure(|command| {
            command.args(&args).env("AGENT_MEMORY_HOME", home.path());
        }),
    )
    .unwrap();
    let client = ().serve(transport).await.unwrap();
    let info = client.peer_info().unwrap();
    assert!(info.capabilities.tools.is_some(), "{info:?}");
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "memory_status",
            "memory_list",
            "memory_read",
            "memory_search",
            "memory_note"
        ]
    );
    client.cancel().await.unwrap();
}

/// `claude mcp add NAME -- COMMAND ARGS...` registers the same server codex gets.
#[test]
fn the_claude_code_line_registers_the_same_server() {
    let section = agent_section();
    let spans = code_spans(&section);
    let line = spans
        .iter()
        .find(|span| span.starts_with("claude mcp add"))
        .unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    let config: toml::Table = toml::from_str(&fenced(&section, "toml")[0]).unwrap();
    let (name, server) = config["mcp_servers"]
        .as_table()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    let mut expected = vec!["claude", "mcp", "add", name.as_str(), "--"];
    expected.push(server["command"].as_str().unwrap());
    expected.extend(
        server["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|arg| arg.as_str().unwrap()),
    );
    assert_eq!(words, expected, "{line}");
}

/// The README's Rust block is the code after the marker below, line for line.
#[test]
fn the_rust_host_in_the_readme_is_the_code_this_test_runs() {
    let blocks = fenced(&agent_section(), "rust");
    assert_eq!(blocks.len(), 1);
    let this = include_str!("readme_cli.rs");
    let marker = "// The README's block starts here.\n";
    let code = &this[this.find(marker).unwrap() + marker.len()..];
    let readme: Vec<&str> = blocks[0].lines().collect();
    let compiled: Vec<&str> = code.lines().collect();
    assert_eq!(readme, compiled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_host_remembers_a_session_and_recalls_it_in_the_next() {
    let home = tempfile::tempdir().unwrap();
    let transcripts = workspace().join("examples/rollouts");
    let mut prompts = Vec::new();
    let question = "how do I deploy harbor-web?";
    let cited = session(home.path(), &transcripts, &[question], |prompt| {
        prompts.push(prompt.to_owned());
        "Deployed.".to_owned()
    })
    .await
    .unwrap();
    assert_eq!(cited, 0);
    assert!(prompts[0].contains("[memory: empty"), "{}", prompts[0]);
    let handbook = std::fs::read_to_string(home.path().join("memories/MEMORY.md")).unwrap();
    let start = handbook
        .lines()
        .position(|line| line.contains("019a5210-33c8-7e10-a4d1-92b7f0c4d002"))
        .unwrap()
        + 1;

    // The next session: the prompt holds what the first one left, and a citation counts.
    let reply = format!(
        "Run the dry run first.\n\n<memory-citation>\n<citation_entries>\n\
         MEMORY.md:{start}-{start}|note=[deploy rule]\n</citation_entries>\n\
         <rollout_ids>\n019a5210-33c8-7e10-a4d1-92b7f0c4d002\n</rollout_ids>\n</memory-citation>\n"
    );
    let mut prompts = Vec::new();
    let cited = session(home.path(), &transcripts, &[question], |prompt| {
        prompts.push(prompt.to_owned());
        reply.clone()
    })
    .await
    .unwrap();
    assert_eq!(cited, 1);
    let prompt = &prompts[0];
    assert!(
        prompt.contains("<memory source=\"agent-memory\">"),
        "{prompt}"
    );
    assert!(prompt.contains("Don't run the real deploy"), "{prompt}");
    assert!(prompt.contains("<memory-recall>"), "{prompt}");
    assert!(prompt.contains("--- raw_memories.md:"), "{prompt}");
    assert!(prompt.ends_with(question), "{prompt}");
}

// The README's block starts here.
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_memory::introspect::{BlockOptions, IntrospectConfig, Introspector};
use agent_memory::offline::OfflineEngine;
use agent_memory::protocol::{ContextWindow, ContextWindowSource};
use agent_memory::write::citations::record_citations;
use agent_memory::write::config::MemoriesConfig;
use agent_memory::write::memory_root::MemoryRoot;
use agent_memory::write::runner::{RolloutFolder, RunLimits, RunModels, RunOptions, Runner};
use agent_memory::write::store_selection::{StoreSelection, open_store};

/// One session: `ask` sends a prompt to your model and returns its reply; `transcripts` is
/// the folder your host writes its sessions to (codex rollout JSONL). Returns how many
/// memories the replies cited.
async fn session(
    home: &Path,
    transcripts: &Path,
    messages: &[&str],
    mut ask: impl FnMut(&str) -> String,
) -> anyhow::Result<usize> {
    let memory = Introspector::open(home, IntrospectConfig::default())?;
    let store = open_store(home, &StoreSelection::default()).await?;
    let root = MemoryRoot::under_home(home);
    let mut cited = 0;
    for message in messages {
        // Each turn: the memory block, and the recall for this message, before it.
        let block = memory.render_block(&BlockOptions::default())?;
        let recall = memory.recall(message, 3)?;
        let reply = ask(&format!("{}\n\n{}\n\n{message}", block.text, recall.text));
        // After the reply: the memories it cited rank higher at the next consolidation.
        let used = record_citations(store.as_ref(), &root, &reply).await?;
        cited += used.recorded;
    }
    // After the session: extract memories from the transcripts, then consolidate.
    let config = MemoriesConfig::default();
    let runner = Runner::prepare(home, &StoreSelection::default(), &config, transcripts).await?;
    let engine = Arc::new(OfflineEngine::new());
    let models = RunModels {
        extract: engine.clone(),
        consolidate: engine,
        context_window: ContextWindow {
            tokens: None,
            source: ContextWindowSource::Default,
        },
    };
    let options = RunOptions {
        root,
        limits: RunLimits::new(RolloutFolder::Given, None, None, &config),
        consolidation_wait: Duration::from_secs(30),
        retry_failed: false,
    };
    runner.run(&models, &options, None).await?;
    Ok(cited)
}
