//! One walk of the memory root: its files with sizes and modification times, the links it
//! did not follow and the folders it could not list. Status, the index and the block all work
//! from the same walk, so their numbers agree.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::io;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
    /// [`RootScan::indexed_digest`], computed once.
    indexed_digest: OnceLock<[u8; 32]>,
}

impl RootScan {
    /// A digest of the indexable files: their paths, sizes, modification times and inodes,
    /// the stats an index refresh compares. Computed once per scan (a cached walk hands out
    /// the same scan while nothing changed).
    pub(crate) fn indexed_digest(&self) -> [u8; 32] {
        *self.indexed_digest.get_or_init(|| {
            let mut hasher = Sha256::new();
            for file in self.files.iter().filter(|file| file.indexable()) {
                hasher.update(file.rel.as_bytes());
                hasher.update([0]);
                hasher.update(file.size.to_le_bytes());
                hasher.update(file.mtime_ns.to_le_bytes());
                hasher.update(file.inode.to_le_bytes());
            }
            hasher.finalize().into()
        })
    }

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

/// Walks `root` in full. Fails only when the root itself cannot be listed; a folder below it
/// that cannot be listed is recorded in [`RootScan::unreadable_dirs`].
pub(crate) fn scan(root: &Path) -> io::Result<Arc<RootScan>> {
    WalkCache::default().scan(root, Walk::Full, SystemTime::now())
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

/// How much of the root a walk looks at again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Walk {
    /// Every folder listed and every file's stats read.
    Full,
    /// The root listed and its own files stat'ed; a folder below it listed again only when its
    /// modification time or inode changed; everything at least every [`FULL_WALK_EVERY`].
    Cached,
}

/// Longest time a [`Walk::Cached`] trusts unchanged folders before it walks everything again.
///
/// Why an unchanged folder may be trusted: memory-write and `memory_note` write the files
/// below the root (`rollout_summaries/`, `notes/`) to a temporary file and rename it into
/// place, and a rename changes the folder's modification time. A file edited in place below
/// the root (by hand) is seen by the next full walk; the root's own files, the ones a user
/// edits (`MEMORY.md`, `memory_summary.md`), are stat'ed by every walk.
pub(crate) const FULL_WALK_EVERY: Duration = Duration::from_secs(10);

/// A folder changed this close to when it was listed is listed again next time: a change in
/// the same tick of the file system's clock keeps its modification time. Timestamps in whole
/// seconds (FAT, HFS+, some network file systems) tick every second or two.
const SETTLED_AFTER: Duration = Duration::from_secs(2);
/// The same for a file system with sub-second timestamps, which tick with the kernel's
/// coarse clock (at most 10 ms).
const SETTLED_AFTER_FINE: Duration = Duration::from_millis(50);

/// What earlier walks saw of the folders below one root, so a [`Walk::Cached`] skips the ones
/// that did not change, and answers with the same [`RootScan`] when nothing did.
#[derive(Debug, Default)]
pub(crate) struct WalkCache {
    /// When the last full walk started.
    full_at: Option<SystemTime>,
    /// Each folder's direct entries as last listed, by path relative to the root.
    folders: HashMap<String, Arc<Listing>>,
    /// The root's own entries and the scan of the last walk.
    last: Option<(Listing, Arc<RootScan>)>,
}

/// One folder's direct entries, as one listing saw them.
#[derive(Debug, Clone, Default)]
struct Listing {
    /// The folder's modification time (ns) and inode, read before it was listed.
    stamp: (i64, u64),
    /// Whether the folder was unchanged for [`SETTLED_AFTER`] (or [`SETTLED_AFTER_FINE`])
    /// before it was listed, so that
    /// the same stamp later means the same entries.
    settled: bool,
    files: Vec<FileEntry>,
    symlinks: Vec<String>,
    /// Subfolders, relative to the root.
    folders: Vec<String>,
}

impl Listing {
    fn same_entries(&self, other: &Listing) -> bool {
        (&self.files, &self.symlinks, &self.folders)
            == (&other.files, &other.symlinks, &other.folders)
    }
}

/// The folders one walk took its entries from, and what went differently from the last walk.
#[derive(Default)]
struct Visit {
    listings: Vec<Arc<Listing>>,
    unreadable_dirs: Vec<(String, String)>,
    /// A folder was listed again (or could not be).
    relisted: bool,
}

impl WalkCache {
    /// Walks `root` as `walk` says; `now` is the time of the walk. Fails only when the root
    /// itself cannot be listed.
    pub(crate) fn scan(
        &mut self,
        root: &Path,
        walk: Walk,
        now: SystemTime,
    ) -> io::Result<Arc<RootScan>> {
        let due = self.full_at.is_none_or(|at| {
            now.duration_since(at)
                .map_or(true, |since| since >= FULL_WALK_EVERY)
        });
        let reuse = walk == Walk::Cached && !due;
        if !reuse {
            self.folders.clear();
            self.full_at = Some(now);
        }
        let top = list(root, "", now)?;
        let mut visit = Visit::default();
        self.visit(&top.folders, root, 0, reuse, now, &mut visit);
        let received_notes = received_notes(root);
        if let Some((last_top, last)) = &self.last
            && reuse
            && !visit.relisted
            && last_top.same_entries(&top)
            && last.received_notes == received_notes
        {
            return Ok(Arc::clone(last));
        }
        let mut scan = RootScan {
            received_notes,
            unreadable_dirs: visit.unreadable_dirs,
            ..RootScan::default()
        };
        for listing in std::iter::once(&top).chain(visit.listings.iter().map(|l| &**l)) {
            scan.files.extend(listing.files.iter().cloned());
            scan.symlinks.extend(listing.symlinks.iter().cloned());
        }
        scan.files.sort_by(|a, b| a.rel.cmp(&b.rel));
        scan.symlinks.sort();
        let scan = Arc::new(scan);
        self.last = Some((top, Arc::clone(&scan)));
        Ok(scan)
    }

