//! Evaluations: `cargo xtask eval <name>`. Each prints what it found per case, then a last line
//! `EVAL <name> key=value ...` for machines. Figures are recorded in `docs/benchmarks.md`.

use anyhow::{Result, bail};

mod extract;

/// Evaluation names.
pub(crate) const NAMES: [&str; 1] = ["extract"];

pub(crate) fn run(args: &[&str]) -> Result<()> {
    match args {
        ["extract", rest @ ..] => extract::run(rest),
        [name, ..] => bail!("unknown evaluation `{name}`; known: {}", NAMES.join(", ")),
        [] => bail!("name an evaluation: {}", NAMES.join(", ")),
    }
}
