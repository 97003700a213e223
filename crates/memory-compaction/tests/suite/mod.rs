//! Integration tests of memory-compaction: compaction, then the working memory.

mod codex;
mod cut;
mod files;
mod reports;
mod run;
mod serialize;
mod session;
mod settings;
mod support;
mod windows;
// Working memory: conformance with the reference, the user reports, properties.
mod working_memory;
