//! Where Claude Code keeps a session's other files.

use std::path::{Path, PathBuf};

/// The folder, beside a session's file, that holds its subagents' transcripts.
const SUBAGENTS_DIR: &str = "subagents";

/// The subagent transcripts of the session whose file is `session_file`
/// (`<session>/subagents/agent-*.jsonl` beside `<session>.jsonl`), sorted. A folder that
/// does not exist or cannot be listed has none.
pub fn subagent_files(session_file: &Path) -> Vec<PathBuf> {
    let (Some(parent), Some(stem)) = (session_file.parent(), session_file.file_stem()) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(parent.join(stem).join(SUBAGENTS_DIR)) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    files.sort();
    files
}
