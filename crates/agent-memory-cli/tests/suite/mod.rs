//! Integration tests of the `agent-memory` binary, one module per command.

mod compact_cli;
mod consolidate_cli;
mod run_cli;
