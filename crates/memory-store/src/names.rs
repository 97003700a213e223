//! Table names, schema owners and PostgreSQL lock keys: defined once here so every owner of
//! tables (crates on one layer that never import each other) agrees on them.

/// Table names, grouped by the crate that owns them.
pub mod tables {
    /// Owned by `memory-write`: one row per known rollout.
    pub const THREADS: &str = "threads";
    /// Owned by `memory-write`: leased stage-one jobs.
    pub const STAGE_ONE_JOBS: &str = "stage1_jobs";
    /// Owned by `memory-write`: stage-one outputs.
    pub const STAGE_ONE_OUTPUTS: &str = "stage1_outputs";
    /// Owned by `memory-write`: the single phase-2 lease row.
    pub const PHASE_TWO_LEASE: &str = "phase2_lease";
    /// Owned by `memory-write`: what the last successful phase-2 pass consolidated, one row
    /// per thread, so the next pass knows what was added, changed and removed.
    pub const PHASE_TWO_BASELINE: &str = "phase2_baseline";
    /// Owned by `memory-write`, on stores shared by several machines: each rollout's filtered,
    /// redacted items, uploaded at registration so any machine's worker can extract it.
    pub const ROLLOUT_CONTENTS: &str = "rollout_contents";
    /// Owned by `memory-write`, on stores shared by several machines: the memory root each
    /// successful consolidation wrote, one row per revision; machines materialize the newest.
    pub const MEMORY_ROOT_REVISIONS: &str = "memory_root_revisions";
    /// Owned by `memory-write`, on stores shared by several machines: every machine's agent
    /// notes (`notes/`), so a note written on one is read and searched on all.
    pub const SHARED_NOTES: &str = "shared_notes";
    /// Owned by `goal-steering`: one goal per thread.
    pub const THREAD_GOALS: &str = "thread_goals";
    /// Owned by `goal-steering`: one row per turn charged to a goal.
    pub const GOAL_TURNS: &str = "goal_turns";
    /// Owned by `goal-steering`: goals replaced or cleared, kept with their usage (their turns
    /// stay in [`GOAL_TURNS`]).
    pub const GOAL_ARCHIVE: &str = "goal_archive";
    /// Owned by `memory-introspect` (in its own file): the memory search index.
    pub const MEMORY_SEARCH_INDEX: &str = "memory_search_index";
    /// Owned by this crate: the schema version of each owner's tables, one row per owner (see
    /// [`super::schema_owners`]), on SQLite and PostgreSQL alike.
    pub const SCHEMA_VERSIONS: &str = "schema_versions";
}

/// Owners of rows in [`tables::SCHEMA_VERSIONS`].
pub mod schema_owners {
    /// The goal tables ([`super::tables::THREAD_GOALS`], [`super::tables::GOAL_TURNS`]).
    pub const GOAL_STEERING: &str = "goal-steering";
    /// The write path's tables.
    pub const MEMORY_WRITE: &str = "memory-write";
    /// The memory search index's tables (in their own file).
    pub const MEMORY_INTROSPECT: &str = "memory-introspect";
}

/// Keys of PostgreSQL advisory locks, one place for every owner so no two collide.
pub mod postgres_locks {
    /// Held (transaction-scoped) by every owner while it migrates its tables, so machines and
    /// owners opening a fresh database at once create `schema_versions` and apply each
    /// migration exactly once. Any fixed number; this one spells "agentmem" in ASCII.
    pub const MIGRATION: i64 = 0x6167_656e_746d_656d;
    /// The class (first key) of the per-thread lock every goal write holds for its
    /// transaction, the second key being a hash of the thread id: writes to one thread's goal
    /// serialize as they do on SQLite. Spells "goal" in ASCII.
    pub const GOAL_THREAD_CLASS: i32 = 0x676f_616c;
}
