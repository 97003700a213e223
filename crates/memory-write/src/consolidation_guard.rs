//! The guard that stops a consolidation from silently losing memory.
//!
//! A rewrite of `MEMORY.md` must keep every anchor of the old text (paths, commands in
//! backticks, dates, identifiers, URLs, versions, flags) unless the model listed it in
//! [`ConsolidationOutput::obsolete`], or it belongs only to threads that left the selection
//! (or to the superseded version of a re-extracted thread): forgetting those is the point of
//! telling the model what was removed. A rewrite that drops any other anchor is rejected: the
//! old text is kept and the new material is appended below it, so nothing is lost and the
//! next pass can try again.

use std::collections::BTreeSet;

use memory_protocol::consolidation::ConsolidationOutput;
use memory_transcript::anchors::missing_anchors;

/// Heading of the block a rejected rewrite appends.
pub(crate) const UNCONSOLIDATED_HEADING: &str = "## Unconsolidated material";

/// The guard's decision on one consolidation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GuardVerdict {
    /// The `MEMORY.md` to write.
    pub(crate) memory_md: String,
    /// Old anchors the rewrite dropped without marking them obsolete; empty when accepted.
    pub(crate) missing: Vec<String>,
    /// Old anchors the rewrite dropped that only removed threads supported (accepted).
    pub(crate) forgotten: Vec<String>,
}

impl GuardVerdict {
    /// True when the model's rewrite was taken as is.
    #[cfg(test)]
    pub(crate) fn accepted(&self) -> bool {
        self.missing.is_empty()
    }
}

/// The anchors a pass may drop without listing them: those of `removed_material` (what the
/// last pass was given for threads now removed, or for the old version of re-extracted ones)
/// that `kept_material` (what this pass is given) neither has as an anchor nor contains.
pub(crate) fn forgettable_anchors(removed_material: &str, kept_material: &str) -> BTreeSet<String> {
    missing_anchors(removed_material, kept_material, &[])
        .into_iter()
        .collect()
}

