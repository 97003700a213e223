//! Integration tests of the `agent-memory` binary, one module per command.

mod consolidate_cli;
mod introspect_cli;
mod mcp_cli;
mod model_server;
mod run_cli;
