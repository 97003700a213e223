//! `memory_list`: the tree under a folder of the memory root, with sizes.

use std::fs;

use memory_protocol::introspect::{
    MemoryEntryType, MemoryListEntry, MemoryListRequest, MemoryListResult,
};

use crate::introspector::Introspector;
use crate::paths::{RelativePath, ResolveError, resolve};
use crate::tools::{invalid_input, refusal, resolve_failure};

/// Levels listed when the request names none.
pub const DEFAULT_DEPTH: u32 = 2;
/// Most levels a request may ask for.
pub const MAX_DEPTH: u32 = 6;
/// Most entries listed.
const MAX_ENTRIES: usize = 500;

impl Introspector {
    /// Lists the tree under `request.path`.
    pub fn list(
        &self,
        request: &MemoryListRequest,
    ) -> Result<MemoryListResult, memory_protocol::introspect::MemoryToolFailure> {
        self.require_enabled()?;
        let shown = request.path.as_deref().unwrap_or("");
        let relative = RelativePath::parse(shown).map_err(|refused| refusal(shown, refused))?;
        let depth = request.depth.unwrap_or(DEFAULT_DEPTH);
        if !(1..=MAX_DEPTH).contains(&depth) {
            return Err(invalid_input(format!(
                "depth {depth} is outside 1..={MAX_DEPTH}"
            )));
        }
        let empty = MemoryListResult {
            path: relative.display(),
            depth,
            entries: Vec::new(),
            truncated: false,
            warning: None,
        };
        let (dir, metadata) = match resolve(self.root(), &relative) {
            Ok(found) => found,
            // No root yet in a home that exists: memory is empty, and listing the root says so.
            Err(ResolveError::NotFound(missing))
                if missing.is_empty() && relative.is_root() && self.home_problem().is_none() =>
            {
                return Ok(empty);
            }
            Err(error) => return Err(resolve_failure(self, shown, &error)),
        };
        if !metadata.is_dir() {
            return Err(invalid_input(format!(
                "`{}` is a file, not a folder; read it with memory_read",
                relative.display()
            )));
        }
        let mut listing = Listing::default();
        if let Err(error) = listing.walk(&dir, &relative, 1, depth) {
            return Err(resolve_failure(self, shown, &ResolveError::Io(error)));
        }
        let truncated = listing.entries.len() > MAX_ENTRIES;
        listing.entries.truncate(MAX_ENTRIES);
        let mut warnings = Vec::new();
        if truncated {
            // The walk stops one entry past the cap, so how many more there are is unknown.
            warnings.push(format!(
                "only the first {MAX_ENTRIES} entries are listed and there are more; list a \
                 folder below this one or a smaller depth for the rest"
            ));
        }
        if !listing.unreadable.is_empty() {
            warnings.push(format!(
                "these folders could not be listed, so their contents are missing here: {}",
                listing.unreadable.join(", ")
            ));
        }
        let warning = (!warnings.is_empty()).then(|| warnings.join("; "));
        Ok(MemoryListResult {
            entries: listing.entries,
            truncated,
            warning,
            ..empty
        })
    }
}

#[derive(Default)]
struct Listing {
    entries: Vec<MemoryListEntry>,
    unreadable: Vec<String>,
}

impl Listing {
    /// Lists `dir` (at `relative`) into `entries` down to `max_depth`, returning the bytes of
    /// the files listed under it. Only the top folder's failure is an error.
    fn walk(
        &mut self,
        dir: &std::path::Path,
        relative: &RelativePath,
        depth: u32,
        max_depth: u32,
    ) -> std::io::Result<u64> {
        let mut children: Vec<(String, fs::FileType, u64)> = Vec::new();
        for entry in fs::read_dir(dir)? {
            let Ok(entry) = entry else { continue };
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let bytes = if file_type.is_file() {
                entry.metadata().map_or(0, |metadata| metadata.len())
            } else {
                0
            };
            children.push((name, file_type, bytes));
        }
        children.sort_by(|a, b| a.0.cmp(&b.0));
        let mut total = 0;
        for (name, file_type, bytes) in children {
            let path = relative.join(&name);
            let index = self.entries.len();
            let entry_type = if file_type.is_symlink() {
                MemoryEntryType::Symlink
            } else if file_type.is_dir() {
                MemoryEntryType::Directory
            } else {
                MemoryEntryType::File
            };
            self.entries.push(MemoryListEntry {
                path: path.display(),
                entry_type,
                bytes,
                depth,
            });
            if self.entries.len() > MAX_ENTRIES {
                return Ok(total);
            }
            if entry_type == MemoryEntryType::Directory {
                let child_bytes = if depth < max_depth {
                    match self.walk(&dir.join(&name), &path, depth + 1, max_depth) {
                        Ok(bytes) => bytes,
                        Err(_) => {
                            self.unreadable.push(path.display());
                            0
                        }
                    }
                } else {
                    folder_bytes(&dir.join(&name), 0)
                };
                if let Some(entry) = self.entries.get_mut(index) {
                    entry.bytes = child_bytes;
                }
                total += child_bytes;
            } else {
                total += bytes;
            }
        }
        Ok(total)
    }
}

/// Bytes of the regular files below `dir` (links not followed, a few levels deep).
fn folder_bytes(dir: &std::path::Path, depth: u32) -> u64 {
    if depth > MAX_DEPTH {
        return 0;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_file() => entry.metadata().map_or(0, |m| m.len()),
            Ok(kind) if kind.is_dir() => folder_bytes(&entry.path(), depth + 1),
            _ => 0,
        })
        .sum()
}
