//! `agent-memory redact`: copies standard input to standard output with every secret replaced,
//! so logs and transcripts can be shared. Streams line by line: memory holds one line at a time,
//! however large the input; bytes that are not UTF-8 pass through untouched.

use std::io::{self, BufRead, BufWriter, Write};
use std::process::ExitCode;

use agent_memory::sanitize::LineRedactor;

/// Arguments of `agent-memory redact` (none: standard input to standard output).
#[derive(Debug, clap::Args)]
pub(crate) struct RedactArgs {}

pub(crate) fn run(_args: RedactArgs) -> ExitCode {
    let stdin = io::stdin().lock();
    let stdout = io::stdout().lock();
    match redact_stream(stdin, stdout) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`agent-memory redact < log | head`): nothing left to do.
        Err(StreamError::Write(error)) if error.kind() == io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(error) => super::exit::report_error(&error.into()),
    }
}

#[derive(Debug, thiserror::Error)]
enum StreamError {
    #[error("cannot read standard input: {0}")]
    Read(#[source] io::Error),
    #[error("cannot write standard output: {0}")]
    Write(#[source] io::Error),
}

fn redact_stream(mut input: impl BufRead, output: impl Write) -> Result<(), StreamError> {
    let mut output = BufWriter::with_capacity(64 << 10, output);
    let mut redactor = LineRedactor::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        if input
            .read_until(b'\n', &mut line)
            .map_err(StreamError::Read)?
            == 0
        {
            break;
        }
        output
            .write_all(&redactor.redact_line(&line))
            .map_err(StreamError::Write)?;
        // Flush whenever the input has nothing more buffered, so interactive use streams.
        if input.fill_buf().map_err(StreamError::Read)?.is_empty() {
            output.flush().map_err(StreamError::Write)?;
        }
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
        redact_stream(input, &mut out).unwrap();
        assert_eq!(
            out,
            b"ok \xff\nGITHUB_TOKEN=[REDACTED_SECRET]\nno newline".to_vec()
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
        let err = redact_stream(io::BufReader::new(Broken), Vec::new()).unwrap_err();
        assert_eq!(err.to_string(), "cannot read standard input: device gone");
    }
}
