//! `agent-memory redact [FILE...]`: copies the files (standard input when none is named) to
//! standard output with every secret replaced, so logs and transcripts can be shared.
//!
//! It streams: each line is written and flushed as soon as it is complete (`tail -f app.log |
//! agent-memory redact` shows lines live), and a line longer than [`MAX_PENDING`] is redacted in
//! pieces, so memory stays bounded whatever the input. Secrets that span lines (a private key,
//! a YAML block) are followed across them. Bytes that are not UTF-8 pass through untouched.

use std::io::{self, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use agent_memory::sanitize::LineRedactor;

/// Bytes of an unfinished line held before its start is redacted and written.
const MAX_PENDING: usize = 1 << 20;
/// Bytes read at a time.
const READ_BYTES: usize = 64 << 10;

/// Arguments of `agent-memory redact`.
#[derive(Debug, clap::Args)]
pub(crate) struct RedactArgs {
    /// Files to copy redacted, in order (default: standard input).
    files: Vec<PathBuf>,
}

pub(crate) fn run(args: RedactArgs) -> ExitCode {
    match redact_all(&args.files) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`agent-memory redact < log | head`): nothing left to do.
        Err(StreamError::Write(error)) if error.kind() == io::ErrorKind::BrokenPipe => {
            ExitCode::from(super::exit::OUTPUT_CLOSED)
        }
        Err(error) => super::exit::report_error(&error.into()),
    }
}

/// Each file in turn, or standard input when `files` is empty, to standard output.
fn redact_all(files: &[PathBuf]) -> Result<(), StreamError> {
    if files.is_empty() {
        // Unlocked handles: `Stdin::read` returns what is available instead of waiting for a
        // full buffer.
        return redact_stream(io::stdin(), io::stdout(), STDIN_NAME);
    }
    for path in files {
        let name = path.display().to_string();
        let file =
            std::fs::File::open(path).map_err(|error| StreamError::Read(name.clone(), error))?;
        redact_stream(file, io::stdout(), &name)?;
    }
    Ok(())
}

/// How errors name standard input.
const STDIN_NAME: &str = "standard input";

#[derive(Debug, thiserror::Error)]
enum StreamError {
    #[error("cannot read {0}: {1}")]
    Read(String, #[source] io::Error),
    #[error("cannot write standard output: {0}")]
    Write(#[source] io::Error),
}

fn redact_stream(mut input: impl Read, output: impl Write, name: &str) -> Result<(), StreamError> {
    let mut output = BufWriter::with_capacity(64 << 10, output);
    let mut redactor = LineRedactor::new();
    let mut pending: Vec<u8> = Vec::with_capacity(READ_BYTES);
    let mut chunk = vec![0u8; READ_BYTES];
    loop {
        let read = match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(StreamError::Read(name.to_owned(), error)),
        };
        pending.extend_from_slice(chunk.get(..read).unwrap_or_default());
        let mut done = 0;
        while let Some(newline) = pending
            .get(done..)
            .and_then(|rest| rest.iter().position(|&b| b == b'\n'))
        {
            let line = pending.get(done..done + newline + 1).unwrap_or_default();
            output
                .write_all(&redactor.redact_line(line))
                .map_err(StreamError::Write)?;
            done += newline + 1;
        }
        pending.drain(..done);
        // A line with no end in sight: redact and write its start, keep the rest.
        while pending.len() >= MAX_PENDING {
            let (consumed, redacted) = redactor.redact_partial(&pending);
            output.write_all(&redacted).map_err(StreamError::Write)?;
            pending.drain(..consumed.max(1).min(pending.len()));
        }
        // Everything complete so far is out: whoever reads the other end sees it now.
        output.flush().map_err(StreamError::Write)?;
    }
    if !pending.is_empty() {
        output
            .write_all(&redactor.redact_line(&pending))
            .map_err(StreamError::Write)?;
    }
    output.flush().map_err(StreamError::Write)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_is_redacted_line_by_line_and_keeps_other_bytes() {
        let input: &[u8] =
            b"ok \xff\nGITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\nno newline";
        let mut out = Vec::new();
        redact_stream(input, &mut out, STDIN_NAME).unwrap();
        assert_eq!(
            out,
            b"ok \xff\nGITHUB_TOKEN=[REDACTED_SECRET]\nno newline".to_vec()
        );
    }

    #[test]
    fn a_line_longer_than_the_pending_limit_is_redacted_in_pieces() {
        let mut line = Vec::new();
        while line.len() < 3 * MAX_PENDING {
            line.extend_from_slice(b"word token=ab12cd34ef56gh78 ");
        }
        line.push(b'\n');
        let mut out = Vec::new();
        redact_stream(line.as_slice(), &mut out, STDIN_NAME).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains("ab12cd34ef56gh78"));
        assert_eq!(
            text.matches("token=[REDACTED_SECRET]").count(),
            line.len() / "word token=ab12cd34ef56gh78 ".len()
        );
    }

    struct Broken;

    impl io::Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::other("device gone"))
        }
    }

    #[test]
    fn read_errors_are_reported() {
        let err = redact_stream(Broken, Vec::new(), STDIN_NAME).unwrap_err();
        assert_eq!(err.to_string(), "cannot read standard input: device gone");
    }
}
