//! `cargo xtask bench search`: `memory_search` latency over a memory root of 100,000 blocks, and
//! the cost of re-indexing one changed file.
//!
//! `cargo xtask` builds xtask in debug, so this command re-runs itself in release
//! (`cargo run --release -p xtask -- bench search --inner`) and only the inner run measures.
//!
//! The root is generated with a fixed seed: a handbook (`MEMORY.md`, 10,000 blocks) and 4,500
//! session summaries (`rollout_summaries/`, 20 blocks each), words drawn with a skewed
//! frequency so common words hit many blocks and rare ones few. Each query goes through
//! [`Introspector::search`], the function behind the `memory_search` tool, so the figures
//! include what every search pays: the scan of the root, the incremental refresh, the FTS5
//! query and the snippets.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use memory_introspect::{IntrospectConfig, Introspector};
use memory_protocol::introspect::{MemoryIndexState, MemorySearchRequest};

use super::Rng;

/// Blocks in the handbook.
const HANDBOOK_BLOCKS: usize = 10_000;
/// Session summaries, and blocks in each.
const SUMMARIES: usize = 4_500;
const SUMMARY_BLOCKS: usize = 20;
/// Distinct queries, and timed passes over them.
const QUERIES: usize = 200;
const PASSES: usize = 5;
/// Re-index samples (one changed file each) and unchanged samples to compare with.
const REINDEX_SAMPLES: usize = 30;
/// The target: p99 of two-word queries, and re-indexing one changed file.
const TARGET_P99_MS: f64 = 10.0;

pub(crate) fn run(args: &[&str]) -> Result<()> {
    if args == ["--inner"] {
        return measure();
    }
    if !args.is_empty() {
        bail!("usage: cargo xtask bench search");
    }
    super::rerun_in_release("search")
}

