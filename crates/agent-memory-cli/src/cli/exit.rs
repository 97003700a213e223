//! Exit codes, and how errors reach the terminal.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | done |
//! | 1 | an error stopped the command (bad config, unusable model, state store, consolidation) |
//! | 2 | bad command line (from clap) |
//! | 3 | `run` finished, but one or more jobs failed (they are retried by a later run) |
//! | 130 | stopped by Ctrl-C (SIGINT), after giving its leases back |
//! | 143 | stopped by SIGTERM, after giving its leases back |

use std::process::ExitCode;

use agent_memory::sanitize::{display_safe, redact_json_strings, redact_secrets};

/// An error stopped the command.
pub(crate) const FAILURE: u8 = 1;
/// `run` finished and printed its summary, but at least one job failed.
pub(crate) const JOBS_FAILED: u8 = 3;
/// Stopped by SIGINT (128 + 2, the shell convention).
pub(crate) const INTERRUPTED: u8 = 130;
/// Stopped by SIGTERM (128 + 15).
pub(crate) const TERMINATED: u8 = 143;

/// Prints `error` on stderr, redacted and made display-safe (it may quote paths and server
/// messages), and returns its exit code: the signal's for an interruption, else [`FAILURE`].
pub(crate) fn report_error(error: &anyhow::Error) -> ExitCode {
    if let Some(stopped) = error.downcast_ref::<super::interrupt::Stopped>() {
        eprintln!("{}", display_safe(&stopped.to_string()));
        return ExitCode::from(stopped.exit_code());
    }
    let message = format!("{error:#}");
    eprintln!("error: {}", display_safe(&redact_secrets(&message)));
    ExitCode::from(FAILURE)
}

/// Prints `text` on stdout, redacted (paths can carry secrets too) and made display-safe.
pub(crate) fn print_safe(text: &str) {
    print!("{}", display_safe(&redact_secrets(text)));
}

/// Prints `value` as one line of JSON on stdout, every string redacted and the text made
/// display-safe (still valid JSON: stand-ins are ordinary characters).
pub(crate) fn print_json(mut value: serde_json::Value) {
    redact_json_strings(&mut value);
    println!("{}", display_safe(&value.to_string()));
}

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
