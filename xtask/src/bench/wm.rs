//! `cargo xtask bench wm`: one working-memory merge with every guard firing, on a document of
//! 7 sections of 25 bullets each (about 11 KB), text in and text out: parse the old document,
//! run the guards, apply, render. The operations are read once, before the loop, as a host
//! reads the tool's arguments once.
//!
//! The operations make each section's rule act: a title with no word in common, an empty
//! Current State rewrite, duplicate goals, a Key Facts rewrite too small to be a consolidation
//! (refused, its new bullets salvaged), a Files rewrite that drops paths, an Errors rewrite
//! (demoted to an append), and an Open Issues rewrite that drops items (restored). The run
//! checks that every one of those guards fired before it measures.
//!
//! Re-runs itself in release when xtask is a debug build. Each figure is the best of a few
//! runs; the ratio to parse + render alone comes from the same run. Time per merge is the
//! thread's CPU time (`/proc/thread-self/schedstat`), because the machine is shared and wall
//! time there mostly measures waiting for a core; the wall figure is printed too.

use std::collections::BTreeSet;
use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use memory_protocol::working_memory::{GuardKind, WorkingMemorySection};
use serde_json::{Value, json};
use working_memory::{MergeOptions, SectionOps, WorkingMemoryDocument, merge_text};

const RUNS: usize = 5;
const RUN_TIME: Duration = Duration::from_millis(600);
const BULLETS: usize = 25;

pub(crate) fn run(args: &[&str]) -> Result<()> {
    match args {
        ["--count", count, only @ ..] if only.len() <= 1 => {
            let count = count
                .parse()
                .with_context(|| format!("--count takes a number of merges, not {count:?}"))?;
            count_merges(count, only.first().copied())
        }
        [] if cfg!(debug_assertions) => super::rerun_in_release("wm"),
        [] | ["--inner"] => measure(),
        _ => bail!("usage: cargo xtask bench wm [--count N [SECTION|none]]"),
    }
}

fn bullets(make: impl Fn(usize) -> String) -> String {
    (1..=BULLETS)
        .map(|i| format!("- {}", make(i)))
        .collect::<Vec<_>>()
        .join("\n")
}

fn old_document() -> String {
    let mut document = WorkingMemoryDocument::new();
    let bodies = [
        (
            WorkingMemorySection::SessionTitle,
            bullets(|i| format!("Tide importer migration part {i}")),
        ),
        (
            WorkingMemorySection::CurrentState,
            bullets(|i| {
                format!("Step {i} of the March import is verified against station 8518750.")
            }),
        ),
        (
            WorkingMemorySection::TaskAndGoals,
            bullets(|i| format!("Import statement batch {i} with the CSV parser kept strict")),
        ),
        (
            WorkingMemorySection::KeyFactsAndDecisions,
            bullets(|i| {
                format!(
                    "Harbourmaster Okafor agreed on 2025-04-{:02} to {i} retries because of $1,{i:03} fees",
                    i % 28 + 1
                )
            }),
        ),
        (
            WorkingMemorySection::FilesAndContext,
            bullets(|i| format!("tides/import/step_{i}.py: parses the batch {i} header and rows")),
        ),
        (
            WorkingMemorySection::ErrorsAndCorrections,
            bullets(|i| {
                format!("`pytest tests/test_step_{i}.py` failed: ValueError on 24:00 in row {i}")
            }),
        ),
        (
            WorkingMemorySection::OpenIssues,
            bullets(|i| format!("batch {i} has duplicate rows after the daylight saving switch")),
        ),
    ];
    for (section, body) in &bodies {
        document.set_body(*section, body);
    }
    document.render()
}

fn operations() -> Value {
    json!({"sections": {
        "Session Title": {"op": "UPDATE", "content": "Weekend grocery list"},
        "Current State": {"op": "UPDATE", "content": "  "},
        "Task & Goals": {"op": "APPEND", "items": ["Import statement batch 3 with the CSV parser kept strict", "Import statement batch 26"]},
        "Key Facts & Decisions": {"op": "UPDATE", "content": "- the import works\n- Harbourmaster Okafor set retries on 2025-05-01"},
        "Files & Context": {"op": "UPDATE", "content": "- tides/import/step_1.py\n- tides/import/step_26.py: batch 26"},
        "Errors & Corrections": {"op": "UPDATE", "content": "- everything passes now"},
        "Open Issues": {"op": "UPDATE", "content": "- [resolved] batch 1 has duplicate rows after the daylight saving switch\n- [new] batch 26 is missing"},
    }})
}

