//! Secret redaction.
//!
//! [`redact_secrets`] replaces every secret it recognizes with [`REDACTED_SECRET`], keeping the
//! context around it (`Bearer [REDACTED_SECRET]`, `"password": "[REDACTED_SECRET]"`) so the text
//! stays readable. The rules are listed with their sources in `docs/secrets.md` and by
//! [`rules`].
//!
//! How it works:
//! - **Segments.** Text is cut into segments of at most 256 KiB at line breaks (raw or
//!   JSON-escaped), so memory stays bounded whatever the input; what spans a cut (a private
//!   key, a YAML block) is carried over, exactly as from one line of a stream to the next.
//! - **Decoded view.** Each segment's backslash escapes, at any nesting depth, are decoded before
//!   matching (`\n`, `\"`, `\/`, `\u002b`, ...), so a secret split by an escape or a private key
//!   inside a JSON string is seen as written; spans map back to the raw bytes.
//! - **Keyword prefilter.** One Aho-Corasick automaton (a DFA, walked as a flat table at four
//!   places of the text at once) finds the rules' keywords in a single pass; a rule's regex then
//!   runs only in a window around each hit, never over the whole text, and not at all when the
//!   window lacks a byte every match of the rule holds. Regexes use ASCII semantics on bytes
//!   (`regex::bytes`, Unicode off), so they run on any input, including invalid UTF-8
//!   ([`redact_bytes`]). The generic assignment rule, whose keywords are everywhere in code, is
//!   matched by hand (`assignment_match.rs`), exactly as its regex would match.
//! - **Context rules** (assignments, headers, flags, URLs) parse the value after a secret-like
//!   name and refuse references, placeholders and code; multi-line values are followed line by
//!   line with a bounded reach.
//!
//! Redaction is idempotent: no rule can match the marker, and a value holding the marker is
//! never redacted again.

mod assignment;
mod assignment_match;
mod checks;
mod decode;
mod engine;
mod keyword_dfa;
mod multiline;
mod required;
mod rules;

use std::borrow::Cow;

use memory_protocol::REDACTED_SECRET;
use serde_json::Value;

use self::assignment::{Strength, key_strength};
use self::checks::{is_placeholder, is_reference, looks_random};
use self::decode::{Buffers, DecodedView};
use self::engine::{ENGINE, normalize_spans};
use self::multiline::Carry;

/// Longest segment redacted at once; longer text is cut at a line break.
const SEGMENT_BYTES: usize = 256 << 10;

/// Replaces every secret in `text` with [`REDACTED_SECRET`]. Returns the input borrowed when it
/// holds no secret.
pub fn redact_secrets(text: &str) -> Cow<'_, str> {
    let spans = secret_spans(text.as_bytes());
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    // Built from slices of `text`, so no pass re-checks the result is UTF-8: replaced spans
    // are widened to character boundaries, so every slice is one; were one not, the bytes path
    // and a lossy conversion give the same text.
    let removed: usize = spans.iter().map(|(start, end)| end - start).sum();
    let mut out = String::with_capacity(text.len() - removed + spans.len() * REDACTED_SECRET.len());
    let mut copied = 0;
    for (start, end) in spans {
        let Some(kept) = text.get(copied..start) else {
            return lossy(text);
        };
        out.push_str(kept);
        out.push_str(REDACTED_SECRET);
        copied = end;
    }
    let Some(rest) = text.get(copied..) else {
        return lossy(text);
    };
    out.push_str(rest);
    Cow::Owned(out)
}

fn lossy(text: &str) -> Cow<'_, str> {
    Cow::Owned(String::from_utf8_lossy(&redact_bytes(text.as_bytes())).into_owned())
}

/// [`redact_secrets`] on bytes that need not be UTF-8 (logs, streams).
pub fn redact_bytes(text: &[u8]) -> Cow<'_, [u8]> {
    redact_with(text, &mut Carry::default())
}

