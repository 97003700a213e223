//! Files & Context: a rewrite may not drop a path.
//!
//! An UPDATE is accepted when every path-like token of the old body (see
//! [`memory_transcript::paths`]) is still in the new body. Otherwise the old body stays,
//! and the lines of the rewrite that name paths the old body lacked are appended, one per line
//! (in the rewrite's order, without duplicates), or nothing when there are none. KEEP and
//! APPEND pass.

use memory_protocol::working_memory::{GuardKind, SectionOp};

use super::{OldBody, Verdict, append_or_keep, quoted};
use crate::text::items;
use memory_transcript::paths::{path_tokens, path_tokens_in_order};

pub(crate) fn guard(old_body: &OldBody<'_>, op: &SectionOp) -> Verdict {
    let old = old_body.text;
    let SectionOp::Update { content } = op else {
        return Verdict::unchanged(op);
    };
    let old_paths = path_tokens(old);
    let new_paths = path_tokens(content);
    let missing: Vec<&str> = old_paths
        .iter()
        .filter(|path| !new_paths.contains(path))
        .copied()
        .collect();
    if missing.is_empty() {
        return Verdict::unchanged(op);
    }
    // The rewrite's items that name a path the old body did not have.
    let carrying_new_paths: Vec<&str> = items(content)
        .filter(|item| path_tokens_in_order(item).any(|path| !old_paths.contains(&path)))
        .collect();
    let added = old_body.fresh(&carrying_new_paths);
    let reason = format!(
        "the rewrite drops {} path(s) ({}); the old body is kept and {} line(s) with new paths appended",
        missing.len(),
        quoted(&missing),
        added.len()
    );
    Verdict::changed(append_or_keep(added), GuardKind::FilesNoRegression, reason)
}
