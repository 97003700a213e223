//! Integration tests of the model crate, one module per topic.

mod offline;
#[cfg(feature = "openai")]
mod openai;
mod working_memory;
