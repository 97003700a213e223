//! Benchmarks: `cargo xtask bench <name>`. Each prints human-readable figures, then a last line
//! `BENCH <name> key=value ...` for machines. Ratios are measured within one run, because the
//! machine is shared and absolute numbers drift.

use anyhow::{Result, bail};

mod pipeline;
mod rng;
mod sanitize;
mod search;

/// Benchmark names.
pub(crate) const NAMES: [&str; 3] = ["pipeline", "sanitize", "search"];

pub(crate) fn run(args: &[&str]) -> Result<()> {
    match args {
        ["pipeline"] => pipeline::run(),
        ["sanitize", rest @ ..] => sanitize::run(rest),
        ["search", rest @ ..] => search::run(rest),
        [name, ..] => bail!("unknown benchmark `{name}`; known: {}", NAMES.join(", ")),
        [] => bail!("name a benchmark: {}", NAMES.join(", ")),
    }
}
