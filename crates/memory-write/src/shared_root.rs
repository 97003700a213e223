//! The memory root of a store shared by several machines.
//!
//! Phase 2 runs on whichever machine holds the consolidation lease, but every machine's hosts
//! read the memory root as local files. So a successful pass on a shared store publishes the
//! root it wrote as a new revision, in the same transaction that completes its lease (a pass
//! whose lease was taken over publishes nothing); and every machine materializes the newest
//! revision into its own root before it consolidates or reads, only when the revision changed.
//! Each file is written atomically and the revision marker last, so a crash mid-way leaves a
//! root the next materialization completes.
//!
//! A revision is data from other machines: only the memory-root layout is accepted (the three
//! files and `rollout_summaries/<stem>.md`); anything else refuses the whole revision.
//!
//! Agent notes (`notes/`) are not part of a revision: every machine adds its own at any time.
//! Each sync uploads this machine's notes the store does not have (redacted again, in case one
//! was written by hand) and writes the store's notes this machine does not have, so a note
//! written on one machine is read, searched and consolidated on all.

use crate::blocking::blocking;
use std::collections::BTreeSet;
use std::fs;
use std::io;

use memory_protocol::names::memory_root as names;
use memory_sanitize::redact_secrets;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::memory_root::MemoryRoot;
use crate::safe_file::read_regular_file;
use crate::store::{WriteStore, now_unix};

/// One file of the memory root, by its path relative to the root (`/`-separated).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootFile {
    /// `MEMORY.md`, `memory_summary.md`, `raw_memories.md` or `rollout_summaries/<stem>.md`.
    pub path: String,
    /// The file's text.
    pub text: String,
}

/// A published memory root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootRevision {
    /// Strictly increasing per store.
    pub revision: i64,
    /// Every file of the root.
    pub files: Vec<RootFile>,
}

