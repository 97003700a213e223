//! Scanning a folder of rollouts into the `threads` table.
//!
//! Every `*.jsonl` file under the folder is a rollout (codex's `YYYY/MM/DD/rollout-*.jsonl`
//! layout included). For each one the scan reads only what it needs: the first lines, for
//! the `session_meta` (thread id, cwd, source), and the last 64 KiB, for the last activity
//! time and the content fingerprint. Files whose size and modification time match the stored
//! row are not read at all. A Claude Code transcript (Claude Code's `projects/*/*.jsonl`) is
//! read whole into the same metadata (the reader of
//! [`crate::stage_one_request::load_rollout`]); a subagent's file under `<session>/subagents/`
//! is registered as a subagent session and read with its parent.
//!
//! **Activity time** is the timestamp of the last line that has one, falling back to the
//! file's modification time. The idle rule (`min_rollout_idle_hours`) therefore measures when
//! the session was last active, not when the file was copied: a fresh clone of
//! `examples/rollouts` has new mtimes but old sessions.
//!
//! **Skipped sources**: sub-agent, ephemeral and non-interactive (`exec`, `mcp`, internal)
//! sessions are registered with a skip reason and never claimed, and so is a rollout in which
//! the user never wrote anything (only injected context, or nothing at all: codex's "no
//! preview" rule). A rollout without a readable `session_meta` is registered under an id taken
//! from its file name, so a broken file ends as a job error with a clear message instead of
//! vanishing.
//!
//! **External context**: with `disable_on_external_context`, a session that searched the web
//! or used tool search is registered as polluted and never extracted; a thread whose memory
//! was enabled becomes polluted when its rollout changes to include such a call.
//!
//! Finding the first user message reads lines only until one is found; the pollution check
//! (when enabled) reads the whole file. Lines are matched on raw bytes first and parsed only
//! when they may be what is looked for.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use memory_protocol::rollout::ResponseItem;
use memory_protocol::{RolloutItem, RolloutLine, SessionMeta};
use memory_transcript::claude_code::TranscriptFormat;
use memory_transcript::strip_injected;
use sha2::{Digest, Sha256};

use crate::config::MemoriesConfig;
use crate::error::{Error, Result};
use crate::store::{
    Exclusion, KnownFile, MemoryMode, SessionFacts, StoredRollout, ThreadRegistration, WriteStore,
};

/// Bytes read from the end of a file for the activity time and the fingerprint.
const TAIL_BYTES: u64 = 64 * 1024;
/// Bytes read from the start of a file for the fingerprint.
const HEAD_BYTES: usize = 64 * 1024;
/// Lines searched for a `session_meta` at the start of a file.
const META_SEARCH_LINES: usize = 16;
/// Longest line read while searching for the `session_meta` (base instructions can be large).
const META_MAX_LINE_BYTES: u64 = 16 * 1024 * 1024;
/// Registrations written per transaction.
const BATCH: usize = 512;

/// How a scan registers rollouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanOptions {
    /// Memory mode for threads seen for the first time (`generate_memories`).
    pub new_thread_mode: MemoryMode,
    /// Mark sessions that searched the web or used tool search as polluted
    /// (`disable_on_external_context`).
    pub disable_on_external_context: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            new_thread_mode: MemoryMode::Enabled,
            disable_on_external_context: false,
        }
    }
}

impl ScanOptions {
    /// The options the `[memories]` settings ask for.
    pub fn from_config(config: &MemoriesConfig) -> ScanOptions {
        ScanOptions {
            new_thread_mode: if config.generate_memories {
                MemoryMode::Enabled
            } else {
                MemoryMode::Disabled
            },
            disable_on_external_context: config.disable_on_external_context,
        }
    }
}

/// What a scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanReport {
    /// The scanned folder, made absolute and canonical (the form stored rollout paths start
    /// with).
    pub root: PathBuf,
    /// Rollout files found.
    pub files: usize,
    /// Threads seen for the first time.
    pub new: usize,
    /// Known threads whose rollout changed (queued again).
    pub changed: usize,
    /// Known threads whose rollout is unchanged.
    pub unchanged: usize,
    /// Rollouts found that are never extracted, counted by reason.
    pub skipped_sources: BTreeMap<Exclusion, usize>,
    /// Files and folders that could not be read at all, with the reason; the rest was scanned.
    pub unreadable: Vec<(PathBuf, String)>,
}

