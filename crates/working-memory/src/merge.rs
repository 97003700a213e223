//! Applying one operation per section to a document, through the guards.
//!
//! For each section, in document order:
//!
//! 1. the operation as read ([`super::ops`]); a missing or unreadable one keeps the section;
//!    in Key Facts & Decisions, the consolidation sentinel is cut out of what the model wrote;
//! 2. an UPDATE whose body is empty (or only says `none`) keeps a non-empty section, so no
//!    section is emptied by accident (the reference empties Current State this way);
//! 3. when the old body is non-empty, the section's guard (`guards/`);
//! 4. an APPEND drops items whose normalized key the section (or an earlier item of the same
//!    APPEND) already has;
//! 5. the operation is applied: KEEP leaves the body byte for byte, UPDATE replaces it with the
//!    normalized new body, APPEND adds `- item` lines;
//! 6. Key Facts & Decisions and Errors & Corrections are bounded (`bound.rs`): when the
//!    operation grew one past twice its threshold, the oldest entries move to the archive
//!    behind a pointer.
//!
//! Every step that changed the operation leaves a [`GuardRecord`].

use memory_protocol::working_memory::{
    GuardKind, GuardRecord, OpName, SectionOp, WorkingMemoryMergeResult, WorkingMemorySection,
};

use super::bound::bound;
use super::document::{WorkingMemoryDocument, normalize_body};
use super::guards::key_facts::{without_model_sentinel, without_sentinel};
use super::guards::{self, OldBody, quoted};
use super::ops::{ReadOp, SectionOps};
use super::text::{SectionSize, append_items};

/// Where entries moved out of a bounded section are said to be, when the caller has no
/// archive to name.
pub(crate) const DEFAULT_MOVED_LOCATION: &str = "the session archive";

/// How to merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeOptions {
    /// Where entries moved out of a bounded section go (an archive file, relative to the
    /// session); the pointer bullet names it.
    pub moved_location: String,
}

impl Default for MergeOptions {
    fn default() -> Self {
        Self {
            moved_location: DEFAULT_MOVED_LOCATION.to_owned(),
        }
    }
}

/// Entries a bounded section moved out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovedEntries {
    /// The section they came from.
    pub section: WorkingMemorySection,
    /// The entries, oldest first, without bullet markers.
    pub entries: Vec<String>,
}

/// What a merge produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeOutcome {
    /// The merged document.
    pub document: WorkingMemoryDocument,
    /// What the guards changed, in section order.
    pub guards: Vec<GuardRecord>,
    /// Entries moved out of bounded sections; the caller stores them where
    /// [`MergeOptions::moved_location`] says.
    pub moved: Vec<MovedEntries>,
}

impl MergeOutcome {
    /// The tool result: the rendered document and the guard records.
    pub fn to_result(&self) -> WorkingMemoryMergeResult {
        WorkingMemoryMergeResult {
            document: self.document.render(),
            guards: self.guards.clone(),
        }
    }
}

/// Merges `ops` into `old` (see the module docs).
pub fn merge(
    old: &WorkingMemoryDocument,
    ops: &SectionOps,
    options: &MergeOptions,
) -> MergeOutcome {
    let mut document = WorkingMemoryDocument::new();
    let mut guards = Vec::new();
    let mut moved = Vec::new();
    for section in WorkingMemorySection::ALL {
        let mut log = Log {
            section,
            op_in: String::new(),
            records: &mut guards,
        };
        let old_body = old.body(section);
        let old_read = OldBody::new(old_body);
        let op = decide(section, &old_read, ops.get(section), &mut log);
        let applied = op.name();
        let mut body = match op {
            SectionOp::Keep => old_body.to_owned(),
            SectionOp::Update { content } => normalize_body(&content),
            SectionOp::Append { items } => append_items(old_body, &items),
        };
        if applied != OpName::Keep
            && bounded(section)
            && let Some(new_size) = grew(&old_read, &body)
            && let Some(result) = bound(&body, new_size, &options.moved_location)
        {
            log.note(
                GuardKind::SectionBound,
                applied,
                format!(
                    "the section passed its hard bound: {} oldest entr{} moved to {}: {}",
                    result.entries.len(),
                    if result.entries.len() == 1 {
                        "y"
                    } else {
                        "ies"
                    },
                    options.moved_location,
                    result
                        .entries
                        .iter()
                        .map(|entry| format!("\"{entry}\""))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            );
            body = result.body;
            moved.push(MovedEntries {
                section,
                entries: result.entries,
            });
        }
        document.set_normalized(section, body);
    }
    MergeOutcome {
        document,
        guards,
        moved,
    }
}

/// Parses `old` and merges `ops` into it.
pub fn merge_text(old: &str, ops: &SectionOps, options: &MergeOptions) -> MergeOutcome {
    merge(&WorkingMemoryDocument::parse(old), ops, options)
}

/// The size of `new`, the sentinel aside, when it is larger than `old` (also without the
/// sentinel) in bullets or tokens: only growth is bounded, so a section that was already past
/// its bound (a document from elsewhere) is not cut on a KEEP-like step.
fn grew(old: &OldBody<'_>, new: &str) -> Option<SectionSize> {
    let old = old.size();
    let new = SectionSize::of(&without_sentinel(new));
    (new.bullets > old.bullets || new.tokens > old.tokens).then_some(new)
}

fn bounded(section: WorkingMemorySection) -> bool {
    matches!(
        section,
        WorkingMemorySection::KeyFactsAndDecisions | WorkingMemorySection::ErrorsAndCorrections
    )
}

struct Log<'a> {
    section: WorkingMemorySection,
    /// The operation as the caller named it.
    op_in: String,
    records: &'a mut Vec<GuardRecord>,
}

