//! `memory_note` with an `id`: a note replaced or deleted, only when the caller names the
//! version it read (the `version` `memory_read` returned), so an agent never overwrites a
//! note it has not seen in its current form (basic-memory #625: an agent's write wiped a day
//! of notes).

use std::fs;

use memory_protocol::introspect::{
    MemoryFailureCode, MemoryNoteRequest, MemoryNoteResult, MemoryToolFailure,
};
use memory_protocol::names::memory_root::NOTES_DIR;

use crate::introspector::Introspector;
use crate::notes::{NoteAuthor, notes_on_day, render_note};
use crate::paths::{RelativePath, open_file};
use crate::scan::scan;
use crate::tools::note::{LOCK_FILE, lock, prepare, write_atomically};
use crate::tools::{failure, invalid_input, refusal, resolve_failure, unavailable};
use crate::version_of;

impl Introspector {
    /// Replaces or deletes the note `id` (see the module docs).
    pub(crate) fn edit_note(
        &self,
        id: &str,
        request: &MemoryNoteRequest,
        author: NoteAuthor,
    ) -> Result<MemoryNoteResult, MemoryToolFailure> {
        let relative = RelativePath::parse(id).map_err(|refused| refusal(id, refused))?;
        let path = relative.display();
        let name = path
            .strip_prefix(&format!("{NOTES_DIR}/"))
            .filter(|name| !name.contains('/') && name.ends_with(".md"))
            .ok_or_else(|| {
                invalid_input(format!(
                    "`{path}` is not a note: only files directly in {NOTES_DIR}/ can be \
                     replaced or deleted; the other memory files are rebuilt by consolidation"
                ))
            })?
            .to_owned();
        let Some(version) = request.version.as_deref() else {
            return Err(conflict(
                format!("replacing or deleting `{path}` needs the version you read"),
                &path,
            ));
        };
        // Checked before taking the lock, so a bad text costs nothing.
        let prepared = if request.delete {
            None
        } else {
            Some(prepare(self, request)?)
        };
        let notes_dir = self.notes_dir()?;
        let _lock = lock(&notes_dir).map_err(|error| {
            unavailable(
                format!("{NOTES_DIR}/{LOCK_FILE}: {}", crate::io_reason(&error)),
                &self.display_root(),
            )
        })?;
        let (mut file, _) =
            open_file(self.root(), &relative).map_err(|error| resolve_failure(self, id, &error))?;
        let mut current = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut current).map_err(|error| {
            unavailable(
                format!("`{path}`: {}", crate::io_reason(&error)),
                &self.display_root(),
            )
        })?;
        drop(file);
        let now_version = version_of(&current);
        if now_version != version {
            return Err(conflict(
                format!(
                    "`{path}` changed since version {version} was read (it is now version \
                     {now_version})"
                ),
                &path,
            ));
        }
        let (bytes, redacted, version) = match prepared {
            None => {
                fs::remove_file(notes_dir.join(&name)).map_err(|error| {
                    failure(
                        MemoryFailureCode::Failed,
                        format!("deleting `{path}`: {}", crate::io_reason(&error)),
                    )
                })?;
                #[cfg(unix)]
                if let Ok(dir) = fs::File::open(&notes_dir) {
                    // The removal is durable once the folder is synced; a failed sync leaves
                    // it done in the page cache, which is all a reader sees.
                    let _ = dir.sync_all();
                }
                (0, false, None)
            }
            Some(prepared) => {
                let cwd = self.cwd().map(|cwd| cwd.to_string_lossy());
                let body = render_note(
                    prepared.topic.as_deref(),
                    self.now(),
                    &prepared.text,
                    author,
                    cwd.as_deref(),
                );
                write_atomically(&notes_dir, &name, &body).map_err(|error| {
                    failure(
                        MemoryFailureCode::Failed,
                        format!("writing `{path}`: {}", crate::io_reason(&error)),
                    )
                })?;
                let bytes = u32::try_from(body.len()).unwrap_or(u32::MAX);
                (bytes, prepared.redacted, Some(version_of(body.as_bytes())))
            }
        };
        let (indexed, warning) = self.index_note(&path);
        let today = scan(self.root()).map_or(0, |after| notes_on_day(&after, self.now()));
        Ok(MemoryNoteResult {
            path,
            bytes,
            redacted,
            indexed,
            notes_today: today,
            daily_limit: self.config().notes_per_day,
            warning,
            version,
            deleted: request.delete,
        })
    }
}

/// The refusal of an edit without the version the caller read, or with an older one.
fn conflict(error: String, path: &str) -> MemoryToolFailure {
    MemoryToolFailure {
        action: Some(format!(
            "Read `{path}` with memory_read, check it still says what you mean to change, and \
             call again with the version it returns."
        )),
        ..failure(MemoryFailureCode::Conflict, error)
    }
}
