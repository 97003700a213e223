//! Integration tests of the `agent-memory` binary, one module per command.

mod consolidate_cli;
mod run_cli;
mod wm_cli;