fn measure() -> Result<()> {
    let home = tempfile::tempdir().context("creating a temporary home")?;
    let root = home.path().join("memories");
    let mut rng = Rng(0x5EA2_C4ED);
    let vocabulary = Vocabulary::new(&mut rng);
    let corpus = write_root(&root, &vocabulary, &mut rng)?;
    let memory = Introspector::open(home.path(), IntrospectConfig::default())?;

    let started = Instant::now();
    let status = memory.status();
    let build = started.elapsed();
    ensure!(
        status.index.state == MemoryIndexState::Fresh,
        "the index is {:?}: {:?}",
        status.index.state,
        status.index.problem
    );
    println!(
        "root: {} files, {:.1} MB, {} blocks indexed (written {}); first index build {:.0} ms",
        status.index.files,
        corpus.bytes as f64 / 1e6,
        status.index.blocks,
        corpus.blocks,
        ms(build)
    );
    ensure!(
        status.index.blocks == corpus.blocks as u64,
        "the index holds {} blocks, the generator wrote {}",
        status.index.blocks,
        corpus.blocks
    );

    let queries = queries(&corpus.paragraphs, &vocabulary, &mut rng);
    // One untimed pass warms the page cache and SQLite's.
    let mut hits = 0usize;
    for query in &queries {
        hits += search(&memory, query)?;
    }
    // Every query runs once per pass; its figure is its best pass, because the machine is
    // shared and a preempted call measures the neighbours, not the search. The raw samples'
    // percentiles are printed too.
    let mut by_query = vec![Duration::MAX; queries.len()];
    let mut raw = Vec::with_capacity(queries.len() * PASSES);
    for _ in 0..PASSES {
        for (best, query) in by_query.iter_mut().zip(&queries) {
            let started = Instant::now();
            search(&memory, query)?;
            let elapsed = started.elapsed();
            raw.push(elapsed);
            *best = (*best).min(elapsed);
        }
    }
    raw.sort();
    let mut pairs_p99 = Duration::ZERO;
    for (kind, name) in ["single words", "word pairs", "quoted phrases"]
        .into_iter()
        .enumerate()
    {
        let mut times: Vec<Duration> = by_query
            .iter()
            .enumerate()
            .filter(|(index, _)| query_kind(*index) == kind)
            .map(|(_, time)| *time)
            .collect();
        times.sort();
        if kind == 1 {
            pairs_p99 = percentile(&times, 99);
        }
        let mut slowest: Vec<(Duration, &str)> = by_query
            .iter()
            .zip(&queries)
            .enumerate()
            .filter(|(index, _)| query_kind(*index) == kind)
            .map(|(_, (time, query))| (*time, query.as_str()))
            .collect();
        slowest.sort();
        let listed: Vec<String> = slowest
            .iter()
            .rev()
            .take(3)
            .map(|(time, query)| format!("{query} {:.2} ms", ms(*time)))
            .collect();
        println!(
            "  {name}: p50 {:.2} ms, p99 {:.2} ms; slowest: {}",
            ms(percentile(&times, 50)),
            ms(percentile(&times, 99)),
            listed.join(", ")
        );
    }
    let mut sorted = by_query.clone();
    sorted.sort();
    let (p50, p99) = (percentile(&sorted, 50), percentile(&sorted, 99));
    println!(
        "memory_search, {} queries, each its best of {PASSES} passes ({:.1} hits per query, at \
         most 10): p50 {:.2} ms, p99 {:.2} ms; word pairs p99 {:.2} ms (target <= \
         {TARGET_P99_MS} ms: {}); all {} samples: p50 {:.2} ms, p99 {:.2} ms",
        queries.len(),
        hits as f64 / queries.len() as f64,
        ms(p50),
        ms(p99),
        ms(pairs_p99),
        if ms(pairs_p99) <= TARGET_P99_MS {
            "met"
        } else {
            "not met"
        },
        raw.len(),
        ms(percentile(&raw, 50)),
        ms(percentile(&raw, 99)),
    );

    // Re-indexing one changed file: the first call after a summary grew by one paragraph, set
    // against the same call when nothing changed. Interleaved so drift hits both alike.
    let mut changed = Vec::with_capacity(REINDEX_SAMPLES);
    let mut unchanged = Vec::with_capacity(REINDEX_SAMPLES);
    for sample in 0..REINDEX_SAMPLES {
        let file = root.join(summary_name(sample * 7 % SUMMARIES));
        let mut text = std::fs::read_to_string(&file)?;
        text.push_str(&format!("\n{}\n", vocabulary.sentence(&mut rng, 20, 40)));
        std::fs::write(&file, text)?;
        let started = Instant::now();
        let status = memory.status();
        changed.push(started.elapsed());
        ensure!(
            status.index.reindexed_files == 1,
            "expected one re-indexed file, got {}",
            status.index.reindexed_files
        );
        let started = Instant::now();
        let status = memory.status();
        unchanged.push(started.elapsed());
        ensure!(status.index.reindexed_files == 0, "nothing changed");
    }
    changed.sort();
    unchanged.sort();
    let (changed, unchanged) = (percentile(&changed, 50), percentile(&unchanged, 50));
    let reindex_one = changed.saturating_sub(unchanged);
    println!(
        "re-index one changed file (21 blocks): memory_status {:.2} ms after the change, \
         {:.2} ms with nothing changed (medians of {REINDEX_SAMPLES}): {:.2} ms for the file",
        ms(changed),
        ms(unchanged),
        ms(reindex_one)
    );

    // What a search pays right after the write path replaced a summary (a temporary file
    // renamed into place): the folder's new modification time makes the search list it again
    // and re-index the file. The search after it lists the folder again too (it changed under
    // 2 s before), without a file to re-index.
    let rare = vocabulary
        .words
        .get(4_000)
        .map_or("", String::as_str)
        .to_owned();
    let mut after_rename = Vec::with_capacity(REINDEX_SAMPLES);
    let mut next = Vec::with_capacity(REINDEX_SAMPLES);
    for sample in 0..REINDEX_SAMPLES {
        let file = root.join(summary_name((sample * 7 + 3) % SUMMARIES));
        let mut text = std::fs::read_to_string(&file)?;
        text.push_str(&format!("\n{}\n", vocabulary.sentence(&mut rng, 20, 40)));
        let temp = file.with_file_name(".incoming.tmp");
        std::fs::write(&temp, text)?;
        std::fs::rename(&temp, &file)?;
        let started = Instant::now();
        search(&memory, &rare)?;
        after_rename.push(started.elapsed());
        let started = Instant::now();
        search(&memory, &rare)?;
        next.push(started.elapsed());
    }
    after_rename.sort();
    next.sort();
    println!(
        "memory_search `{rare}` right after a summary was renamed into place: {:.2} ms, the \
         next search {:.2} ms (medians of {REINDEX_SAMPLES})",
        ms(percentile(&after_rename, 50)),
        ms(percentile(&next, 50))
    );
    println!(
        "BENCH search blocks={} p50_ms={:.2} p99_ms={:.2} pairs_p99_ms={:.2} reindex_one_ms={:.2}",
        corpus.blocks,
        ms(p50),
        ms(p99),
        ms(pairs_p99),
        ms(reindex_one)
    );
    Ok(())
}

