//! Evaluations: `cargo xtask eval <name>`. Each prints what it found per case, then a last line
//! `EVAL <name> key=value ...` for machines. Figures are recorded in `docs/benchmarks.md`.

use anyhow::{Result, bail};

mod compaction;
mod extract;

/// Evaluation names.
pub(crate) const NAMES: [&str; 2] = ["compaction", "extract"];

pub(crate) fn run(args: &[&str]) -> Result<()> {
    match args {
        ["compaction", rest @ ..] => compaction::run(rest),
        ["extract", rest @ ..] => extract::run(rest),
        [name, ..] => bail!("unknown evaluation `{name}`; known: {}", NAMES.join(", ")),
        [] => bail!("name an evaluation: {}", NAMES.join(", ")),
    }
}
