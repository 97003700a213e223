//! `cargo xtask bench sanitize`: throughput of memory-sanitize on a generated rollout-shaped
//! corpus of about 100 MB.
//!
//! `cargo xtask` builds xtask in debug, so this command re-runs itself in release
//! (`cargo run --release -p xtask -- bench sanitize --inner`) and only the inner run measures.
//!
//! Figures, each the best of a few runs, with ratios from the same run:
//! - (a) `serde_json` parsing of every line into a `Value`, the floor;
//! - (b) read, filter, serialize and redact through the public API;
//! - (c) redaction alone over the whole corpus;
//! - (d) exact o200k counting of a 1.4 M-character text;
//! - (e) truncating that text to 150 k tokens (bytes/4 estimate; the exact counter is shown too).
//!
//! The last line also gives `kinds`, the number of secret kinds the redaction rules cover.

use std::hint::black_box;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use memory_sanitize::{
    ByteEstimate, TokenCounter, TruncationPolicy, o200k, redact_secrets, truncate_middle,
};
use memory_transcript::{ReaderOptions, filter_for_memory, read_rollout, serialize_for_memory};
use serde_json::{Value, json};

use super::Rng;

const CORPUS_BYTES: usize = 100 << 20;
const TRUNCATE_CHARS: usize = 1_400_000;
const TRUNCATE_TOKENS: usize = 150_000;
const RUNS: usize = 3;

pub(crate) fn run(args: &[&str]) -> Result<()> {
    match args {
        ["--inner"] => measure(),
        [] => super::rerun_in_release("sanitize"),
        _ => bail!("usage: cargo xtask bench sanitize"),
    }
}

