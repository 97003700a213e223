//! The memory write path.
//!
//! This crate owns the state store (one SQLite file: threads, leased stage-one jobs and their
//! outputs, the phase-2 lease and baseline), the scan that registers rollout files, phase 1
//! (per-rollout extraction through [`memory_protocol::ModelClient`]), phase 2 (consolidation
//! into the memory-root files, with forgetting), pruning, the rate-limit guard, the
//! `[memories]` config table, the memory-root files themselves, the read path, usage signals
//! (citations), which store a host selects ([`store_selection`]) and the [`runner::Runner`]
//! that drives a whole run (prune, scan, phase 1, phase 2) with progress callbacks.

#![deny(missing_docs)]

mod blocking;
pub mod citations;
pub mod codex_home;
pub mod config;
pub mod consolidation_guard;
pub mod consolidation_prompt;
mod error;
pub mod fault;
mod hand_edits;
mod housekeeping;
pub mod memory_root;
pub mod phase_one;
pub mod phase_two;
mod rate_limit;
pub mod runner;
pub mod safe_file;
pub mod scan;
pub mod session_file;
pub mod shared_root;
pub mod skip_reason;
pub mod stage_one_request;
pub mod store;
pub mod store_selection;

pub use crate::config::{MemoriesConfig, StoreConfig};
pub use crate::error::{Error, Result};
pub use crate::phase_one::{PhaseOneOptions, PhaseOneReport, run_phase_one};
pub use crate::rate_limit::RateLimitProbe;
pub use crate::scan::{ScanOptions, ScanReport, scan_rollouts};
pub use crate::store::StateStore;
