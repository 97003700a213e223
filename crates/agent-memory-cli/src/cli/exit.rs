//! Exit codes, and how errors reach the terminal.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | done |
//! | 1 | an error (bad config, unusable model, state store, consolidation, not found); `run` also
//! |   | when it finished but some jobs failed (a later run retries them) |
//! | 2 | bad command line (from clap) |
//! | 3 | memory is disabled or unavailable, or a tool refused the call (`goal update`) |
//! | 130 | stopped by Ctrl-C (SIGINT), after giving its leases back |
//! | 141 | standard output was closed by its reader (`... \| head -1`), the SIGPIPE convention |
//! | 143 | stopped by SIGTERM, after giving its leases back |

use std::io::Write;
use std::process::ExitCode;

use agent_memory::sanitize::{display_safe, redact_json_strings, redact_secrets};

/// An error stopped the command.
pub(crate) const FAILURE: u8 = 1;
/// Memory is disabled or unavailable, or a tool refused the call.
pub(crate) const UNAVAILABLE_OR_REFUSED: u8 = 3;
/// Stopped by SIGINT (128 + 2, the shell convention).
pub(crate) const INTERRUPTED: u8 = 130;
/// Stopped by SIGTERM (128 + 15).
pub(crate) const TERMINATED: u8 = 143;
/// Standard output was closed by its reader (128 + 13, what a shell reports for SIGPIPE).
pub(crate) const OUTPUT_CLOSED: u8 = 141;

/// Prints `error` on stderr, redacted and made display-safe (it may quote paths and server
/// messages), and returns its exit code: the signal's for an interruption, else [`FAILURE`].
pub(crate) fn report_error(error: &anyhow::Error) -> ExitCode {
    if let Some(stopped) = error.downcast_ref::<super::interrupt::Stopped>() {
        eprintln!("{}", display_safe(&stopped.to_string()));
        return ExitCode::from(stopped.exit_code());
    }
    let message = error_text(error);
    eprintln!("error: {}", display_safe(&redact_secrets(&message)));
    ExitCode::from(FAILURE)
}

/// Reports `error` on stderr and returns its exit code, as [`report_error`] does; with
/// `--json` it is also the one error object on stdout ([`super::json::ErrorJson`]), so a script
/// reading stdout always gets one JSON object.
pub(crate) fn report_error_as(error: &anyhow::Error, json: bool) -> ExitCode {
    let exit = report_error(error);
    if !json {
        return exit;
    }
    let code = if error.downcast_ref::<super::interrupt::Stopped>().is_some() {
        "interrupted"
    } else if is_not_found(error) {
        "not_found"
    } else {
        "failed"
    };
    let report = super::json::ErrorJson::new(code, error_text(error), None);
    print_json(serde_json::to_value(report).unwrap_or_default());
    exit
}

/// Whether `error` says that what the command was asked about does not exist: the CLI's own
/// [`NotFound`], or a goal command on a thread without a goal.
fn is_not_found(error: &anyhow::Error) -> bool {
    error.downcast_ref::<NotFound>().is_some()
        || matches!(
            error.downcast_ref::<agent_memory::goals::Error>(),
            Some(agent_memory::goals::Error::NoGoal { .. })
        )
}

/// `error` and its causes on one line, `message: cause: cause`, each cause written once.
///
/// Many errors (ours, std's, the HTTP client's) both quote their cause in their own message and
/// return it as `source()`, so printing the whole chain would repeat it; a cause whose text is
/// already in the line is left out, and so is one that only puts a label before a part of the
/// line (SQLite's `Error code 26: file is not a database` after `file is not a database`).
pub(crate) fn error_text(error: &anyhow::Error) -> String {
    let causes = error.chain().skip(1).map(ToString::to_string);
    joined_causes(error.to_string(), causes)
}

fn joined_causes(mut text: String, causes: impl Iterator<Item = String>) -> String {
    for cause in causes {
        // A parser's message may end with a newline the line above it trimmed.
        let cause = cause.trim_end();
        let labelled_repeat = cause
            .rsplit_once(": ")
            .is_some_and(|(_, tail)| text.split(": ").any(|segment| segment == tail));
        if !cause.is_empty() && !text.contains(cause) && !labelled_repeat {
            text.push_str(": ");
            text.push_str(cause);
        }
    }
    text
}

