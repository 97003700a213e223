//! Integration tests of the model crate, one module per topic.

mod offline;
mod offline_compaction;
#[cfg(feature = "openai")]
mod openai;
#[cfg(feature = "openai")]
mod resilience;
mod working_memory;
