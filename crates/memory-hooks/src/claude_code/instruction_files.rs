//! The instruction files a compaction must not lose: Claude Code's `CLAUDE.md` files.

use std::path::Path;

use memory_introspect::HostInstructionFile;
use memory_protocol::introspect::MemoryScope;

/// The most bytes of one instruction file restated after a compaction.
const MAX_FILE_BYTES: u64 = 4_000;

/// The `CLAUDE.md` files that apply to `cwd`: the project's (`CLAUDE.md`, `.claude/CLAUDE.md`)
/// and the user's (in Claude Code's configuration folder). A file that is missing or
/// unreadable is left out.
pub(crate) fn pinned(cwd: Option<&Path>, config_dir: Option<&Path>) -> Vec<HostInstructionFile> {
    let mut candidates = Vec::new();
    if let Some(cwd) = cwd {
        candidates.push((cwd.join("CLAUDE.md"), MemoryScope::Project));
        candidates.push((cwd.join(".claude").join("CLAUDE.md"), MemoryScope::Project));
    }
    if let Some(config) = config_dir {
        candidates.push((config.join("CLAUDE.md"), MemoryScope::Global));
    }
    candidates
        .into_iter()
        .filter_map(|(path, scope)| {
            use std::io::Read;
            // Checked before the open, so a FIFO under the name is never opened (and waited on).
            if !std::fs::metadata(&path).ok()?.is_file() {
                return None;
            }
            let file = std::fs::File::open(&path).ok()?;
            let mut bytes = Vec::new();
            file.take(MAX_FILE_BYTES).read_to_end(&mut bytes).ok()?;
            let text = String::from_utf8_lossy(&bytes).into_owned();
            (!text.trim().is_empty()).then(|| HostInstructionFile {
                path: path.to_string_lossy().into_owned(),
                scope,
                text,
            })
        })
        .collect()
}
