//! The crate's error type.

/// What can go wrong when rendering a prompt.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An embedded template failed to parse when the environment was built.
    #[error("template {template} is invalid: {message}")]
    Load {
        /// The template that failed.
        template: &'static str,
        /// The parser's message.
        message: String,
    },
    /// A template failed to render (for example it uses a variable its context lacks).
    // The cause is part of the message and deliberately not a `source()`, so a report that
    // prints the error chain does not repeat it.
    #[error("template {template} failed to render: {error}")]
    Render {
        /// The template that failed.
        template: &'static str,
        /// The engine's error.
        error: minijinja::Error,
    },
    /// The context cannot produce a meaningful prompt.
    #[error("invalid context for template {template}: {reason}")]
    InvalidContext {
        /// The template whose context was rejected.
        template: &'static str,
        /// Why.
        reason: &'static str,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
