use proptest::prelude::*;

use super::*;
use memory_md::MAX_MEMORY_MD_BYTES;
use memory_protocol::consolidation::{ConsolidationNote, SelectionChanges};
use memory_sanitize::{TokenCounter, o200k};

fn record(id: &str, cwd: &str, at: i64, raw: &str) -> StageOneOutputRecord {
    StageOneOutputRecord {
        thread_id: id.to_owned(),
        cwd: Some(cwd.to_owned()),
        rollout_path: format!("/r/{id}.jsonl"),
        git_branch: None,
        raw_memory: raw.to_owned(),
        rollout_summary: format!("# Summary {id}"),
        rollout_slug: None,
        source_updated_at: at,
        generated_at: at,
        usage_count: 0,
        last_used_at: None,
        selected: false,
    }
}

fn input(memory_md: &str, selected: Vec<StageOneOutputRecord>) -> ConsolidationInput {
    let rollout_summary_files = selected
        .iter()
        .map(|r| {
            (
                r.thread_id.clone(),
                format!("rollout_summaries/{}.md", r.thread_id),
            )
        })
        .collect();
    ConsolidationInput {
        memory_md: memory_md.to_owned(),
        memory_summary_md: String::new(),
        selected,
        changes: SelectionChanges::default(),
        rollout_summary_files,
        summary_token_budget: 2_500,
        notes: Vec::new(),
    }
}

fn raw(task: &str, outcome: &str, pref: &str, lesson: &str, keywords: &str) -> String {
    format!(
        "---\ndescription: {task}\ntask: {task}\ntask_group: repo\ntask_outcome: {outcome}\n\
         cwd: /x\nkeywords: {keywords}\n---\n\n### Task 1: {task}\ntask_outcome: {outcome}\n\n\
         Preference signals:\n- {pref}\n\nFailures and how to do differently:\n- {lesson}\n"
    )
}

const SHARED: &str = "Always run `cargo fmt --all` before committing in this repo.";

#[test]
fn task_groups_index_every_task_and_merge_repeated_items() {
    let selected = vec![
        record(
            "t1",
            "/repo/a",
            1_750_000_000,
            &raw(
                "Fix the build",
                "success",
                SHARED,
                "`make` failed; it passed after `make clean`.",
                "cargo, build",
            ),
        ),
        record(
            "t2",
            "/repo/a",
            1_760_000_000,
            &raw(
                "Add the parser test",
                "partial",
                SHARED,
                "`cargo test` still failed at the end.",
                "parser",
            ),
        ),
        record(
            "t3",
            "/repo/b",
            1_755_000_000,
            "note about b\n- use the b helper",
        ),
    ];
    let output = consolidate(&input("", selected));
    let md = &output.memory_md;
    assert!(md.starts_with("# Task Group: repo\n"), "{md}");
    assert!(md.trim_end().ends_with(MEMORY_FOOTER));
    let a = md.find("scope: work in `/repo/a`").unwrap();
    let b = md.find("# Task Group: b").unwrap();
    assert!(a < b, "newest group first: {md}");
    assert!(md.contains("## Task 1: Add the parser test\noutcome: partial; updated_at: 2025-10-09; thread_id: `t2`"), "{md}");
    assert!(
        md.contains("## Task 2: Fix the build\noutcome: success"),
        "{md}"
    );
    assert!(md.contains("### rollout_summary_files\n- rollout_summaries/t1.md (cwd=/repo/a, updated_at=2025-06-15T15:06:40Z, thread_id=t1)"), "{md}");
    assert!(md.contains("### keywords\n- cargo, build\n"), "{md}");
    assert_eq!(md.matches(SHARED).count(), 1, "{md}");
    assert!(
        md.contains(&format!("- {SHARED} [Tasks 1, 2; 2 sessions]")),
        "{md}"
    );
    assert!(md.contains("## Failures and how to do differently\n- `cargo test` still failed at the end. [Task 1]\n- `make` failed"), "{md}");
    assert!(
        md.contains("## Task 1: Summary t3"),
        "free-form memory keeps a title: {md}"
    );
    assert!(md.contains("- use the b helper [Task 1]"), "{md}");
    assert!(output.obsolete.is_empty());

    let summary = &output.memory_summary_md;
    assert!(
        summary
            .starts_with("v1\n## User Profile\nWorks on 2 project(s) in memory: repo (Rust); b."),
        "{summary}"
    );
    assert!(
        summary.contains(&format!("## User preferences\n- {SHARED} (repo)\n")),
        "{summary}"
    );
    assert!(
        summary.contains("## General Tips\n- `cargo test` still failed at the end. (repo)"),
        "{summary}"
    );
    assert!(summary.contains("### repo (`/repo/a`)\n#### 2025-10-09\n- Add the parser test (partial); keywords: parser"), "{summary}");
}

