//! Memory introspection: the model knows what memory it has.
//!
//! This crate owns the always-on memory block with a self-describing header (name, root,
//! budget use, last consolidation), the distinct memory states (disabled, empty, ready,
//! degraded, unavailable) each rendered as its own line, provenance labels, the environment
//! block naming the host harness and the project, and the memory tools (list, read, search,
//! status) with their search index.
//!
//! The wire types ([`memory_protocol::introspect`]) live in `memory-protocol`. The block
//! rendering and the tools arrive with the introspection issue; until then this crate only
//! fixes its place in the layer graph.
