//! Runs the `cargo xtask bench wm` merge N times (first argument, default 1000), for counting
//! instructions with callgrind: run with N and with 0, and divide the difference by N.

use std::hint::black_box;

use memory_compaction::working_memory::{
    MergeOptions, SectionOps, WorkingMemoryDocument, merge_text,
};
use memory_protocol::working_memory::WorkingMemorySection;
use serde_json::{Value, json};

const BULLETS: usize = 25;

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

fn main() {
    let count: usize = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(1000);
    let only = std::env::args().nth(2);
    let old = old_document();
    let Value::Object(mut arguments) = operations() else {
        return;
    };
    let Some(Value::Object(sections)) = arguments.get_mut("sections") else {
        return;
    };
    if let Some(only) = only {
        // Keep every section except `only` ("none": every section kept).
        for (name, op) in sections.iter_mut() {
            if *name != only {
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
}
