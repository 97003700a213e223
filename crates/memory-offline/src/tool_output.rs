//! Reading tool outputs: the exit code in every format codex writes, whether a run failed,
//! and the most telling error line.

pub(crate) use memory_transcript::tool_output::{exit_code_and_text, exit_code_in_text};

use super::text::{MAX_LINE_CHARS, one_line};

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunStatus {
    /// Exit code 0, or output with no sign of failure.
    Passed,
    /// A non-zero exit code (when known) or failure markers in the output.
    Failed(Option<i64>),
    /// No output recorded, or still running.
    Unknown,
}

/// How a run ended, from its exit code, else from failure markers in its output.
pub(crate) fn run_status(exit_code: Option<i64>, text: &str) -> RunStatus {
    if let Some(code) = exit_code {
        return if code == 0 {
            RunStatus::Passed
        } else {
            RunStatus::Failed(Some(code))
        };
    }
    if text.contains("Process running with session ID") {
        return RunStatus::Unknown;
    }
    let lower = text.to_ascii_lowercase();
    let failed = text.contains("FAILED")
        || lower.contains("error:")
        || lower.contains("error[")
        || lower.contains("command not found")
        || lower.contains("traceback (most recent call last)")
        || lower.contains("panicked at")
        || lower.contains("timed out");
    if failed {
        RunStatus::Failed(None)
    } else {
        RunStatus::Passed
    }
}

/// Lines of a tool's own header, never the error itself.
const HEADERS: [&str; 7] = [
    "process exited with code",
    "exit code:",
    "wall time:",
    "chunk id:",
    "original token count:",
    "output:",
    "total output lines:",
];

/// What marks an error line, most telling first.
const ERROR_MARKERS: [&[&str]; 4] = [
    &["error", "syntax error", "traceback"],
    &["--- fail", "fail:", "failed", "panicked", "assert"],
    &[
        "fatal",
        "exception",
        "not found",
        "denied",
        "no such file",
        "expected",
        "cannot",
        "unable",
    ],
    &["warning"],
];

/// True for a line holding an error type's name: a word of two or more capitalised parts
/// ending in `Error`, `Exception` or `Warning` (`TypeError`, `UnexpectedTypeException`).
fn names_an_error_type(line: &str) -> bool {
    line.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| {
            ["Error", "Exception", "Warning"].iter().any(|end| {
                word.strip_suffix(end).is_some_and(|head| {
                    head.starts_with(|c: char| c.is_ascii_uppercase())
                        && head.chars().any(|c| c.is_ascii_lowercase())
                })
            })
        })
}

/// Lines that say a run failed without saying why, test-run tallies included.
fn is_generic(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    let tally = ["tests run:", "tests:", "failures:", "errors:"]
        .iter()
        .any(|word| lower.trim_start_matches("[error] ").starts_with(word));
    tally
        || matches!(lower.as_str(), "fail" | "failed" | "error" | "failures:")
        || lower.starts_with("error: could not compile")
        || lower.starts_with("fail\t")
        || lower.starts_with("error: aborting due to")
        || lower.starts_with("test result: failed")
}

