//! The memory search index: SQLite FTS5 over the blocks of the memory root's Markdown files.
//!
//! It lives in its own file (`<home>/memory_index.sqlite`), opened and versioned by
//! `memory-store` (owner `memory-introspect`), so it never touches the write path's database. It is a cache of the files: `refresh`
//! compares each file's size, modification time and inode with what was indexed and re-reads
//! only the files that changed, in one transaction. The same file also keeps the last injected
//! block's numbers and the reads `memory_read` served (usage for selection).
//!
//! Block rowids are `file_id << 20 | block number`, so a file's blocks are one rowid range and
//! re-indexing a file deletes a range instead of scanning the table.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use memory_protocol::introspect::MemorySnapshot;
use memory_store::migrate::Schema;
use memory_store::names::schema_owners::MEMORY_INTROSPECT;
use memory_store::names::tables::MEMORY_SEARCH_INDEX;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::blocks::split_blocks;
use crate::error::{Error, Result};
use crate::grams::index_grams;
use crate::paths::{RelativePath, open_file};
use crate::scan::RootScan;

/// Bits of a rowid that number a block within its file.
const BLOCK_BITS: u32 = 20;
/// Files larger than this are not indexed (and reported).
pub(crate) const MAX_INDEXED_FILE_BYTES: u64 = 16 << 20;
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Marks the start and end of a match in `highlight()` output; never in indexed text.
const MARK_START: char = '\u{2}';
const MARK_END: char = '\u{3}';

/// What one `refresh` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RefreshReport {
    /// Files (re-)indexed because they were new or changed.
    pub(crate) reindexed: u32,
    /// Files dropped because they are gone.
    pub(crate) removed: u32,
    /// Files that could not be read, with why; none of their old blocks remain.
    pub(crate) unreadable: Vec<(String, String)>,
}

/// One block that matched.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IndexHit {
    /// The block's rowid (see the module docs).
    pub(crate) rowid: i64,
    pub(crate) path: String,
    pub(crate) start_line: u32,
    pub(crate) heading: Option<String>,
    pub(crate) text: String,
    /// False when the match is only in the bigram column or the heading, so no offset is
    /// known.
    pub(crate) marked: bool,
    /// Line offset of the first match within the block.
    pub(crate) match_offset: u32,
    /// Byte offset of the first match within its line.
    pub(crate) match_column: usize,
    /// BM25, higher is better.
    pub(crate) score: f64,
}

/// A read `memory_read` served: the file and the threads its text names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryRead {
    /// File read, relative to the memory root.
    pub path: String,
    /// Thread ids named in the text returned (`thread_id: X`, ``thread `X` ``), whose
    /// memories were used.
    pub thread_ids: Vec<String>,
    /// When (Unix seconds).
    pub read_at: i64,
}

/// An open index.
pub(crate) struct MemoryIndex {
    conn: Connection,
    path: PathBuf,
    /// What the last refresh of this connection left the index in line with: the database's
    /// `data_version` after it and a digest of the files it saw. While neither changed, the
    /// files are as indexed and the manifest need not be read again.
    in_line_with: Option<(i64, [u8; 32])>,
    /// [`MemoryIndex::counts`] as of a `data_version`, until this connection writes.
    counted: Option<(i64, (u32, u64))>,
}