impl ScanReport {
    /// The prefix every rollout path under the scanned folder starts with, for
    /// [`crate::store::ClaimParams::rollout_prefix`].
    pub fn rollout_prefix(&self) -> String {
        let mut prefix = self.root.to_string_lossy().into_owned();
        if !prefix.ends_with(std::path::MAIN_SEPARATOR) {
            prefix.push(std::path::MAIN_SEPARATOR);
        }
        prefix
    }
}

/// Registers every rollout under `root` in `store` (the SQLite file, or a PostgreSQL store
/// shared by several machines): the files are read on the blocking pool, then registered in
/// batches. When the store shares rollouts ([`WriteStore::is_shared`]), each extractable
/// rollout's filtered, redacted items are uploaded before its registration, so a worker on
/// any machine can extract it; a rollout that cannot be loaded is reported unreadable and left
/// unregistered, so the next scan tries it again.
pub async fn scan_rollouts(
    store: &dyn WriteStore,
    root: &Path,
    options: &ScanOptions,
    now: i64,
) -> Result<ScanReport> {
    let known = store.thread_file_states().await?;
    let (root, options) = (root.to_owned(), *options);
    let shares = store.is_shared();
    let (mut report, registrations, uploads) = tokio::task::spawn_blocking(move || {
        let mut registrations = Vec::new();
        let mut report = scan_files(&root, &options, &known, &mut |batch| {
            registrations.extend_from_slice(batch);
            Ok(crate::store::UpsertCounts::default())
        })?;
        let mut uploads = HashMap::new();
        if shares {
            registrations.retain(|row| match stored_rollout(row) {
                Ok(Some(stored)) => {
                    uploads.insert(row.session.id.clone(), stored);
                    true
                }
                Ok(None) => true,
                Err(e) => {
                    report
                        .unreadable
                        .push((PathBuf::from(&row.session.rollout_path), e.to_string()));
                    false
                }
            });
        }
        Ok::<_, Error>((report, registrations, uploads))
    })
    .await??;
    for batch in registrations.chunks(BATCH) {
        let batch_uploads: Vec<StoredRollout> = batch
            .iter()
            .filter_map(|row| uploads.get(&row.session.id).cloned())
            .collect();
        if !batch_uploads.is_empty() {
            store.store_rollouts(&batch_uploads, now).await?;
        }
        add_counts(&mut report, store.upsert_threads(batch, now).await?);
    }
    Ok(report)
}

/// What a shared store keeps of a registered rollout: nothing for one never extracted (a
/// reason to exclude it), else its filtered, redacted items.
fn stored_rollout(row: &ThreadRegistration) -> Result<Option<StoredRollout>> {
    if row.session.exclusion.is_some() {
        return Ok(None);
    }
    let loaded = crate::stage_one_request::load_rollout(Path::new(&row.session.rollout_path))?;
    Ok(Some(StoredRollout {
        thread_id: row.session.id.clone(),
        source_fingerprint: row.fingerprint.clone(),
        items: crate::stage_one_request::stored_items(&loaded)?,
    }))
}

/// The scan itself: every rollout under `root` not already known with the same size and
/// mtime is inspected and handed to `register` in batches.
fn scan_files(
    root: &Path,
    options: &ScanOptions,
    known: &HashMap<String, KnownFile>,
    register: &mut dyn FnMut(&[ThreadRegistration]) -> Result<crate::store::UpsertCounts>,
) -> Result<ScanReport> {
    let root = root.canonicalize().map_err(|e| Error::io(root, e))?;
    // The folder itself must be readable; anything below it that is not is a warning.
    crate::fault::check(crate::fault::FaultPoint::ReadDir, &root)
        .map_err(|e| Error::io(&root, e))?;
    std::fs::read_dir(&root).map_err(|e| Error::io(&root, e))?;
    let mut files = Vec::new();
    let mut unreadable = Vec::new();
    collect_rollouts(&root, &mut files, &mut unreadable);
    files.sort();
    let mut report = ScanReport {
        root: root.clone(),
        files: files.len(),
        unreadable,
        ..ScanReport::default()
    };
    let mut pending = Vec::new();
    for path in files {
        let Some(path_text) = path.to_str().map(str::to_owned) else {
            report
                .unreadable
                .push((path, "path is not valid UTF-8".to_owned()));
            continue;
        };
        let metadata = match std::fs::metadata(&path) {
            Ok(metadata) if metadata.is_file() => metadata,
            Ok(metadata) => {
                let kind = crate::safe_file::describe(metadata.file_type());
                report
                    .unreadable
                    .push((path, format!("not a regular file ({kind})")));
                continue;
            }
            Err(e) => {
                report.unreadable.push((path, e.to_string()));
                continue;
            }
        };
        let mtime_ns = metadata
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        if let Some(file) = known.get(&path_text)
            && (file.size, file.mtime_ns) == (metadata.len(), mtime_ns)
        {
            if let Some(reason) = &file.exclusion {
                *report.skipped_sources.entry(reason.clone()).or_default() += 1;
            }
            report.unchanged += 1;
            continue;
        }
        match inspect_rollout(&path, &path_text, metadata.len(), mtime_ns, options) {
            Ok(registration) => {
                if let Some(reason) = &registration.session.exclusion {
                    *report.skipped_sources.entry(reason.clone()).or_default() += 1;
                }
                pending.push(registration);
            }
            Err(e) => report.unreadable.push((path, e.to_string())),
        }
        if pending.len() >= BATCH {
            add_counts(&mut report, register(&pending)?);
            pending.clear();
        }
    }
    add_counts(&mut report, register(&pending)?);
    Ok(report)
}

