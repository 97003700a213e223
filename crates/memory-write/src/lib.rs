//! The memory write path.
//!
//! This crate owns the state store (one SQLite file: threads, leased stage-one jobs and their
//! outputs, the phase-2 lease), phase 1 (per-rollout extraction through
//! [`memory_protocol::ModelClient`]), phase 2 (consolidation into the memory-root files),
//! pruning, the rate-limit guard, and the memory-root files themselves.

#![deny(missing_docs)]
