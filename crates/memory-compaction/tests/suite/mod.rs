//! Integration tests of memory-compaction.

mod codex;
mod config;
mod cut;
mod files;
mod invariants;
mod reports;
mod run;
mod serialize;
mod session;
mod settings;
mod summary_text;
mod support;
mod windows;
