//! Model specs and the OpenAI-compatible HTTP client that answers a
//! [`ModelRequest`](memory_protocol::ModelRequest).
//!
//! - [`openai`] (feature `openai`, on by default): an OpenAI-compatible HTTP client for the
//!   Responses API and Chat Completions (OpenAI, vLLM, llama.cpp, Ollama, ...).
//! - [`model_from_spec`], [`build_model`]: choosing a model from a spec string (`offline`, `openai:NAME`,
//!   `openai-chat:NAME`, or a bare `NAME` for the configured OpenAI-compatible provider). The
//!   built-in offline engine, the default model, lives in the `memory-offline` crate, on the
//!   same layer; the caller constructs it and hands it to [`build_model`] for the `offline`
//!   spec, so neither crate depends on the other.
//! - [`config`]: the top-level `model_*` keys of `config.toml` ([`config::ModelConfig`]).
//!
//! # Example
//!
//! Choosing a model from a spec string, as `--model` and `config.toml` give it; a near miss is
//! refused rather than sent to a server as a model name.
//!
//! ```
//! use memory_models::ModelSpec;
//!
//! assert_eq!(ModelSpec::parse("offline")?, ModelSpec::Offline);
//! assert!(matches!(
//!     ModelSpec::parse("openai-chat:gpt-4o-mini")?,
//!     ModelSpec::OpenAi { name, .. } if name == "gpt-4o-mini"
//! ));
//! assert!(ModelSpec::parse("opnai:gpt-5").is_err());
//! # Ok::<(), memory_models::Error>(())
//! ```

#![deny(missing_docs)]

pub mod config;
mod error;
#[cfg(feature = "openai")]
pub mod openai;
mod spec;

pub use crate::error::{Error, Result};
pub use crate::spec::{
    BuiltModel, DEFAULT_MODEL_SPEC, ModelOptions, ModelSpec, OFFLINE_SPEC, build_model,
    model_from_spec,
};
