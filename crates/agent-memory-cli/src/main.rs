//! The `agent-memory` command-line tool.

// Doc comments on the clap types are the commands' help texts, written for a terminal
// (`<home>/config.toml`, `[REDACTED_SECRET]`), not rustdoc links or HTML.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
