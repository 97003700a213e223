//! The 200-turn session of `scripts/long.json` in working-memory mode: at the threshold the
//! host commits the older messages into the session's working memory instead of compacting
//! them, and every seam invariant holds as it does after a compaction.

use std::sync::OnceLock;

use memory_protocol::RolloutItem;
use memory_protocol::goal::ThreadGoalStatus;
use reference_host::context::request_text;
use reference_host::host::WORKING_MEMORY_DIR;
use reference_host::{ContextStrategy, HostReport, Seam};
use working_memory::session::{ArchiveStatus, Session, SessionOptions};

use super::long_session;

/// The seven section headings of a working memory, in order.
const SECTIONS: [&str; 7] = [
    "## Session Title",
    "## Current State",
    "## Task & Goals",
    "## Key Facts & Decisions",
    "## Files & Context",
    "## Errors & Corrections",
    "## Open Issues",
];

struct Run {
    report: HostReport,
    home: tempfile::TempDir,
}

fn run() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| {
        let script = long_session::script();
        let home = tempfile::tempdir().unwrap();
        let report =
            super::run_script(&script, home.path(), ContextStrategy::WorkingMemory).unwrap();
        Run { report, home }
    })
}

/// Every seam holds in working-memory mode: tool pairing, every request within the window, the
/// goal and `AGENTS.md` after each commit, project isolation, recall, the rollouts.
#[test]
fn working_memory_mode_breaks_no_seam() {
    let report = &run().report;
    for seam in Seam::ALL {
        assert_eq!(report.count(seam), 0, "{} broke", seam.as_str());
    }
    assert!(report.violations.is_empty(), "{:#?}", report.violations);
    assert!(
        report.commits_failed.is_empty(),
        "{:?}",
        report.commits_failed
    );
}

/// The threshold led to working-memory commits (counted as `compactions`), each one a done
/// archive in the session's folder under the host's home, and no compaction.
#[test]
fn the_threshold_commits_into_the_working_memory() {
    let report = &run().report;
    assert!(
        report.compactions >= 3,
        "only {} commits",
        report.compactions
    );
    assert_eq!(report.compactions_not_applied, 0);
    let sessions = run().home.path().join(WORKING_MEMORY_DIR);
    let mut done = 0;
    for folder in std::fs::read_dir(&sessions).unwrap() {
        let session = Session::open(folder.unwrap().path(), SessionOptions::default()).unwrap();
        for archive in session.archives().unwrap() {
            assert_eq!(archive.status, ArchiveStatus::Done, "{archive:?}");
            done += 1;
        }
    }
    assert_eq!(done, report.compactions);
    // Each commit is in the rollout as a `compacted` line holding the working memory.
    let compacted: Vec<String> = report
        .rollouts
        .iter()
        .flat_map(|path| {
            memory_transcript::read_rollout_path(path, &Default::default())
                .unwrap()
                .lines
        })
        .filter_map(|line| match line.item {
            RolloutItem::Compacted(compacted) => Some(compacted.message),
            _ => None,
        })
        .collect();
    assert_eq!(compacted.len() as u64, report.compactions);
    assert!(
        compacted
            .iter()
            .all(|document| document.contains(SECTIONS[1]))
    );
}

/// The same script reaches the same end as in compaction mode: the same requests, the goal in
/// the same status (complete), the same memories.
#[test]
fn working_memory_mode_ends_where_compaction_mode_does() {
    let report = &run().report;
    let compaction = &long_session::run().report;
    assert_eq!(report.goal, compaction.goal);
    assert_eq!(report.goal, Some(ThreadGoalStatus::Complete));
    assert_eq!(report.requests, compaction.requests);
    assert_eq!(report.memories, compaction.memories);
    assert_eq!(report.citations_recorded, compaction.citations_recorded);
    assert_eq!(
        report.line(),
        format!(
            "HOST requests={} compactions={} goal=complete memories={} violations=0",
            report.requests, report.compactions, report.memories
        )
    );
}

/// The request after a commit carries the working memory (its seven sections, in order), the
/// goal's objective and remaining budget, the pinned `AGENTS.md` and the messages kept live.
#[test]
fn the_request_after_a_commit_carries_the_working_memory_and_the_goal() {
    let request = run().report.after_third_compaction.as_ref().unwrap();
    let mut from = 0;
    for section in SECTIONS {
        let at = request.system[from..]
            .find(section)
            .unwrap_or_else(|| panic!("{section} is missing: {}", request.system));
        from += at + section.len();
    }
    let text = request_text(request);
    assert!(text.contains("<objective>"), "{text}");
    assert!(
        text.contains("Port the ledger module to the new rounding API"),
        "{text}"
    );
    assert!(text.contains("Tokens remaining:"), "{text}");
    assert!(text.contains("Money is integer cents; never use floats for it."));
    assert!(!request.messages.is_empty());
}

#[test]
fn the_strategy_is_named_compaction_or_working_memory() {
    for strategy in [ContextStrategy::Compaction, ContextStrategy::WorkingMemory] {
        assert_eq!(strategy.as_str().parse::<ContextStrategy>(), Ok(strategy));
    }
    assert!("summary".parse::<ContextStrategy>().is_err());
    assert_eq!(ContextStrategy::default(), ContextStrategy::Compaction);
}
