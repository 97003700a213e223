//! The state store's foundation, shared by every crate that keeps tables (`memory-write`,
//! `goal-steering`, `memory-introspect`):
//!
//! - [`sqlite::open`]: the one SQLite opener (WAL, busy timeout, retry while a concurrent
//!   opener holds the file);
//! - [`migrate`]: the one migrator, one `schema_versions` row per owner on both dialects,
//!   with the step that retires `PRAGMA user_version` on files written before it;
//! - [`postgres`] (feature `postgres`): the one PostgreSQL stack, a deadpool pool of
//!   tokio-postgres connections, its URLs and schema option;
//! - [`names`]: table names, schema owners and advisory-lock keys; [`valid_identifier`];
//!   [`ddl::Dialect`], so a table shared by both backends is defined once.

pub mod ddl;
mod error;
mod identifier;
pub mod migrate;
pub mod names;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod sqlite;

pub use crate::error::{Error, Result};
pub use crate::identifier::valid_identifier;