impl Log<'_> {
    fn note(&mut self, guard: GuardKind, op_out: OpName, reason: String) {
        self.records.push(GuardRecord {
            section: self.section,
            guard,
            op_in: self.op_in.clone(),
            op_out,
            reason,
        });
    }
}

/// Steps 1 to 4: the operation to apply.
fn decide(
    section: WorkingMemorySection,
    old: &OldBody<'_>,
    read: Option<&ReadOp>,
    log: &mut Log<'_>,
) -> SectionOp {
    let Some(read) = read else {
        log.note(
            GuardKind::InvalidOp,
            OpName::Keep,
            "no operation for this section: it is kept".to_owned(),
        );
        return SectionOp::Keep;
    };
    log.op_in = read.op_in.clone();
    if let Some(problem) = &read.problem {
        let kept = matches!(read.op, SectionOp::Keep);
        log.note(
            GuardKind::InvalidOp,
            read.op.name(),
            if kept {
                format!("{problem}: the section is kept")
            } else {
                problem.clone()
            },
        );
    }
    let mut op = read.op.clone();
    if section == WorkingMemorySection::KeyFactsAndDecisions {
        // Before every other rule, and even for an empty section, so the sentinel is never
        // taken from the model on any path.
        op = without_model_sentinel(op);
    }
    if let SectionOp::Update { content } = &op
        && !old.text.is_empty()
        && normalize_body(content).is_empty()
    {
        log.note(
            GuardKind::EmptyUpdate,
            OpName::Keep,
            "an UPDATE with an empty body would empty the section: it is kept".to_owned(),
        );
        return SectionOp::Keep;
    }
    if !old.text.is_empty() {
        let verdict = guards::run(section, old, &op);
        if let Some((guard, reason)) = verdict.note {
            log.note(guard, verdict.op.name(), reason);
        }
        op = verdict.op;
    }
    if let SectionOp::Append { items } = &op {
        let fresh = old.fresh(items);
        if fresh.len() < items.len() {
            let duplicates: Vec<&String> =
                items.iter().filter(|item| !fresh.contains(item)).collect();
            let op_out = if fresh.is_empty() {
                OpName::Keep
            } else {
                OpName::Append
            };
            log.note(
                GuardKind::DuplicateItems,
                op_out,
                format!(
                    "{} item(s) already in the section were not added again: {}",
                    duplicates.len(),
                    quoted(&duplicates)
                ),
            );
        }
        return guards::append_or_keep(fresh);
    }
    op
}

/// Merges a document the model wrote whole (a create or fallback answer) into `previous`
/// through the guards: every non-empty section of the new document is an UPDATE of the
/// previous one, every empty section a KEEP.
pub fn merge_created(
    previous: &WorkingMemoryDocument,
    created: &str,
    options: &MergeOptions,
) -> MergeOutcome {
    let created = WorkingMemoryDocument::parse(created);
    let mut ops = SectionOps::new();
    for section in WorkingMemorySection::ALL {
        let body = created.body(section);
        let op = if body.is_empty() {
            SectionOp::Keep
        } else {
            SectionOp::Update {
                content: body.to_owned(),
            }
        };
        ops.set(section, ReadOp::exact(op));
    }
    merge(previous, &ops, options)
}

#[cfg(test)]
mod properties;
