//! `cargo xtask bench redact-fp <dir>...`: false positives of secret redaction on real source
//! code, as changed lines per MB, per language.
//!
//! Every `.rs`, `.py`, `.js`/`.mjs`/`.cjs`/`.ts`/`.tsx`/`.jsx` file under the given folders
//! (sorted, symbolic links not followed) is redacted whole with `memory_sanitize`, and every
//! source line that a replaced span touches counts as changed. Package sources hold almost no
//! real secrets, so each changed line is a false positive unless the sample shows otherwise; the
//! sample (`--sample N` per language, default 25) prints them, as redaction leaves them, for
//! review.
//!
//! Like `bench sanitize`, the command re-runs itself in release and only the inner run measures.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use memory_sanitize::redact::secret_spans;

const USAGE: &str = "usage: cargo xtask bench redact-fp [--sample N] <dir>...";

pub(crate) fn run(args: &[&str]) -> Result<()> {
    if args.first() == Some(&"--inner") {
        return measure(args.get(1..).unwrap_or_default());
    }
    if args.is_empty() {
        bail!(USAGE);
    }
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
            "redact-fp",
            "--inner",
        ])
        .args(args)
        .current_dir(crate::project_root())
        .status()
        .context("running the release build of the benchmark")?;
    if !status.success() {
        bail!("the release benchmark failed: {status}");
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Language {
    Rust,
    Python,
    JavaScript,
}

impl Language {
    fn of(path: &Path) -> Option<Language> {
        match path.extension()?.to_str()? {
            "rs" => Some(Language::Rust),
            "py" => Some(Language::Python),
            "js" | "mjs" | "cjs" | "ts" | "tsx" | "jsx" => Some(Language::JavaScript),
            _ => None,
        }
    }

    fn key(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::JavaScript => "js",
        }
    }
}

#[derive(Debug, Default)]
struct Tally {
    files: usize,
    bytes: usize,
    lines: usize,
    changed: usize,
    samples: Vec<String>,
}

fn measure(args: &[&str]) -> Result<()> {
    let mut sample_limit = 25;
    let mut dirs = Vec::new();
    let mut rest = args.iter();
    while let Some(&arg) = rest.next() {
        if arg == "--sample" {
            sample_limit = rest.next().and_then(|n| n.parse().ok()).context(USAGE)?;
        } else {
            dirs.push(PathBuf::from(arg));
        }
    }
    if dirs.is_empty() {
        bail!(USAGE);
    }
    let mut files = Vec::new();
    for dir in &dirs {
        collect(dir, &mut files).with_context(|| format!("listing {}", dir.display()))?;
    }
    files.sort();
    files.dedup();
    let started = Instant::now();
    let mut tallies: BTreeMap<Language, Tally> = BTreeMap::new();
    for path in &files {
        let Some(language) = Language::of(path) else {
            continue;
        };
        let Ok(text) = std::fs::read(path) else {
            continue;
        };
        let tally = tallies.entry(language).or_default();
        tally.files += 1;
        tally.bytes += text.len();
        tally.lines += text.iter().filter(|&&b| b == b'\n').count() + 1;
        let spans = secret_spans(&text);
        if spans.is_empty() {
            continue;
        }
        // Line starts, to turn spans into the lines they touch.
        let mut starts = vec![0];
        starts.extend(
            text.iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1),
        );
        let mut touched: Vec<usize> = Vec::new();
        for (start, end) in &spans {
            let first = starts.partition_point(|&s| s <= *start).saturating_sub(1);
            let last = starts
                .partition_point(|&s| s < *end)
                .saturating_sub(1)
                .max(first);
            touched.extend(first..=last);
        }
        touched.sort_unstable();
        touched.dedup();
        tally.changed += touched.len();
        for line in touched {
            if tally.samples.len() >= sample_limit {
                break;
            }
            let from = starts.get(line).copied().unwrap_or_default();
            let to = starts.get(line + 1).map_or(text.len(), |s| s - 1);
            // The line as redaction leaves it, from a little before the first replacement.
            let mut redacted = Vec::new();
            let mut at = from;
            let mut first_marker = None;
            for &(start, end) in &spans {
                if end <= from || start >= to {
                    continue;
                }
                let start = start.max(from);
                redacted.extend_from_slice(text.get(at..start).unwrap_or_default());
                first_marker.get_or_insert(redacted.len());
                redacted.extend_from_slice(b"[REDACTED_SECRET]");
                at = end.min(to).max(start);
            }
            redacted.extend_from_slice(text.get(at..to).unwrap_or_default());
            let skip = first_marker.unwrap_or(0).saturating_sub(60);
            let content = String::from_utf8_lossy(redacted.get(skip..).unwrap_or_default());
            let content: String = content.trim().chars().take(160).collect();
            tally
                .samples
                .push(format!("{}:{}: {content}", path.display(), line + 1));
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let mut bench = String::from("BENCH redact-fp");
    let total_mb: f64 = tallies.values().map(|t| t.bytes as f64 / 1e6).sum();
    println!(
        "scanned {} files, {total_mb:.1} MB in {elapsed:.1} s ({:.0} MB/s)",
        tallies.values().map(|t| t.files).sum::<usize>(),
        total_mb / elapsed.max(1e-9)
    );
    println!("| language | files | MB | lines | changed lines | per MB |");
    println!("|---|---|---|---|---|---|");
    for (language, tally) in &tallies {
        let mb = tally.bytes as f64 / 1e6;
        let per_mb = tally.changed as f64 / mb.max(1e-9);
        println!(
            "| {} | {} | {mb:.1} | {} | {} | {per_mb:.2} |",
            language.key(),
            tally.files,
            tally.lines,
            tally.changed
        );
        bench.push_str(&format!(
            " {key}_mb={mb:.1} {key}_changed={} {key}_per_mb={per_mb:.3}",
            tally.changed,
            key = language.key()
        ));
    }
    for (language, tally) in &tallies {
        println!("\nsample of changed lines ({}):", language.key());
        for sample in &tally.samples {
            println!("  {sample}");
        }
    }
    println!("{bench}");
    Ok(())
}

/// Every file under `dir` with a language extension, not following symbolic links.
fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() && Language::of(&path).is_some() {
                files.push(path);
            }
        }
    }
    Ok(())
}
