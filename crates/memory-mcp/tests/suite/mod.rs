//! Integration tests of memory-mcp.

mod goals;
mod server;
