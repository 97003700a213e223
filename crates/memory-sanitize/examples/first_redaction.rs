//! Times a fresh process's first redaction (engine build included) and the token counter's
//! first count: the fixed start cost every short-lived command and fleet worker pays.
fn main() {
    let started = std::time::Instant::now();
    let text =
        memory_sanitize::redact_secrets("token = ghp_0123456789abcdefABCDEF0123456789abcd here");
    let redaction = started.elapsed();
    let started = std::time::Instant::now();
    let count = memory_sanitize::TokenCounter::count(memory_sanitize::o200k(), "hello world");
    let tokens = started.elapsed();
    println!(
        "first redaction {redaction:?} ({} bytes out); first o200k count {tokens:?} ({count} tokens)",
        text.len()
    );
}
