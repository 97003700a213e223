//! One walk of the memory root: its files with sizes and modification times, the links it
//! did not follow and the folders it could not list. Status, the index and the block all work
//! from the same walk, so their numbers agree.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::Path;
use std::time::UNIX_EPOCH;

use memory_protocol::names::memory_root::{NOTES_DIR, RECEIVED_NOTES_FILE};
use sha2::{Digest, Sha256};

/// Deepest folder level walked below the root.
const MAX_DEPTH: usize = 8;

/// One regular file of the memory root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileEntry {
    /// Path relative to the root, `/`-separated.
    pub(crate) rel: String,
    pub(crate) size: u64,
    /// Modification time in nanoseconds since the epoch (0 when unknown).
    pub(crate) mtime_ns: i64,
    /// Inode (0 off Unix): an atomic rewrite changes it even within one clock tick.
    pub(crate) inode: u64,
}

impl FileEntry {
    /// Modification time in Unix seconds.
    pub(crate) fn mtime_seconds(&self) -> i64 {
        self.mtime_ns.div_euclid(1_000_000_000)
    }

    /// True for the Markdown files the index searches.
    pub(crate) fn indexable(&self) -> bool {
        self.rel.ends_with(".md")
    }
}

/// The memory root as one walk saw it.
#[derive(Debug, Clone, Default)]
pub(crate) struct RootScan {
    /// Regular files, sorted by path. Hidden entries (temp files, locks) are left out.
    pub(crate) files: Vec<FileEntry>,
    /// Symlinks found below the root, not followed.
    pub(crate) symlinks: Vec<String>,
    /// Folders that could not be listed, with why.
    pub(crate) unreadable_dirs: Vec<(String, String)>,
    /// Paths (`notes/<name>`) of the notes another machine wrote, from
    /// [`RECEIVED_NOTES_FILE`]: a shared store's sync lists them there.
    pub(crate) received_notes: BTreeSet<String>,
}

impl RootScan {
    pub(crate) fn bytes(&self) -> u64 {
        self.files.iter().map(|file| file.size).sum()
    }

    pub(crate) fn file_count(&self) -> u32 {
        u32::try_from(self.files.len()).unwrap_or(u32::MAX)
    }

    /// Newest modification time, Unix seconds.
    pub(crate) fn last_write_at(&self) -> Option<i64> {
        self.files.iter().map(FileEntry::mtime_seconds).max()
    }

    pub(crate) fn file(&self, rel: &str) -> Option<&FileEntry> {
        self.files.iter().find(|file| file.rel == rel)
    }

    /// Files directly or indirectly under folder `dir`.
    pub(crate) fn under<'a>(&'a self, dir: &'a str) -> impl Iterator<Item = &'a FileEntry> + 'a {
        self.files.iter().filter(move |file| {
            file.rel
                .strip_prefix(dir)
                .is_some_and(|rest| rest.starts_with('/'))
        })
    }

    /// A short digest of every file's path, size and modification time: it changes whenever
    /// a file of the root changes.
    pub(crate) fn revision(&self) -> String {
        let mut hasher = Sha256::new();
        for file in &self.files {
            hasher.update(file.rel.as_bytes());
            hasher.update([0]);
            hasher.update(file.size.to_le_bytes());
            hasher.update(file.mtime_ns.to_le_bytes());
        }
        hasher.finalize()[..6]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }
}

/// Walks `root`. Fails only when the root itself cannot be listed; a folder below it that
/// cannot be listed is recorded in [`RootScan::unreadable_dirs`].
pub(crate) fn scan(root: &Path) -> io::Result<RootScan> {
    let mut scan = RootScan::default();
    let entries = fs::read_dir(root)?;
    walk(root, entries, "", 0, &mut scan);
    scan.received_notes = received_notes(root);
    scan.files.sort_by(|a, b| a.rel.cmp(&b.rel));
    scan.symlinks.sort();
    Ok(scan)
}

/// The notes listed in `notes/.received` (see [`RECEIVED_NOTES_FILE`]); none when the list
/// is missing, unreadable or not a regular file, so every note then counts as this machine's.
fn received_notes(root: &Path) -> BTreeSet<String> {
    let path = root.join(NOTES_DIR).join(RECEIVED_NOTES_FILE);
    let regular = fs::symlink_metadata(&path).is_ok_and(|meta| meta.file_type().is_file());
    let Some(text) = regular.then(|| fs::read_to_string(&path).ok()).flatten() else {
        return BTreeSet::new();
    };
    text.lines()
        .map(str::trim)
        .filter(|name| !name.is_empty() && !name.contains('/'))
        .map(|name| format!("{NOTES_DIR}/{name}"))
        .collect()
}

fn walk(dir: &Path, entries: fs::ReadDir, prefix: &str, depth: usize, scan: &mut RootScan) {
    for entry in entries {
        let Ok(entry) = entry else {
            continue;
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_symlink() {
            scan.symlinks.push(rel);
        } else if file_type.is_dir() {
            if depth + 1 >= MAX_DEPTH {
                continue;
            }
            let path = dir.join(&name);
            match fs::read_dir(&path) {
                Ok(children) => walk(&path, children, &rel, depth + 1, scan),
                Err(error) => scan.unreadable_dirs.push((rel, crate::io_reason(&error))),
            }
        } else if file_type.is_file() {
            let Ok(metadata) = entry.metadata() else {
                continue;
            };
            scan.files.push(FileEntry {
                rel,
                size: metadata.len(),
                mtime_ns: mtime_ns(&metadata),
                inode: inode(&metadata),
            });
        }
    }
}

fn mtime_ns(metadata: &fs::Metadata) -> i64 {
    metadata
        .modified()
        .ok()
        .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |duration| {
            i64::try_from(duration.as_nanos()).unwrap_or(i64::MAX)
        })
}

#[cfg(unix)]
fn inode(metadata: &fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    metadata.ino()
}

#[cfg(not(unix))]
fn inode(_: &fs::Metadata) -> u64 {
    0
}
