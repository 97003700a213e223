//! `memory_status`: live numbers, and the numbers of the last injected block.

use memory_protocol::introspect::{MemoryNotesStatus, MemoryState, MemoryStatusResult};

use crate::introspector::Introspector;
use crate::notes::{note_files, notes_on_day};
use crate::scan::Walk;

impl Introspector {
    /// Probes memory and reports it. Never fails: a problem is the `unavailable` or
    /// `degraded` state with `problem` set.
    pub fn status(&self) -> MemoryStatusResult {
        let probe = self.probe(Walk::Full);
        let config = self.config();
        let notes = note_files(&probe.scan);
        let consolidated_at = probe.summary.as_ref().map_or(i64::MIN, |s| s.written_at);
        let pending = notes
            .iter()
            .filter(|file| file.mtime_seconds() >= consolidated_at)
            .count();
        MemoryStatusResult {
            state: probe.state,
            mode: config.effective_mode(),
            scope: config.scope,
            root: self.display_root(),
            as_of: probe.as_of,
            files: probe.scan.file_count(),
            bytes: probe.scan.bytes(),
            revision: probe.scan.revision(),
            last_write_at: probe.scan.last_write_at(),
            summary: probe.summary_use(config.summary_budget_tokens),
            index: probe.index.clone(),
            notes: MemoryNotesStatus {
                files: u32::try_from(notes.len()).unwrap_or(u32::MAX),
                pending: u32::try_from(pending).unwrap_or(u32::MAX),
                today: notes_on_day(&probe.scan, probe.as_of),
                daily_limit: config.notes_per_day,
                max_note_bytes: config.note_max_bytes,
            },
            last_injected: if probe.state == MemoryState::Disabled {
                None
            } else {
                self.last_injection()
            },
            problem: probe.problem(),
        }
    }
}
