//! The write path's tables, written once and rendered per dialect.
//!
//! SQLite reached today's tables in three versions, and each is one migration there. A
//! PostgreSQL store started later, with all three at once as its version 1; its own later
//! versions (rows shared across machines, claim bookkeeping) are PostgreSQL's alone and live in
//! `postgres/schema.rs`.

use memory_store::ddl::Dialect;
use memory_store::names::tables::{
    PHASE_TWO_BASELINE, PHASE_TWO_LEASE, STAGE_ONE_JOBS, STAGE_ONE_OUTPUTS, THREADS,
};

/// Threads, stage-one jobs and outputs, and the phase-2 lease row.
fn first_tables(dialect: Dialect) -> String {
    let int = dialect.integer();
    let flag = dialect.flag();
    let no = dialect.no();
    format!(
        "CREATE TABLE {THREADS} (
            id TEXT PRIMARY KEY,
            rollout_path TEXT NOT NULL,
            cwd TEXT,
            source TEXT,
            skip_reason TEXT,
            created_at {int} NOT NULL,
            updated_at {int} NOT NULL,
            last_activity_at {int} NOT NULL,
            memory_mode TEXT NOT NULL DEFAULT 'enabled',
            source_watermark {int} NOT NULL,
            source_fingerprint TEXT NOT NULL,
            file_size {int} NOT NULL,
            file_mtime_ns {int} NOT NULL
        );
        CREATE INDEX {THREADS}_activity ON {THREADS} (last_activity_at DESC, id DESC);
        CREATE INDEX {THREADS}_path ON {THREADS} (rollout_path);
        CREATE TABLE {STAGE_ONE_JOBS} (
            thread_id TEXT PRIMARY KEY,
            status TEXT NOT NULL,
            owner_token TEXT,
            lease_expires_at {int},
            attempts {int} NOT NULL DEFAULT 0,
            retry_after_at {int},
            last_error TEXT,
            input_watermark {int} NOT NULL,
            last_success_watermark {int},
            started_at {int},
            finished_at {int}
        );
        CREATE INDEX {STAGE_ONE_JOBS}_status ON {STAGE_ONE_JOBS} (status, lease_expires_at);
        CREATE TABLE {STAGE_ONE_OUTPUTS} (
            thread_id TEXT PRIMARY KEY,
            raw_memory TEXT NOT NULL,
            rollout_summary TEXT NOT NULL,
            rollout_slug TEXT,
            source_updated_at {int} NOT NULL,
            generated_at {int} NOT NULL,
            usage_count {int} NOT NULL DEFAULT 0,
            last_used_at {int},
            selected {flag} NOT NULL DEFAULT {no},
            selected_source_updated_at {int}
        );
        CREATE INDEX {STAGE_ONE_OUTPUTS}_source
            ON {STAGE_ONE_OUTPUTS} (source_updated_at DESC, thread_id DESC);
        CREATE TABLE {PHASE_TWO_LEASE} (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            status TEXT NOT NULL DEFAULT 'pending',
            owner_token TEXT,
            lease_expires_at {int},
            heartbeat_at {int},
            attempts {int} NOT NULL DEFAULT 0,
            input_watermark {int} NOT NULL DEFAULT 0,
            last_success_watermark {int},
            last_success_at {int},
            last_input_hash TEXT,
            last_error TEXT,
            retry_after_at {int}
        );
        INSERT INTO {PHASE_TWO_LEASE} (id) VALUES (1);"
    )
}

/// Who holds each lease: host, process id and the process's start identity.
fn lease_owner_columns(dialect: Dialect) -> String {
    let int = dialect.integer();
    format!(
        "ALTER TABLE {STAGE_ONE_JOBS} ADD COLUMN owner_host TEXT;
         ALTER TABLE {STAGE_ONE_JOBS} ADD COLUMN owner_pid {int};
         ALTER TABLE {STAGE_ONE_JOBS} ADD COLUMN owner_started TEXT;
         ALTER TABLE {PHASE_TWO_LEASE} ADD COLUMN owner_host TEXT;
         ALTER TABLE {PHASE_TWO_LEASE} ADD COLUMN owner_pid {int};
         ALTER TABLE {PHASE_TWO_LEASE} ADD COLUMN owner_started TEXT;"
    )
}

/// The git branch a session recorded, and what the last successful phase-2 pass consolidated
/// (so the next one knows what was added, changed and removed).
fn branches_and_baseline(dialect: Dialect) -> String {
    let int = dialect.integer();
    format!(
        "ALTER TABLE {THREADS} ADD COLUMN git_branch TEXT;
         CREATE TABLE {PHASE_TWO_BASELINE} (
            thread_id TEXT PRIMARY KEY,
            source_updated_at {int} NOT NULL,
            material TEXT NOT NULL
         );"
    )
}

/// The three versions in order: SQLite applies them one by one, PostgreSQL as its version 1.
pub(super) fn shared_versions(dialect: Dialect) -> [String; 3] {
    [
        first_tables(dialect),
        lease_owner_columns(dialect),
        branches_and_baseline(dialect),
    ]
}
