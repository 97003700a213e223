//! Integration tests of memory-write, one module per topic.

mod conformance;
mod fake_model;
mod fault_harness;
mod fleet;
mod forgetting;
mod hand_edits;
mod lease_owner;
mod memory_root;
mod phase_one;
mod phase_two;
mod phase_two_store;
mod reliability;
mod scan;
mod store;
