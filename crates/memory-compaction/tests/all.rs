//! Integration tests of memory-compaction, one binary.

mod suite;
