//! The memory root (`<home>/memories/`): the files phase 2 writes and agents read.
//!
//! Layout (names from [`memory_protocol::names::memory_root`]):
//! - `raw_memories.md`: the selected raw memories in ascending thread-id order;
//! - `rollout_summaries/<stem>.md`: one summary per selected rollout;
//! - `MEMORY.md`: the consolidated handbook;
//! - `memory_summary.md`: the always-on summary, `v1` on its first line;
//! - `notes/`: notes agents added with `memory_note` (written by `memory-introspect`), read
//!   here as phase-2 input;
//! - `extensions/ad_hoc/notes/`: notes codex's `add_ad_hoc_note` tool writes when the root is
//!   codex's, read as phase-2 input like `notes/`.
//!
//! Text is made display-safe ([`memory_sanitize::display_safe`]) on its way in: no control
//! character but newline and tab, no bidirectional control. Files are read only when they are
//! regular files; a FIFO or socket put in a file's place is replaced by the next write.
//!
//! Every write goes to a temp file in the target's folder, is fsynced, then renamed over the
//! target, and the folder is fsynced: a crash at any point leaves either the old or the new
//! file, never a torn one. Leftover temp files of a crashed write are removed by
//! [`MemoryRoot::prepare`].

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
#[cfg(feature = "fault-injection")]
use std::sync::Arc;

use memory_protocol::consolidation::ConsolidationNote;
use memory_protocol::names::memory_root as names;
use memory_protocol::stage_one::StageOneOutputRecord;
use memory_sanitize::display_safe;

use crate::error::{Error, Result};
use crate::safe_file::read_regular_file;

/// Longest slug part of a rollout-summary file stem, in bytes (all ASCII).
const MAX_SLUG_BYTES: usize = 60;
/// 62^4: the range of the four base-62 digits of a stem's hash part.
const HASH4_RANGE: u64 = 14_776_336;
const BASE62: &[u8; 62] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
/// Marker in the names of temp files, so a crashed write's leftovers can be recognised.
const TEMP_MARKER: &str = ".tmp-";
/// The folders phase 2 reads notes from: the notes agents add with `memory_note`, and the
/// notes codex's `add_ad_hoc_note` tool writes when codex shares this root.
const NOTE_DIRS: [&str; 2] = [names::NOTES_DIR, names::AD_HOC_NOTES_DIR];

/// Called after a temp file is written and synced, just before it is renamed over `target`.
/// Returning an error simulates a crash at that point: the write stops, the temp file stays
/// behind and the target is untouched. Crash tests only (feature `fault-injection`).
#[cfg(feature = "fault-injection")]
pub type CrashHook = Arc<dyn Fn(&Path) -> io::Result<()> + Send + Sync>;

/// The memory root folder and its files.
#[derive(Clone)]
pub struct MemoryRoot {
    dir: PathBuf,
    #[cfg(feature = "fault-injection")]
    crash_before_rename: Option<CrashHook>,
}

impl std::fmt::Debug for MemoryRoot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryRoot")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

/// What [`MemoryRoot::sync_inputs`] changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Files created or rewritten because their content changed.
    pub files_written: usize,
    /// Rollout summaries removed because their rollout is no longer selected.
    pub files_removed: usize,
    /// File stem of each selected thread's rollout summary, by thread id.
    pub stems: BTreeMap<String, String>,
}

impl MemoryRoot {
    /// The memory root under an agent-memory home: `<home>/memories`.
    pub fn under_home(home: &Path) -> Self {
        Self::at(home.join(names::DIR))
    }