#[test]
fn rerunning_on_its_own_output_is_stable_and_keeps_foreign_text() {
    let selected = vec![record("t1", "/repo", 1_750_000_000, "- use `make check`")];
    let first = consolidate(&input(
        "# My notes\nAlways run `just lint` first.\n",
        selected.clone(),
    ));
    assert!(first.memory_md.contains(KEPT_HEADING));
    assert!(first.memory_md.contains("Always run `just lint` first."));
    let second = consolidate(&input(&first.memory_md, selected));
    assert_eq!(second.memory_md, first.memory_md);
    assert!(second.obsolete.is_empty());
}

#[test]
fn a_removed_thread_disappears_with_its_anchors_declared_obsolete() {
    let both = vec![
        record(
            "t1",
            "/repo",
            1_750_000_000,
            &raw(
                "Old work",
                "success",
                "Prefer src/old_module.rs.",
                "x",
                "old",
            ),
        ),
        record(
            "t2",
            "/repo",
            1_750_000_100,
            &raw(
                "New work",
                "success",
                "Prefer src/new_module.rs.",
                "y",
                "new",
            ),
        ),
    ];
    let first = consolidate(&input("", both.clone()));
    assert!(first.memory_md.contains("old_module"));
    let second = consolidate(&input(&first.memory_md, vec![both[1].clone()]));
    assert!(
        !second.memory_md.contains("old_module"),
        "{}",
        second.memory_md
    );
    assert!(!second.memory_md.contains("`t1`"));
    assert!(
        second.obsolete.contains(&"src/old_module.rs".to_owned()),
        "{:?}",
        second.obsolete
    );
    let missing = missing_anchors(&first.memory_md, &second.memory_md, &second.obsolete);
    assert!(
        missing.is_empty(),
        "the phase-2 guard would refuse: {missing:?}"
    );
}

#[test]
fn the_summary_fits_its_budget_by_dropping_the_oldest() {
    let selected: Vec<_> = (0..200)
        .map(|i| {
            record(
                &format!("thread-{i:03}"),
                "/repo",
                1_700_000_000 + i * 86_400,
                &raw(
                    &format!("task number {i}"),
                    "success",
                    &format!("rule {i}"),
                    "l",
                    "k",
                ),
            )
        })
        .collect();
    let mut small = input("", selected);
    small.summary_token_budget = 400;
    let summary = consolidate(&small).memory_summary_md;
    assert!(o200k().count(&summary) <= 400, "{summary}");
    assert!(summary.starts_with("v1\n## User Profile\n"));
    assert!(
        summary.contains("task number 199"),
        "newest kept: {summary}"
    );
    assert!(
        !summary.contains("task number 0 "),
        "oldest dropped: {summary}"
    );
}

proptest! {
    #[test]
    fn any_input_consolidates_within_budget_and_passes_the_guard(
        old in "(\\PC|\n|#|`){0,300}",
        raws in prop::collection::vec(("[a-c/]{0,6}", "(\\PC|\n|-|#|### Task 1: |---\n){0,120}"), 0..6),
        budget in 40u64..400,
    ) {
        let selected = raws
            .iter()
            .enumerate()
            .map(|(i, (cwd, raw))| record(&format!("t{i}"), cwd, 1_700_000_000 + i as i64, raw))
            .collect();
        let mut request = input(&old, selected);
        request.summary_token_budget = budget;
        let output = consolidate(&request);
        prop_assert!(o200k().count(&output.memory_summary_md) <= budget as usize + 1);
        let missing = missing_anchors(&old, &output.memory_md, &output.obsolete);
        prop_assert!(missing.is_empty(), "the phase-2 guard would refuse: {:?}", missing);
    }
}

fn note(path: &str, body: &str) -> ConsolidationNote {
    ConsolidationNote {
        path: path.to_owned(),
        text: format!("# Agent note\nwritten_at: 2026-03-15T08:02:11Z\n\n{body}\n"),
    }
}

