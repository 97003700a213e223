//! Streaming rollout reader.
//!
//! Reads a rollout file one line at a time and parses each line with
//! [`RolloutLine::parse`], which accepts every codex format version. A line that cannot be used
//! (bad JSON, invalid UTF-8, longer than [`ReaderOptions::max_line_bytes`], a truncated last line)
//! becomes a [`Diagnostic`] carrying its line number, and reading goes on with the next line.
//! Blank lines are skipped silently. Memory use is bounded by the longest accepted line: an
//! over-long line is skipped without being buffered.

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use memory_protocol::RolloutLine;

use crate::error::{Error, Result};

/// Reader settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaderOptions {
    /// Longest line accepted, in bytes, not counting the line break. Longer lines are skipped
    /// with a diagnostic.
    pub max_line_bytes: usize,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            max_line_bytes: 64 << 20,
        }
    }
}

/// A line that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// 1-based line number in the file.
    pub line_number: u64,
    /// What was wrong with the line.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line_number, self.message)
    }
}

/// Everything read from a rollout: the lines that parsed, in order, and a diagnostic for every
/// line that did not.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RolloutRead {
    /// The parsed lines, in file order.
    pub lines: Vec<RolloutLine>,
    /// One entry per skipped line, in file order.
    pub diagnostics: Vec<Diagnostic>,
}

impl RolloutRead {
    /// The items of the parsed lines, in file order.
    pub fn items(self) -> impl Iterator<Item = memory_protocol::RolloutItem> {
        self.lines.into_iter().map(|line| line.item)
    }
}

/// A streaming reader: an iterator over the lines of a rollout, yielding `Ok` for each parsed
/// line and `Err` for each skipped one.
///
/// An I/O error ends the iteration with a final diagnostic; [`RolloutReader::take_io_error`]
/// returns it afterwards.
#[derive(Debug)]
pub struct RolloutReader<R> {
    reader: R,
    max_line_bytes: usize,
    buffer: Vec<u8>,
    line_number: u64,
    io_error: Option<std::io::Error>,
    finished: bool,
}

impl<R: BufRead> RolloutReader<R> {
    /// A reader over `reader`.
    pub fn new(reader: R, options: ReaderOptions) -> Self {
        RolloutReader {
            reader,
            max_line_bytes: options.max_line_bytes,
            buffer: Vec::new(),
            line_number: 0,
            io_error: None,
            finished: false,
        }
    }

    /// The I/O error that ended the iteration, if one did.
    pub fn take_io_error(&mut self) -> Option<std::io::Error> {
        self.io_error.take()
    }

    /// Reads the next physical line into `self.buffer` (without its line break). Returns what
    /// happened to it, or `None` at the end of the input.
    fn read_line(&mut self) -> std::io::Result<Option<LineRead>> {
        self.buffer.clear();
        // One byte over the limit tells an over-long line from one exactly at the limit.
        let cap = (self.max_line_bytes as u64).saturating_add(1);
        let read = (&mut self.reader)
            .take(cap)
            .read_until(b'\n', &mut self.buffer)?;
        if read == 0 {
            return Ok(None);
        }
        let terminated = self.buffer.last() == Some(&b'\n');
        if terminated {
            self.buffer.pop();
            if self.buffer.last() == Some(&b'\r') {
                self.buffer.pop();
            }
        } else if self.buffer.len() > self.max_line_bytes {
            let skipped = self.reader.skip_until(b'\n')?;
            let total = self.buffer.len() + skipped;
            self.buffer.clear();
            return Ok(Some(LineRead::TooLong { bytes: total }));
        }
        Ok(Some(LineRead::Line { terminated }))
    }
}

enum LineRead {
    Line { terminated: bool },
    TooLong { bytes: usize },
}