    /// A memory root at exactly `dir`.
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            #[cfg(feature = "fault-injection")]
            crash_before_rename: None,
        }
    }

    /// Installs a [`CrashHook`] run before every rename (crash tests).
    #[cfg(feature = "fault-injection")]
    pub fn with_crash_before_rename(mut self, hook: CrashHook) -> Self {
        self.crash_before_rename = Some(hook);
        self
    }

    /// The root folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of a file directly in the root, such as [`names::MEMORY_FILE`].
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The rollout-summaries folder.
    pub fn rollout_summaries_dir(&self) -> PathBuf {
        self.dir.join(names::ROLLOUT_SUMMARIES_DIR)
    }

    /// Creates the root and its rollout-summaries folder and removes temp files left by a
    /// crashed write. Refuses a rollout-summaries folder that is a symlink or not a folder,
    /// since phase 2 deletes files in it.
    pub fn prepare(&self) -> Result<()> {
        fs::create_dir_all(&self.dir).map_err(|source| io_error(&self.dir, source))?;
        let summaries = self.rollout_summaries_dir();
        match fs::symlink_metadata(&summaries) {
            Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => {
                return Err(Error::UnsafeMemoryRoot {
                    path: summaries,
                    reason: "expected a real folder, not a symlink or a file".to_owned(),
                });
            }
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                fs::create_dir(&summaries).map_err(|source| io_error(&summaries, source))?;
            }
            Err(source) => return Err(io_error(&summaries, source)),
        }
        remove_stale_temp_files(&self.dir)?;
        remove_stale_temp_files(&summaries)
    }

    /// Removes everything inside the root and keeps the (empty) root folder. Refuses a root
    /// that is a symlink, so a reset never deletes through one; links inside are removed, not
    /// followed. A missing root is already empty. Returns how many entries were removed (the
    /// write path's hidden state is removed, not counted).
    pub fn clear(&self) -> Result<usize> {
        match fs::symlink_metadata(&self.dir) {
            Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => {
                return Err(Error::UnsafeMemoryRoot {
                    path: self.dir.clone(),
                    reason: "expected a real folder, not a symlink or a file".to_owned(),
                });
            }
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(source) => return Err(io_error(&self.dir, source)),
        }
        let entries = fs::read_dir(&self.dir).map_err(|source| io_error(&self.dir, source))?;
        let mut removed = 0;
        for entry in entries {
            let entry = entry.map_err(|source| io_error(&self.dir, source))?;
            let path = entry.path();
            let file_type = entry
                .file_type()
                .map_err(|source| io_error(&path, source))?;
            let result = if file_type.is_dir() {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
            result.map_err(|source| io_error(&path, source))?;
            // The write path's own hidden state goes too, but is not what the user counts.
            if !entry.file_name().to_string_lossy().starts_with('.') {
                removed += 1;
            }
        }
        sync_dir(&self.dir)?;
        Ok(removed)
    }

    /// Reads a file of the root; `None` when it does not exist, or when something other than a
    /// regular file (a FIFO, a socket) took its place, which the next write replaces. Bytes that
    /// are not UTF-8 (a damaged file) are read as U+FFFD, so the file can be rebuilt.
    pub fn read(&self, name: &str) -> Result<Option<String>> {
        let path = self.file(name);
        match read_regular_file(&path) {
            Ok(bytes) => Ok(bytes.map(|bytes| match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
            })),
            Err(error) if error.kind() == io::ErrorKind::InvalidInput => {
                tracing::warn!(path = %path.display(), %error, "memory-root file replaced by something else; rebuilding it");
                Ok(None)
            }
            Err(source) => Err(io_error(&path, source)),
        }
    }

    /// What is missing or damaged in the root after a pass that selected `selected`: the three
    /// files and every selected rollout summary must be regular UTF-8 files, and the summary
    /// must start with its version line. Empty when the root is whole. A pass repairs whatever
    /// this names, so a run that finds damage consolidates whatever the cooldown.
    pub fn damage(&self, selected: &[StageOneOutputRecord]) -> Vec<String> {
        let mut damage = Vec::new();
        let mut check = |path: PathBuf| -> Option<String> {
            let shown = path
                .strip_prefix(&self.dir)
                .unwrap_or(&path)
                .display()
                .to_string();
            match read_regular_file(&path) {
                Ok(Some(bytes)) => match String::from_utf8(bytes) {
                    Ok(text) => Some(text),
                    Err(_) => {
                        damage.push(format!("{shown} is not valid UTF-8"));
                        None
                    }
                },
                Ok(None) => {
                    damage.push(format!("{shown} is missing"));
                    None
                }
                Err(error) => {
                    damage.push(format!("{shown}: {error}"));
                    None
                }
            }
        };
        check(self.file(names::MEMORY_FILE));
        check(self.file(names::RAW_MEMORIES_FILE));
        let summary = check(self.file(names::MEMORY_SUMMARY_FILE));
        let mut ordered: Vec<&StageOneOutputRecord> = selected.iter().collect();
        ordered.sort_by(|a, b| a.thread_id.cmp(&b.thread_id));
        ordered.dedup_by(|a, b| a.thread_id == b.thread_id);
        for stem in assign_stems(&ordered) {
            check(self.rollout_summaries_dir().join(format!("{stem}.md")));
        }
        if summary.is_some_and(|text| text.lines().next() != Some(names::MEMORY_SUMMARY_VERSION)) {
            damage.push(format!(
                "{} does not start with its version line",
                names::MEMORY_SUMMARY_FILE
            ));
        }
        damage
    }

    /// When the newest note in `notes/` or codex's `extensions/ad_hoc/notes/` was last
    /// modified (Unix seconds); `None` without notes.
    pub fn newest_note_mtime(&self) -> Result<Option<i64>> {
        let mut newest = None;
        for relative in NOTE_DIRS {
            let Some(dir) = self.real_dir(relative)? else {
                continue;
            };
            for entry in fs::read_dir(&dir).map_err(|source| io_error(&dir, source))? {
                let entry = entry.map_err(|source| io_error(&dir, source))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') || !name.ends_with(".md") {
                    continue;
                }
                let modified = entry
                    .metadata()
                    .ok()
                    .filter(fs::Metadata::is_file)
                    .and_then(|meta| meta.modified().ok())
                    .and_then(|at| at.duration_since(std::time::UNIX_EPOCH).ok())
                    .and_then(|since| i64::try_from(since.as_secs()).ok());
                newest = newest.max(modified);
            }
        }
        Ok(newest)
    }

    /// The notes of `notes/` and of codex's `extensions/ad_hoc/notes/`, sorted by path: every
    /// `.md` file directly in either (links and hidden files skipped). None when neither
    /// folder exists. A folder on the way that is a symlink or a file is refused, so phase 2
    /// reads nothing from outside the root.
    pub fn read_notes(&self) -> Result<Vec<ConsolidationNote>> {
        let mut notes = Vec::new();
        for relative in NOTE_DIRS {
            let Some(dir) = self.real_dir(relative)? else {
                continue;
            };
            for entry in fs::read_dir(&dir).map_err(|source| io_error(&dir, source))? {
                let entry = entry.map_err(|source| io_error(&dir, source))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let is_file = entry.file_type().is_ok_and(|kind| kind.is_file());
                if !is_file || name.starts_with('.') || !name.ends_with(".md") {
                    continue;
                }
                let path = entry.path();
                let bytes = fs::read(&path).map_err(|source| io_error(&path, source))?;
                notes.push(ConsolidationNote {
                    path: format!("{relative}/{name}"),
                    text: String::from_utf8_lossy(&bytes).into_owned(),
                });
            }
        }
        notes.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(notes)
    }

    /// The folder `relative` (`/`-separated) under the root when every folder on the way is a
    /// real folder; `None` when one is missing. A symlink or a file on the way is refused.
    fn real_dir(&self, relative: &str) -> Result<Option<PathBuf>> {
        let mut dir = self.dir.clone();
        for part in relative.split('/') {
            dir.push(part);
            match fs::symlink_metadata(&dir) {
                Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
                Err(source) => return Err(io_error(&dir, source)),
                Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => {
                    return Err(Error::UnsafeMemoryRoot {
                        path: dir,
                        reason: "expected a real folder, not a symlink or a file".to_owned(),
                    });
                }
                Ok(_) => {}
            }
        }
        Ok(Some(dir))
    }

    /// Writes `MEMORY.md` atomically. Returns whether the content changed.
    pub fn write_memory(&self, text: &str) -> Result<bool> {
        let written = self.write_atomic(&self.file(names::MEMORY_FILE), text)?;
        self.record_written(names::MEMORY_FILE, text)?;
        Ok(written)
    }

    /// Writes `memory_summary.md` atomically, with the version line first (see
    /// [`with_version_line`]). Returns whether the content changed.
    pub fn write_summary(&self, text: &str) -> Result<bool> {
        let text = with_version_line(text);
        let written = self.write_atomic(&self.file(names::MEMORY_SUMMARY_FILE), &text)?;
        self.record_written(names::MEMORY_SUMMARY_FILE, &text)?;
        Ok(written)
    }

    /// Brings `raw_memories.md` and `rollout_summaries/` in line with `selected`: one summary
    /// file per selected output (rewritten only when its content changed), the raw memories in
    /// ascending thread-id order, and every other `.md` file in `rollout_summaries/` removed.
    pub fn sync_inputs(&self, selected: &[StageOneOutputRecord]) -> Result<SyncReport> {
        self.prepare()?;
        let mut ordered: Vec<&StageOneOutputRecord> = selected.iter().collect();
        ordered.sort_by(|a, b| a.thread_id.cmp(&b.thread_id));
        ordered.dedup_by(|a, b| a.thread_id == b.thread_id);
        let stems = assign_stems(&ordered);

        let mut report = SyncReport::default();
        let summaries = self.rollout_summaries_dir();
        for (record, stem) in ordered.iter().zip(&stems) {
            let path = summaries.join(format!("{stem}.md"));
            if self.write_atomic(&path, &render_rollout_summary(record))? {
                report.files_written += 1;
            }
        }
        let raw = render_raw_memories(ordered.iter().copied().zip(stems.iter()));
        if self.write_atomic(&self.file(names::RAW_MEMORIES_FILE), &raw)? {
            report.files_written += 1;
        }

        let keep: BTreeSet<String> = stems.iter().map(|stem| format!("{stem}.md")).collect();
        let entries = fs::read_dir(&summaries).map_err(|source| io_error(&summaries, source))?;
        for entry in entries {
            let entry = entry.map_err(|source| io_error(&summaries, source))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let file_type = entry
                .file_type()
                .map_err(|source| io_error(&entry.path(), source))?;
            // Only plain files and links named *.md are ours; a link is removed, never followed.
            if name.ends_with(".md") && !file_type.is_dir() && !keep.contains(&name) {
                let path = entry.path();
                fs::remove_file(&path).map_err(|source| io_error(&path, source))?;
                report.files_removed += 1;
            }
        }
        if report.files_removed > 0 {
            sync_dir(&summaries)?;
        }
        report.stems = ordered
            .iter()
            .zip(stems)
            .map(|(record, stem)| (record.thread_id.clone(), stem))
            .collect();
        Ok(report)
    }

    /// Writes `text` to `path`, a file inside the root, atomically unless the file already
    /// holds exactly `text`. Returns whether it wrote. A path outside the root (absolute
    /// elsewhere, or climbing out with `..`) is refused.
    pub(crate) fn write_atomic(&self, path: &Path, text: &str) -> Result<bool> {
        let inside = path.strip_prefix(&self.dir).is_ok_and(|relative| {
            relative.components().count() > 0
                && relative
                    .components()
                    .all(|part| matches!(part, std::path::Component::Normal(_)))
        });
        if !inside {
            return Err(Error::UnsafeMemoryRoot {
                path: path.to_path_buf(),
                reason: format!("not a file inside the memory root {}", self.dir.display()),
            });
        }
        // Nothing reaches the root that a terminal or an editor would act on.
        let text = display_safe(text);
        match read_regular_file(path) {
            Ok(Some(current)) if current == text.as_bytes() => return Ok(false),
            Ok(_) => {}
            // Not a regular file: the rename below replaces it.
            Err(error) if error.kind() == io::ErrorKind::InvalidInput => {}
            Err(source) => return Err(io_error(path, source)),
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        let file_name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temp = dir.join(format!(
            ".{file_name}{TEMP_MARKER}{}",
            uuid::Uuid::new_v4().simple()
        ));
        if let Err(source) = write_synced(&temp, text.as_bytes()) {
            // A failed write (not a crash) cleans up after itself; the target is untouched.
            let _ = fs::remove_file(&temp);
            return Err(io_error(&temp, source));
        }
        #[cfg(feature = "fault-injection")]
        if let Some(hook) = &self.crash_before_rename {
            hook(path).map_err(|source| io_error(path, source))?;
        }
        if let Err(source) = fs::rename(&temp, path) {
            let _ = fs::remove_file(&temp);
            return Err(io_error(path, source));
        }
        sync_dir(dir)?;
        Ok(true)
    }
}

