//! Everything that answers a [`ModelRequest`](memory_protocol::ModelRequest).
//!
//! - [`offline`]: the built-in offline engine, the default model. It needs no network and no
//!   language model: it answers every task kind the library sends from the request's structured
//!   input, and says so in what it writes.
//! - [`openai`] (feature `openai`, on by default): an OpenAI-compatible HTTP client for the
//!   Responses API and Chat Completions (OpenAI, vLLM, llama.cpp, Ollama, ...).
//! - [`spec`]: choosing a model from a spec string (`offline`, `openai:NAME`,
//!   `openai-chat:NAME`, or a bare `NAME` for the configured OpenAI-compatible provider).

#![deny(missing_docs)]

mod error;
pub mod offline;
#[cfg(feature = "openai")]
pub mod openai;
pub mod spec;

pub use crate::error::{Error, Result};
pub use crate::offline::OfflineEngine;
pub use crate::spec::{
    BuiltModel, DEFAULT_MODEL_SPEC, ModelOptions, ModelSpec, build_model, model_from_spec,
};
