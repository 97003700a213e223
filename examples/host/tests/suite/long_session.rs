//! The 200-turn session of `scripts/long.json`, run once; each user report the issue lists is
//! one named test over that run.

use std::sync::OnceLock;

use memory_protocol::RolloutItem;
use memory_protocol::goal::ThreadGoalStatus;
use reference_host::context::request_text;
use reference_host::long_script::{ALPHA_FACT, BETA_FACT};
use reference_host::{ContextStrategy, HostReport, Script, Seam};

pub(super) struct Run {
    pub(super) report: HostReport,
    // Keeps the home alive while the tests read the rollouts.
    _home: tempfile::TempDir,
}

pub(super) fn script() -> Script {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/long.json");
    Script::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The compaction-mode run (the default), shared with the working-memory tests.
pub(super) fn run() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| {
        let script = script();
        let home = tempfile::tempdir().unwrap();
        let report = super::run_script(&script, home.path(), ContextStrategy::Compaction).unwrap();
        Run {
            report,
            _home: home,
        }
    })
}

fn assert_none(seam: Seam) {
    let report = &run().report;
    let broken: Vec<_> = report
        .violations
        .iter()
        .filter(|v| v.seam == seam)
        .collect();
    assert!(broken.is_empty(), "{} broke: {broken:#?}", seam.as_str());
}

/// codex #29811, #19910, #31659: after a compaction every request holds the active goal's
/// objective and remaining budget.
#[test]
fn codex_29811_goal_objective_and_budget_in_every_request_after_compaction() {
    let report = &run().report;
    assert!(
        report.compactions >= 4,
        "only {} compactions",
        report.compactions
    );
    assert_none(Seam::GoalAfterCompaction);
    let after = request_text(report.after_third_compaction.as_ref().unwrap());
    assert!(after.contains("<objective>"), "{after}");
    assert!(after.contains("Tokens remaining:"), "{after}");
}

/// claude-code #4017, #5731, #24572: the pinned AGENTS.md is in every request, compactions
/// included.
#[test]
fn claude_code_4017_agents_md_in_every_request() {
    assert_none(Seam::PinnedInstructions);
    let after = request_text(run().report.after_third_compaction.as_ref().unwrap());
    assert!(after.contains("Money is integer cents; never use floats for it."));
}

/// pi #4570: no tool result without its call and no call without its result, in any request.
#[test]
fn pi_4570_no_orphan_call_or_result_in_any_request() {
    assert!(run().report.requests > 400);
    assert_none(Seam::ToolPairing);
}

/// codex #40619: every request fits the window, and no compaction leaves the context larger.
#[test]
fn codex_40619_every_request_fits_and_compaction_never_grows_the_context() {
    assert_none(Seam::FitsWindow);
    assert_none(Seam::CompactionShrinks);
}

/// The modified-files list a compaction carries only grows within a session.
#[test]
fn modified_files_list_only_grows() {
    assert_none(Seam::ModifiedFilesGrow);
}

/// codex #17496: project A's memory never reaches project B's requests (nor B's A's).
#[test]
fn codex_17496_project_a_memory_absent_from_project_b_requests() {
    let script = script();
    assert!(
        script.projects["alpha"]
            .private_facts
            .contains(&ALPHA_FACT.to_owned())
    );
    assert!(
        script.projects["beta"]
            .private_facts
            .contains(&BETA_FACT.to_owned())
    );
    assert_none(Seam::ProjectIsolation);
}

/// codex #29033: a fact the first session established is recalled into the later session in
/// the same project.
#[test]
fn codex_29033_a_second_session_recalls_the_first_sessions_fact() {
    let script = script();
    assert_eq!(
        script.sessions[2].expect_recalled,
        vec![ALPHA_FACT.to_owned()]
    );
    // The later session's own words never carry the fact: only recall can bring it.
    let own_text = serde_json::to_string(&script.sessions[2].turns).unwrap();
    assert!(!own_text.contains(ALPHA_FACT));
    assert_none(Seam::Recall);
    assert!(run().report.memories >= 1);
}

/// The citation block in a final answer is recorded as a use of the cited session's memory.
#[test]
fn a_citation_in_a_final_answer_is_recorded_as_a_memory_use() {
    assert_eq!(run().report.citations_recorded, 1);
}

/// The rollouts the host wrote read back with no bad line and no unknown line type, and the
/// write path registered them.
#[test]
fn the_rollout_the_host_wrote_reads_back_with_no_unknown_lines() {
    assert_none(Seam::RolloutReadBack);
    let report = &run().report;
    assert_eq!(report.rollouts.len(), 3);
    for path in &report.rollouts {
        let read = memory_transcript::read_rollout_path(path, &Default::default()).unwrap();
        assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
        assert!(read.lines.len() > 10);
        assert!(
            !read
                .lines
                .iter()
                .any(|line| matches!(line.item, RolloutItem::Other(_)))
        );
    }
}

/// The run ends with the one summary line, the goal completed and no violation at all.
#[test]
fn the_run_ends_with_its_line_the_goal_complete_and_no_violations() {
    let report = &run().report;
    assert_eq!(report.goal, Some(ThreadGoalStatus::Complete));
    assert!(report.violations.is_empty(), "{:#?}", report.violations);
    let line = report.line();
    assert!(line.starts_with("HOST requests="), "{line}");
    assert_eq!(
        line,
        format!(
            "HOST requests={} compactions={} goal=complete memories={} violations=0",
            report.requests, report.compactions, report.memories
        )
    );
}
