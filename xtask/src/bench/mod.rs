//! Benchmarks: `cargo xtask bench <name>`. Each prints human-readable figures, then a last line
//! `BENCH <name> key=value ...` for machines. Ratios are measured within one run, because the
//! machine is shared and absolute numbers drift.

use std::process::Command;

use anyhow::{Context, Result, bail};

mod compaction;
mod fleet;
mod pipeline;
mod redact_fp;
mod sanitize;
mod search;
mod wm;

/// Benchmark names.
pub(crate) const NAMES: [&str; 7] = [
    "compaction",
    "fleet",
    "pipeline",
    "redact-fp",
    "sanitize",
    "search",
    "wm",
];

pub(crate) fn run(args: &[&str]) -> Result<()> {
    match args {
        ["compaction", rest @ ..] => compaction::run(rest),
        ["fleet", rest @ ..] => fleet::run(rest),
        ["pipeline"] => pipeline::run(),
        ["redact-fp", rest @ ..] => redact_fp::run(rest),
        ["sanitize", rest @ ..] => sanitize::run(rest),
        ["search", rest @ ..] => search::run(rest),
        ["wm", rest @ ..] => wm::run(rest),
        [name, ..] => bail!("unknown benchmark `{name}`; known: {}", NAMES.join(", ")),
        [] => bail!("name a benchmark: {}", NAMES.join(", ")),
    }
}

/// Runs `cargo run --release -p xtask -- bench NAME --inner`: `cargo xtask` builds xtask in
/// debug, and only a release build measures anything worth recording.
fn rerun_in_release(name: &str) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .args([
            "run",
            "--quiet",
            "--release",
            "-p",
            "xtask",
            "--",
            "bench",
            name,
            "--inner",
        ])
        .current_dir(crate::project_root())
        .status()
        .context("running the release build of the benchmark")?;
    if !status.success() {
        bail!("the release benchmark failed: {status}");
    }
    Ok(())
}

/// A deterministic PRNG (SplitMix64), so every run of a benchmark measures the same input.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub(crate) fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items
            .get(self.below(items.len()))
            .copied()
            .unwrap_or_default()
    }

    pub(crate) fn alphanumeric(&mut self, len: usize) -> String {
        const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        (0..len)
            .map(|_| char::from(CHARS.get(self.below(CHARS.len())).copied().unwrap_or(b'a')))
            .collect()
    }

    pub(crate) fn base64(&mut self, len: usize) -> String {
        const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        (0..len)
            .map(|_| char::from(CHARS.get(self.below(CHARS.len())).copied().unwrap_or(b'A')))
            .collect()
    }
}
