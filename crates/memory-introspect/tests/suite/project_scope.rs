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

/// Session summaries and raw memories of both projects, as phase 2 leaves them.
fn with_sessions(home: &Home) {
    home.write(
        "rollout_summaries/2026-03-13-alpha.md",
        "thread_id: a-1\ncwd: /work/alpha/tools\n\n# Release checklist automation\n\n\
         - The release label job reads the changelog before tagging.\n",
    );
    home.write(
        "rollout_summaries/2026-03-12-beta.md",
        "thread_id: b-1\ncwd: /work/beta\n\n# Scheduler flake\n\n\
         - The scheduler tick test fails when the release clock drifts.\n",
    );
    home.write(
        "raw_memories.md",
        "# Raw Memories\n\n## Thread `a-1`\ncwd: /work/alpha/tools\n\n\
         - The release label job is slow on Mondays.\n\n\
         ## Thread `b-1`\ncwd: /work/beta\n\n- The release clock of beta is UTC.\n",
    );
}

/// codex #17496 for recall: a message in project B recalls B's passages and global ones,
/// never A's (its handbook group, its session summary, its raw memories, its note); A's are
/// still found by search, after B's.
#[test]
fn recall_in_project_b_leaves_project_as_passages_out_and_search_ranks_bs_first() {
    let home = two_projects();
    with_sessions(&home);
    home.write(
        "notes/2026-03-14-alpha.md",
        "# Agent note\ncwd: /work/alpha\n\nThe release label needs a signed tag.\n",
    );
    let beta = home.introspector().with_cwd(Path::new(BETA)).unwrap();
    let recall = beta.recall("release label clock", 10).unwrap();
    assert!(recall.hits > 0, "{recall:?}");
    for passage in &recall.passages {
        assert!(
            !passage.contains("alpha") && !passage.starts_with("MEMORY.md:"),
            "A's passage {passage} recalled in B: {}",
            recall.text
        );
    }
    assert!(recall.text.contains("release clock"), "{}", recall.text);
    assert!(
        !recall.text.contains("release label job"),
        "{}",
        recall.text
    );
    assert!(!recall.text.contains("signed tag"), "{}", recall.text);
    assert!(
        !recall.text.contains("Never push to main"),
        "{}",
        recall.text
    );

    // Unscoped, the same message recalls A's passages too.
    let everywhere = home
        .introspector()
        .recall("release label clock", 10)
        .unwrap();
    assert!(
        everywhere.text.contains("release label job"),
        "{}",
        everywhere.text
    );

    // In A, A's passages are recalled and B's left out.
    let alpha = home
        .introspector()
        .with_cwd(Path::new(ALPHA).join("tools").as_path())
        .unwrap();
    let recall = alpha.recall("release label clock", 10).unwrap();
    assert!(recall.text.contains("release label job"), "{}", recall.text);
    assert!(!recall.text.contains("release clock"), "{}", recall.text);

    // Search finds every project's passages, the working directory's project first.
    let found = beta
        .search(&MemorySearchRequest {
            query: "release".to_owned(),
            max_results: Some(50),
            ..MemorySearchRequest::default()
        })
        .unwrap();
    let paths: Vec<&str> = found.hits.iter().map(|hit| hit.path.as_str()).collect();
    let first_alpha = paths
        .iter()
        .position(|path| path.contains("alpha") || *path == "MEMORY.md")
        .expect("A's passages are found by search");
    assert!(paths[..first_alpha].contains(&"rollout_summaries/2026-03-12-beta.md"));
    assert!(
        paths[first_alpha..]
            .iter()
            .all(|path| !path.contains("beta")),
        "{paths:?}"
    );
}
