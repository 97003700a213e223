//! Integration tests of memory-mcp.

mod server;
