//! `memory_note`: a note added to `notes/`, synchronously (replacing or deleting one is
//! `note_edit.rs`).
//!
//! The note is cleaned (control characters), redacted, checked against the size and daily
//! budgets, written atomically (temporary file, fsync, rename, folder fsync) under a lock that
//! also guards the daily count, and indexed before the call returns: a `memory_read` or
//! `memory_search` right after finds it. Phase 2 of the write path reads every note as input.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

use memory_protocol::introspect::{
    MemoryFailureCode, MemoryMode, MemoryNoteRequest, MemoryNoteResult, MemoryToolFailure,
};
use memory_protocol::names::memory_root::NOTES_DIR;
use memory_sanitize::redact_secrets;

use crate::introspector::Introspector;
use crate::notes::{NoteAuthor, day, note_stem, notes_on_day, render_note};
use crate::paths::{RelativePath, ResolveError, resolve};
use crate::scan::scan;
use crate::tools::{failure, invalid_input, resolve_failure, unavailable};

/// Longest topic, in characters.
const MAX_TOPIC_CHARS: usize = 80;
/// Lock file in `notes/` held while counting and writing.
pub(crate) const LOCK_FILE: &str = ".lock";

impl Introspector {
    /// Adds a note (see the module docs), as an agent's.
    pub fn note(&self, request: &MemoryNoteRequest) -> Result<MemoryNoteResult, MemoryToolFailure> {
        self.note_by(request, NoteAuthor::Agent)
    }

    /// Adds a note (see the module docs), stamped with who wrote it.
    pub fn note_by(
        &self,
        request: &MemoryNoteRequest,
        author: NoteAuthor,
    ) -> Result<MemoryNoteResult, MemoryToolFailure> {
        self.require_enabled()?;
        if self.config().effective_mode() != MemoryMode::Writable {
            return Err(read_only());
        }
        if let Some(id) = request.id.as_deref() {
            return self.edit_note(id, request, author);
        }
        if request.version.is_some() || request.delete {
            return Err(invalid_input(
                "`version` and `delete` go with `id`, the note to replace or delete".to_owned(),
            ));
        }
        let Prepared {
            text: redacted_text,
            topic: redacted_topic,
            redacted,
        } = prepare(self, request)?;

        let notes_dir = self.notes_dir()?;
        let _lock = lock(&notes_dir).map_err(|error| {
            unavailable(
                format!("{NOTES_DIR}/{LOCK_FILE}: {}", crate::io_reason(&error)),
                &self.display_root(),
            )
        })?;
        let now = self.now();
        let before = scan(self.root()).map_err(|error| {
            unavailable(
                format!("memory root: {}", crate::io_reason(&error)),
                &self.display_root(),
            )
        })?;
        let today = notes_on_day(&before, now);
        let limit = self.config().notes_per_day;
        if today >= limit {
            return Err(MemoryToolFailure {
                warning: Some("Tell the user the note was not saved.".to_owned()),
                action: Some(format!(
                    "The daily budget resets at 00:00 UTC; notes written on {} stay searchable.",
                    day(now)
                )),
                ..failure(
                    MemoryFailureCode::BudgetExceeded,
                    format!("{today} notes were already added today; the limit is {limit} a day"),
                )
            });
        }
        let cwd = self.cwd().map(|cwd| cwd.to_string_lossy());
        let body = render_note(
            redacted_topic.as_deref(),
            now,
            &redacted_text,
            author,
            cwd.as_deref(),
        );
        let name = (0..u32::from(u16::MAX))
            .map(|attempt| format!("{}.md", note_stem(now, seed().wrapping_add(attempt))))
            .find(|name| !notes_dir.join(name).exists())
            .ok_or_else(|| {
                failure(
                    MemoryFailureCode::Failed,
                    "no free note name for this second".to_owned(),
                )
            })?;
        write_atomically(&notes_dir, &name, &body).map_err(|error| {
            failure(
                MemoryFailureCode::Failed,
                format!("writing {NOTES_DIR}/{name}: {}", crate::io_reason(&error)),
            )
        })?;
        let path = format!("{NOTES_DIR}/{name}");

        let (indexed, warning) = self.index_note(&path);
        Ok(MemoryNoteResult {
            path,
            bytes: u32::try_from(body.len()).unwrap_or(u32::MAX),
            redacted,
            indexed,
            notes_today: today + 1,
            daily_limit: limit,
            warning,
            version: Some(crate::version_of(body.as_bytes())),
            deleted: false,
        })
    }

    /// Brings the index up to date after `path` was written or deleted, so a search right
    /// after sees it: whether that worked, and a warning when it did not.
    pub(crate) fn index_note(&self, path: &str) -> (bool, Option<String>) {
        match scan(self.root()) {
            Ok(after) => match self.with_index(|index| index.refresh(self.root(), &after)) {
                Ok(report) if !report.unreadable.iter().any(|(p, _)| *p == path) => (true, None),
                Ok(_) => (
                    false,
                    Some("the note was saved but could not be indexed".to_owned()),
                ),
                Err(problem) => (
                    false,
                    Some(format!(
                        "the note was saved; the search index could not be updated ({problem}), \
                         so searches read the files directly until it can"
                    )),
                ),
            },
            Err(error) => (
                false,
                Some(format!(
                    "the note was saved but the memory root could not be listed: {}",
                    crate::io_reason(&error)
                )),
            ),
        }
    }