/// `text` with the summary version line (`v1`) first: kept when present, added otherwise.
/// Idempotent.
pub fn with_version_line(text: &str) -> String {
    let body = text.trim_start_matches(['\n', '\r']);
    let (first, rest) = body.split_once('\n').unwrap_or((body, ""));
    let body = if first.trim() == names::MEMORY_SUMMARY_VERSION {
        rest
    } else {
        body
    };
    let body = body.trim_end();
    if body.is_empty() {
        format!("{}\n", names::MEMORY_SUMMARY_VERSION)
    } else {
        format!("{}\n{body}\n", names::MEMORY_SUMMARY_VERSION)
    }
}

/// The file stem of a rollout summary: `<time>-<hash4>[-<slug>]`.
///
/// `time` is the creation time of a UUIDv7 thread id, otherwise `source_updated_at`, as
/// `%Y-%m-%dT%H-%M-%S` UTC. `hash4` is four base-62 digits derived from the thread id. The
/// slug keeps ASCII letters and digits (lowercased), turns every other character into `_`,
/// stops at 60 bytes and drops trailing `_`. The stem therefore only holds `[0-9A-Za-z_-]`:
/// no separator, no dot, nothing that can leave the folder.
pub fn rollout_summary_stem(thread_id: &str, source_updated_at: i64, slug: Option<&str>) -> String {
    let uuid = uuid::Uuid::try_parse(thread_id).ok();
    let seconds = uuid
        .filter(|uuid| uuid.get_version_num() == 7)
        .map(|uuid| i64::try_from(uuid.as_u128() >> 80).unwrap_or(0) / 1000)
        .unwrap_or(source_updated_at);
    let time = jiff::Timestamp::from_second(seconds)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .strftime("%Y-%m-%dT%H-%M-%S")
        .to_string();
    let seed = match uuid {
        Some(uuid) => (uuid.as_u128() & 0xFFFF_FFFF) as u64,
        None => {
            thread_id.bytes().fold(0u64, |hash, byte| {
                hash.wrapping_mul(31).wrapping_add(u64::from(byte))
            }) & 0xFFFF_FFFF
        }
    };
    let mut stem = format!("{time}-{}", base62_4(seed % HASH4_RANGE));
    let slug = slug_part(slug.unwrap_or(""));
    if !slug.is_empty() {
        stem.push('-');
        stem.push_str(&slug);
    }
    stem
}