impl std::fmt::Debug for MemoryIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryIndex")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl MemoryIndex {
    /// Opens the index file at `path`, creating it (and its schema) when missing.
    ///
    /// The index is a cache of the memory files, so a file SQLite reads as damaged (not a
    /// database, or corrupt) is set aside under a new name, never deleted, and a new index is
    /// built in its place. Any other failure (a newer schema, a lock, a folder in the way)
    /// leaves the file alone and is the error.
    pub(crate) fn open(path: &Path) -> Result<MemoryIndex> {
        let existed = path.exists();
        if !existed
            && let Some(folder) = path.parent()
            && !folder.is_dir()
        {
            return Err(Error::IndexFolder {
                path: path.to_owned(),
                folder: folder.to_owned(),
            });
        }
        let open = || memory_store::sqlite::open(path, BUSY_TIMEOUT);
        match Self::set_up(path, existed, open()) {
            Err(error) if existed && is_damaged(&error) => match set_aside(path) {
                Ok(aside) => {
                    tracing::warn!(
                        damaged = %aside.display(),
                        "the search index was damaged ({error}): it was set aside and is rebuilt"
                    );
                    Self::set_up(path, false, open())
                }
                Err(_) => Err(error),
            },
            opened => opened,
        }
    }

    /// A transient index in memory, for searching when the file cannot be used.
    pub(crate) fn in_memory() -> Result<MemoryIndex> {
        Self::set_up(
            Path::new(":memory:"),
            false,
            memory_store::sqlite::open_in_memory(BUSY_TIMEOUT),
        )
    }

    /// The index on a connection just opened, its tables made or checked.
    fn set_up(
        path: &Path,
        existed: bool,
        opened: memory_store::Result<Connection>,
    ) -> Result<MemoryIndex> {
        let open_error = |source| Error::IndexOpen {
            path: path.to_owned(),
            existed,
            source,
        };
        let mut index = MemoryIndex {
            conn: opened.map_err(open_error)?,
            path: path.to_owned(),
            in_line_with: None,
            counted: None,
        };
        index.migrate().map_err(open_error)?;
        Ok(index)
    }

    /// Creates the tables, or refuses an index written by a newer build. Indexes written
    /// before `schema_versions` kept their version in `PRAGMA user_version`.
    fn migrate(&mut self) -> memory_store::Result<i64> {
        let migrations = [
            format!(
                "CREATE TABLE IF NOT EXISTS indexed_files (
                file_id INTEGER PRIMARY KEY,
                path TEXT NOT NULL UNIQUE,
                size INTEGER NOT NULL,
                mtime_ns INTEGER NOT NULL,
                inode INTEGER NOT NULL,
                blocks INTEGER NOT NULL
            );
            CREATE VIRTUAL TABLE IF NOT EXISTS {MEMORY_SEARCH_INDEX} USING fts5(
                text, heading, start_line UNINDEXED,
                tokenize = 'porter unicode61 remove_diacritics 2'
            );
            CREATE TABLE IF NOT EXISTS injections (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                snapshot TEXT NOT NULL
            );
            CREATE TABLE IF NOT EXISTS memory_reads (
                id INTEGER PRIMARY KEY,
                path TEXT NOT NULL,
                thread_ids TEXT NOT NULL,
                read_at INTEGER NOT NULL
            );"
            ),
            // The bigram column for scripts written without spaces (see `crate::grams`). The
            // index is a cache of the files: the table is rebuilt and every file read again.
            format!(
                "DROP TABLE IF EXISTS {MEMORY_SEARCH_INDEX};
            CREATE VIRTUAL TABLE {MEMORY_SEARCH_INDEX} USING fts5(
                text, heading, start_line UNINDEXED, grams,
                tokenize = 'porter unicode61 remove_diacritics 2'
            );
            DELETE FROM indexed_files;"
            ),
        ];
        let schema = Schema {
            owner: MEMORY_INTROSPECT,
            migrations: &migrations,
            legacy_user_version: true,
        };
        memory_store::migrate::migrate_sqlite(&mut self.conn, &schema, |_, _| Ok(()))
    }

    /// Brings the index in line with `scan`: new and changed Markdown files are (re)read and
    /// re-indexed, vanished ones dropped. Unchanged files are not read.
    pub(crate) fn refresh(&mut self, root: &Path, scan: &RootScan) -> Result<RefreshReport> {
        let path = self.path.clone();
        let error = |error| index_error(&path, error);
        // Every search refreshes first; on a large root, reading the whole manifest each time
        // would cost more than the search. Another connection's commit changes `data_version`.
        let files = scan.indexed_digest();
        let version = self.data_version().map_err(error)?;
        if self.in_line_with == Some((version, files)) {
            return Ok(RefreshReport::default());
        }
        self.in_line_with = None;
        self.counted = None;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(error)?;
        let manifest: HashMap<String, (i64, i64, i64, i64)> = {
            let mut statement = tx
                .prepare("SELECT path, file_id, size, mtime_ns, inode FROM indexed_files")
                .map_err(error)?;
            let rows = statement
                .query_map([], |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        (row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?),
                    ))
                })
                .map_err(error)?;
            rows.collect::<rusqlite::Result<_>>().map_err(error)?
        };
        let mut report = RefreshReport::default();
        let mut seen = HashSet::new();
        for file in scan.files.iter().filter(|file| file.indexable()) {
            seen.insert(file.rel.as_str());
            let stats = (
                i64::try_from(file.size).unwrap_or(i64::MAX),
                file.mtime_ns,
                file.inode as i64,
            );
            let known = manifest.get(&file.rel);
            if known.is_some_and(|&(_, size, mtime, inode)| (size, mtime, inode) == stats) {
                continue;
            }
            let file_id = match known {
                Some(&(file_id, ..)) => {
                    delete_blocks(&tx, file_id).map_err(error)?;
                    file_id
                }
                None => tx
                    .query_row(
                        "INSERT INTO indexed_files (path, size, mtime_ns, inode, blocks)
                         VALUES (?1, -1, 0, 0, 0) RETURNING file_id",
                        params![file.rel],
                        |row| row.get(0),
                    )
                    .map_err(error)?,
            };
            match read_text(root, &file.rel, file.size) {
                Ok(text) => {
                    let blocks = split_blocks(&text);
                    let mut insert = tx
                        .prepare_cached(&format!(
                            "INSERT INTO {MEMORY_SEARCH_INDEX} (rowid, text, heading, start_line, grams)
                             VALUES (?1, ?2, ?3, ?4, ?5)"
                        ))
                        .map_err(error)?;
                    let mut count = 0i64;
                    for (number, block) in blocks.iter().enumerate().take(1 << BLOCK_BITS) {
                        let rowid = (file_id << BLOCK_BITS) | number as i64;
                        let grams = format!(
                            "{}{}",
                            index_grams(block.heading.as_deref().unwrap_or("")),
                            index_grams(&block.text)
                        );
                        insert
                            .execute(params![
                                rowid,
                                block.text,
                                block.heading,
                                block.start_line,
                                grams
                            ])
                            .map_err(error)?;
                        count += 1;
                    }
                    tx.execute(
                        "UPDATE indexed_files SET size = ?2, mtime_ns = ?3, inode = ?4, blocks = ?5
                         WHERE file_id = ?1",
                        params![file_id, stats.0, stats.1, stats.2, count],
                    )
                    .map_err(error)?;
                    report.reindexed += 1;
                }
                Err(reason) => {
                    tx.execute(
                        "DELETE FROM indexed_files WHERE file_id = ?1",
                        params![file_id],
                    )
                    .map_err(error)?;
                    report.unreadable.push((file.rel.clone(), reason));
                }
            }
        }
        for (gone, &(file_id, ..)) in &manifest {
            if !seen.contains(gone.as_str()) {
                delete_blocks(&tx, file_id).map_err(error)?;
                tx.execute(
                    "DELETE FROM indexed_files WHERE file_id = ?1",
                    params![file_id],
                )
                .map_err(error)?;
                report.removed += 1;
            }
        }
        tx.commit().map_err(error)?;
        // An unreadable file is tried again next time, so only a clean refresh is remembered.
        if report.unreadable.is_empty() {
            self.in_line_with = Some((self.data_version().map_err(error)?, files));
        }
        Ok(report)
    }

    /// SQLite's `data_version`: it changes when another connection commits.
    fn data_version(&self) -> rusqlite::Result<i64> {
        self.conn
            .query_row("PRAGMA data_version", [], |row| row.get(0))
    }

    /// Files and blocks indexed.
    pub(crate) fn counts(&mut self) -> Result<(u32, u64)> {
        let version = self
            .data_version()
            .map_err(|error| index_error(&self.path, error))?;
        if let Some((at, counts)) = self.counted
            && at == version
        {
            return Ok(counts);
        }
        let counts = self
            .conn
            .query_row(
                "SELECT count(*), coalesce(sum(blocks), 0) FROM indexed_files",
                [],
                |row| {
                    let files: i64 = row.get(0)?;
                    let blocks: i64 = row.get(1)?;
                    Ok((
                        u32::try_from(files).unwrap_or(u32::MAX),
                        u64::try_from(blocks).unwrap_or(0),
                    ))
                },
            )
            .map_err(|error| index_error(&self.path, error))?;
        self.counted = Some((version, counts));
        Ok(counts)
    }

    /// The best `limit` blocks matching `expression`, optionally only under `prefix` (a file
    /// or folder relative to the root).
    pub(crate) fn search(
        &self,
        expression: &str,
        prefix: Option<&str>,
        limit: usize,
    ) -> Result<Vec<IndexHit>> {
        let error = |error| index_error(&self.path, error);
        let prefix = prefix.filter(|prefix| !prefix.is_empty());
        // Ranking first, rendering after: the inner query scores every match but keeps only
        // the best `limit` rowids; the text and the highlight, the costly columns, are built
        // for those alone. (A common word matches most blocks; rendering every match made one
        // search cost tens of milliseconds.) The path filter joins `indexed_files` only when
        // there is a prefix: a lookup per match is most of the rest. CROSS JOIN keeps SQLite
        // from reordering the outer loop, and FTS5 serves `MATCH` with `rowid =` as a seek.
        let filter = if prefix.is_some() {
            format!(
                "JOIN indexed_files ON indexed_files.file_id = ({MEMORY_SEARCH_INDEX}.rowid >> {BLOCK_BITS})
                 WHERE {MEMORY_SEARCH_INDEX} MATCH ?1
                   AND (indexed_files.path = ?2 OR substr(indexed_files.path, 1, length(?2) + 1) = ?2 || '/')"
            )
        } else {
            format!("WHERE {MEMORY_SEARCH_INDEX} MATCH ?1 AND ?2 IS NULL")
        };
        let sql = format!(
            "WITH top AS (
                SELECT {MEMORY_SEARCH_INDEX}.rowid AS id,
                       bm25({MEMORY_SEARCH_INDEX}, 1.0, 0.5, 0.0, 1.0) AS score
                FROM {MEMORY_SEARCH_INDEX}
                {filter}
                ORDER BY score, {MEMORY_SEARCH_INDEX}.rowid
                LIMIT ?3
             )
             SELECT indexed_files.path, start_line, heading, text,
                    highlight({MEMORY_SEARCH_INDEX}, 0, char(2), char(3)),
                    top.score, top.id
             FROM top
             CROSS JOIN {MEMORY_SEARCH_INDEX} ON {MEMORY_SEARCH_INDEX}.rowid = top.id
             CROSS JOIN indexed_files ON indexed_files.file_id = (top.id >> {BLOCK_BITS})
             WHERE {MEMORY_SEARCH_INDEX} MATCH ?1
             ORDER BY top.score, indexed_files.path, start_line"
        );
        let mut statement = self.conn.prepare_cached(&sql).map_err(error)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = statement
            .query_map(params![expression, prefix, limit], |row| {
                let highlighted: String = row.get(4)?;
                let mark = first_mark(&highlighted);
                let (match_offset, match_column) = mark.unwrap_or((0, 0));
                let bm25: f64 = row.get(5)?;
                Ok(IndexHit {
                    rowid: row.get(6)?,
                    marked: mark.is_some(),
                    path: row.get(0)?,
                    start_line: u32::try_from(row.get::<_, i64>(1)?).unwrap_or(0),
                    heading: row.get(2)?,
                    text: row.get(3)?,
                    match_offset,
                    match_column,
                    score: (-bm25 * 1000.0).round() / 1000.0,
                })
            })
            .map_err(error)?;
        rows.collect::<rusqlite::Result<_>>().map_err(error)
    }

    /// For each of `rowids`, how many of `terms` (FTS5 expressions) its block matches.
    pub(crate) fn count_terms(
        &self,
        rowids: &[i64],
        terms: &[String],
    ) -> Result<HashMap<i64, usize>> {
        let error = |error| index_error(&self.path, error);
        let mut counts: HashMap<i64, usize> = rowids.iter().map(|&rowid| (rowid, 0)).collect();
        if rowids.is_empty() {
            return Ok(counts);
        }
        // Rowids are integers, so the list is written into the statement as they are.
        let list: Vec<String> = rowids.iter().map(i64::to_string).collect();
        let sql = format!(
            "SELECT rowid FROM {MEMORY_SEARCH_INDEX}
             WHERE {MEMORY_SEARCH_INDEX} MATCH ?1 AND rowid IN ({})",
            list.join(",")
        );
        let mut statement = self.conn.prepare(&sql).map_err(error)?;
        for term in terms {
            let matched = statement
                .query_map(params![term], |row| row.get::<_, i64>(0))
                .map_err(error)?;
            for rowid in matched {
                *counts.entry(rowid.map_err(error)?).or_default() += 1;
            }
        }
        Ok(counts)
    }

    /// Keeps `snapshot` as the last injected block's numbers.
    pub(crate) fn record_injection(&self, snapshot: &MemorySnapshot) -> Result<()> {
        let json = serde_json::to_string(snapshot).map_err(|source| Error::IndexEncode {
            path: self.path.clone(),
            source,
        })?;
        self.conn
            .execute(
                "INSERT INTO injections (id, snapshot) VALUES (1, ?1)
                 ON CONFLICT (id) DO UPDATE SET snapshot = excluded.snapshot",
                params![json],
            )
            .map_err(|error| index_error(&self.path, error))?;
        Ok(())
    }

    /// The last injected block's numbers, when one was recorded (and is readable).
    pub(crate) fn last_injection(&self) -> Result<Option<MemorySnapshot>> {
        let json: Option<String> = self
            .conn
            .query_row("SELECT snapshot FROM injections WHERE id = 1", [], |row| {
                row.get(0)
            })
            .optional()
            .map_err(|error| index_error(&self.path, error))?;
        Ok(json.and_then(|json| serde_json::from_str(&json).ok()))
    }

    /// Keeps a read for usage accounting.
    pub(crate) fn record_read(&self, read: &MemoryRead) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO memory_reads (path, thread_ids, read_at) VALUES (?1, ?2, ?3)",
                params![read.path, read.thread_ids.join("\n"), read.read_at],
            )
            .map_err(|error| index_error(&self.path, error))?;
        Ok(())
    }

    /// Reads recorded at or after `since` (Unix seconds), oldest first.
    pub(crate) fn reads_since(&self, since: i64) -> Result<Vec<MemoryRead>> {
        let error = |error| index_error(&self.path, error);
        let mut statement = self
            .conn
            .prepare(
                "SELECT path, thread_ids, read_at FROM memory_reads WHERE read_at >= ?1
                 ORDER BY read_at, id",
            )
            .map_err(error)?;
        let rows = statement
            .query_map(params![since], |row| {
                let ids: String = row.get(1)?;
                Ok(MemoryRead {
                    path: row.get(0)?,
                    thread_ids: ids.lines().map(str::to_owned).collect(),
                    read_at: row.get(2)?,
                })
            })
            .map_err(error)?;
        rows.collect::<rusqlite::Result<_>>().map_err(error)
    }
}

