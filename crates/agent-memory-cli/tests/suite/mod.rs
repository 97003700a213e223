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