/// The root's files as a revision would publish them: the three files (when present) and every
/// rollout summary, sorted by path. Notes stay local.
pub fn snapshot(root: &MemoryRoot) -> Result<Vec<RootFile>> {
    let mut files = Vec::new();
    for name in [
        names::MEMORY_FILE,
        names::MEMORY_SUMMARY_FILE,
        names::RAW_MEMORIES_FILE,
    ] {
        if let Some(text) = root.read(name)? {
            files.push(RootFile {
                path: name.to_owned(),
                text,
            });
        }
    }
    for stem_file in summary_file_names(root)? {
        let path = format!("{}/{stem_file}", names::ROLLOUT_SUMMARIES_DIR);
        if let Some(text) = root.read(&path)? {
            files.push(RootFile { path, text });
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// The revision last materialized into `root`, if any.
pub fn local_revision(root: &MemoryRoot) -> Result<Option<i64>> {
    Ok(root
        .read(names::SHARED_REVISION_FILE)?
        .and_then(|text| text.trim().parse().ok()))
}

/// Writes `revision` into `root`: every file (unchanged ones are left alone), rollout summaries
/// the revision does not hold removed, then the revision marker. Returns how many files were
/// written or removed. A path outside the layout refuses the revision before anything is
/// written.
pub fn materialize(root: &MemoryRoot, revision: &RootRevision) -> Result<usize> {
    for file in &revision.files {
        if !in_layout(&file.path) {
            return Err(Error::UnsafeMemoryRoot {
                path: root.dir().join(&file.path),
                reason: format!(
                    "shared revision {} holds a path outside the memory-root layout",
                    revision.revision
                ),
            });
        }
    }
    root.prepare()?;
    let mut changed = 0;
    for file in &revision.files {
        if root.write_atomic(&root.dir().join(&file.path), &file.text)? {
            changed += 1;
        }
        root.record_written(&file.path, &file.text)?;
    }
    let keep: BTreeSet<&str> = revision
        .files
        .iter()
        .filter_map(|file| {
            file.path
                .strip_prefix(names::ROLLOUT_SUMMARIES_DIR)
                .and_then(|rest| rest.strip_prefix('/'))
        })
        .collect();
    for name in summary_file_names(root)? {
        if !keep.contains(name.as_str()) {
            let path = root.rollout_summaries_dir().join(&name);
            match fs::remove_file(&path) {
                Ok(()) => changed += 1,
                Err(error) if error.kind() == io::ErrorKind::NotFound => {}
                Err(source) => return Err(Error::io(&path, source)),
            }
        }
    }
    root.write_atomic(
        &root.file(names::SHARED_REVISION_FILE),
        &format!("{}\n", revision.revision),
    )?;
    Ok(changed)
}

/// What one sync with a shared store did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SharedSync {
    /// The revision materialized here, when the store had a newer one.
    pub revision: Option<i64>,
    /// Notes of this machine uploaded.
    pub notes_sent: usize,
    /// Notes of other machines written here.
    pub notes_received: usize,
}

/// Brings `root` up to the store's newest revision (when it changed since the last
/// materialization here) and exchanges notes, when the store is shared; does nothing on a
/// local store.
pub async fn sync_shared_root(store: &dyn WriteStore, root: &MemoryRoot) -> Result<SharedSync> {
    let mut sync = SharedSync::default();
    if !store.is_shared() {
        return Ok(sync);
    }
    let owned = root.clone();
    let known = blocking(move || local_revision(&owned)).await?;
    if let Some(revision) = store.latest_memory_root(known).await? {
        sync.revision = Some(revision.revision);
        let owned = root.clone();
        blocking(move || materialize(&owned, &revision)).await?;
    }
    let owned = root.clone();
    let local = blocking(move || owned.read_notes()).await?;
    let shared = store.shared_notes().await?;
    let shared_paths: BTreeSet<&str> = shared.iter().map(|note| note.path.as_str()).collect();
    let outgoing: Vec<RootFile> = local
        .iter()
        .filter(|note| !shared_paths.contains(note.path.as_str()) && is_note_path(&note.path))
        .map(|note| RootFile {
            path: note.path.clone(),
            text: redact_secrets(&note.text).into_owned(),
        })
        .collect();
    if !outgoing.is_empty() {
        store.share_notes(&outgoing, now_unix()).await?;
        sync.notes_sent = outgoing.len();
    }
    let local_paths: BTreeSet<String> = local.into_iter().map(|note| note.path).collect();
    let incoming: Vec<RootFile> = shared
        .into_iter()
        .filter(|note| !local_paths.contains(&note.path))
        .collect();
    if !incoming.is_empty() {
        sync.notes_received = incoming.len();
        let owned = root.clone();
        blocking(move || write_notes(&owned, &incoming)).await?;
    }
    Ok(sync)
}

/// Writes notes of other machines into `notes/`; a path that is not a note's is refused.
///
/// Their names are added to `notes/.received` first ([`names::RECEIVED_NOTES_FILE`]), so they
/// never count toward this machine's daily note budget, even when a write below fails halfway
/// (the next sync writes the missing notes again).
fn write_notes(root: &MemoryRoot, notes: &[RootFile]) -> Result<()> {
    let dir = root.dir().join(names::NOTES_DIR);
    fs::create_dir_all(&dir).map_err(|source| Error::io(&dir, source))?;
    if let Some(note) = notes.iter().find(|note| !is_note_path(&note.path)) {
        return Err(Error::UnsafeMemoryRoot {
            path: root.dir().join(&note.path),
            reason: "a shared note outside notes/".to_owned(),
        });
    }
    let list = dir.join(names::RECEIVED_NOTES_FILE);
    let mut received: BTreeSet<String> = match read_regular_file(&list) {
        Ok(Some(bytes)) => String::from_utf8_lossy(&bytes)
            .lines()
            .map(str::to_owned)
            .collect(),
        // Missing, or not a regular file (the atomic write below replaces it).
        Ok(None) => BTreeSet::new(),
        Err(error) if error.kind() == io::ErrorKind::InvalidInput => BTreeSet::new(),
        Err(source) => return Err(Error::io(&list, source)),
    };
    let names = notes
        .iter()
        .filter_map(|note| note.path.rsplit('/').next().map(str::to_owned));
    received.extend(names);
    received.retain(|name| !name.is_empty());
    let mut text = received.into_iter().collect::<Vec<_>>().join("\n");
    text.push('\n');
    root.write_atomic(&list, &text)?;
    for note in notes {
        root.write_atomic(&root.dir().join(&note.path), &note.text)?;
    }
    Ok(())
}

/// `notes/<name>.md` with a name of `[0-9A-Za-z_.-]` not starting with a dot.
fn is_note_path(path: &str) -> bool {
    path.strip_prefix(names::NOTES_DIR)
        .and_then(|rest| rest.strip_prefix('/'))
        .and_then(|name| name.strip_suffix(".md"))
        .is_some_and(|stem| {
            !stem.is_empty()
                && !stem.starts_with('.')
                && stem
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        })
}

/// `MEMORY.md`, `memory_summary.md`, `raw_memories.md` or `rollout_summaries/<stem>.md` with a
/// stem of `[0-9A-Za-z_-]`.
fn in_layout(path: &str) -> bool {
    if [
        names::MEMORY_FILE,
        names::MEMORY_SUMMARY_FILE,
        names::RAW_MEMORIES_FILE,
    ]
    .contains(&path)
    {
        return true;
    }
    path.strip_prefix(names::ROLLOUT_SUMMARIES_DIR)
        .and_then(|rest| rest.strip_prefix('/'))
        .and_then(|name| name.strip_suffix(".md"))
        .is_some_and(|stem| {
            !stem.is_empty()
                && stem
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
}

/// Names of the `*.md` files (not folders) in `rollout_summaries/`, sorted.
fn summary_file_names(root: &MemoryRoot) -> Result<Vec<String>> {
    let dir = root.rollout_summaries_dir();
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(Error::io(&dir, source)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| Error::io(&dir, source))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
        if name.ends_with(".md") && !name.starts_with('.') && !is_dir {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, text: &str) -> RootFile {
        RootFile {
            path: path.to_owned(),
            text: text.to_owned(),
        }
    }

    #[test]
    fn a_revision_is_materialized_and_read_back_by_snapshot() {
        let home = tempfile::tempdir().unwrap();
        let root = MemoryRoot::under_home(home.path());
        root.prepare().unwrap();
        root.write_atomic(&root.rollout_summaries_dir().join("old.md"), "gone")
            .unwrap();
        let revision = RootRevision {
            revision: 7,
            files: vec![
                file("MEMORY.md", "# handbook\n"),
                file("memory_summary.md", "v1\nsummary\n"),
                file("raw_memories.md", "raw\n"),
                file("rollout_summaries/2025-01-01T00-00-00-abcd.md", "one\n"),
            ],
        };
        assert_eq!(materialize(&root, &revision).unwrap(), 5);
        assert_eq!(local_revision(&root).unwrap(), Some(7));
        assert_eq!(snapshot(&root).unwrap(), revision.files);
        // Again: nothing to write.
        assert_eq!(materialize(&root, &revision).unwrap(), 0);
    }

    #[test]
    fn a_revision_with_a_path_outside_the_layout_is_refused_whole() {
        let home = tempfile::tempdir().unwrap();
        let root = MemoryRoot::under_home(home.path());
        for bad in [
            "../escape.md",
            "rollout_summaries/../../x.md",
            "rollout_summaries/a b.md",
            "notes/n.md",
            "/etc/passwd",
            "rollout_summaries/.md",
            ".shared_revision",
        ] {
            let revision = RootRevision {
                revision: 1,
                files: vec![file("MEMORY.md", "x"), file(bad, "x")],
            };
            let error = materialize(&root, &revision).unwrap_err();
            assert!(
                error.to_string().contains("outside the memory-root layout"),
                "{bad}: {error}"
            );
            assert!(!root.file("MEMORY.md").exists(), "{bad}");
        }
    }
}