fn base62_4(mut value: u64) -> String {
    let mut digits = [b'0'; 4];
    for digit in digits.iter_mut().rev() {
        *digit = BASE62.get((value % 62) as usize).copied().unwrap_or(b'0');
        value /= 62;
    }
    digits.iter().map(|&byte| char::from(byte)).collect()
}

fn slug_part(slug: &str) -> String {
    let mut out: String = slug
        .chars()
        .take(MAX_SLUG_BYTES)
        .map(|ch| {
            if ch.is_ascii_alphanumeric() {
                ch.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    out.truncate(out.trim_end_matches('_').len());
    out
}

/// Stems for outputs sorted by thread id. Equal stems (compared case-insensitively, for
/// case-insensitive file systems) get `-2`, `-3`, ... in thread-id order, so the assignment
/// is stable from run to run.
fn assign_stems(ordered: &[&StageOneOutputRecord]) -> Vec<String> {
    let mut taken = BTreeSet::new();
    ordered
        .iter()
        .map(|record| {
            let base = rollout_summary_stem(
                &record.thread_id,
                record.source_updated_at,
                record.rollout_slug.as_deref(),
            );
            let mut stem = base.clone();
            let mut counter = 2u32;
            while !taken.insert(stem.to_ascii_lowercase()) {
                stem = format!("{base}-{counter}");
                counter = counter.saturating_add(1);
            }
            stem
        })
        .collect()
}

/// First line of `raw_memories.md`.
pub const RAW_MEMORIES_TITLE: &str = "# Raw Memories";

/// `raw_memories.md` for outputs in thread-id order, each with its summary file's stem.
pub fn render_raw_memories<'a>(
    selected: impl IntoIterator<Item = (&'a StageOneOutputRecord, &'a String)>,
) -> String {
    let mut out = format!("{RAW_MEMORIES_TITLE}\n\n");
    let mut any = false;
    for (record, stem) in selected {
        if !any {
            out.push_str("Selected stage-one raw memories, in ascending thread-id order:\n");
            any = true;
        }
        out.push('\n');
        out.push_str(&raw_memory_block(record, stem));
    }
    if !any {
        out.push_str("No raw memories yet.\n");
    }
    out
}

/// One thread's block of `raw_memories.md`.
pub fn raw_memory_block(record: &StageOneOutputRecord, stem: &str) -> String {
    format!(
        "## Thread `{}`\nupdated_at: {}\ncwd: {}\nrollout_path: {}\nrollout_summary_file: {stem}.md\n\n{}\n",
        one_line(&record.thread_id),
        rfc3339(record.source_updated_at),
        one_line(record.cwd.as_deref().unwrap_or("unknown")),
        one_line(&record.rollout_path),
        record.raw_memory.trim(),
    )
}

/// One rollout summary file: a small header (with `git_branch` when the session recorded
/// one), then the summary.
pub fn render_rollout_summary(record: &StageOneOutputRecord) -> String {
    let branch = record
        .git_branch
        .as_deref()
        .map(str::trim)
        .filter(|branch| !branch.is_empty())
        .map(|branch| format!("git_branch: {}\n", one_line(branch)))
        .unwrap_or_default();
    format!(
        "thread_id: {}\nupdated_at: {}\nrollout_path: {}\ncwd: {}\n{branch}\n{}\n",
        one_line(&record.thread_id),
        rfc3339(record.source_updated_at),
        one_line(&record.rollout_path),
        one_line(record.cwd.as_deref().unwrap_or("unknown")),
        record.rollout_summary.trim(),
    )
}

/// A header value on one line: control characters (newlines included) become spaces, so a
/// value cannot forge further header lines.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|ch| if ch.is_control() { ' ' } else { ch })
        .collect()
}

fn rfc3339(seconds: i64) -> String {
    jiff::Timestamp::from_second(seconds)
        .map(|time| time.to_string())
        .unwrap_or_else(|_| seconds.to_string())
}

fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    crate::fault::check(crate::fault::FaultPoint::Write, path)?;
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Makes a rename or removal in `dir` durable. Folders cannot be opened for syncing on every
/// platform; there the rename is as durable as the platform makes it.
fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        fs::File::open(dir)
            .and_then(|handle| handle.sync_all())
            .map_err(|source| io_error(dir, source))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

fn remove_stale_temp_files(dir: &Path) -> Result<()> {
    let entries = fs::read_dir(dir).map_err(|source| io_error(dir, source))?;
    for entry in entries {
        let entry = entry.map_err(|source| io_error(dir, source))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_file = entry.file_type().is_ok_and(|kind| kind.is_file());
        if is_file && name.starts_with('.') && name.contains(TEMP_MARKER) {
            let path = entry.path();
            fs::remove_file(&path).map_err(|source| io_error(&path, source))?;
        }
    }
    Ok(())
}

fn io_error(path: &Path, source: io::Error) -> Error {
    Error::io(path, source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_writes_never_leave_the_root() {
        let home = tempfile::tempdir().unwrap();
        let root = MemoryRoot::under_home(home.path());
        root.prepare().unwrap();
        assert!(root.write_atomic(&root.file("MEMORY.md"), "x").unwrap());
        let outside = [
            home.path().join("state.sqlite"),
            root.dir().join("../escaped.md"),
            root.dir().join("rollout_summaries/../../escaped.md"),
            root.dir().to_path_buf(),
            PathBuf::from("/tmp/elsewhere.md"),
        ];
        for path in outside {
            let err = root.write_atomic(&path, "x").unwrap_err();
            assert!(
                matches!(err, Error::UnsafeMemoryRoot { .. }),
                "{}: {err}",
                path.display()
            );
        }
        assert!(!home.path().join("escaped.md").exists());
    }
    use proptest::prelude::*;

    #[test]
    fn stem_uses_uuid_v7_time_and_hash() {
        // Vector from codex's storage tests: the same thread id gives the same stem.
        assert_eq!(
            rollout_summary_stem("0194f5a6-89ab-7cde-8123-456789abcdef", 0, None),
            "2025-02-11T15-35-19-jqmb"
        );
    }

    #[test]
    fn stem_sanitizes_and_truncates_slug() {
        let stem = rollout_summary_stem(
            "0194f5a6-89ab-7cde-8123-456789abcdef",
            0,
            Some("Unsafe Slug/With Spaces & Symbols + EXTRA_LONG_12345_67890_ABCDE_fghij_klmno"),
        );
        assert_eq!(
            stem,
            "2025-02-11T15-35-19-jqmb-unsafe_slug_with_spaces___symbols___extra_long_12345_67890_a"
        );
    }

    #[test]
    fn stem_of_non_uuid_falls_back_to_source_time() {
        let stem = rollout_summary_stem("not-a-uuid", 1_700_000_000, Some("___"));
        assert!(stem.starts_with("2023-11-14T22-13-20-"), "{stem}");
        assert_eq!(stem.len(), "2023-11-14T22-13-20-abcd".len());
    }

    #[test]
    fn version_line_is_added_once() {
        assert_eq!(with_version_line("hello"), "v1\nhello\n");
        assert_eq!(with_version_line("v1\nhello"), "v1\nhello\n");
        assert_eq!(with_version_line("\n v1 \r\nhello\n\n"), "v1\nhello\n");
        assert_eq!(with_version_line(""), "v1\n");
    }

    proptest! {
        #[test]
        fn stem_is_a_safe_file_name(id in any::<String>(), slug in any::<String>(), at in any::<i64>()) {
            let stem = rollout_summary_stem(&id, at, Some(&slug));
            prop_assert!(!stem.is_empty());
            prop_assert!(stem.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
            prop_assert!(stem.len() <= "2025-02-11T15-35-19-jqmb-".len() + MAX_SLUG_BYTES + 4);
        }

        #[test]
        fn version_line_is_first_and_idempotent(text in any::<String>()) {
            let once = with_version_line(&text);
            prop_assert!(once.starts_with("v1\n"));
            prop_assert_eq!(with_version_line(&once), once);
        }

        #[test]
        fn header_values_stay_on_one_line(text in any::<String>()) {
            prop_assert!(!one_line(&text).contains(['\n', '\r']));
        }
    }
}
