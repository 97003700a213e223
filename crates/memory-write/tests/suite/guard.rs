//! The consolidation guard on realistic MEMORY.md rewrites.

// Test helpers outside #[test] functions may unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memory_protocol::consolidation::ConsolidationOutput;
use memory_transcript::anchors::missing_anchors;
use memory_write::consolidation_guard::{UNCONSOLIDATED_HEADING, guard_consolidation};

const OLD: &str = "# Task Group: agent-memory write path\n\
scope: crates/memory-write\n\
\n\
## Task 1 (2025-05-02)\n\
- Run `cargo test -p memory-write` before committing.\n\
- The lease lives in src/store/phase_two.rs; see StateStore::claim_phase_two.\n\
- Set OPENAI_API_KEY only for the http client.\n";

fn output(memory_md: &str, obsolete: &[&str]) -> ConsolidationOutput {
    ConsolidationOutput {
        memory_md: memory_md.to_owned(),
        memory_summary_md: "v1\nsummary".to_owned(),
        obsolete: obsolete.iter().map(|entry| (*entry).to_owned()).collect(),
    }
}

#[test]
fn a_reorganized_rewrite_that_keeps_every_anchor_is_accepted() {
    let rewrite = "# Task Group: crates/memory-write\n\
        On 2025-05-02: tests run with `cargo test -p memory-write`; lease code is in \
        src/store/phase_two.rs (StateStore::claim_phase_two). OPENAI_API_KEY is for http.\n\
        ## New task\n- use --json for scripts\n";
    let verdict = guard_consolidation(
        OLD,
        &output(rewrite, &[]),
        "new material",
        &Default::default(),
    );
    assert!(verdict.accepted(), "{:?}", verdict.missing);
    assert_eq!(verdict.memory_md, rewrite);
}

#[test]
fn a_rewrite_that_drops_anchors_silently_is_rejected_and_keeps_the_old_text() {
    let lossy = "# Task Group: memory-write\nTests: `cargo test -p memory-write`.\n";
    let verdict = guard_consolidation(
        OLD,
        &output(lossy, &[]),
        "### Thread `t9`\n\nnew fact",
        &Default::default(),
    );
    assert_eq!(
        verdict.missing,
        vec![
            "2025-05-02",
            "OPENAI_API_KEY",
            "StateStore::claim_phase_two",
            "crates/memory-write",
            "src/store/phase_two.rs",
        ]
    );
    assert!(verdict.memory_md.starts_with(OLD.trim_end()));
    assert!(verdict.memory_md.contains(UNCONSOLIDATED_HEADING));
    assert!(verdict.memory_md.trim_end().ends_with("new fact"));
}

#[test]
fn anchors_marked_obsolete_may_go() {
    let lossy = "# Task Group: memory-write\nTests: `cargo test -p memory-write`.\n\
        Scope crates/memory-write since 2025-05-02.\n";
    let obsolete = [
        "src/store/phase_two.rs",
        "`StateStore::claim_phase_two`",
        " OPENAI_API_KEY ",
    ];
    let verdict = guard_consolidation(
        OLD,
        &output(lossy, &obsolete),
        "unused",
        &Default::default(),
    );
    assert!(verdict.accepted(), "{:?}", verdict.missing);
    // A partial obsolete list is not enough.
    assert_eq!(
        missing_anchors(OLD, lossy, &["OPENAI_API_KEY".to_owned()]),
        vec!["StateStore::claim_phase_two", "src/store/phase_two.rs"]
    );
}

#[test]
fn the_first_pass_has_nothing_to_lose() {
    let verdict = guard_consolidation("", &output("# Memory\n", &[]), "x", &Default::default());
    assert!(verdict.accepted());
}