/// The spans of `text` that [`redact_bytes`] replaces, sorted and disjoint: for tests and for
/// callers that want to report what was found rather than rewrite it.
pub fn secret_spans(text: &[u8]) -> Vec<(usize, usize)> {
    let mut carry = Carry::default();
    let mut buffers = Buffers::default();
    let mut spans = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = start + segment_len(text.get(start..).unwrap_or_default(), SEGMENT_BYTES);
        let segment = text.get(start..end).unwrap_or_default();
        spans.extend(
            segment_spans(segment, &mut carry, &mut buffers)
                .into_iter()
                .map(|(s, e)| (start + s, start + e)),
        );
        start = end;
    }
    spans
}

/// Redacts `text` segment by segment, starting from and updating `carry`.
fn redact_with<'a>(text: &'a [u8], carry: &mut Carry) -> Cow<'a, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let mut buffers = Buffers::default();
    let mut start = 0;
    while start < text.len() {
        let end = start + segment_len(text.get(start..).unwrap_or_default(), SEGMENT_BYTES);
        let segment = text.get(start..end).unwrap_or_default();
        let spans = segment_spans(segment, carry, &mut buffers);
        if !spans.is_empty() && out.is_none() {
            let mut buffer = Vec::with_capacity(text.len());
            buffer.extend_from_slice(text.get(..start).unwrap_or_default());
            out = Some(buffer);
        }
        if let Some(out) = out.as_mut() {
            let mut copied = 0;
            for (s, e) in spans {
                out.extend_from_slice(segment.get(copied..s).unwrap_or_default());
                out.extend_from_slice(REDACTED_SECRET.as_bytes());
                copied = e;
            }
            out.extend_from_slice(segment.get(copied..).unwrap_or_default());
        }
        start = end;
    }
    out.map_or(Cow::Borrowed(text), Cow::Owned)
}

/// The raw spans to replace in one segment.
fn segment_spans(raw: &[u8], carry: &mut Carry, buffers: &mut Buffers) -> Vec<(usize, usize)> {
    let view = DecodedView::new_in(raw, std::mem::take(buffers));
    let spans = ENGINE.scan(view.text(), carry);
    // No rule takes a quote into a secret; a raw quote inside a span could only be the
    // structure of the JSON the text came in, which must survive, so spans stop before one.
    let raw_spans = spans
        .into_iter()
        .map(|span| {
            let (start, end) = view.raw_span(span);
            let quote = raw
                .get(start..end)
                .and_then(|bytes| bytes.iter().position(|&b| b == b'"'));
            (start, quote.map_or(end, |at| start + at))
        })
        .collect();
    *buffers = view.into_buffers();
    normalize_spans(raw, raw_spans)
}

/// How many bytes of `rest` to take as the next segment: all of it when short, else a cut in the
/// segment's second half, in order of preference: just after the last line break (raw, or an
/// escaped `\n`), just after the last blank, just before the last quote; else `max` bytes.
/// Secrets never hold a line break or a blank, so no token is cut in two; an open quote or a
/// value still to come is carried over.
fn segment_len(rest: &[u8], max: usize) -> usize {
    if rest.len() <= max {
        return rest.len();
    }
    let half = max / 2;
    let window = rest.get(half..max).unwrap_or_default();
    let cut = window
        .iter()
        .rposition(|&b| b == b'\n')
        .map(|at| at + 1)
        .or_else(|| {
            window
                .windows(2)
                .rposition(|w| w == b"\\n")
                .map(|at| at + 2)
        })
        .or_else(|| {
            window
                .iter()
                .rposition(u8::is_ascii_whitespace)
                .map(|at| at + 1)
        })
        .or_else(|| window.iter().rposition(|&b| b == b'"'))
        .filter(|&at| at > 0);
    cut.map_or(max, |at| half + at)
}