/// Checks the model's new `MEMORY.md` against the old one; anchors in `forgettable` (see
/// [`forgettable_anchors`]) may go.
///
/// Accepted: the new text is returned unchanged. Rejected: the old text is kept and
/// `new_material` (what this pass was meant to fold in) is appended under
/// [`UNCONSOLIDATED_HEADING`]; when `new_material` is blank the old text is kept as is.
pub(crate) fn guard_consolidation(
    old_memory_md: &str,
    output: &ConsolidationOutput,
    new_material: &str,
    forgettable: &BTreeSet<String>,
) -> GuardVerdict {
    let (forgotten, missing): (Vec<String>, Vec<String>) =
        missing_anchors(old_memory_md, &output.memory_md, &output.obsolete)
            .into_iter()
            .partition(|anchor| forgettable.contains(anchor));
    if missing.is_empty() {
        return GuardVerdict {
            memory_md: output.memory_md.clone(),
            missing,
            forgotten,
        };
    }
    let mut memory_md = old_memory_md.trim_end().to_owned();
    let material = new_material.trim();
    if !material.is_empty() {
        if !memory_md.is_empty() {
            memory_md.push_str("\n\n");
        }
        memory_md.push_str(UNCONSOLIDATED_HEADING);
        memory_md.push_str("\n\n");
        memory_md.push_str(material);
    }
    memory_md.push('\n');
    GuardVerdict {
        memory_md,
        missing,
        forgotten: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memory_transcript::anchors::strategies::memory_text;
    use memory_transcript::anchors::{extract_anchors, missing_anchors, normalize_anchor};
    use proptest::prelude::*;

    fn none() -> BTreeSet<String> {
        BTreeSet::new()
    }

    fn output(memory_md: &str, obsolete: &[String]) -> ConsolidationOutput {
        ConsolidationOutput {
            memory_md: memory_md.to_owned(),
            memory_summary_md: "v1\n".to_owned(),
            obsolete: obsolete.to_vec(),
        }
    }

    proptest! {
        #[test]
        fn keeping_or_extending_the_text_is_accepted(old in memory_text(), extra in memory_text()) {
            prop_assert!(guard_consolidation(&old, &output(&old, &[]), "new", &none()).accepted());
            let extended = format!("{old}\n{extra}");
            prop_assert!(guard_consolidation(&old, &output(&extended, &[]), "new", &none()).accepted());
        }

        #[test]
        fn accepted_rewrites_keep_or_retire_every_anchor(
            old in memory_text(), new in memory_text(), obsolete in prop::collection::vec(memory_text(), 0..3),
        ) {
            let verdict = guard_consolidation(&old, &output(&new, &obsolete), "material", &none());
            let retired: Vec<&str> = obsolete.iter().map(|entry| normalize_anchor(entry)).collect();
            if verdict.accepted() {
                prop_assert_eq!(&verdict.memory_md, &new);
                for anchor in extract_anchors(&old) {
                    prop_assert!(new.contains(&anchor) || retired.contains(&anchor.as_str()), "{anchor:?} lost");
                }
            } else {
                prop_assert!(verdict.memory_md.starts_with(old.trim_end()));
                prop_assert!(verdict.memory_md.contains("material"));
                for anchor in &verdict.missing {
                    prop_assert!(!new.contains(anchor.as_str()));
                }
            }
        }

        #[test]
        fn a_dropped_anchor_is_rejected_unless_obsolete(
            before in "[a-z ]{0,30}", name in "[a-z]{1,10}", after in "[a-z ]{0,30}",
        ) {
            let path = format!("src/{name}.rs");
            let old = format!("{before} {path} {after}");
            let new = format!("{before} {after}");
            let rejected = guard_consolidation(&old, &output(&new, &[]), "fresh facts", &none());
            prop_assert_eq!(rejected.missing, vec![path.clone()]);
            prop_assert_eq!(rejected.memory_md, format!("{}\n\n{UNCONSOLIDATED_HEADING}\n\nfresh facts\n", old.trim_end()));
            let forgettable = forgettable_anchors(&format!("note on {path}"), "other thread text");
            let forgotten = guard_consolidation(&old, &output(&new, &[]), "fresh facts", &forgettable);
            prop_assert!(forgotten.accepted());
            prop_assert_eq!(forgotten.forgotten, vec![path.clone()]);
            let shared = forgettable_anchors(&format!("note on {path}"), &format!("kept: {path}"));
            prop_assert!(!guard_consolidation(&old, &output(&new, &[]), "f", &shared).accepted());
            let retired = guard_consolidation(&old, &output(&new, &[format!("`{path}`")]), "fresh facts", &none());
            prop_assert!(retired.accepted());
        }
    }

    // Realistic MEMORY.md rewrites.

    const OLD: &str = "# Task Group: agent-memory write path\n\
    scope: crates/memory-write\n\
    \n\
    ## Task 1 (2025-05-02)\n\
    - Run `cargo test -p memory-write` before committing.\n\
    - The lease lives in src/store/phase_two.rs; see StateStore::claim_phase_two.\n\
    - Set OPENAI_API_KEY only for the http client.\n";

    fn example_output(memory_md: &str, obsolete: &[&str]) -> ConsolidationOutput {
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
        let verdict =
            guard_consolidation(OLD, &example_output(rewrite, &[]), "new material", &none());
        assert!(verdict.accepted(), "{:?}", verdict.missing);
        assert_eq!(verdict.memory_md, rewrite);
    }

    #[test]
    fn a_rewrite_that_drops_anchors_silently_is_rejected_and_keeps_the_old_text() {
        let lossy = "# Task Group: memory-write\nTests: `cargo test -p memory-write`.\n";
        let verdict = guard_consolidation(
            OLD,
            &example_output(lossy, &[]),
            "### Thread `t9`\n\nnew fact",
            &none(),
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
        let verdict =
            guard_consolidation(OLD, &example_output(lossy, &obsolete), "unused", &none());
        assert!(verdict.accepted(), "{:?}", verdict.missing);
        // A partial obsolete list is not enough.
        assert_eq!(
            missing_anchors(OLD, lossy, &["OPENAI_API_KEY".to_owned()]),
            vec!["StateStore::claim_phase_two", "src/store/phase_two.rs"]
        );
    }

    #[test]
    fn the_first_pass_has_nothing_to_lose() {
        let verdict = guard_consolidation("", &example_output("# Memory\n", &[]), "x", &none());
        assert!(verdict.accepted());
    }
}
