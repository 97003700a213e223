//! Issue 29, safe reads: the file type is checked before any open, so nothing hangs, and the
//! memory system's hidden and temporary files are never served or counted.

use std::sync::mpsc;
use std::time::Duration;

use memory_introspect::{BlockOptions, ToolOutcome};
use memory_protocol::introspect::{MemoryFailureCode, MemoryState};
use serde_json::json;

use super::*;

/// Runs `work` on its own thread and fails the test when it takes longer than a few seconds
/// (a blocked open would otherwise hang the test run).
fn within_seconds<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(work());
    });
    receiver
        .recv_timeout(Duration::from_secs(10))
        .expect("the call blocked instead of refusing a file that is not a regular file")
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

fn read(introspector: &Introspector, path: &str) -> ToolOutcome {
    introspector
        .call_tool("memory_read", json!({ "path": path }))
        .unwrap()
}

/// Issue 29: a FIFO named `memory_summary.md` hung every probe; now the block, status and
/// search say what it is, at once.
#[cfg(unix)]
#[test]
fn a_fifo_named_memory_summary_does_not_hang_any_probe() {
    let home = Home::new();
    home.consolidated();
    std::fs::remove_file(home.root().join("memory_summary.md")).unwrap();
    mkfifo(&home.root().join("memory_summary.md"));
    let introspector = home.introspector();
    let (block, status, search) = within_seconds(move || {
        let block = introspector.render_block(&BlockOptions::default()).unwrap();
        let status = introspector.status();
        let search = introspector
            .call_tool("memory_search", json!({ "query": "ledger" }))
            .unwrap();
        (block, status, search)
    });
    assert_eq!(block.state, MemoryState::Unavailable);
    assert!(
        block
            .text
            .contains("memory_summary.md: a FIFO, not a regular file"),
        "{}",
        block.text
    );
    assert_eq!(status.state, MemoryState::Unavailable);
    assert!(matches!(search, ToolOutcome::Failed(_)));
}

/// Issue 29: `memory_read` opened before checking the type, so a FIFO hung it (a tool call
/// that never answers is the MCP timeout users report, mem0 #2700).
#[cfg(unix)]
#[test]
fn memory_read_refuses_a_fifo_without_blocking() {
    let home = Home::new();
    home.consolidated();
    mkfifo(&home.root().join("rollout_summaries/pipe.md"));
    let introspector = home.introspector();
    let outcome = within_seconds(move || read(&introspector, "rollout_summaries/pipe.md"));
    let ToolOutcome::Failed(failure) = outcome else {
        panic!("a FIFO must not be served: {outcome:?}");
    };
    assert_eq!(failure.code, MemoryFailureCode::InvalidInput);
    assert_eq!(
        failure.error.as_deref(),
        Some("`rollout_summaries/pipe.md` is a FIFO, not a regular file: only files are read")
    );
}

/// Issue 29: hidden and temporary files (`.received`, `.shared_revision`, `.x.tmp-PID`) were
/// served by `memory_read` though `memory_list` hid them; they are neither served nor counted.
#[test]
fn hidden_and_temporary_files_are_never_served_or_counted() {
    let home = Home::new();
    home.consolidated();
    let counted = home.introspector().status().files;
    home.write(".shared_revision", "42\n");
    home.write("notes/.received", "2026-03-14T09-40-02Z-0001.md\n");
    home.write(".memory_summary.md.tmp-4242", "half-written summary\n");
    home.write("notes/.x.tmp-77", "half-written note\n");
    let introspector = home.introspector();
    assert_eq!(introspector.status().files, counted);
    for path in [
        ".shared_revision",
        "notes/.received",
        ".memory_summary.md.tmp-4242",
        "notes/.x.tmp-77",
        "./notes/.received",
    ] {
        let ToolOutcome::Failed(failure) = read(&introspector, path) else {
            panic!("{path} must not be served");
        };
        assert_eq!(failure.code, MemoryFailureCode::PathRefused, "{path}");
        let error = failure.error.unwrap_or_default();
        assert!(error.contains("hidden files"), "{error}");
    }
    let search = introspector
        .call_tool("memory_search", json!({ "query": "half-written" }))
        .unwrap();
    let ToolOutcome::Ok(result) = search else {
        panic!("{search:?}");
    };
    assert_eq!(result["hits"], json!([]), "{result}");
}