impl<R: BufRead> Iterator for RolloutReader<R> {
    type Item = Result<RolloutLine, Diagnostic>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.finished {
            let read = match self.read_line() {
                Ok(Some(read)) => read,
                Ok(None) => {
                    self.finished = true;
                    return None;
                }
                Err(error) => {
                    self.finished = true;
                    let diagnostic = Diagnostic {
                        line_number: self.line_number + 1,
                        message: format!("read error: {error}"),
                    };
                    self.io_error = Some(error);
                    return Some(Err(diagnostic));
                }
            };
            self.line_number += 1;
            let line_number = self.line_number;
            let diagnostic = |message: String| {
                Some(Err(Diagnostic {
                    line_number,
                    message,
                }))
            };
            let terminated = match read {
                LineRead::TooLong { bytes } => {
                    let limit = self.max_line_bytes;
                    return diagnostic(format!(
                        "line of at least {bytes} bytes exceeds the limit of {limit} bytes"
                    ));
                }
                LineRead::Line { terminated } => terminated,
            };
            let text = match std::str::from_utf8(&self.buffer) {
                Ok(text) => text,
                Err(error) => {
                    let at = error.valid_up_to();
                    return diagnostic(format!("invalid utf-8 at byte {at}"));
                }
            };
            if text.trim().is_empty() {
                continue;
            }
            return match RolloutLine::parse(text) {
                Ok(line) => Some(Ok(line)),
                Err(error) if !terminated => diagnostic(format!("truncated last line: {error}")),
                Err(error) => diagnostic(error.to_string()),
            };
        }
        None
    }
}

/// Reads a whole rollout. An I/O error midway becomes the last diagnostic; what was read before
/// it is kept.
pub fn read_rollout(reader: impl Read, options: &ReaderOptions) -> RolloutRead {
    collect(RolloutReader::new(
        BufReader::with_capacity(READ_BUFFER_BYTES, reader),
        options.clone(),
    ))
}

/// Reads a rollout file. Fails only when the file cannot be opened or read; malformed lines
/// become diagnostics.
pub fn read_rollout_path(path: &Path, options: &ReaderOptions) -> Result<RolloutRead> {
    let io_error = |error| Error::Io {
        path: path.to_owned(),
        error,
    };
    let file = File::open(path).map_err(io_error)?;
    let mut reader = RolloutReader::new(
        BufReader::with_capacity(READ_BUFFER_BYTES, file),
        options.clone(),
    );
    let read = collect(&mut reader);
    match reader.take_io_error() {
        Some(source) => Err(io_error(source)),
        None => Ok(read),
    }
}

const READ_BUFFER_BYTES: usize = 256 << 10;

fn collect(lines: impl Iterator<Item = Result<RolloutLine, Diagnostic>>) -> RolloutRead {
    let mut read = RolloutRead::default();
    for line in lines {
        match line {
            Ok(line) => read.lines.push(line),
            Err(diagnostic) => read.diagnostics.push(diagnostic),
        }
    }
    read
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(input: &[u8], max_line_bytes: usize) -> RolloutRead {
        read_rollout(input, &ReaderOptions { max_line_bytes })
    }

    #[test]
    fn line_exactly_at_the_limit_is_read_and_one_over_is_skipped() {
        let line = br#"{"type":"x","payload":{}}"#;
        let at_limit = read(&[line.as_slice(), b"\n"].concat(), line.len());
        assert_eq!(at_limit.lines.len(), 1);
        assert!(at_limit.diagnostics.is_empty());

        let over = read(
            &[line.as_slice(), b"\n", line, b"\n"].concat(),
            line.len() - 1,
        );
        assert!(over.lines.is_empty());
        assert_eq!(over.diagnostics.len(), 2);
        assert_eq!(over.diagnostics[1].line_number, 2);
        assert!(over.diagnostics[0].message.contains("exceeds the limit"));
    }

    #[test]
    fn crlf_and_blank_lines_are_accepted() {
        let out = read(b"\r\n{\"type\":\"x\",\"payload\":{}}\r\n\n  \n", 1024);
        assert_eq!(out.lines.len(), 1);
        assert!(out.diagnostics.is_empty());
    }
}
