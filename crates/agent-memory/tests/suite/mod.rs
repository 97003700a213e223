//! Integration tests of the facade crate, one module per topic.

mod consolidate_cli;
mod offline;
mod openai;
mod run_cli;
