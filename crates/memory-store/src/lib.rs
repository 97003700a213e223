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
//!   [`ddl::Dialect`], so a table shared by both backends is defined once, and
//!   [`columns::Columns`], so a record shared by both is read from its row once.
//!
//! # Example
//!
//! An owner's tables, created and versioned by the one migrator; a second run finds nothing to
//! do, and a build that knows fewer migrations than the file holds refuses it.
//!
//! ```
//! use std::time::Duration;
//!
//! use memory_store::migrate::{Schema, migrate_sqlite};
//!
//! let dir = tempfile::tempdir()?;
//! let mut conn = memory_store::sqlite::open(&dir.path().join("state.sqlite"), Duration::from_secs(5))?;
//! let migrations = vec!["CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)".to_owned()];
//! let schema = Schema { owner: "doc-example", migrations: &migrations, legacy_user_version: false };
//! assert_eq!(migrate_sqlite(&mut conn, &schema, |_, _| Ok(()))?, 1);
//! assert_eq!(migrate_sqlite(&mut conn, &schema, |_, _| Ok(()))?, 1);
//!
//! let older = Schema { migrations: &[], ..schema };
//! assert!(matches!(
//!     migrate_sqlite(&mut conn, &older, |_, _| Ok(())),
//!     Err(memory_store::Error::SchemaTooNew { found: 1, .. })
//! ));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod columns;
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
