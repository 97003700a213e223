// Tests may unwrap: a panic is a test failure with its message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
