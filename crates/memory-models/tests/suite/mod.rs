//! Integration tests of the model crate, one module per topic.

#[cfg(feature = "openai")]
mod openai;
#[cfg(feature = "openai")]
mod resilience;
#[cfg(feature = "openai")]
mod structured_output;