/// What the command was asked about does not exist (a thread without a goal, a missing file):
/// an error like any other (exit 1), with the code `not_found` in `--json`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct NotFound(pub(crate) String);

/// Prints `text` on stdout, redacted (paths can carry secrets too) and made display-safe.
pub(crate) fn print_safe(text: &str) {
    write_stdout(display_safe(&redact_secrets(text)).as_bytes());
}

/// Prints `value` as one line of JSON on stdout, every string redacted and the text made
/// display-safe (still valid JSON: stand-ins are ordinary characters).
pub(crate) fn print_json(mut value: serde_json::Value) {
    redact_json_strings(&mut value);
    write_stdout(format!("{}\n", display_safe(&value.to_string())).as_bytes());
}

/// Writes `bytes` to stdout as they are; every line the CLI prints goes through here.
///
/// Rust ignores SIGPIPE, so a plain `print!` to a reader that went away (`show | head -1`)
/// panics. Once the reader is gone nothing more can be shown, so the process ends at once,
/// quietly, with [`OUTPUT_CLOSED`], as the default SIGPIPE action would end it. Commands print
/// after their work is done and their leases are given back, so nothing is left half-done.
pub(crate) fn write_stdout(bytes: &[u8]) {
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        if error.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("error: cannot write to standard output: {error}");
            std::process::exit(FAILURE.into());
        }
        std::process::exit(OUTPUT_CLOSED.into());
    }
}

/// `println!` through [`write_stdout`]: the text as it is (no redaction), ending quietly on a
/// closed pipe.
macro_rules! outln {
    () => {
        $crate::cli::exit::write_stdout(b"\n")
    };
    ($($arg:tt)*) => {
        $crate::cli::exit::write_stdout(format!("{}\n", format_args!($($arg)*)).as_bytes())
    };
}
pub(crate) use outln;

/// `println!` through [`print_safe`]: redacted and display-safe.
macro_rules! say {
    () => {
        $crate::cli::exit::print_safe("\n")
    };
    ($($arg:tt)*) => {
        $crate::cli::exit::print_safe(&format!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use say;

/// `eprintln!` made display-safe (stderr carries paths and server messages too).
macro_rules! warn_safe {
    ($($arg:tt)*) => {
        eprint!(
            "{}",
            agent_memory::sanitize::display_safe(&agent_memory::sanitize::redact_secrets(
                &format!("{}\n", format_args!($($arg)*))
            ))
        )
    };
}
pub(crate) use warn_safe;

#[cfg(test)]
mod tests {
    use super::joined_causes;

    fn joined(text: &str, causes: &[&str]) -> String {
        joined_causes(
            text.to_owned(),
            causes.iter().map(|cause| (*cause).to_owned()),
        )
    }

    #[test]
    fn each_cause_is_written_once() {
        // What a damaged state store gave: rusqlite's cause, then SQLite's code for it.
        assert_eq!(
            joined(
                "state store: cannot open /h/state.sqlite: file is not a database",
                &[
                    "cannot open /h/state.sqlite: file is not a database",
                    "file is not a database",
                    "Error code 26: file is not a database",
                ]
            ),
            "state store: cannot open /h/state.sqlite: file is not a database"
        );
        // A cause the line does not say yet is added, whole.
        assert_eq!(
            joined(
                "cannot reach the model server",
                &["connection refused (os error 111)"]
            ),
            "cannot reach the model server: connection refused (os error 111)"
        );
        assert_eq!(
            joined("saving /h/a.md", &["Error code 5: database is locked"]),
            "saving /h/a.md: Error code 5: database is locked"
        );
        // A cause the line quotes without its final newline.
        assert_eq!(
            joined(
                "config.toml: invalid toml: TOML parse error at line 1\n  |\nunclosed table",
                &["TOML parse error at line 1\n  |\nunclosed table\n"]
            ),
            "config.toml: invalid toml: TOML parse error at line 1\n  |\nunclosed table"
        );
        // A label before a part the line only has inside a longer segment is not a repeat.
        assert_eq!(
            joined("exit status 1", &["child: 1"]),
            "exit status 1: child: 1"
        );
    }
}