fn measure() -> Result<()> {
    let started = Instant::now();
    let corpus = Corpus::generate(CORPUS_BYTES);
    let mb = corpus.text.len() as f64 / 1e6;
    println!(
        "corpus: {mb:.1} MB, {} lines, {} planted secrets (generated in {:.1} s)",
        corpus.lines,
        corpus.secrets,
        started.elapsed().as_secs_f64()
    );

    // (a) and (b), interleaved so drift on the shared machine hits both alike.
    let mut parse = Duration::MAX;
    let mut pipeline = Duration::MAX;
    let mut kept_bytes = 0;
    for _ in 0..RUNS {
        parse = parse.min(time(|| {
            let mut parsed = 0usize;
            for line in corpus.text.lines() {
                if serde_json::from_str::<Value>(line).is_ok() {
                    parsed += 1;
                }
            }
            black_box(parsed);
        }));
        pipeline = pipeline.min(time(|| {
            let read = read_rollout(corpus.text.as_bytes(), &ReaderOptions::default());
            let kept = filter_for_memory(read.items());
            let serialized = serialize_for_memory(&kept);
            let redacted = redact_secrets(&serialized);
            kept_bytes = redacted.len();
            black_box(redacted);
        }));
    }
    let parse_mb_s = mb / parse.as_secs_f64();
    let pipeline_mb_s = mb / pipeline.as_secs_f64();
    println!("(a) serde_json parse, every line:        {parse_mb_s:8.1} MB/s");
    println!(
        "(b) read + filter + serialize + redact:  {pipeline_mb_s:8.1} MB/s  ({:.0}% of (a); kept {:.1} MB)",
        100.0 * pipeline_mb_s / parse_mb_s,
        kept_bytes as f64 / 1e6
    );

    // Where (b) spends its time.
    let read_time = best_of(|| {
        black_box(read_rollout(
            corpus.text.as_bytes(),
            &ReaderOptions::default(),
        ));
    });
    let read = read_rollout(corpus.text.as_bytes(), &ReaderOptions::default());
    let started = Instant::now();
    let kept = filter_for_memory(read.items());
    let filter_time = started.elapsed();
    let mut serialized = String::new();
    let serialize_time = best_of(|| serialized = serialize_for_memory(&kept));
    let redact_kept_time = best_of(|| {
        black_box(redact_secrets(&serialized));
    });
    println!(
        "    of which: read {:.0} ms, filter {:.0} ms, serialize {:.0} ms, redact {:.0} ms ({:.0} MB/s on the kept {:.1} MB)",
        ms(read_time),
        ms(filter_time),
        ms(serialize_time),
        ms(redact_kept_time),
        serialized.len() as f64 / 1e6 / redact_kept_time.as_secs_f64(),
        serialized.len() as f64 / 1e6
    );

    // (c) redaction alone, over the whole corpus.
    let mut redacted_len = 0;
    let redact = best_of(|| {
        let out = redact_secrets(&corpus.text);
        redacted_len = out.len();
        black_box(out);
    });
    let redact_mb_s = mb / redact.as_secs_f64();
    println!(
        "(c) redact_secrets, whole corpus:        {redact_mb_s:8.1} MB/s  ({} bytes shorter)",
        corpus.text.len().saturating_sub(redacted_len)
    );

    // (d) and (e) on the same 1.4 M-character text: the head of the serialized memory material.
    let text: String = serialized.chars().take(TRUNCATE_CHARS).collect();
    let text_mb = text.len() as f64 / 1e6;
    let _ = o200k().count("warm up");
    let mut tokens = 0;
    let count = best_of(|| tokens = black_box(o200k().count(&text)));
    let count_mb_s = text_mb / count.as_secs_f64();
    println!(
        "(d) o200k count (bpe-openai), {TRUNCATE_CHARS} chars: {:7.1} ms, {count_mb_s:.1} MB/s, {tokens} tokens",
        ms(count)
    );
    let truncate = best_of(|| {
        black_box(truncate_middle(
            &text,
            TruncationPolicy::Tokens(TRUNCATE_TOKENS),
            &ByteEstimate,
        ));
    });
    let truncate_exact = best_of(|| {
        black_box(truncate_middle(
            &text,
            TruncationPolicy::Tokens(TRUNCATE_TOKENS),
            o200k(),
        ));
    });
    let truncate_vs_count = truncate.as_secs_f64() / count.as_secs_f64();
    println!(
        "(e) truncate to {TRUNCATE_TOKENS} tokens, bytes/4 estimate: {:7.2} ms ({:.2}% of (d))",
        ms(truncate),
        100.0 * truncate_vs_count
    );
    println!(
        "    truncate to {TRUNCATE_TOKENS} tokens, exact o200k:     {:7.2} ms ({:.0}% of (d); counts the kept part)",
        ms(truncate_exact),
        100.0 * truncate_exact.as_secs_f64() / count.as_secs_f64()
    );

    compare_tokenizers(&text);

    println!(
        "BENCH sanitize parse_mb_s={parse_mb_s:.1} pipeline_mb_s={pipeline_mb_s:.1} \
         pipeline_vs_parse={:.3} redact_mb_s={redact_mb_s:.1} count_mb_s={count_mb_s:.1} \
         truncate_vs_count={truncate_vs_count:.4} kinds={}",
        pipeline_mb_s / parse_mb_s,
        memory_sanitize::redact::rules().count()
    );
    Ok(())
}

/// tiktoken-rs against bpe-openai (the counter kept), on the same text and on pathological input.
fn compare_tokenizers(text: &str) {
    let tiktoken = tiktoken_rs::o200k_base_singleton();
    let _ = tiktoken.encode_ordinary("warm up");
    let mut tiktoken_tokens = 0;
    let tiktoken_time =
        best_of(|| tiktoken_tokens = black_box(tiktoken.encode_ordinary(text).len()));
    let bpe_tokens = o200k().count(text);
    println!(
        "    tiktoken-rs on the same text: {:7.1} ms, {:.1} MB/s, {tiktoken_tokens} tokens (bpe-openai: {bpe_tokens})",
        ms(tiktoken_time),
        text.len() as f64 / 1e6 / tiktoken_time.as_secs_f64()
    );
    let cases: [(&str, String); 3] = [
        ("1 MiB of spaces", " ".repeat(1 << 20)),
        ("1 MiB of `-`", "-".repeat(1 << 20)),
        ("10 MiB line without whitespace", "ab1_".repeat(10 << 18)),
    ];
    for (name, input) in &cases {
        let started = Instant::now();
        let bpe = o200k().count(input);
        let bpe_time = started.elapsed();
        let started = Instant::now();
        // tiktoken-rs panics on some of these (a regex backtracking limit); report it.
        let previous_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let tiktoken_result =
            catch_unwind(AssertUnwindSafe(|| tiktoken.encode_ordinary(input).len()));
        std::panic::set_hook(previous_hook);
        let tiktoken_time = started.elapsed();
        let tiktoken_text = match tiktoken_result {
            Ok(tokens) => format!("{:.0} ms ({tokens} tokens)", ms(tiktoken_time)),
            Err(_) => "panicked".to_owned(),
        };
        println!(
            "    {name}: bpe-openai {:.0} ms ({bpe} tokens); tiktoken-rs {tiktoken_text}",
            ms(bpe_time)
        );
    }
}

