//! Token budgets of what is injected every turn, counted with o200k.

use memory_introspect::{BlockOptions, HostEnvironment, IntrospectConfig};
use memory_protocol::introspect::{MemoryMode, MemoryScope};
use memory_sanitize::{TokenCounter, o200k};

use super::*;

const HEADER_BUDGET: usize = 80;
const STATE_LINE_BUDGET: usize = 40;
const ENVIRONMENT_BUDGET: usize = 60;
/// A typical root; the alias is what a user would configure.
const ROOT_ALIAS: &str = "/home/alice/.agent-memory/memories";

fn config() -> IntrospectConfig {
    IntrospectConfig {
        root_alias: Some(ROOT_ALIAS.to_owned()),
        ..IntrospectConfig::default()
    }
}

/// The header: the three lines after the fence's opening line.
fn header_of(block: &str) -> String {
    let start = block.find("<memory source=\"agent-memory\">\n").unwrap();
    block[start..]
        .lines()
        .skip(1)
        .take(3)
        .map(|line| format!("{line}\n"))
        .collect()
}

#[test]
fn the_header_fits_80_tokens_in_every_mode_and_scope() {
    let home = Home::new();
    home.consolidated();
    for (mode, scope, tools) in [
        (MemoryMode::Writable, MemoryScope::Global, true),
        (MemoryMode::ReadOnly, MemoryScope::Project, true),
        (MemoryMode::Writable, MemoryScope::Project, false),
    ] {
        let block = home
            .with_config(IntrospectConfig {
                mode,
                scope,
                tools,
                ..config()
            })
            .render_block(&BlockOptions::default())
            .unwrap();
        let header = header_of(&block.text);
        assert!(
            header.starts_with("Memory summary (") && header.contains(". Last written "),
            "{header}"
        );
        let tokens = o200k().count(&header);
        println!("header {mode:?} {scope:?} tools={tools}: {tokens} tokens");
        assert!(tokens <= HEADER_BUDGET, "{tokens} tokens:\n{header}");
    }
    // Over budget: four-digit numbers and a three-digit percentage.
    home.write(
        "memory_summary.md",
        format!("v1\n{}", "ledger parser tests pass. ".repeat(600)),
    );
    let block = home
        .with_config(IntrospectConfig {
            scope: MemoryScope::Project,
            ..config()
        })
        .render_block(&BlockOptions::default())
        .unwrap();
    let header = header_of(&block.text);
    assert!(header.contains("/2500 tokens)"), "{header}");
    assert!(!header.starts_with("Memory summary (0%"), "{header}");
    let tokens = o200k().count(&header);
    println!("header over budget: {tokens} tokens\n{header}");
    assert!(tokens <= HEADER_BUDGET, "{tokens} tokens:\n{header}");
}

#[test]
fn each_state_line_fits_40_tokens() {
    let home = Home::new();
    // Empty.
    let empty = home
        .with_config(config())
        .render_block(&BlockOptions::default())
        .unwrap();
    let mut lines = vec![
        empty
            .text
            .lines()
            .find(|l| l.starts_with("[memory: empty]"))
            .unwrap()
            .to_owned(),
    ];
    // Disabled, with the neutral line configured.
    let disabled = home
        .with_config(IntrospectConfig {
            enabled: false,
            disabled_line: true,
            ..config()
        })
        .render_block(&BlockOptions::default())
        .unwrap();
    lines.push(disabled.text.lines().nth(1).unwrap().to_owned());
    // Degraded: a session summary that is not UTF-8.
    home.consolidated();
    home.write(
        "rollout_summaries/2026-03-15T10-00-00-abcd-bad.md",
        b"\xff\xfe",
    );
    let degraded = home
        .with_config(config())
        .render_block(&BlockOptions::default())
        .unwrap();
    lines.push(
        degraded
            .text
            .lines()
            .find(|l| l.starts_with("[memory: degraded]"))
            .unwrap()
            .to_owned(),
    );
    // Unavailable: the summary is not UTF-8.
    home.write("memory_summary.md", b"v1\n\xff bad");
    let unavailable = home
        .with_config(config())
        .render_block(&BlockOptions::default())
        .unwrap();
    lines.push(unavailable.text.lines().nth(1).unwrap().to_owned());
    for line in lines {
        let tokens = o200k().count(&line);
        println!("{tokens}: {line}");
        assert!(line.starts_with("[memory: "), "{line}");
        assert!(tokens <= STATE_LINE_BUDGET, "{tokens} tokens: {line}");
    }
}

#[test]
fn the_environment_block_fits_60_tokens() {
    let home = Home::new();
    home.consolidated();
    let options = BlockOptions {
        environment: Some(HostEnvironment {
            host: "codex".to_owned(),
            host_state_dir: "/home/alice/.codex".to_owned(),
            project_root: "/home/alice/src/ledger".to_owned(),
            os: "linux".to_owned(),
            shell: Some("bash".to_owned()),
        }),
        ..BlockOptions::default()
    };
    let block = home.with_config(config()).render_block(&options).unwrap();
    let start = block.text.find("<environment>").unwrap();
    let environment = &block.text[start..];
    assert!(environment.ends_with("</environment>\n"), "{environment}");
    let tokens = o200k().count(environment);
    println!("environment: {tokens} tokens\n{environment}");
    assert!(
        tokens <= ENVIRONMENT_BUDGET,
        "{tokens} tokens:\n{environment}"
    );
}
