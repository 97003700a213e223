//! Working memory: the reference's conformance list with our own inputs, the upstream quirks
//! we fix, recovery, the user reports, and the merge properties.

mod conformance_growth;
mod conformance_guards;
mod document;
mod errors_bound;
mod quirks;
mod recovery;
mod scripts;
mod sentinel;
mod session;
mod session_properties;

use memory_protocol::working_memory::{GuardKind, OpName, WorkingMemorySection};
use serde_json::Value;
use working_memory::{MergeOptions, MergeOutcome, SectionOps, WorkingMemoryDocument, merge_text};

/// The canonical document with the given bodies; other sections are empty.
pub(crate) fn make_wm(bodies: &[(WorkingMemorySection, &str)]) -> String {
    let mut document = WorkingMemoryDocument::new();
    for (section, body) in bodies {
        document.set_body(*section, body);
    }
    document.render()
}

/// Merges operations given as a `sections` JSON object into `old`.
pub(crate) fn merged(old: &str, sections: Value) -> MergeOutcome {
    let ops = match sections {
        Value::Object(map) => SectionOps::from_sections(&map),
        Value::Null => SectionOps::new(),
        other => panic!("not an object: {other}"),
    };
    merge_text(old, &ops, &MergeOptions::default())
}

/// The body of `section` after a merge.
pub(crate) fn body(outcome: &MergeOutcome, section: WorkingMemorySection) -> String {
    outcome.document.body(section).to_owned()
}

/// The bullet items of a body as the tests write and the merge renders it: each non-blank line
/// that is not a heading, without its `- ` marker.
pub(crate) fn items_of(body: &str) -> Vec<String> {
    body.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            line.strip_prefix("- ")
                .unwrap_or(line)
                .trim_start()
                .to_owned()
        })
        .collect()
}

/// The guard records of one section, as (guard, op_out).
pub(crate) fn guards_of(
    outcome: &MergeOutcome,
    section: WorkingMemorySection,
) -> Vec<(GuardKind, OpName)> {
    outcome
        .guards
        .iter()
        .filter(|record| record.section == section)
        .map(|record| (record.guard, record.op_out))
        .collect()
}

/// `n` bullets `prefix 1` .. `prefix n`.
pub(crate) fn numbered(prefix: &str, n: usize) -> String {
    (1..=n)
        .map(|i| format!("- {prefix} {i}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `## ` header lines of a rendered document.
pub(crate) fn headers(text: &str) -> Vec<String> {
    text.lines()
        .filter(|line| line.starts_with("## "))
        .map(|line| line[3..].to_owned())
        .collect()
}