fn delete_blocks(tx: &rusqlite::Transaction<'_>, file_id: i64) -> rusqlite::Result<usize> {
    tx.execute(
        &format!("DELETE FROM {MEMORY_SEARCH_INDEX} WHERE rowid >= ?1 AND rowid < ?2"),
        params![file_id << BLOCK_BITS, (file_id + 1) << BLOCK_BITS],
    )
}

/// Reads a memory file for indexing through the confined open, as text.
fn read_text(root: &Path, rel: &str, size: u64) -> std::result::Result<String, String> {
    if size > MAX_INDEXED_FILE_BYTES {
        return Err(format!(
            "larger than {} MiB, not indexed",
            MAX_INDEXED_FILE_BYTES >> 20
        ));
    }
    let relative = RelativePath::parse(rel).map_err(|refusal| refusal.reason().to_owned())?;
    let (mut file, _) =
        open_file(root, &relative).map_err(|error| crate::resolve_reason(&error))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|error| crate::io_reason(&error))?;
    String::from_utf8(bytes).map_err(|_| "not valid UTF-8".to_owned())
}

/// Line offset and byte column of the first match marker, if there is one.
fn first_mark(highlighted: &str) -> Option<(u32, usize)> {
    let at = highlighted.find(MARK_START)?;
    let before = &highlighted[..at];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    // Markers before the match on the same line are not in the original text.
    let column = before[line_start..]
        .chars()
        .filter(|&ch| ch != MARK_START && ch != MARK_END)
        .map(char::len_utf8)
        .sum();
    Some((u32::try_from(line).unwrap_or(0), column))
}

