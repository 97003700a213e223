//! Integration tests of the offline engine, one module per task family.

mod offline;
mod offline_compaction;
mod working_memory;