#[test]
fn notes_get_their_own_section_and_leave_it_when_removed() {
    let selected = vec![record(
        "t1",
        "/repo",
        1_750_000_000,
        &raw(
            "fix the build",
            "success",
            "use make check",
            "run it twice",
            "make",
        ),
    )];
    let mut request = input("", selected.clone());
    request.notes = vec![
        note(
            "notes/2026-03-15T08-02-11Z-0001.md",
            "Statements use `;` as separator.",
        ),
        note(
            "notes/2026-03-16T08-00-00Z-0002.md",
            "Deploy with `just release`.",
        ),
    ];
    let first = consolidate(&request);
    let md = &first.memory_md;
    let notes_at = md.find(NOTES_HEADING).unwrap();
    assert!(md.find("# Task Group").unwrap() < notes_at);
    assert!(
        md.contains("- `notes/2026-03-15T08-02-11Z-0001.md`: Statements use `;` as separator.\n")
    );
    assert!(
        !md.contains("written_at"),
        "the header lines stay in the note file"
    );
    let summary = &first.memory_summary_md;
    assert!(
        summary.contains("### Agent Notes\n- Deploy with `just release`."),
        "{summary}"
    );
    // Stable on its own output.
    request.memory_md = first.memory_md.clone();
    assert_eq!(consolidate(&request).memory_md, first.memory_md);
    // A removed note leaves, its anchors declared obsolete so the guard accepts it.
    let mut removed = input(&first.memory_md, selected);
    removed.notes = vec![request.notes[0].clone()];
    let second = consolidate(&removed);
    assert!(!second.memory_md.contains("just release"));
    let missing = missing_anchors(&first.memory_md, &second.memory_md, &second.obsolete);
    assert!(
        missing.is_empty(),
        "the phase-2 guard would refuse: {missing:?}"
    );
}

/// codex #29818: `MEMORY.md` grew to 2,450 lines with 133 near-duplicate task entries.
#[test]
fn codex_29818_a_hundred_sessions_of_one_lesson_are_one_entry_with_a_count_of_100() {
    let lesson =
        "The scheduler test is flaky under load: run it with `-count=20` before blaming a change.";
    let selected: Vec<_> = (0..100)
        .map(|i| {
            // The same task, worded as sessions word it.
            let title = match i % 3 {
                0 => "Fix the flaky scheduler test",
                1 => "fix the flaky scheduler test.",
                _ => "Fix  the flaky Scheduler test!",
            };
            let outcome = if i % 10 == 0 { "fail" } else { "success" };
            record(
                &format!("thread-{i:03}"),
                "/repo/sched",
                1_700_000_000 + i * 3_600,
                &raw(title, outcome, SHARED, lesson, "scheduler, flaky"),
            )
        })
        .collect();
    let output = consolidate(&input("", selected));
    let md = &output.memory_md;
    assert_eq!(md.matches("## Task ").count(), 1, "{md}");
    assert!(
        md.contains("sessions: 100 (2023-11-14 to 2023-11-19); outcomes: 90 success, 10 fail"),
        "{md}"
    );
    assert_eq!(md.matches(lesson).count(), 1, "{md}");
    assert!(
        md.contains(&format!("- {lesson} [Task 1; 100 sessions]")),
        "{md}"
    );
    assert!(
        md.contains("- and 95 older session(s) of this task"),
        "{md}"
    );
    assert!(
        md.lines().count() < 40,
        "{} lines: {md}",
        md.lines().count()
    );
    let summary = &output.memory_summary_md;
    assert_eq!(
        summary
            .to_lowercase()
            .matches("fix the flaky scheduler test")
            .count(),
        3,
        "in the profile's latest session, once among the recent days, once among older topics: {summary}"
    );
    assert!(summary.contains("(2023-11-16, 50 sessions)"), "{summary}");
    let again = consolidate(&input(md, input("", Vec::new()).selected));
    assert!(
        !again.memory_md.contains(lesson),
        "regenerated from the selection"
    );
}

#[test]
fn memory_md_stays_under_its_bound_condensing_the_least_used_first() {
    let long = "x".repeat(300);
    let mut selected: Vec<_> = (0..1_500)
        .map(|i| {
            record(
                &format!("thread-{i:04}"),
                &format!("/repo/p{}", i % 7),
                1_700_000_000 + i * 600,
                &raw(
                    &format!("task number {i} on `src/mod_{i}.rs`"),
                    "success",
                    &format!("rule {i} {long}"),
                    &format!("lesson {i} {long}"),
                    &format!("kw{i}"),
                ),
            )
        })
        .collect();
    // The oldest task is the one agents cite.
    selected[0].usage_count = 50;
    let first = consolidate(&input("", selected.clone()));
    let md = &first.memory_md;
    assert!(md.len() <= MAX_MEMORY_MD_BYTES, "{} bytes", md.len());
    assert!(
        md.contains("left out to keep this file under 64 KiB"),
        "{md}"
    );
    assert!(
        md.contains("task number 0 on `src/mod_0.rs`\noutcome: success; updated_at: 2023-11-14; thread_id: `thread-0000`"),
        "the most-used task stays, however old: {md}"
    );
    assert!(md.contains("task number 1499"), "the newest task is kept");
    assert!(
        !md.contains("task number 1 on"),
        "an old unused task goes first"
    );
    // The phase-2 guard accepts the bounded file after the full one.
    let second = consolidate(&input(md, selected));
    let missing = missing_anchors(md, &second.memory_md, &second.obsolete);
    assert!(missing.is_empty(), "{missing:?}");
    assert_eq!(second.memory_md, first.memory_md, "stable when rerun");
}
