//! Working memory: a seven-section document the model edits with KEEP / UPDATE / APPEND
//! operations, while guards in code refuse edits that would lose facts.
//!
//! The document ([`WorkingMemoryDocument`]) has seven `##` sections in a fixed order. The model sees it with
//! the new messages and answers with one operation per section (the `update_working_memory`
//! tool's arguments, [`memory_protocol::working_memory::WorkingMemoryUpdate`]); [`Recovery`]
//! reads those arguments, repairing malformed output section by section; [`SectionOps`] reads each
//! operation leniently; [`merge()`] applies them through the per-section guards (`guards/`), and
//! `bound` keeps the two growing sections within their hard bound. [`section_size_warnings`] lists the
//! oversized sections the update prompt warns about. [`session`] keeps the session window:
//! live messages, commits into archives that update the working memory from the messages it
//! has not seen, and the assembled context. Everything else (items, keys, lexical anchors, the
//! guards, the bound) is internal to the crate.
//!
//! Invariants of a merge, whatever the operations:
//!
//! - the rendered document has exactly the seven headers, in order;
//! - no path of Files & Context, entry of Errors & Corrections or unresolved item of Open
//!   Issues is lost (an Errors entry may move to the archive, behind a pointer bullet);
//! - Key Facts & Decisions never holds more than twice its thresholds (50 bullets, 3,000
//!   tokens), plus the consolidation sentinel;
//! - no section is emptied by an empty UPDATE; malformed input keeps a section, never
//!   panics.
//!
//! The guard constants live in [`memory_protocol::working_memory::limits`], where the update
//! prompt reads them too. The same merge serves every write path: an update, a recovered
//! update, a created document ([`merge_created`]) and the fallback that re-creates the
//! document from the previous one.
//!
//! # Example
//!
//! The model rewrites Files & Context and forgets a file it had listed; the guard puts it back
//! and says so.
//!
//! ```
//! use working_memory::{MergeOptions, merge_text, read_arguments};
//!
//! let old = [
//!     ("Session Title", "Ledger port"),
//!     ("Current State", "Started."),
//!     ("Task & Goals", "- Port the ledger"),
//!     ("Key Facts & Decisions", "- Money is integer cents."),
//!     ("Files & Context", "- src/ledger.rs"),
//!     ("Errors & Corrections", ""),
//!     ("Open Issues", ""),
//! ]
//! .map(|(header, body)| format!("## {header}\n{body}\n"))
//! .join("\n");
//! let arguments = r#"{"sections": {
//!     "Session Title": {"op": "KEEP"},
//!     "Current State": {"op": "UPDATE", "content": "Rounding done."},
//!     "Task & Goals": {"op": "KEEP"},
//!     "Key Facts & Decisions": {"op": "KEEP"},
//!     "Files & Context": {"op": "UPDATE", "content": "- src/rounding.rs"},
//!     "Errors & Corrections": {"op": "KEEP"},
//!     "Open Issues": {"op": "KEEP"}
//! }}"#;
//! let ops = read_arguments(arguments).expect("the arguments are readable").ops;
//! let outcome = merge_text(&old, &ops, &MergeOptions::default());
//! let document = outcome.document.render();
//! assert!(document.contains("src/rounding.rs") && document.contains("src/ledger.rs"));
//! assert!(document.contains("Rounding done."));
//! assert!(!outcome.guards.is_empty());
//! ```

#![deny(missing_docs)]

mod anchors;
pub(crate) mod bound;
mod document;
mod error;
pub(crate) mod guards;
mod keys;
mod merge;
mod ops;
mod recover;
mod reminders;
mod script;
pub mod session;
mod text;

pub use self::document::{WorkingMemoryDocument, is_working_memory};
pub use self::error::{Error, Result};
pub use self::merge::{MergeOptions, MergeOutcome, MovedEntries, merge, merge_created, merge_text};
pub use self::ops::{ReadOp, SectionOps};
pub use self::recover::{Recovery, RecoveryPath, read_arguments, read_arguments_value};
pub use self::reminders::section_size_warnings;