    /// Visits `folders` (at `depth` below the root) and theirs: each from the cache when
    /// `reuse` and its stamp is the one listed, else listed again (and cached).
    fn visit(
        &mut self,
        folders: &[String],
        root: &Path,
        depth: usize,
        reuse: bool,
        now: SystemTime,
        visit: &mut Visit,
    ) {
        if depth + 1 >= MAX_DEPTH {
            return;
        }
        for rel in folders {
            let path = root.join(rel);
            let unchanged = |cached: &&Arc<Listing>| {
                cached.settled
                    && fs::symlink_metadata(&path).is_ok_and(|meta| stamp(&meta) == cached.stamp)
            };
            let listing = match self.folders.get(rel).filter(unchanged) {
                Some(cached) if reuse => Arc::clone(cached),
                _ => {
                    visit.relisted = true;
                    match list(&path, rel, now) {
                        Ok(listing) => {
                            let listing = Arc::new(listing);
                            self.folders.insert(rel.clone(), Arc::clone(&listing));
                            listing
                        }
                        Err(error) => {
                            self.folders.remove(rel);
                            visit
                                .unreadable_dirs
                                .push((rel.clone(), crate::io_reason(&error)));
                            continue;
                        }
                    }
                }
            };
            self.visit(&listing.folders, root, depth + 1, reuse, now, visit);
            visit.listings.push(listing);
        }
    }
}

/// Lists folder `dir` (`rel` from the root): its regular files with their stats, its
/// symlinks (not followed) and its subfolders. Hidden entries (temp files, locks) are left out.
fn list(dir: &Path, rel: &str, now: SystemTime) -> io::Result<Listing> {
    // The stamp is read before the entries, so a change while listing shows as a new stamp.
    let own = fs::symlink_metadata(dir)?;
    let mut listing = Listing {
        stamp: stamp(&own),
        settled: own
            .modified()
            .ok()
            .and_then(|modified| now.duration_since(modified).ok())
            .is_some_and(|age| {
                let fine = mtime_ns(&own) % 1_000_000_000 != 0;
                age >= if fine {
                    SETTLED_AFTER_FINE
                } else {
                    SETTLED_AFTER
                }
            }),
        ..Listing::default()
    };
    for entry in fs::read_dir(dir)? {
        let Ok(entry) = entry else {
            continue;
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_symlink() {
            listing.symlinks.push(path);
        } else if file_type.is_dir() {
            listing.folders.push(path);
        } else if file_type.is_file() {
            let Ok(metadata) = entry.metadata() else {
                continue;
            };
            listing.files.push(FileEntry {
                rel: path,
                size: metadata.len(),
                mtime_ns: mtime_ns(&metadata),
                inode: inode(&metadata),
            });
        }
    }
    Ok(listing)
}

/// A folder's modification time and inode: a rename into or out of it changes the first.
fn stamp(metadata: &fs::Metadata) -> (i64, u64) {
    (mtime_ns(metadata), inode(metadata))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `text` to `path` the way the write path does: a temporary file renamed into place.
    fn write_by_rename(path: &Path, text: &str) {
        let temp = path.with_file_name(".incoming.tmp");
        fs::write(&temp, text).unwrap();
        fs::rename(&temp, path).unwrap();
    }

    fn size_of(scan: &RootScan, rel: &str) -> Option<u64> {
        scan.file(rel).map(|file| file.size)
    }

    /// A root whose folders last changed long before `now` (the walks below are told a time
    /// a minute after the files were written, so every folder counts as settled).
    fn settled_root() -> (tempfile::TempDir, SystemTime) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("rollout_summaries")).unwrap();
        fs::create_dir_all(root.join("notes/deeper")).unwrap();
        fs::write(root.join("MEMORY.md"), "# Memory\n").unwrap();
        fs::write(root.join("rollout_summaries/a.md"), "a\n").unwrap();
        fs::write(root.join("notes/deeper/n.md"), "n\n").unwrap();
        (dir, SystemTime::now() + Duration::from_secs(60))
    }

