//! The crate's error type.

/// Why the MCP server could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tool definition has no valid MCP form.
    #[error("the MCP form of {tool}")]
    ToolDefinition {
        /// The tool.
        tool: &'static str,
        /// Why it does not parse as an MCP tool.
        #[source]
        source: serde_json::Error,
    },
    /// The client's first messages could not be read or answered.
    #[error("reading the client's first messages on {transport}")]
    Handshake {
        /// The transport, as a host would name it (`stdio`, `a stream`).
        transport: &'static str,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The server could not start on its transport (the client never initialized).
    #[error("starting the MCP server on {transport}")]
    Start {
        /// The transport, as a host would name it (`stdio`, `a stream`).
        transport: &'static str,
        /// What rmcp said.
        #[source]
        source: Box<rmcp::service::ServerInitializeError>,
    },
    /// The running server stopped with an error.
    #[error("running the MCP server")]
    Run(#[source] tokio::task::JoinError),
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
