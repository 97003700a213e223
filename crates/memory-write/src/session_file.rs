//! Reading a session file of either agent the write path knows: a codex rollout, streamed
//! line by line, or a Claude Code transcript (with its subagents' files), read whole and
//! turned into the same rollout lines, so everything after reading is the same for both.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use memory_transcript::claude_code::{
    Transcript, TranscriptFormat, detect_format, parse_transcript, subagent_files,
};
use memory_transcript::{ReaderOptions, RolloutRead, RolloutReader};

use crate::error::{Error, Result};

/// Bytes read from the start of a file to tell the formats apart.
const DETECT_BYTES: u64 = 1 << 20;
/// The most bytes of a Claude Code transcript read (its start: the session's beginning is
/// what a memory needs most); a longer file is read up to there.
const MAX_CLAUDE_BYTES: u64 = 256 << 20;

/// Which agent wrote the open `file` (read from its start; the position is left at the start).
pub(crate) fn file_format(file: &mut File) -> std::io::Result<TranscriptFormat> {
    file.seek(SeekFrom::Start(0))?;
    let mut head = Vec::new();
    (&mut *file).take(DETECT_BYTES).read_to_end(&mut head)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(detect_format(&String::from_utf8_lossy(&head)))
}

/// Reads the Claude Code transcript in the open `file` (its own lines only).
pub(crate) fn read_claude_file(file: &mut File) -> std::io::Result<Transcript> {
    file.seek(SeekFrom::Start(0))?;
    let mut bytes = Vec::new();
    (&mut *file)
        .take(MAX_CLAUDE_BYTES)
        .read_to_end(&mut bytes)?;
    Ok(parse_transcript(&String::from_utf8_lossy(&bytes)))
}

/// Reads the session file at `path` into rollout lines. Only regular files are read (checked
/// on the open handle, so a FIFO swapped in after the scan is an error, not a hang); a Claude
/// Code session's subagent files are read with it, and one that cannot be read is left out.
pub(crate) fn read_session_file(path: &Path) -> Result<RolloutRead> {
    let io_error = |error| {
        Error::Rollout(memory_transcript::Error::Io {
            path: path.to_path_buf(),
            error,
        })
    };
    let mut file = crate::safe_file::open_regular_file(path).map_err(io_error)?;
    match file_format(&mut file).map_err(io_error)? {
        TranscriptFormat::ClaudeCode => {
            let mut transcript = read_claude_file(&mut file).map_err(io_error)?;
            for sidechain in subagent_files(path) {
                if let Ok(mut file) = crate::safe_file::open_regular_file(&sidechain)
                    && let Ok(read) = read_claude_file(&mut file)
                {
                    transcript.attach_sidechain(read);
                }
            }
            Ok(transcript.to_rollout())
        }
        TranscriptFormat::CodexRollout => {
            let mut reader = RolloutReader::new(
                BufReader::with_capacity(256 << 10, file),
                ReaderOptions::default(),
            );
            let mut read = RolloutRead::default();
            for line in &mut reader {
                match line {
                    Ok(line) => read.lines.push(line),
                    Err(diagnostic) => read.diagnostics.push(diagnostic),
                }
            }
            match reader.take_io_error() {
                Some(error) => Err(io_error(error)),
                None => Ok(read),
            }
        }
    }
}