/// True when opening the index failed because SQLite reads the file as damaged.
fn is_damaged(error: &Error) -> bool {
    let Error::IndexOpen { source, .. } = error else {
        return false;
    };
    let sqlite = match source {
        memory_store::Error::Open { source, .. } | memory_store::Error::Sqlite(source) => source,
        _ => return false,
    };
    matches!(
        sqlite.sqlite_error_code(),
        Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
    )
}

/// Renames a damaged index file, with its write-ahead log and shared-memory files, to a name
/// of its own (`memory_index.sqlite.damaged-<unix seconds>-<process id>`, so two processes
/// setting files aside never overwrite each other's); returns the new name. The companions
/// go first: a log left beside the new index could be replayed into it.
fn set_aside(path: &Path) -> std::io::Result<PathBuf> {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let aside = format!(".damaged-{seconds}-{}", std::process::id());
    let with_suffix = |base: &Path, suffix: &str| {
        let mut name = base.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    for companion in ["-wal", "-shm"] {
        let from = with_suffix(path, companion);
        if from.exists() {
            std::fs::rename(&from, with_suffix(path, &format!("{aside}{companion}")))?;
        }
    }
    let to = with_suffix(path, &aside);
    std::fs::rename(path, &to)?;
    Ok(to)
}

fn index_error(path: &Path, source: rusqlite::Error) -> Error {
    Error::IndexQuery {
        path: path.to_owned(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::scan;

    /// The manifest is skipped only while neither the files nor the database changed: another
    /// connection's commit (here, one that dropped the cache tables, as a migration does) makes
    /// the next refresh compare and re-read again.
    #[test]
    fn a_refresh_skips_the_manifest_only_while_files_and_database_are_unchanged() {
        let home = tempfile::tempdir().unwrap();
        let root = home.path().join("memories");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("MEMORY.md"), "# Memory\n\nuse just\n").unwrap();
        let file = home.path().join("index.sqlite");
        let mut index = MemoryIndex::open(&file).ok().unwrap();
        let mut other = MemoryIndex::open(&file).ok().unwrap();
        let files = scan(&root).unwrap();
        assert_eq!(index.refresh(&root, &files).unwrap().reindexed, 1);
        assert_eq!(index.refresh(&root, &files).unwrap().reindexed, 0);
        other
            .conn
            .execute_batch(&format!(
                "DELETE FROM indexed_files; DELETE FROM {MEMORY_SEARCH_INDEX};"
            ))
            .unwrap();
        assert_eq!(index.refresh(&root, &files).unwrap().reindexed, 1);
        std::fs::write(root.join("MEMORY.md"), "# Memory\n\nuse just and make\n").unwrap();
        let changed = scan(&root).unwrap();
        assert_eq!(index.refresh(&root, &changed).unwrap().reindexed, 1);
        assert_eq!(other.refresh(&root, &changed).unwrap().reindexed, 0);
    }
}
