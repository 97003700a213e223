//! The crate's error type.

/// What can go wrong choosing or building a model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The model spec is not one this crate knows.
    #[error(
        "unknown model spec `{spec}`: expected `offline`, `openai:NAME`, `openai-chat:NAME` or a bare model name"
    )]
    UnknownSpec {
        /// The spec as given.
        spec: String,
    },
    /// The spec is one letter or two away from a spec this crate knows (`offlin`).
    #[error("unknown model `{spec}`: did you mean `{suggestion}`?")]
    NearMiss {
        /// The spec as given.
        spec: String,
        /// The spec it is closest to.
        suggestion: String,
    },
    /// The spec starts with a provider this crate does not know (`foo:bar`).
    #[error(
        "unknown provider `{provider}` in model spec `{spec}`: use `offline`, `openai:NAME` or `openai-chat:NAME`{hint}"
    )]
    UnknownProvider {
        /// The provider as given.
        provider: String,
        /// The spec as given.
        spec: String,
        /// A closer spec, or how to name a model whose name has a colon.
        hint: String,
    },
    /// The spec names a provider but no model.
    #[error("model spec `{spec}` has no model name: write it as `openai:NAME`")]
    MissingModelName {
        /// The spec as given.
        spec: String,
    },
    /// A setting that only applies to an HTTP model was given for the offline engine.
    #[error("{setting} does not apply to the offline model; use openai:NAME")]
    NotForOffline {
        /// The setting, as the user would write it.
        setting: String,
    },
    /// The spec needs the HTTP client, which this build leaves out.
    #[error(
        "model `{spec}` needs the `openai` feature of memory-models, which this build leaves out"
    )]
    FeatureDisabled {
        /// The spec as given.
        spec: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client for model `{spec}`: {source}")]
    Client {
        /// The spec as given.
        spec: String,
        /// Why.
        source: memory_protocol::ModelError,
    },
}

/// A result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
