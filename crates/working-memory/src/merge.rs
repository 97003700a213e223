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

use std::borrow::Cow;

use memory_protocol::working_memory::{
    GuardKind, GuardRecord, OpName, SectionOp, WorkingMemoryMergeResult, WorkingMemorySection,
};

use super::bound::bound;
use super::document::{WorkingMemoryDocument, normalize_owned, normalizes_to_empty};
use super::guards::key_facts::{
    has_model_sentinel, has_sentinel, without_model_sentinel, without_sentinel,
};
use super::guards::{self, OldBody, Reason, quoted};
use super::ops::{ReadOp, SectionOps};
use super::text::{SectionSize, appended_len, items, push_items, tokens};

/// Where entries moved out of a bounded section are said to be, when the caller has no
/// archive to name.
pub const DEFAULT_MOVED_LOCATION: &str = "the session archive";

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
    merge_from(Source::Borrowed(old), ops, options)
}

/// Parses `old` and merges `ops` into it.
pub fn merge_text(old: &str, ops: &SectionOps, options: &MergeOptions) -> MergeOutcome {
    merge_from(
        Source::Owned(WorkingMemoryDocument::parse(old)),
        ops,
        options,
    )
}

/// The document merged into: a parsed one whose kept and appended bodies are moved into the
/// result, or a caller's, copied.
enum Source<'a> {
    Borrowed(&'a WorkingMemoryDocument),
    Owned(WorkingMemoryDocument),
}

impl Source<'_> {
    fn body(&self, section: WorkingMemorySection) -> &str {
        match self {
            Source::Borrowed(document) => document.body(section),
            Source::Owned(document) => document.body(section),
        }
    }

    /// The old body of `section` as a string with room for `extra` more bytes.
    fn take(&mut self, section: WorkingMemorySection, extra: usize) -> String {
        match self {
            Source::Borrowed(document) => {
                let body = document.body(section);
                let mut out = String::with_capacity(body.len() + extra);
                out.push_str(body);
                out
            }
            Source::Owned(document) => {
                let mut out = document.take_body(section);
                out.reserve(extra);
                out
            }
        }
    }
}

fn merge_from(mut source: Source<'_>, ops: &SectionOps, options: &MergeOptions) -> MergeOutcome {
    let mut document = WorkingMemoryDocument::new();
    // Room for a record per section, so the list rarely grows.
    let mut guards = Vec::with_capacity(WorkingMemorySection::ALL.len());
    let mut moved = Vec::new();
    for section in WorkingMemorySection::ALL {
        let mut log = Log {
            section,
            op_in: "",
            records: &mut guards,
        };
        let (op, old_size) = {
            let old = OldBody::new(source.body(section));
            let op = decide(section, &old, ops.get(section), &mut log);
            // Only a bounded section that changed is measured again.
            let old_size = (op.name() != OpName::Keep && bounded(section)).then(|| old.size());
            (op, old_size)
        };
        let applied = op.name();
        let (mut body, appended_at) = match op {
            SectionOp::Keep => (source.take(section, 0), None),
            SectionOp::Update { content } => (normalize_owned(content), None),
            SectionOp::Append { items } => {
                let mut body = source.take(section, appended_len(&items));
                let at = body.len();
                push_items(&mut body, &items);
                (body, Some(at))
            }
        };
        if let Some(old_size) = old_size
            && let Some(new_size) = grew(old_size, &body, appended_at)
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

/// The size of `new`, the sentinel aside, when it is larger than the old body (`old`, also
/// without the sentinel) in bullets or tokens: only growth is bounded, so a section that was
/// already past its bound (a document from elsewhere) is not cut on a KEEP-like step. After
/// an APPEND (`appended_at`, where the appended lines start) without the sentinel, the old
/// items are counted already: only the appended lines are read.
fn grew(old: SectionSize, new: &str, appended_at: Option<usize>) -> Option<SectionSize> {
    let new = match appended_at {
        Some(at) if !has_sentinel(new) => SectionSize {
            bullets: old.bullets + items(new.get(at..).unwrap_or_default()).count(),
            tokens: tokens(new),
        },
        _ => SectionSize::of(&without_sentinel(new)),
    };
    (new.bullets > old.bullets || new.tokens > old.tokens).then_some(new)
}

fn bounded(section: WorkingMemorySection) -> bool {
    matches!(
        section,
        WorkingMemorySection::KeyFactsAndDecisions | WorkingMemorySection::ErrorsAndCorrections
    )
}

struct Log<'a, 'o> {
    section: WorkingMemorySection,
    /// The operation as the caller named it, copied only into the records written.
    op_in: &'o str,
    records: &'a mut Vec<GuardRecord>,
}

impl Log<'_, '_> {
    fn note(&mut self, guard: GuardKind, op_out: OpName, reason: String) {
        self.records.push(GuardRecord {
            section: self.section,
            guard,
            op_in: self.op_in.to_owned(),
            op_out,
            reason,
        });
    }
}

/// Steps 1 to 4: the operation to apply.
fn decide<'o>(
    section: WorkingMemorySection,
    old: &OldBody<'_>,
    read: Option<&'o ReadOp>,
    log: &mut Log<'_, 'o>,
) -> SectionOp {
    let Some(read) = read else {
        log.note(
            GuardKind::InvalidOp,
            OpName::Keep,
            "no operation for this section: it is kept".to_owned(),
        );
        return SectionOp::Keep;
    };
    log.op_in = &read.op_in;
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
    // The operation as read, copied only when a rule changes it.
    let mut op = Cow::Borrowed(&read.op);
    if section == WorkingMemorySection::KeyFactsAndDecisions && has_model_sentinel(&op) {
        // Before every other rule, and even for an empty section, so the sentinel is never
        // taken from the model on any path.
        op = Cow::Owned(without_model_sentinel(read.op.clone()));
    }
    if let SectionOp::Update { content } = op.as_ref()
        && !old.text.is_empty()
        && normalizes_to_empty(content)
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
            let op_out = verdict.op.as_ref().map_or(op.name(), SectionOp::name);
            log.note(guard, op_out, reason);
        }
        if let Some(changed) = verdict.op {
            op = Cow::Owned(changed);
        }
        if verdict.fresh {
            return op.into_owned();
        }
    }
    if let SectionOp::Append { items } = op.as_ref() {
        let fresh = old.fresh(items);
        if fresh.len() < items.len() {
            let duplicates: Vec<String> = items
                .iter()
                .filter(|item| !fresh.contains(item))
                .cloned()
                .collect();
            let op_out = if fresh.is_empty() {
                OpName::Keep
            } else {
                OpName::Append
            };
            log.note(
                GuardKind::DuplicateItems,
                op_out,
                Reason::with_capacity(160)
                    .count(duplicates.len())
                    .text(" item(s) already in the section were not added again: ")
                    .text(&quoted(&duplicates))
                    .done(),
            );
        }
        return guards::append_or_keep(fresh);
    }
    op.into_owned()
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