/// Runs the measured merge `count` times and prints the total rendered length, for counting
/// instructions (`valgrind --tool=callgrind target/release/xtask bench wm --count 1000`, minus
/// the same with `--count 0`, over 1,000). With `only`, every other section's operation is a
/// KEEP, so one section's cost can be told apart (`none`: every section kept).
fn count_merges(count: usize, only: Option<&str>) -> Result<()> {
    let old = old_document();
    let Value::Object(mut arguments) = operations() else {
        bail!("the benchmark's operations are not an object");
    };
    let Some(Value::Object(sections)) = arguments.get_mut("sections") else {
        bail!("the benchmark's operations have no sections");
    };
    if let Some(only) = only {
        if only != "none" && !sections.contains_key(only) {
            bail!("no section {only:?} in the benchmark's operations");
        }
        for (name, op) in sections.iter_mut() {
            if name != only {
                *op = json!({"op": "KEEP"});
            }
        }
    }
    let ops = SectionOps::from_sections(sections);
    let options = MergeOptions::default();
    let mut total = 0;
    for _ in 0..count {
        let outcome = merge_text(black_box(&old), black_box(&ops), &options);
        total += black_box(outcome.document.render()).len();
    }
    println!("{total}");
    Ok(())
}

/// CPU time this thread has run, when the kernel reports it.
fn thread_cpu() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// Per-call CPU and wall time of `run`, the best of [`RUNS`] runs, and the calls of that run.
fn best(mut run: impl FnMut() -> usize) -> (Duration, Duration, usize) {
    let mut best_cpu = Duration::MAX;
    let mut best_wall = Duration::MAX;
    let mut count = 0;
    for _ in 0..RUNS {
        let started = Instant::now();
        let cpu_started = thread_cpu();
        let mut done = 0;
        while started.elapsed() < RUN_TIME {
            for _ in 0..64 {
                done += run();
            }
        }
        let wall = started.elapsed() / done as u32;
        let cpu = match (cpu_started, thread_cpu()) {
            (Some(from), Some(to)) if to > from => (to - from) / done as u32,
            _ => wall,
        };
        if cpu < best_cpu {
            best_cpu = cpu;
            count = done;
        }
        best_wall = best_wall.min(wall);
    }
    (best_cpu, best_wall, count)
}

fn measure() -> Result<()> {
    let old = old_document();
    let Value::Object(arguments) = operations() else {
        bail!("the benchmark's operations are not an object");
    };
    let Some(Value::Object(sections)) = arguments.get("sections") else {
        bail!("the benchmark's operations have no sections");
    };
    let ops = SectionOps::from_sections(sections);
    let options = MergeOptions::default();
    let outcome = merge_text(&old, &ops, &options);
    let fired: BTreeSet<String> = outcome
        .guards
        .iter()
        .map(|record| format!("{:?}", record.guard))
        .collect();
    let expected = [
        GuardKind::TitleStability,
        GuardKind::EmptyUpdate,
        GuardKind::DuplicateItems,
        GuardKind::KeyFactsConsolidation,
        GuardKind::FilesNoRegression,
        GuardKind::ErrorsAppendOnly,
        GuardKind::OpenIssuesRestore,
    ];
    for guard in expected {
        if !fired.contains(&format!("{guard:?}")) {
            bail!("guard {guard:?} did not fire; fired: {fired:?}");
        }
    }
    let sections_with_guards: BTreeSet<WorkingMemorySection> =
        outcome.guards.iter().map(|record| record.section).collect();
    println!(
        "document: {} bytes, 7 sections x {BULLETS} bullets; {} guard records on {} sections ({})",
        old.len(),
        outcome.guards.len(),
        sections_with_guards.len(),
        fired.into_iter().collect::<Vec<_>>().join(", ")
    );

    // The floor: the same document parsed and rendered with no operation and no guard.
    let (baseline, _, _) = best(|| {
        let document = WorkingMemoryDocument::parse(black_box(&old));
        black_box(document.render()).len().min(1)
    });
    let (per_merge, wall, merges) = best(|| {
        let outcome = merge_text(black_box(&old), black_box(&ops), &options);
        black_box(outcome.document.render()).len().min(1)
    });
    let us = per_merge.as_secs_f64() * 1e6;
    println!(
        "parse + render alone: {:.2} us; merge (parse, guards, apply, render): {us:.2} us, {:.1}x the baseline (CPU time per call)",
        baseline.as_secs_f64() * 1e6,
        per_merge.as_secs_f64() / baseline.as_secs_f64()
    );
    println!(
        "wall time per merge on this shared machine: {:.2} us (load average {})",
        wall.as_secs_f64() * 1e6,
        std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|text| text.split_whitespace().next().map(str::to_owned))
            .unwrap_or_else(|| "unknown".to_owned())
    );
    println!(
        "target: at most 9 us per merge: {}",
        if us <= 9.0 { "met" } else { "not met" }
    );
    println!("BENCH wm merges={merges} us_per_merge={us:.2}");
    Ok(())
}