fn add_counts(report: &mut ScanReport, counts: crate::store::UpsertCounts) {
    report.new += counts.inserted;
    report.changed += counts.changed;
    report.unchanged += counts.unchanged;
}

/// Every `*.jsonl` file under `dir`. Symbolic links to folders are not followed, so a link
/// cycle cannot loop. A folder or entry that cannot be read is noted in `unreadable` and the
/// rest is still collected.
fn collect_rollouts(dir: &Path, files: &mut Vec<PathBuf>, unreadable: &mut Vec<(PathBuf, String)>) {
    let entries = match crate::fault::check(crate::fault::FaultPoint::ReadDir, dir)
        .and_then(|()| std::fs::read_dir(dir))
    {
        Ok(entries) => entries,
        Err(e) => {
            unreadable.push((dir.to_path_buf(), format!("cannot list the folder: {e}")));
            return;
        }
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                unreadable.push((dir.to_path_buf(), format!("cannot list the folder: {e}")));
                continue;
            }
        };
        let path = entry.path();
        let file_type = match entry.file_type() {
            Ok(file_type) => file_type,
            Err(e) => {
                unreadable.push((path, e.to_string()));
                continue;
            }
        };
        if file_type.is_dir() {
            collect_rollouts(&path, files, unreadable);
        } else if path.extension().is_some_and(|ext| ext == "jsonl") {
            if file_type.is_file() || path.is_file() {
                files.push(path);
            } else if !file_type.is_symlink() {
                let kind = crate::safe_file::describe(file_type);
                unreadable.push((path, format!("not a regular file ({kind})")));
            }
        }
    }
}

