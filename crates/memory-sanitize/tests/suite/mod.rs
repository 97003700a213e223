// Tests may unwrap: a panic is a test failure with its message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod escape;
mod redact;
mod redact_codex;
mod redact_docs;
mod redact_forms;
mod redact_stream;
mod redact_untouched;
mod safe_text;
mod tokens;
