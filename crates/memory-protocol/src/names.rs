//! Names shared across crates: the memory-root layout, boundary tags and the redaction marker
//! (table names and lock keys are in `memory-store`). Defined once here so crates on one layer
//! agree without depending on each other.

/// What redaction puts in place of a secret.
pub const REDACTED_SECRET: &str = "[REDACTED_SECRET]";

/// The memory root (`<home>/memories/`) and the files in it.
pub mod memory_root {
    /// Folder of the memory root under the agent-memory home.
    pub const DIR: &str = "memories";
    /// The consolidated handbook, organized by project and topic.
    pub const MEMORY_FILE: &str = "MEMORY.md";
    /// The always-on summary injected into every session.
    pub const MEMORY_SUMMARY_FILE: &str = "memory_summary.md";
    /// The selected raw memories, in a stable order.
    pub const RAW_MEMORIES_FILE: &str = "raw_memories.md";
    /// Folder of one summary file per selected rollout.
    pub const ROLLOUT_SUMMARIES_DIR: &str = "rollout_summaries";
    /// First line of `memory_summary.md`: the format version.
    pub const MEMORY_SUMMARY_VERSION: &str = "v1";
    /// Folder of the notes agents add with `memory_note`, one file each; phase 2 reads them as
    /// input of every consolidation.
    pub const NOTES_DIR: &str = "notes";
    /// Folder of the notes codex's `add_ad_hoc_note` tool writes (one file each, never edited
    /// in place); phase 2 reads them like [`NOTES_DIR`]'s.
    pub const AD_HOC_NOTES_DIR: &str = "extensions/ad_hoc/notes";
    /// In [`NOTES_DIR`], on a machine that shares its memory through a store: the file names
    /// of the notes that came from other machines, one a line (a dot file, so listings and
    /// searches pass over it). They are read and searched like any note but do not count
    /// toward this machine's daily note budget.
    pub const RECEIVED_NOTES_FILE: &str = ".received";
    /// On a machine that shares its memory through a store: the revision of the shared memory
    /// root last materialized here (a dot file, so listings and searches pass over it).
    pub const SHARED_REVISION_FILE: &str = ".shared_revision";
}

/// Files directly in the agent-memory home, beside the memory root.
pub mod home {
    /// The memory search index, owned by `memory-introspect`: its own SQLite file with its own
    /// schema version, apart from the write path's state database.
    pub const MEMORY_INDEX_FILE: &str = "memory_index.sqlite";
}

/// The citation block an agent ends its answer with to say which memories it used.
///
/// ```text
/// <memory-citation>
/// <citation_entries>
/// MEMORY.md:12-20|note=[why it mattered]
/// </citation_entries>
/// <rollout_ids>
/// 019a5210-33c8-7e10-a4d1-92b7f0c4d002
/// </rollout_ids>
/// </memory-citation>
/// ```
///
/// Codex's own block (`oai-mem-citation`, with `thread_ids` in older versions) is read too.
pub mod citation {
    /// The block agent-memory's read path asks for.
    pub const BLOCK: &str = "memory-citation";
    /// The block codex's read path asks for.
    pub const CODEX_BLOCK: &str = "oai-mem-citation";
    /// Lines `path:start-end|note=[...]` pointing into the memory root.
    pub const ENTRIES: &str = "citation_entries";
    /// Thread ids of the sessions whose memories were used, one per line.
    pub const THREAD_IDS: &str = "rollout_ids";
    /// The older name of [`THREAD_IDS`].
    pub const LEGACY_THREAD_IDS: &str = "thread_ids";
}

/// Hidden internal-context messages: user-role input a host sends to the model without showing
/// it as a user message. The text is `<TAG source="SOURCE">` + newline + body + newline +
/// `</TAG>`.
pub mod internal_context {
    /// The wrapping tag.
    pub const TAG: &str = super::boundary_tags::INTERNAL_CONTEXT;
    /// The source of goal steering (continuation, budget-limit and objective-updated prompts).
    pub const GOAL_SOURCE: &str = "goal";
}

/// Tag names that delimit untrusted data in prompts. Data placed inside one of these tags is
/// escaped so it can neither open nor close any of them.
pub mod boundary_tags {
    /// A serialized conversation given to a summarizer.
    pub const CONVERSATION: &str = "conversation";
    /// An earlier summary given to a summarizer.
    pub const PREVIOUS_SUMMARY: &str = "previous-summary";
    /// Extra context given to a summarizer.
    pub const ADDITIONAL_CONTEXT: &str = "additional-context";
    /// A rollout's filtered content given to the extractor.
    pub const ROLLOUT_CONTENT: &str = "rollout-content";
    /// A goal objective.
    pub const OBJECTIVE: &str = "objective";
    /// A goal objective the user just edited.
    pub const UNTRUSTED_OBJECTIVE: &str = "untrusted_objective";
    /// The always-on memory block.
    pub const MEMORY: &str = "memory";
    /// Memories recalled for the current turn.
    pub const MEMORY_RECALL: &str = "memory-recall";
    /// The memory summary injected by the read path.
    pub const MEMORY_SUMMARY: &str = "memory-summary";
    /// Memory material given to the consolidator.
    pub const MEMORY_FILE: &str = "memory-file";
    /// Stage-one material given to the consolidator.
    pub const RAW_MEMORY: &str = "raw-memory";
    /// The working-memory document.
    pub const WORKING_MEMORY: &str = "working-memory";
    /// The host environment block.
    pub const ENVIRONMENT: &str = "environment";
    /// A hidden internal-context message (see [`super::internal_context`]).
    pub const INTERNAL_CONTEXT: &str = "agent_memory_internal_context";
    /// The size warnings of working-memory sections.
    pub const SECTION_SIZE_WARNINGS: &str = "section_size_warnings";

    /// Every boundary tag.
    pub const ALL: &[&str] = &[
        CONVERSATION,
        PREVIOUS_SUMMARY,
        ADDITIONAL_CONTEXT,
        ROLLOUT_CONTENT,
        OBJECTIVE,
        UNTRUSTED_OBJECTIVE,
        MEMORY,
        MEMORY_RECALL,
        MEMORY_SUMMARY,
        MEMORY_FILE,
        RAW_MEMORY,
        WORKING_MEMORY,
        ENVIRONMENT,
        INTERNAL_CONTEXT,
        SECTION_SIZE_WARNINGS,
    ];
}
