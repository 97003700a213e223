//! The one loader of agent-memory's settings: `config.toml` (in the home, or a file the host
//! names) and the environment.
//!
//! Each top-level table belongs to one owner, which declares its settings as a serde struct
//! (`#[serde(default, deny_unknown_fields)]`, defaults and ranges documented on the fields) and
//! implements [`Section`]: `[memories]` and `[store]` are `memory-write`'s, the top-level
//! `model_*` keys `memory-models`', `[goals]` `goal-steering`'s, `[introspect]`
//! `memory-introspect`'s. [`Config::section`] reads one owner's part; an unknown key, a value of
//! the wrong type or a number out of range is an [`Error`] naming the key and the file (or the
//! environment variable). Other top-level keys belong to the host agent that may share the file
//! (codex's own settings) and are left alone.
//!
//! ```toml
//! model_context_window = 128000
//! [memories]
//! max_unused_days = 30
//! [goals]
//! max_token_budget = 100000000
//! ```
//!
//! # Example
//!
//! An owner's settings as a serde struct: its table is read from the file, and a misspelt key
//! is an error naming the key, not a silently ignored line.
//!
//! ```
//! use memory_config::{Config, Origin, Place, Section};
//!
//! #[derive(Debug, Default, serde::Deserialize)]
//! #[serde(default, deny_unknown_fields)]
//! struct Search {
//!     max_hits: u32,
//! }
//!
//! impl Section for Search {
//!     const PLACE: Place = Place::Table("search");
//! }
//!
//! let config = Config::parse("model = \"gpt-5\"\n[search]\nmax_hits = 8\n", Origin::Text)?;
//! assert_eq!(config.section::<Search>()?.value.max_hits, 8);
//!
//! let typo = Config::parse("[search]\nmax_hit = 8\n", Origin::Text)?;
//! let error = typo.section::<Search>().unwrap_err();
//! assert!(error.to_string().contains("search.max_hit"), "{error}");
//! # Ok::<(), memory_config::Error>(())
//! ```

mod config;
mod de;
mod error;
mod section;

pub use crate::config::Config;
pub use crate::error::{Error, Origin, Result};
pub use crate::section::{Clamped, EnvKey, Loaded, Place, Ranges, Section};