fn search(memory: &Introspector, query: &str) -> Result<usize> {
    let request = MemorySearchRequest {
        query: query.to_owned(),
        path: None,
        max_results: None,
    };
    let result = memory
        .search(&request)
        .map_err(|failure| anyhow::anyhow!("search `{query}` failed: {:?}", failure.error))?;
    Ok(result.hits.len())
}

fn percentile(sorted: &[Duration], percent: usize) -> Duration {
    let rank = (sorted.len() * percent).div_ceil(100).max(1) - 1;
    sorted.get(rank).copied().unwrap_or_default()
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

// ----- The generated root ---------------------------------------------------------------------

/// Words of the generated memory: technical words, then made-up identifiers, drawn with a
/// skew toward the front so some words are common and most are rare.
struct Vocabulary {
    words: Vec<String>,
}

const COMMON: &[&str] = &[
    "the",
    "build",
    "test",
    "fails",
    "when",
    "config",
    "cargo",
    "release",
    "branch",
    "user",
    "prefers",
    "memory",
    "index",
    "search",
    "token",
    "budget",
    "session",
    "server",
    "client",
    "database",
    "migration",
    "schema",
    "timeout",
    "retry",
    "deploy",
    "staging",
    "production",
    "parser",
    "error",
    "warning",
    "lint",
    "format",
    "commit",
    "review",
    "merge",
    "rebase",
    "docker",
    "kubernetes",
    "python",
    "rust",
    "typescript",
    "workspace",
    "crate",
    "module",
    "function",
    "struct",
    "trait",
    "async",
    "thread",
    "lock",
    "cache",
    "queue",
    "worker",
    "job",
    "log",
    "trace",
    "metric",
    "alert",
    "flaky",
    "slow",
    "fast",
    "memory_summary",
    "handbook",
];

impl Vocabulary {
    fn new(rng: &mut Rng) -> Vocabulary {
        let mut words: Vec<String> = COMMON.iter().map(|word| (*word).to_owned()).collect();
        const SYLLABLES: &[&str] = &[
            "ka", "to", "ri", "mo", "zen", "ul", "bra", "vi", "qo", "ste", "lan", "dor", "fi",
            "nux", "pe", "gar", "hol", "ix", "ja", "wen",
        ];
        while words.len() < 5_000 {
            let parts = 2 + rng.below(3);
            let word: String = (0..parts).map(|_| rng.pick(SYLLABLES)).collect();
            words.push(word);
        }
        Vocabulary { words }
    }

    /// A word, skewed toward the front of the list (a cubic draw: a quarter of the draws come
    /// from the first 1.6% of the words).
    fn word(&self, rng: &mut Rng) -> &str {
        let unit = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        let index = (unit * unit * unit * self.words.len() as f64) as usize;
        self.words
            .get(index.min(self.words.len() - 1))
            .map_or("", String::as_str)
    }

    fn sentence(&self, rng: &mut Rng, min: usize, max: usize) -> String {
        let count = min + rng.below(max - min + 1);
        let words: Vec<&str> = (0..count).map(|_| self.word(rng)).collect();
        format!("{}.", words.join(" "))
    }
}

/// What the generator wrote.
struct Corpus {
    blocks: usize,
    bytes: usize,
    /// Every paragraph, for drawing phrase queries that exist.
    paragraphs: Vec<String>,
}

fn summary_name(index: usize) -> String {
    format!(
        "rollout_summaries/2026-03-{:02}-session-{index:04}.md",
        1 + index % 28
    )
}

/// Writes the handbook and the summaries. Each block is a heading line with one paragraph
/// under it, or one paragraph alone, separated by blank lines (a block per paragraph).
fn write_root(root: &Path, vocabulary: &Vocabulary, rng: &mut Rng) -> Result<Corpus> {
    std::fs::create_dir_all(root.join("rollout_summaries"))?;
    let mut corpus = Corpus {
        blocks: 0,
        bytes: 0,
        paragraphs: Vec::new(),
    };
    let mut write = |rel: String, title: String, blocks: usize, rng: &mut Rng| -> Result<()> {
        let mut text = format!("# {title}\n");
        for block in 0..blocks {
            let paragraph = vocabulary.sentence(rng, 12, 60);
            if block % 5 == 0 {
                text.push_str(&format!(
                    "\n## {} {}\n",
                    vocabulary.word(rng),
                    vocabulary.word(rng)
                ));
            } else {
                text.push('\n');
            }
            text.push_str(&paragraph);
            text.push('\n');
            corpus.paragraphs.push(paragraph);
        }
        corpus.blocks += blocks;
        corpus.bytes += text.len();
        std::fs::write(root.join(rel), text)?;
        Ok(())
    };
    // The title line and the first section heading each start a block of their own, so the
    // title is folded into the count by writing one paragraph fewer.
    write(
        "MEMORY.md".to_owned(),
        "Handbook".to_owned(),
        HANDBOOK_BLOCKS - 1,
        rng,
    )?;
    for index in 0..SUMMARIES {
        write(
            summary_name(index),
            format!("Session {index}"),
            SUMMARY_BLOCKS - 1,
            rng,
        )?;
    }
    // The title lines are blocks too.
    corpus.blocks += 1 + SUMMARIES;
    Ok(corpus)
}

/// Query `index` is a single word (0), a word pair (1) or a quoted phrase (2): two in five of
/// each of the first two kinds, one in five phrases.
fn query_kind(index: usize) -> usize {
    match index % 5 {
        0 | 1 => 0,
        2 | 3 => 1,
        _ => 2,
    }
}

/// Single words, word pairs (every word must appear) and quoted phrases taken from the corpus.
fn queries(paragraphs: &[String], vocabulary: &Vocabulary, rng: &mut Rng) -> Vec<String> {
    (0..QUERIES)
        .map(|index| match query_kind(index) {
            0 => vocabulary.word(rng).to_owned(),
            1 => format!("{} {}", vocabulary.word(rng), vocabulary.word(rng)),
            _ => {
                let paragraph = paragraphs
                    .get(rng.below(paragraphs.len()))
                    .map_or("", String::as_str);
                let words: Vec<&str> = paragraph.trim_end_matches('.').split(' ').collect();
                let start = rng.below(words.len().saturating_sub(1));
                let phrase = words.get(start..start + 2).unwrap_or(&words[..]).join(" ");
                format!("\"{phrase}\"")
            }
        })
        .collect()
}
