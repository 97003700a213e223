//! Project scope: the block for a working directory holds the global profile and that
//! project's memories; another project's are left to search (codex #17496, #23658: a rule
//! learned in project A reached every session in project B).

use std::path::Path;

use memory_introspect::BlockOptions;
use memory_protocol::introspect::{MemoryNoteRequest, MemorySearchRequest};

use super::Home;

const ALPHA: &str = "/work/alpha";
const BETA: &str = "/work/beta";

/// A memory root after sessions in two projects; alpha has a rule of its own.
fn two_projects() -> Home {
    let home = Home::new();
    home.write(
        "memory_summary.md",
        "v1\n## User Profile\nWorks on alpha (Rust) and beta (Go); prefers small commits.\n\n\
         ## User preferences\n- Keep commit messages under 72 characters.\n\
         - Never push to main; open a pull request with the release label. (alpha)\n\n\
         ## General Tips\n- In beta, these passed: `go test ./...`\n\n\
         ## What's in Memory\n### alpha (`/work/alpha`)\n#### 2026-03-13\n\
         - Release checklist automation (success); keywords: release, label\n\n\
         ### beta (`/work/beta`)\n#### 2026-03-12\n- Scheduler flake (success); keywords: scheduler\n",
    );
    home.write(
        "MEMORY.md",
        "# Task Group: alpha\nscope: work in `/work/alpha`, 1 task(s)\n\
         applies_to: cwd=/work/alpha; reuse_rule=reuse for work in this folder\n\n\
         ## Task 1: Release checklist automation\n\n## User preferences\n\
         - Never push to main; open a pull request with the release label. [Task 1]\n\n\
         # Task Group: beta\nscope: work in `/work/beta`, 1 task(s)\n\
         applies_to: cwd=/work/beta; reuse_rule=reuse for work in this folder\n\n\
         ## Task 1: Scheduler flake\n",
    );
    home
}

#[test]
fn project_as_rule_is_absent_from_project_bs_block_and_found_by_search() {
    let home = two_projects();
    let beta = home
        .introspector()
        .with_cwd(Path::new(BETA).join("cmd/tick").as_path())
        .unwrap();
    let block = beta.render_block(&BlockOptions::default()).unwrap().text;
    assert!(!block.contains("Never push to main"), "{block}");
    assert!(!block.contains("Release checklist"), "{block}");
    assert!(block.contains("prefers small commits"), "{block}");
    assert!(
        block.contains("Keep commit messages under 72 characters"),
        "{block}"
    );
    assert!(block.contains("`go test ./...`"), "{block}");
    assert!(block.contains("Scheduler flake"), "{block}");
    assert!(
        block.contains("lines about 1 other project(s) left out, memory_search finds them]"),
        "{block}"
    );

    let found = beta
        .search(&MemorySearchRequest {
            query: "push to main".to_owned(),
            ..MemorySearchRequest::default()
        })
        .unwrap();
    assert!(
        found
            .hits
            .iter()
            .any(|hit| hit.snippet.contains("push to main")),
        "{found:?}"
    );

    let alpha = home.introspector().with_cwd(Path::new(ALPHA)).unwrap();
    let block = alpha.render_block(&BlockOptions::default()).unwrap().text;
    assert!(block.contains("Never push to main"), "{block}");
    assert!(block.contains("Release checklist"), "{block}");
    assert!(!block.contains("Scheduler flake"), "{block}");
    assert!(!block.contains("go test"), "{block}");
}

#[test]
fn without_a_working_directory_the_block_is_the_whole_summary() {
    let home = two_projects();
    let block = home
        .introspector()
        .render_block(&BlockOptions::default())
        .unwrap()
        .text;
    assert!(block.contains("Never push to main"), "{block}");
    assert!(block.contains("Scheduler flake"), "{block}");
    assert!(!block.contains("left out"), "{block}");
}

#[test]
fn a_note_saved_in_one_project_stays_out_of_the_others_block() {
    let home = two_projects();
    let alpha = home.introspector().with_cwd(Path::new(ALPHA)).unwrap();
    let saved = alpha
        .note(&MemoryNoteRequest {
            text: "The alpha release job needs the SIGNING_KEY secret".to_owned(),
            topic: None,
            ..MemoryNoteRequest::default()
        })
        .unwrap();
    let text = std::fs::read_to_string(home.root().join(&saved.path)).unwrap();
    assert!(text.contains("\ncwd: /work/alpha\n"), "{text}");

    let in_alpha = alpha.render_block(&BlockOptions::default()).unwrap().text;
    assert!(in_alpha.contains("SIGNING_KEY"), "{in_alpha}");
    let beta = home.introspector().with_cwd(Path::new(BETA)).unwrap();
    let in_beta = beta.render_block(&BlockOptions::default()).unwrap().text;
    assert!(!in_beta.contains("SIGNING_KEY"), "{in_beta}");
    let unscoped = home
        .introspector()
        .render_block(&BlockOptions::default())
        .unwrap()
        .text;
    assert!(unscoped.contains("SIGNING_KEY"), "{unscoped}");
    let found = beta
        .search(&MemorySearchRequest {
            query: "signing key".to_owned(),
            ..MemorySearchRequest::default()
        })
        .unwrap();
    assert!(
        found.hits.iter().any(|hit| hit.path == saved.path),
        "{found:?}"
    );
}
