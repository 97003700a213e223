//! Project automation for agent-memory.
//!
//! - `cargo xtask codegen [--check]`: writes the JSON Schemas (`schemas/`) and their
//!   TypeScript declarations, the sample instances (`fixtures/protocol/`, typed for `tsc` in
//!   `fixtures/typescript/`) and the rendered prompt examples (`fixtures/prompts/`); with
//!   `--check` it writes nothing and fails when a committed file differs.
//! - `cargo xtask bench <name>`: runs a benchmark and prints its figures.
//! - `cargo xtask eval <name>`: runs an evaluation against labelled fixtures and prints its
//!   scores.
//! - `cargo xtask smoke-llm [--venv DIR] [--bin PATH]`: runs the main job against
//!   llama-cpp-python's server with a small real model and prints one `SMOKE llm` line.

mod bench;
#[cfg(test)]
mod code_map;
mod codegen;
mod eval;
mod samples;
mod smoke_llm;
#[cfg(test)]
mod tidy;
mod typescript;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["codegen"] => codegen::run(codegen::Mode::Write),
        ["codegen", "--check"] => codegen::run(codegen::Mode::Check),
        ["bench", rest @ ..] => bench::run(rest),
        ["eval", rest @ ..] => eval::run(rest),
        ["smoke-llm", rest @ ..] => smoke_llm::run(rest),
        _ => {
            eprintln!(
                "usage: cargo xtask codegen [--check]\n       cargo xtask bench <{}>\n       \
                 cargo xtask eval <{}> [--verbose]\n       \
                 cargo xtask smoke-llm [--venv DIR] [--bin PATH]",
                bench::NAMES.join("|"),
                eval::NAMES.join("|")
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root.
fn project_root() -> PathBuf {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map(PathBuf::from)
        .unwrap_or(manifest_dir)
}