/// The most telling line of a failed output: an error line, else a failure line, else the
/// last line that is not part of the tool's own header. A header such as `--- FAIL: name` or
/// a line ending in `:` gets the next line appended, which says what failed.
pub(crate) fn error_line(text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| {
            let lower = line.to_ascii_lowercase();
            !line.is_empty() && !HEADERS.iter().any(|h| lower.starts_with(h))
        })
        .collect();
    // A line naming an error type (`UnexpectedTypeException: HV000030`, `TypeError: ...`)
    // says most; then the markers, most telling first.
    let position = lines
        .iter()
        .position(|line| names_an_error_type(line))
        .or_else(|| {
            ERROR_MARKERS.iter().find_map(|needles| {
                lines.iter().position(|line| {
                    let lower = line.to_ascii_lowercase();
                    !is_generic(line) && needles.iter().any(|n| lower.contains(n))
                })
            })
        })
        .or_else(|| lines.iter().rposition(|line| !is_generic(line)))
        .or(lines.len().checked_sub(1))?;
    let line = lines.get(position)?;
    let lower = line.to_ascii_lowercase();
    // A header (`--- FAIL: name`, `...:`, `... > it inserts in chunks TypeError`) is followed by
    // what failed.
    let ends_with_error_type = line
        .rsplit(|c: char| !c.is_ascii_alphanumeric())
        .find(|word| !word.is_empty())
        .is_some_and(names_an_error_type);
    let wants_detail = line.ends_with(':') || lower.starts_with("--- fail") || ends_with_error_type;
    let detail = lines
        .get(position + 1)
        .filter(|next| wants_detail && !is_generic(next));
    let text = match detail {
        Some(next) => format!("{} {next}", line.trim_end_matches(':').trim_end()),
        None => (*line).to_owned(),
    };
    Some(one_line(&text, MAX_LINE_CHARS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn status_without_exit_code_uses_markers() {
        assert_eq!(
            run_status(None, "test a ... FAILED"),
            RunStatus::Failed(None)
        );
        assert_eq!(run_status(None, "all good"), RunStatus::Passed);
        assert_eq!(run_status(Some(0), "src/a.rs: error: x"), RunStatus::Passed);
    }

    #[test]
    fn error_lines_say_what_failed() {
        let rust = "Chunk ID: 1\nWall time: 0.2 seconds\nProcess exited with code 101\nOutput:\n\
                    Compiling x\nerror[E0308]: mismatched types\n  --> src/a.rs:1:1\n\
                    error: could not compile `x`";
        assert_eq!(
            error_line(rust).as_deref(),
            Some("error[E0308]: mismatched types")
        );
        let go = "ok  \tx/beacon\t1.2s\n--- FAIL: TestTick (0.02s)\n    tick_test.go:88: expected 3 ticks, got 2\nFAIL\nFAIL\tx/scheduler\t0.3s";
        assert_eq!(
            error_line(go).as_deref(),
            Some("--- FAIL: TestTick (0.02s) tick_test.go:88: expected 3 ticks, got 2")
        );
        let panic = "thread 'main' panicked at src/table.rs:41:38:\nindex out of bounds";
        assert_eq!(
            error_line(panic).as_deref(),
            Some("thread 'main' panicked at src/table.rs:41:38 index out of bounds")
        );
        // A test tally says that tests failed; the exception says why.
        let maven = "[ERROR] Tests run: 4, Failures: 0, Errors: 1, Skipped: 0 <<< FAILURE!\n\
                     [ERROR] OrderTest.rejectsEmpty -- Time elapsed: 0.01 s <<< ERROR!\n\
                     jakarta.validation.ConstraintDeclarationException: HV000151: bad override";
        assert_eq!(
            error_line(maven).as_deref(),
            Some("jakarta.validation.ConstraintDeclarationException: HV000151: bad override")
        );
        let pest = "FAILED Tests\\Feature\\ChunkTest > it inserts in chunks TypeError\n  array_chunk(): Argument #2 must be of type int";
        assert_eq!(
            error_line(pest).as_deref(),
            Some(
                "FAILED Tests\\Feature\\ChunkTest > it inserts in chunks TypeError array_chunk(): Argument #2 must be of type int"
            )
        );
        let python = "E   TypeError: unsupported operand\n=== 1 failed, 3 passed in 0.2s ===";
        assert_eq!(
            error_line(python).as_deref(),
            Some("E TypeError: unsupported operand")
        );
        assert_eq!(error_line("a\nlast words").as_deref(), Some("last words"));
        assert_eq!(error_line("Exit code: 1\n"), None);
    }

    proptest! {
        #[test]
        fn readers_never_panic(text in "(\\PC|Exit code: -?[0-9]{0,20}|--- FAIL: x|error:|\n){0,40}") {
            let _ = exit_code_in_text(&text);
            let _ = run_status(None, &text);
            if let Some(line) = error_line(&text) {
                prop_assert!(line.chars().count() <= MAX_LINE_CHARS);
            }
        }
    }
}
