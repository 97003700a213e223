//! The reference host's integration tests: one binary, modules in `suite/`.

// Tests and their helpers may unwrap: a panic is a test failure with its message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