/// Reads what the registration needs from one rollout file.
fn inspect_rollout(
    path: &Path,
    path_text: &str,
    size: u64,
    mtime_ns: i64,
    options: &ScanOptions,
) -> std::io::Result<ThreadRegistration> {
    // The type is checked again on the open handle: the file may have been swapped since.
    let mut file = crate::safe_file::open_regular_file(path)?;
    let (meta, content) = match crate::session_file::file_format(&mut file)? {
        TranscriptFormat::ClaudeCode => {
            let transcript = crate::session_file::read_claude_file(&mut file)?;
            let content = ContentSignals {
                user_message: transcript.has_user_prompt(),
                external_context: options.disable_on_external_context
                    && transcript.used_external_context(),
            };
            (Some(transcript.session_meta()), content)
        }
        TranscriptFormat::CodexRollout => {
            let meta = find_session_meta(&mut file)?;
            let content = inspect_content(&mut file, options.disable_on_external_context)?;
            (meta, content)
        }
    };
    let (head, tail) = read_head_and_tail(&mut file, size)?;
    let mtime_secs = mtime_ns.div_euclid(1_000_000_000);
    let last_activity_at = last_timestamp(&tail).unwrap_or(mtime_secs);
    let created_at = meta
        .as_ref()
        .and_then(|m| m.timestamp.as_deref())
        .and_then(parse_timestamp)
        .or_else(|| first_timestamp(&head))
        .unwrap_or(last_activity_at);
    let mut hasher = Sha256::new();
    hasher.update(size.to_le_bytes());
    hasher.update(&head);
    hasher.update(&tail);
    let fingerprint: String = hasher
        .finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
    let source = meta.as_ref().and_then(|m| m.source.as_ref());
    let memory_mode = match meta
        .as_ref()
        .and_then(|m| m.extra.get("memory_mode"))
        .and_then(|v| v.as_str())
    {
        Some("disabled") => MemoryMode::DisabledBySession,
        Some("polluted") => MemoryMode::Polluted,
        _ if content.external_context => MemoryMode::Polluted,
        _ => options.new_thread_mode,
    };
    // A file without a readable session_meta is kept eligible, so it ends as a job error
    // with a clear message instead of vanishing as "no user message".
    let exclusion = meta.as_ref().and_then(|meta| {
        exclusion(meta).or_else(|| (!content.user_message).then_some(Exclusion::NoUserMessage))
    });
    Ok(ThreadRegistration {
        session: SessionFacts {
            id: meta
                .as_ref()
                .and_then(|m| m.thread_id())
                .map(str::to_owned)
                .unwrap_or_else(|| thread_id_from_path(path)),
            rollout_path: path_text.to_owned(),
            cwd: meta.as_ref().and_then(|m| m.cwd.clone()),
            git_branch: meta
                .as_ref()
                .and_then(|m| m.git.as_ref())
                .and_then(|git| git.branch.clone())
                .filter(|branch| !branch.trim().is_empty()),
            source: source.and_then(|s| s.name()).map(str::to_owned),
            exclusion,
            created_at,
        },
        last_activity_at,
        memory_mode,
        fingerprint,
        file_size: size,
        file_mtime_ns: mtime_ns,
    })
}

/// Why a session is never extracted, if so. A missing source (the oldest files) counts as
/// interactive: those files were written by the interactive CLI.
pub fn exclusion(meta: &SessionMeta) -> Option<Exclusion> {
    if meta
        .extra
        .get("ephemeral")
        .is_some_and(|v| v.as_bool() == Some(true))
    {
        return Some(Exclusion::Ephemeral);
    }
    let source = meta.source.as_ref()?;
    if source.is_subagent() {
        return Some(Exclusion::Subagent);
    }
    if source.is_interactive() {
        return None;
    }
    Some(Exclusion::NonInteractive(
        source.name().unwrap_or("unknown").to_owned(),
    ))
}

/// What a rollout's content shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ContentSignals {
    /// The user wrote something (beyond injected context).
    user_message: bool,
    /// The session searched the web or used tool search.
    external_context: bool,
}

/// Item types that bring in context from outside the session.
const EXTERNAL_CONTEXT_TYPES: [&str; 3] =
    ["web_search_call", "tool_search_call", "tool_search_output"];

/// Reads the file from the start for [`ContentSignals`]; stops at the first user message
/// unless external context is looked for too.
fn inspect_content(file: &mut File, check_external: bool) -> std::io::Result<ContentSignals> {
    file.seek(SeekFrom::Start(0))?;
    let mut reader = BufReader::new(&mut *file);
    let mut signals = ContentSignals::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let maybe_user = contains(&line, b"\"user\"") || contains(&line, b"user_message");
        let maybe_external = check_external
            && EXTERNAL_CONTEXT_TYPES
                .iter()
                .any(|kind| contains(&line, kind.as_bytes()));
        let wanted = (maybe_user && !signals.user_message) || maybe_external;
        if !wanted {
            continue;
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            continue;
        };
        let Ok(parsed) = RolloutLine::parse(text.trim_end()) else {
            continue;
        };
        match &parsed.item {
            RolloutItem::ResponseItem(ResponseItem::Message(message))
                if message.role.eq_ignore_ascii_case("user") =>
            {
                let written = message
                    .content
                    .iter()
                    .filter_map(|part| part.text())
                    .any(|text| !strip_injected(text).trim().is_empty());
                signals.user_message |= written;
            }
            RolloutItem::EventMsg(event) if event.event_type == "user_message" => {
                let written = event
                    .fields
                    .get("message")
                    .and_then(|m| m.as_str())
                    .is_some_and(|text| !strip_injected(text).trim().is_empty());
                signals.user_message |= written;
            }
            RolloutItem::ResponseItem(item) => {
                signals.external_context |=
                    check_external && EXTERNAL_CONTEXT_TYPES.contains(&item.item_type());
            }
            _ => {}
        }
        if signals.user_message && (!check_external || signals.external_context) {
            break;
        }
    }
    Ok(signals)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// The first `session_meta` among the first lines of the file.
