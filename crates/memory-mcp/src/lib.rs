//! The memory tools served over MCP with the `rmcp` SDK, mountable by a host: build a
//! [`MemoryServer`] over a home's [`Introspector`](memory_introspect::Introspector) (and, optionally, one thread's goals and a
//! link to a shared store), then serve it on any byte stream ([`MemoryServer::serve`]) or on
//! stdin/stdout ([`MemoryServer::serve_stdio`]).
//!
//! Every tool is listed with the input and output schemas of the tool registry
//! (`memory_protocol::tools`). A tool's result is `structuredContent` (the result or, with
//! `isError: true`, the structured failure; its output schema admits both), with the same JSON
//! as text content for clients that read only text. An unknown tool is a protocol error.
//!
//! With [`ThreadGoals`] it also serves that thread's goal tools (`get_goal`, `update_goal`),
//! answered exactly as the goal store answers them elsewhere: a refusal is a structured error
//! (`isError: true`). Without a thread no goal tool is listed, so a model never sees a tool
//! that always fails.
//!
//! With a [`SharedLink`] the server serves the fleet's memory: it syncs the memory root before
//! a memory tool when the last sync is more than a few seconds old, and right after a saved
//! note, so the note reaches the other machines. A failed sync is a warning on stderr (stdout
//! may be the protocol) and the server goes on with this machine's copy.
//!
//! # Example
//!
//! The server on one end of an in-process pipe and an MCP client (rmcp's) on the other, as an
//! agent would mount it over stdio with [`MemoryServer::serve_stdio`].
//!
//! ```
//! use memory_introspect::{IntrospectConfig, Introspector};
//! use memory_mcp::MemoryServer;
//! use rmcp::ServiceExt;
//!
//! let home = tempfile::tempdir()?;
//! let server = MemoryServer::new(Introspector::open(home.path(), IntrospectConfig::default())?, None, None)?;
//! let runtime = tokio::runtime::Runtime::new()?;
//! let names = runtime.block_on(async {
//!     let (client_end, server_end) = tokio::io::duplex(64 * 1024);
//!     let (server_read, server_write) = tokio::io::split(server_end);
//!     tokio::spawn(server.serve(server_read, server_write));
//!     let client = ().serve(tokio::io::split(client_end)).await?;
//!     let tools = client.list_all_tools().await?;
//!     client.cancel().await?;
//!     Ok::<_, Box<dyn std::error::Error>>(tools.into_iter().map(|tool| tool.name.to_string()).collect::<Vec<_>>())
//! })?;
//! assert!(names.iter().any(|name| name == "memory_search"), "{names:?}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod error;
mod handshake;
mod server;
mod shared;

pub use crate::error::{Error, Result};
pub use crate::server::{INSTRUCTIONS, MemoryServer, ThreadGoals};
pub use crate::shared::SharedLink;
