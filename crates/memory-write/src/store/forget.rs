//! Forgetting in the state store: one thread, or everything.

use memory_store::names::tables::{
    PHASE_TWO_BASELINE, PHASE_TWO_LEASE, STAGE_ONE_JOBS, STAGE_ONE_OUTPUTS, THREADS,
};
use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::Db;
use super::stage_one::signal_phase_two;
use super::threads::MemoryMode;
use crate::error::Result;

/// Shortest thread-id prefix accepted as a reference.
pub(super) const MIN_PREFIX_CHARS: usize = 4;

/// What a thread reference (an id, an id prefix or a rollout path) names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThreadMatch {
    /// Exactly one thread.
    One(String),
    /// No known thread.
    None,
    /// Several threads; the reference needs more characters.
    Ambiguous(Vec<String>),
}

impl ThreadMatch {
    /// What the ids a prefix matched (at most a few) name.
    pub(super) fn from_prefix_matches(ids: Vec<String>) -> ThreadMatch {
        match ids.as_slice() {
            [] => ThreadMatch::None,
            [one] => ThreadMatch::One(one.clone()),
            _ => ThreadMatch::Ambiguous(ids),
        }
    }
}

/// What forgetting one thread removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ForgetReport {
    /// Its stage-one output was deleted.
    pub output_deleted: bool,
    /// Its memory was in the last consolidation, so the next one must remove it.
    pub was_consolidated: bool,
}

/// What resetting every memory removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResetReport {
    /// Stage-one outputs deleted.
    pub outputs: usize,
    /// Stage-one jobs deleted.
    pub jobs: usize,
}

impl Db {
    /// Finds the thread a reference names: its full id, a prefix of at least four characters
    /// of exactly one id, or its rollout file's path.
    pub(super) fn resolve_thread(&self, reference: &str) -> Result<ThreadMatch> {
        let reference = reference.trim();
        let exact: Option<String> = self
            .conn
            .query_row(
                &format!("SELECT id FROM {THREADS} WHERE id = ?1 OR rollout_path = ?1 LIMIT 1"),
                [reference],
                |row| row.get(0),
            )
            .optional()?;
        if let Some(id) = exact {
            return Ok(ThreadMatch::One(id));
        }
        if reference.chars().count() < MIN_PREFIX_CHARS {
            return Ok(ThreadMatch::None);
        }
        let mut statement = self.conn.prepare(&format!(
            "SELECT id FROM {THREADS} WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id LIMIT 10"
        ))?;
        let ids: Vec<String> = statement
            .query_map([reference], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(ThreadMatch::from_prefix_matches(ids))
    }

    /// Forgets one thread: deletes its stage-one output and job and disables its memory, so
    /// no later run extracts it again. When its memory was in the last consolidation, phase 2
    /// gets new input (the next pass removes it).
    pub(super) fn forget_thread(&mut self, thread_id: &str, now: i64) -> Result<ForgetReport> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let was_consolidated: bool = tx.query_row(
            &format!("SELECT EXISTS (SELECT 1 FROM {PHASE_TWO_BASELINE} WHERE thread_id = ?1)"),
            [thread_id],
            |row| row.get(0),
        )?;
        let deleted = tx.execute(
            &format!("DELETE FROM {STAGE_ONE_OUTPUTS} WHERE thread_id = ?1"),
            [thread_id],
        )?;
        tx.execute(
            &format!("DELETE FROM {STAGE_ONE_JOBS} WHERE thread_id = ?1"),
            [thread_id],
        )?;
        tx.execute(
            &format!("UPDATE {THREADS} SET memory_mode = ?2, updated_at = ?3 WHERE id = ?1"),
            params![thread_id, MemoryMode::Disabled.as_str(), now],
        )?;
        if was_consolidated || deleted > 0 {
            signal_phase_two(&tx, now)?;
        }
        tx.commit()?;
        Ok(ForgetReport {
            output_deleted: deleted > 0,
            was_consolidated,
        })
    }

    /// Resets every memory: deletes all stage-one outputs and jobs and the consolidation
    /// baseline, and returns the phase-2 lease row to its first state. Threads stay known with
    /// their memory modes, so the next run extracts the enabled ones again.
    pub(super) fn reset_memories(&mut self) -> Result<ResetReport> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let outputs = tx.execute(&format!("DELETE FROM {STAGE_ONE_OUTPUTS}"), [])?;
        let jobs = tx.execute(&format!("DELETE FROM {STAGE_ONE_JOBS}"), [])?;
        tx.execute(&format!("DELETE FROM {PHASE_TWO_BASELINE}"), [])?;
        tx.execute(&format!("DELETE FROM {PHASE_TWO_LEASE}"), [])?;
        tx.execute(
            &format!("INSERT INTO {PHASE_TWO_LEASE} (id) VALUES (1)"),
            [],
        )?;
        tx.commit()?;
        Ok(ResetReport { outputs, jobs })
    }
}