fn find_session_meta(file: &mut File) -> std::io::Result<Option<SessionMeta>> {
    let mut reader = BufReader::new(&mut *file);
    let mut line = Vec::new();
    for _ in 0..META_SEARCH_LINES {
        line.clear();
        let read = (&mut reader)
            .take(META_MAX_LINE_BYTES)
            .read_until(b'\n', &mut line)?;
        if read == 0 {
            break;
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        if let Ok(RolloutLine {
            item: RolloutItem::SessionMeta(meta),
            ..
        }) = RolloutLine::parse(text.trim_end())
        {
            return Ok(Some(meta));
        }
        if !line.ends_with(b"\n") {
            // A line longer than the search limit: stop rather than read a huge file.
            break;
        }
    }
    Ok(None)
}

fn read_head_and_tail(file: &mut File, size: u64) -> std::io::Result<(Vec<u8>, Vec<u8>)> {
    file.seek(SeekFrom::Start(0))?;
    let mut head = Vec::new();
    file.take(HEAD_BYTES as u64).read_to_end(&mut head)?;
    let tail_start = size.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(tail_start))?;
    let mut tail = Vec::new();
    file.take(TAIL_BYTES).read_to_end(&mut tail)?;
    Ok((head, tail))
}

/// The `timestamp` of the last line in `tail` that has a readable one (a cut last line is
/// passed over).
fn last_timestamp(tail: &[u8]) -> Option<i64> {
    tail.split(|b| *b == b'\n').rev().find_map(line_timestamp)
}

fn first_timestamp(head: &[u8]) -> Option<i64> {
    head.split(|b| *b == b'\n').find_map(line_timestamp)
}

fn line_timestamp(line: &[u8]) -> Option<i64> {
    #[derive(serde::Deserialize)]
    struct Stamp<'a> {
        #[serde(borrow)]
        timestamp: Option<std::borrow::Cow<'a, str>>,
    }
    let stamp: Stamp<'_> = serde_json::from_slice(line).ok()?;
    parse_timestamp(stamp.timestamp.as_deref()?)
}

/// Parses an RFC 3339 timestamp into Unix seconds.
pub fn parse_timestamp(text: &str) -> Option<i64> {
    text.parse::<jiff::Timestamp>().ok().map(|t| t.as_second())
}

/// A thread id for a file without a readable `session_meta`: the UUID at the end of codex's
/// `rollout-<time>-<uuid>.jsonl` names, else a hash of the path.
fn thread_id_from_path(path: &Path) -> String {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if let Some(candidate) = stem.get(stem.len().saturating_sub(36)..)
        && uuid::Uuid::parse_str(candidate).is_ok()
    {
        return candidate.to_owned();
    }
    let digest = Sha256::digest(path.to_string_lossy().as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("file-{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_timestamp_skips_a_cut_last_line() {
        let tail = b"{\"timestamp\":\"2025-01-02T03:04:05.000Z\",\"type\":\"x\"}\n{\"timestamp\":\"2025-01-0";
        assert_eq!(
            last_timestamp(tail),
            parse_timestamp("2025-01-02T03:04:05Z")
        );
    }

    #[test]
    fn thread_id_comes_from_the_file_name_uuid() {
        let path =
            Path::new("/x/rollout-2025-05-01T10-00-00-0196a1b2-0000-7000-8000-000000000001.jsonl");
        assert_eq!(
            thread_id_from_path(path),
            "0196a1b2-0000-7000-8000-000000000001"
        );
        assert!(thread_id_from_path(Path::new("/x/notes.jsonl")).starts_with("file-"));
    }

    proptest::proptest! {
        #[test]
        fn timestamp_readers_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let _ = last_timestamp(&bytes);
            let _ = first_timestamp(&bytes);
        }

        #[test]
        fn parse_timestamp_never_panics(text in ".{0,64}") {
            let _ = parse_timestamp(&text);
        }

        #[test]
        fn thread_ids_from_any_file_name_are_non_empty(name in "[^/\u{0}]{1,80}") {
            let id = thread_id_from_path(&Path::new("/r").join(format!("{name}.jsonl")));
            proptest::prop_assert!(!id.is_empty());
        }
    }
}
