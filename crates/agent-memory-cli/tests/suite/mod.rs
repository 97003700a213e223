//! Integration tests of the `agent-memory` binary, one module per command.

mod claude_code_cli;
mod codex_cli;
mod compact_cli;
mod consolidate_cli;
mod goal_cli;
mod goal_hook_cli;
mod hook_cli;
mod introspect_cli;
mod json_cli;
mod mcp_cli;
mod memory_cli;
mod model_flags_cli;
mod model_server;
mod output_cli;
mod readme_cli;
mod redact_cli;
mod reliability_cli;
mod run_cli;
mod shared_store_cli;
mod wm_cli;

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `command` with `input` on its standard input, capturing both output streams.
pub(crate) fn run_with_input(mut command: Command, input: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// An assistant message citing two memories, as an agent writes it after a run over the
/// example rollouts: the line of `memory` (a MEMORY.md) naming the harbor-web task's thread,
/// and that of one more rollout.
pub(crate) fn citing_message(memory: &str) -> String {
    let line = memory
        .lines()
        .position(|line| line.contains("019a5210-33c8-7e10-a4d1-92b7f0c4d002"))
        .unwrap()
        + 1;
    format!(
        "Run the dry run first.\n\n<memory-citation>\n<citation_entries>\nMEMORY.md:{line}-{line}|note=[deploy rule]\n\
         </citation_entries>\n<rollout_ids>\n019a4c1e-7d2a-7b31-9f0e-3c5a8e21b001\n</rollout_ids>\n</memory-citation>\n"
    )
}