    /// `notes/`, created (with the root) when missing; a symlinked or non-folder `notes` is
    /// refused.
    pub(crate) fn notes_dir(&self) -> Result<std::path::PathBuf, MemoryToolFailure> {
        let root = self.root();
        let relative = RelativePath::root().join(NOTES_DIR);
        match resolve(root, &relative) {
            Ok((path, metadata)) if metadata.is_dir() => Ok(path),
            Ok(_) => Err(unavailable(
                format!("{NOTES_DIR} is a file, not a folder"),
                &self.display_root(),
            )),
            Err(ResolveError::NotFound(_)) => {
                let path = relative.under(root);
                fs::create_dir_all(&path).map_err(|error| {
                    unavailable(
                        format!("creating {NOTES_DIR}/: {}", crate::io_reason(&error)),
                        &self.display_root(),
                    )
                })?;
                // Created just now; check again that nothing swapped it for a link.
                match resolve(root, &relative) {
                    Ok((path, metadata)) if metadata.is_dir() => Ok(path),
                    Ok(_) => Err(unavailable(
                        format!("{NOTES_DIR} is a file, not a folder"),
                        &self.display_root(),
                    )),
                    Err(error) => Err(resolve_failure(self, NOTES_DIR, &error)),
                }
            }
            Err(error) => Err(resolve_failure(self, NOTES_DIR, &error)),
        }
    }
}

/// A note's text and topic as they will be written: cleaned, redacted, within the size
/// budget.
pub(crate) struct Prepared {
    pub(crate) text: String,
    pub(crate) topic: Option<String>,
    /// True when secrets were replaced.
    pub(crate) redacted: bool,
}

/// Cleans, redacts and checks the size of a note's text and topic.
pub(crate) fn prepare(
    memory: &Introspector,
    request: &MemoryNoteRequest,
) -> Result<Prepared, MemoryToolFailure> {
    let text = clean(&request.text);
    if text.is_empty() {
        return Err(invalid_input("the note is blank".to_owned()));
    }
    let topic = request
        .topic
        .as_deref()
        .map(|topic| {
            one_line(topic)
                .chars()
                .take(MAX_TOPIC_CHARS)
                .collect::<String>()
        })
        .map(|topic| topic.trim().to_owned())
        .filter(|topic| !topic.is_empty());
    let redacted_text = redact_secrets(&text);
    let redacted_topic = topic.as_deref().map(redact_secrets);
    let redacted = redacted_text != text
        || redacted_topic
            .as_ref()
            .zip(topic.as_deref())
            .is_some_and(|(after, before)| after != before);
    let max = memory.config().note_max_bytes;
    let size = u32::try_from(redacted_text.len()).unwrap_or(u32::MAX);
    if size > max {
        return Err(MemoryToolFailure {
            warning: Some("Tell the user the note was not saved.".to_owned()),
            action: Some(format!(
                "Shorten the note to at most {max} bytes (one fact per note) and retry."
            )),
            ..failure(
                MemoryFailureCode::BudgetExceeded,
                format!("the note is {size} bytes; a note holds at most {max}"),
            )
        });
    }
    Ok(Prepared {
        text: redacted_text.into_owned(),
        topic: redacted_topic.map(std::borrow::Cow::into_owned),
        redacted,
    })
}

fn read_only() -> MemoryToolFailure {
    MemoryToolFailure {
        warning: Some(
            "Tell the user the note was not saved: memory is read-only here. What they said \
             in this session can still be picked up from the session by the write path."
                .to_owned(),
        ),
        action: Some(
            "The user can set `mode = \"writable\"` under [introspect] in the agent-memory \
             config.toml."
                .to_owned(),
        ),
        ..failure(
            MemoryFailureCode::ReadOnly,
            "memory is read-only in this configuration".to_owned(),
        )
    }
}

/// The note's text: line endings normalized, control characters other than newlines and tabs
/// replaced, trimmed.
fn clean(text: &str) -> String {
    text.replace("\r\n", "\n")
        .chars()
        .map(|ch| {
            if ch.is_control() && ch != '\n' && ch != '\t' {
                ' '
            } else {
                ch
            }
        })
        .collect::<String>()
        .trim()
        .to_owned()
}

fn one_line(text: &str) -> String {
    text.chars()
        .map(|ch| if ch.is_control() { ' ' } else { ch })
        .collect()
}

/// A starting suffix that differs between processes writing in the same second.
fn seed() -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |duration| duration.subsec_nanos());
    nanos ^ std::process::id().rotate_left(16)
}

/// Holds an exclusive lock on `notes/.lock` until dropped.
pub(crate) fn lock(notes_dir: &Path) -> std::io::Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(notes_dir.join(LOCK_FILE))?;
    file.lock()?;
    Ok(file)
}

/// Writes `text` to `dir/name` through a temporary file, fsyncing the file and the folder.
pub(crate) fn write_atomically(dir: &Path, name: &str, text: &str) -> std::io::Result<()> {
    let temp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        fs::rename(&temp, dir.join(name))?;
        #[cfg(unix)]
        File::open(dir)?.sync_all()?;
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}
