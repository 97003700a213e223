//! Integration tests of memory-mcp.

mod goals;
mod harness;
mod server;