/// Redacts every string in `value` in place: each string leaf is redacted as text, and a string
/// member whose key names a secret (`"password"`, `"api_key"`, `"GITHUB_TOKEN"`, ...) is replaced
/// whole when its value looks like a literal.
pub fn redact_json_strings(value: &mut Value) {
    match value {
        Value::String(text) => {
            if let Cow::Owned(redacted) = redact_secrets(text) {
                *text = redacted;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_json_strings),
        Value::Object(members) => {
            for (key, member) in members.iter_mut() {
                match member {
                    Value::String(text) if json_member_is_secret(key, text) => {
                        *text = REDACTED_SECRET.to_owned();
                    }
                    _ => redact_json_strings(member),
                }
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// True when a key name says its value is a secret (`password`, `db_password`, `api-key`,
/// `GITHUB_TOKEN`, `client_secret`, ...). `max_tokens` or `token_count` are not.
pub fn is_secret_key_name(key: &str) -> bool {
    key_strength(key.as_bytes()) == Some(Strength::Strong)
}

fn json_member_is_secret(key: &str, text: &str) -> bool {
    let value = text.as_bytes();
    let literal = value.len() >= 4
        && text != REDACTED_SECRET
        && !is_reference(value)
        && !is_placeholder(value)
        && !value.iter().any(u8::is_ascii_whitespace);
    match key_strength(key.as_bytes()) {
        Some(Strength::Strong) => literal,
        Some(Strength::Weak) => literal && looks_random(value),
        None => false,
    }
}

/// Redacts a stream line by line, also across lines where a secret spans them: a private key
/// whose `BEGIN` and `END` lines are apart, a YAML block scalar, a quoted value left open, a
/// value on the line after its key, the `data:` block of a Kubernetes `Secret`.
#[derive(Debug, Default)]
pub struct LineRedactor {
    carry: Carry,
}

impl LineRedactor {
    /// A redactor at the start of a stream.
    pub fn new() -> Self {
        LineRedactor::default()
    }

    /// Redacts one line (with or without its line break, which is kept).
    pub fn redact_line<'a>(&mut self, line: &'a [u8]) -> Cow<'a, [u8]> {
        redact_with(line, &mut self.carry)
    }

    /// Redacts the start of a line too long to hold whole: returns how many bytes of `partial`
    /// were consumed and their redacted form. The cut falls at an escaped line break, a blank or
    /// a quote in the second half of `partial` when there is one, so no token is cut in two;
    /// what the rest of the line continues (an open quote, a key body) is carried over. The
    /// caller keeps the unconsumed bytes and appends the next read to them.
    pub fn redact_partial(&mut self, partial: &[u8]) -> (usize, Vec<u8>) {
        if partial.is_empty() {
            return (0, Vec::new());
        }
        let cut = segment_len(partial, partial.len().saturating_sub(1).max(1));
        let head = partial.get(..cut).unwrap_or(partial);
        (cut, redact_with(head, &mut self.carry).into_owned())
    }
}

/// A rule as documented: what it catches and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleInfo {
    /// Stable rule id, such as `github-pat`.
    pub id: &'static str,
    /// What the rule catches.
    pub description: &'static str,
    /// The gitleaks rules and detect-secrets plugins it covers (`gitleaks:<id>`,
    /// `detect-secrets:<Plugin>`), or `ours`.
    pub source: &'static str,
    /// The shape of a match (never a real secret).
    pub shape: &'static str,
    /// A regex generating text the rule must redact, for tests.
    pub sample: &'static str,
    /// The regex capture group that is replaced (0: the whole match).
    pub secret_group: usize,
    /// The rule's regex.
    pub pattern: &'static str,
    /// The documentation section the rule is listed in.
    pub family: &'static str,
    /// True when what is redacted is on the lines after the match (a key body, a vault payload,
    /// a Kubernetes `data:` block) rather than the regex's secret group.
    pub spans_lines: bool,
}

/// Every rule, in the order they are documented.
pub fn rules() -> impl Iterator<Item = RuleInfo> {
    rules::all().map(|rule| RuleInfo {
        id: rule.id,
        description: rule.description,
        source: rule.source,
        shape: rule.shape,
        sample: rule.sample,
        secret_group: rule.secret_group,
        pattern: rule.pattern,
        family: rule.family.name(),
        spans_lines: matches!(
            rule.action,
            rules::Action::PrivateKey | rules::Action::BodyLines | rules::Action::Kubernetes
        ),
    })
}

/// Rules (or the keyword automata) that failed to build, with the reason. Always empty in a
/// correct build; a test checks it. A rule that fails to build is skipped, never a panic.
pub fn rule_errors() -> &'static [String] {
    engine::rule_errors()
}
