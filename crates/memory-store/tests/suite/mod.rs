//! Integration tests of memory-store, one module per concern.

mod columns;
mod identifier;
mod migrate;
mod postgres;
mod sqlite;
