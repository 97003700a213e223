//! The memory write path.
//!
//! This crate owns the state store (one SQLite file: threads, leased stage-one jobs and their
//! outputs, the phase-2 lease and baseline), the scan that registers rollout files, phase 1
//! (per-rollout extraction through [`memory_protocol::ModelClient`]), phase 2 (consolidation
//! into the memory-root files, with forgetting), pruning, the rate-limit guard, the
//! `[memories]` config table, the memory-root files themselves, the read path, usage signals
//! (citations), which store a host selects ([`store_selection`]) and the [`runner::Runner`]
//! that drives a whole run (prune, scan, phase 1, phase 2) with progress callbacks.
//!
//! # Example
//!
//! The main job: a folder of finished rollouts in, memory files out. The model is whatever the
//! host passes (its own, or `memory-offline`'s engine, as the CLI does); here a stand-in that
//! answers each task kind with a fixed, well-formed answer.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use memory_protocol::{ContextWindow, ContextWindowSource, ModelClient, ModelError, ModelRequest, ModelResponse, TaskKind};
//! use memory_write::config::MemoriesConfig;
//! use memory_write::memory_root::MemoryRoot;
//! use memory_write::runner::{RolloutFolder, RunLimits, RunModels, RunOptions, Runner};
//! use memory_write::store_selection::StoreSelection;
//!
//! struct StandIn;
//!
//! #[async_trait::async_trait]
//! impl ModelClient for StandIn {
//!     fn name(&self) -> String {
//!         "stand-in".to_owned()
//!     }
//!     fn context_window(&self) -> Option<u64> {
//!         None
//!     }
//!     async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
//!         let answer = match request.task {
//!             TaskKind::StageOneExtraction => serde_json::json!({
//!                 "raw_memory": "---\ndescription: fixing parser tests\n---\n### Task 1\nFixed it.",
//!                 "rollout_summary": "Fixed the empty-input parser test.",
//!                 "rollout_slug": "fix-parser",
//!             }),
//!             _ => serde_json::json!({
//!                 "memory_md": "## Parser\n- Empty input returns an empty list.",
//!                 "memory_summary_md": "v1\n## User Profile\n- Works on the parser.",
//!                 "obsolete": [],
//!             }),
//!         };
//!         Ok(ModelResponse { text: answer.to_string(), usage: None })
//!     }
//! }
//!
//! let home = tempfile::tempdir()?;
//! let rollouts = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rollouts");
//! let config = MemoriesConfig { min_rollout_idle_hours: 0, ..MemoriesConfig::default() };
//! let model: Arc<dyn ModelClient> = Arc::new(StandIn);
//! let models = RunModels {
//!     extract: model.clone(),
//!     consolidate: model,
//!     context_window: ContextWindow { tokens: None, source: ContextWindowSource::Default },
//! };
//! let options = RunOptions {
//!     root: MemoryRoot::under_home(home.path()),
//!     limits: RunLimits::new(RolloutFolder::Given, None, None, &config),
//!     consolidation_wait: Duration::from_secs(30),
//!     retry_failed: false,
//! };
//! let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
//! let report = runtime.block_on(async {
//!     let runner = Runner::prepare(home.path(), &StoreSelection::default(), &config, &rollouts).await?;
//!     runner.run(&models, &options, None).await
//! })?;
//! assert!(report.phase_one.succeeded >= 4, "{report:?}");
//! assert!(options.root.read("MEMORY.md")?.is_some_and(|text| text.contains("Empty input")));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod blocking;
pub mod citations;
pub mod codex_home;
pub mod config;
mod consolidation_guard;
mod consolidation_prompt;
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
mod session_file;
pub mod shared_root;
pub mod skip_reason;
pub mod stage_one_request;
pub mod store;
pub mod store_selection;

pub use crate::config::{MemoriesConfig, StoreConfig};
pub use crate::consolidation_prompt::prompt_budget;
pub use crate::error::{Error, Result};
pub use crate::phase_one::{PhaseOneOptions, PhaseOneReport, run_phase_one};
pub use crate::rate_limit::RateLimitProbe;
pub use crate::scan::{ScanOptions, ScanReport, scan_rollouts};
pub use crate::store::StateStore;