    #[test]
    fn a_cached_walk_sees_files_renamed_into_place_and_the_roots_own_files() {
        let (dir, now) = settled_root();
        let root = dir.path();
        let mut cache = WalkCache::default();
        let first = cache.scan(root, Walk::Cached, now).unwrap();
        assert_eq!(first.files.len(), 3);
        write_by_rename(&root.join("rollout_summaries/a.md"), "a, longer\n");
        write_by_rename(&root.join("rollout_summaries/b.md"), "b\n");
        write_by_rename(&root.join("notes/deeper/n.md"), "n, longer\n");
        fs::write(root.join("MEMORY.md"), "# Memory\n\nedited in place\n").unwrap();
        let later = now + Duration::from_secs(1);
        let second = cache.scan(root, Walk::Cached, later).unwrap();
        assert_eq!(size_of(&second, "rollout_summaries/a.md"), Some(10));
        assert_eq!(size_of(&second, "rollout_summaries/b.md"), Some(2));
        assert_eq!(size_of(&second, "notes/deeper/n.md"), Some(10));
        assert_eq!(size_of(&second, "MEMORY.md"), Some(26));
        fs::remove_file(root.join("rollout_summaries/b.md")).unwrap();
        let third = cache.scan(root, Walk::Cached, later).unwrap();
        assert_eq!(size_of(&third, "rollout_summaries/b.md"), None);
        assert_eq!(third.files, scan(root).unwrap().files);
    }

    /// The rule's limit, stated: a file below the root edited in place keeps its folder's
    /// modification time, so a cached walk sees it only at the next full walk (or at once,
    /// through a full walk such as `memory_status`'s).
    #[test]
    fn an_edit_in_place_below_the_root_is_seen_by_the_next_full_walk() {
        let (dir, now) = settled_root();
        let root = dir.path();
        let mut cache = WalkCache::default();
        cache.scan(root, Walk::Cached, now).unwrap();
        fs::write(root.join("rollout_summaries/a.md"), "a, edited in place\n").unwrap();
        let soon = now + FULL_WALK_EVERY - Duration::from_secs(1);
        let cached = cache.scan(root, Walk::Cached, soon).unwrap();
        assert_eq!(size_of(&cached, "rollout_summaries/a.md"), Some(2));
        let full = cache.scan(root, Walk::Full, soon).unwrap();
        assert_eq!(size_of(&full, "rollout_summaries/a.md"), Some(19));
        fs::write(root.join("rollout_summaries/a.md"), "a\n").unwrap();
        let due = soon + FULL_WALK_EVERY;
        let after = cache.scan(root, Walk::Cached, due).unwrap();
        assert_eq!(size_of(&after, "rollout_summaries/a.md"), Some(2));
    }

    /// A folder that changed just before it was listed may change again within the same tick
    /// of the file system's clock, keeping its modification time: it is listed every time
    /// until it has been still for a while.
    #[test]
    fn a_folder_that_just_changed_is_listed_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("notes")).unwrap();
        fs::write(root.join("notes/n.md"), "n\n").unwrap();
        let changed = fs::metadata(root.join("notes"))
            .unwrap()
            .modified()
            .unwrap();
        let now = changed + Duration::from_millis(10);
        let mut cache = WalkCache::default();
        cache.scan(root, Walk::Cached, now).unwrap();
        fs::write(root.join("notes/n.md"), "n, edited in place\n").unwrap();
        let next = cache.scan(root, Walk::Cached, now).unwrap();
        assert_eq!(size_of(&next, "notes/n.md"), Some(19));
    }
}