fn time(mut f: impl FnMut()) -> Duration {
    let started = Instant::now();
    f();
    started.elapsed()
}

fn best_of(mut f: impl FnMut()) -> Duration {
    (0..RUNS)
        .map(|_| time(&mut f))
        .min()
        .unwrap_or(Duration::MAX)
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

// ----- Corpus ---------------------------------------------------------------------------------

const PROSE: &[&str] = &[
    "the", "parser", "fails", "when", "input", "is", "empty", "so", "I", "will", "check", "tests",
    "and", "then", "update", "config", "token", "budget", "for", "memory", "we", "should", "keep",
    "a", "small", "commit", "because", "review", "is", "easier", "build", "error", "in", "crate",
    "module", "function", "returns", "result", "with", "context", "password", "reset", "flow",
    "works", "now", "after", "fixing", "the", "lifetime", "issue", "secret", "rotation", "docs",
];

const CODE: &[&str] = &[
    "fn parse_line(input: &str) -> Result<Line, Error> {",
    "    let token = lexer.next_token()?;",
    "    if input.is_empty() { return Ok(Line::default()); }",
    "    let cfg = Config::load(&path).context(\"loading config\")?;",
    "    for (index, item) in items.iter().enumerate() {",
    "        total += item.len() * 2;",
    "    }",
    "    Ok(Line { text: input.to_owned(), number })",
    "}",
    "#[derive(Debug, Clone, PartialEq)]",
    "pub struct Session { id: Uuid, started: Timestamp, password_hash: String }",
    "import { useState } from 'react';",
    "const apiKey = process.env.API_KEY;",
    "def load_settings(path):",
    "    with open(path) as f: return json.load(f)",
    "SELECT id, name FROM users WHERE created_at > now() - interval '1 day';",
];

const LOGS: &[&str] = &[
    "   Compiling memory-sanitize v0.0.0 (/home/alice/proj/crates/memory-sanitize)",
    "    Finished `test` profile [unoptimized + debuginfo] target(s) in 12.34s",
    "test reader::tests::crlf_and_blank_lines_are_accepted ... ok",
    "test parse_empty ... FAILED",
    "error[E0308]: mismatched types --> src/parser.rs:42:17",
    "2026-05-01T10:00:09.123Z INFO server listening on 127.0.0.1:8080",
    "warning: unused variable: `token` --> src/lib.rs:10:9",
    "npm WARN deprecated request@2.88.2: request has been deprecated",
    "Cloning into 'repo'... done. HEAD is now at 3f2c9a1e5b7d fix parser",
];

const SECRETS: &[&str] = &[
    "export GITHUB_TOKEN=ghp_",
    "OPENAI_API_KEY=sk-proj-",
    "Authorization: Bearer ",
    "postgres://app:S3cretPassw0rd@db.internal:5432/app ",
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE ",
];

struct Corpus {
    text: String,
    lines: usize,
    secrets: usize,
}

impl Corpus {
    fn generate(target_bytes: usize) -> Corpus {
        let mut rng = Rng(0x5EED_CAFE);
        let mut corpus = Corpus {
            text: String::with_capacity(target_bytes + (1 << 20)),
            lines: 0,
            secrets: 0,
        };
        corpus.push(
            json!({"timestamp": "2026-05-01T10:00:00.000Z", "type": "session_meta",
            "payload": {"id": "0196a1b2-0000-7000-8000-000000000001", "cwd": "/home/alice/proj",
                        "originator": "codex_cli_rs", "cli_version": "0.148.0", "source": "cli",
                        "model_provider": "openai"}}),
        );
        let mut turn = 0;
        while corpus.text.len() < target_bytes {
            turn += 1;
            corpus.turn(&mut rng, turn);
        }
        corpus
    }

    fn push(&mut self, line: Value) {
        self.text.push_str(&line.to_string());
        self.text.push('\n');
        self.lines += 1;
    }

    fn item(&mut self, payload: Value) {
        self.push(
            json!({"timestamp": "2026-05-01T10:00:01.000Z", "type": "response_item",
                         "payload": payload}),
        );
    }

    fn event(&mut self, payload: Value) {
        self.push(
            json!({"timestamp": "2026-05-01T10:00:01.000Z", "type": "event_msg",
                         "payload": payload}),
        );
    }

    /// `min` to `min + extra` words of `pool`, sometimes followed by a secret.
    fn text_of(
        &mut self,
        rng: &mut Rng,
        pool: &[&str],
        (min, extra): (usize, usize),
        sep: &str,
    ) -> String {
        let words = min + rng.below(extra);
        let mut out = String::new();
        for i in 0..words {
            if i > 0 {
                out.push_str(sep);
            }
            out.push_str(rng.pick(pool));
        }
        if rng.below(400) == 0 {
            self.secrets += 1;
            out.push_str(sep);
            out.push_str(rng.pick(SECRETS));
            out.push_str(&rng.alphanumeric(36));
        }
        out
    }

    fn turn(&mut self, rng: &mut Rng, turn: usize) {
        self.push(
            json!({"timestamp": "2026-05-01T10:00:00.500Z", "type": "turn_context",
            "payload": {"cwd": "/home/alice/proj", "model": "gpt-5", "approval_policy": "never",
                        "sandbox_policy": {"type": "workspace-write"}, "summary": "auto"}}),
        );
        let ask = self.text_of(rng, PROSE, (20, 200), " ");
        self.item(json!({"type": "message", "role": "user",
                         "content": [{"type": "input_text", "text": ask}]}));
        self.event(json!({"type": "user_message", "message": ask, "kind": "plain"}));
        for call in 0..1 + rng.below(6) {
            let thinking = self.text_of(rng, PROSE, (10, 40), " ");
            let encrypted_len = 2000 + rng.below(8000);
            self.item(json!({"type": "reasoning",
                "summary": [{"type": "summary_text", "text": thinking}],
                "encrypted_content": format!("gAAAAB{}", rng.base64(encrypted_len))}));
            let call_id = format!("call_{turn}_{call}");
            let command = self.text_of(
                rng,
                &[
                    "cargo", "test", "-p", "parser", "rg", "--json", "token", "src/", "git",
                    "diff", "ls", "-la",
                ],
                (2, 6),
                " ",
            );
            self.item(json!({"type": "function_call", "name": "exec_command",
                "arguments": json!({"cmd": command, "workdir": "/home/alice/proj",
                                    "timeout_ms": 120000}).to_string(),
                "call_id": call_id}));
            let output = if rng.below(2) == 0 {
                self.text_of(rng, CODE, (10, 300), "\n")
            } else {
                self.text_of(rng, LOGS, (10, 300), "\n")
            };
            self.item(json!({"type": "function_call_output", "call_id": call_id,
                             "output": output}));
            self.event(json!({"type": "exec_command_end", "call_id": call_id,
                              "aggregated_output": output, "exit_code": 0}));
        }
        let answer = self.text_of(rng, PROSE, (30, 150), " ");
        self.item(json!({"type": "message", "role": "assistant",
                         "content": [{"type": "output_text", "text": answer}]}));
        self.event(json!({"type": "agent_message", "message": answer}));
        self.event(json!({"type": "token_count", "info": {"total_token_usage":
            {"input_tokens": 12345 + turn, "cached_input_tokens": 1000, "output_tokens": 345}}}));
    }
}
