//! Secret redaction.
//!
//! [`redact_secrets`] replaces every secret it recognizes with [`REDACTED_SECRET`], keeping the
//! context around it (`Bearer [REDACTED_SECRET]`, `"password": "[REDACTED_SECRET]"`) so the text
//! stays readable. The rules are listed with their sources in `docs/secrets.md` and by
//! [`rules`].
//!
//! How it stays fast: one Aho-Corasick automaton (a DFA, ASCII case-insensitive) finds the
//! rules' keywords in a single pass; a rule's regex then runs only in a window around each keyword hit, never over the whole
//! text. Regexes use ASCII semantics on bytes (`regex::bytes`, Unicode off), which keeps them
//! small and lets them run on any input, including invalid UTF-8 ([`redact_bytes`]).
//!
//! Redaction is idempotent: no rule can match the marker, and a window always extends to the end
//! of a value, so a secret is never cut in two.

mod rules;

use std::borrow::Cow;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use memory_protocol::REDACTED_SECRET;
use regex::bytes::{CaptureLocations, Regex, RegexBuilder};
use serde_json::Value;

use self::rules::{RULES, Rule, SECRET_KEY_NAME};

/// Replaces every secret in `text` with [`REDACTED_SECRET`]. Returns the input borrowed when it
/// holds no secret.
pub fn redact_secrets(text: &str) -> Cow<'_, str> {
    match redact_bytes(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        // Replaced spans are widened to character boundaries and the marker is ASCII, so the
        // result is UTF-8; the lossy path is never taken.
        Cow::Owned(bytes) => Cow::Owned(
            String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        ),
    }
}

/// [`redact_secrets`] on bytes that need not be UTF-8 (logs, streams).
pub fn redact_bytes(text: &[u8]) -> Cow<'_, [u8]> {
    let spans = ENGINE.secret_spans(text);
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = Vec::with_capacity(text.len());
    let mut copied = 0;
    for (start, end) in spans {
        out.extend_from_slice(text.get(copied..start).unwrap_or_default());
        out.extend_from_slice(REDACTED_SECRET.as_bytes());
        copied = end;
    }
    out.extend_from_slice(text.get(copied..).unwrap_or_default());
    Cow::Owned(out)
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
                    Value::String(text)
                        if is_secret_key_name(key) && json_member_is_secret(text) =>
                    {
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
    ENGINE
        .secret_key_name
        .as_ref()
        .is_some_and(|regex| regex.is_match(key.as_bytes()))
}

fn json_member_is_secret(text: &str) -> bool {
    let value = text.as_bytes();
    value.len() >= 4
        && text != REDACTED_SECRET
        && !is_reference(value)
        && !is_placeholder(value)
        && !value.iter().any(u8::is_ascii_whitespace)
}

/// Redacts a stream line by line, also across lines where a rule needs to: the body lines of a
/// PEM private key whose `BEGIN` and `END` lines are apart are redacted whole.
#[derive(Debug, Default)]
pub struct LineRedactor {
    in_private_key: bool,
}

impl LineRedactor {
    /// A redactor at the start of a stream.
    pub fn new() -> Self {
        LineRedactor::default()
    }

    /// Redacts one line (with or without its line break, which is kept).
    pub fn redact_line<'a>(&mut self, line: &'a [u8]) -> Cow<'a, [u8]> {
        let body_len = line.strip_suffix(b"\n").map_or(line.len(), |l| {
            l.strip_suffix(b"\r").map_or(l.len(), <[u8]>::len)
        });
        let (body, line_break) = line.split_at(body_len);
        if self.in_private_key {
            let Some(end) = find_pem_end(body) else {
                if body.is_empty() {
                    return Cow::Borrowed(line);
                }
                return Cow::Owned([REDACTED_SECRET.as_bytes(), line_break].concat());
            };
            self.in_private_key = false;
            let (_, rest) = body.split_at(end);
            let mut out = REDACTED_SECRET.as_bytes().to_vec();
            out.extend_from_slice(&redact_bytes(rest));
            out.extend_from_slice(line_break);
            return Cow::Owned(out);
        }
        if let Some(begin) = private_key_header_at_end(body) {
            self.in_private_key = true;
            let (before, _) = body.split_at(begin);
            let mut out = redact_bytes(before).into_owned();
            out.extend_from_slice(REDACTED_SECRET.as_bytes());
            out.extend_from_slice(line_break);
            return Cow::Owned(out);
        }
        match redact_bytes(body) {
            Cow::Borrowed(_) => Cow::Borrowed(line),
            Cow::Owned(mut out) => {
                out.extend_from_slice(line_break);
                Cow::Owned(out)
            }
        }
    }
}

const PEM_BEGIN: &[u8] = b"-----BEGIN";
const PEM_END: &[u8] = b"-----END";
const PEM_KEY_TAIL: &[u8] = b"PRIVATE KEY-----";

/// Where the PEM private-key header that ends `line` starts, if one does (a key body follows on
/// the next lines), as opposed to code or prose that only mentions the header.
fn private_key_header_at_end(line: &[u8]) -> Option<usize> {
    let trimmed = line.trim_ascii_end();
    let ends_with_header =
        trimmed.ends_with(PEM_KEY_TAIL) || trimmed.ends_with(b"PRIVATE KEY BLOCK-----");
    let begin = rfind(trimmed, PEM_BEGIN)?;
    let header = trimmed.get(begin..)?;
    (ends_with_header && find(header, PEM_END).is_none() && header.len() <= 128).then_some(begin)
}

/// The byte just after the `-----END ... PRIVATE KEY-----` marker in `line`.
fn find_pem_end(line: &[u8]) -> Option<usize> {
    let end = find(line, PEM_END)?;
    let tail = find(line.get(end..)?, PEM_KEY_TAIL)?;
    Some(end + tail + PEM_KEY_TAIL.len())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

/// A rule as documented: what it catches and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleInfo {
    /// Stable rule id, such as `github-pat`.
    pub id: &'static str,
    /// What the rule catches.
    pub description: &'static str,
    /// `gitleaks:<rule id>` when the shape follows a gitleaks rule, `ours` otherwise.
    pub source: &'static str,
    /// The shape of a match (never a real secret).
    pub shape: &'static str,
    /// A regex generating text the rule must redact, for tests.
    pub sample: &'static str,
    /// The regex capture group that is replaced (0: the whole match).
    pub secret_group: usize,
    /// The rule's regex.
    pub pattern: &'static str,
}

/// Every rule, in the order they are documented.
pub fn rules() -> impl Iterator<Item = RuleInfo> {
    RULES.iter().map(|rule| RuleInfo {
        id: rule.id,
        description: rule.description,
        source: rule.source,
        shape: rule.shape,
        sample: rule.sample,
        secret_group: rule.secret_group,
        pattern: rule.pattern,
    })
}

/// Rules (or the keyword automaton) that failed to build, with the reason. Always empty in a
/// correct build; a test checks it. A rule that fails to build is skipped, never a panic.
pub fn rule_errors() -> &'static [String] {
    &ENGINE.errors
}

// ----- Engine ---------------------------------------------------------------------------------

/// Extra validation of a match, for rules whose regex alone would catch ordinary code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// The regex is enough.
    Always,
    /// The value contains a digit.
    HasDigit,
    /// The value is not a reference (`$VAR`, `${VAR}`, `{{ var }}`, `%VAR%`, `<placeholder>`).
    NotReference,
    /// A URL password that is not a reference or a placeholder.
    UrlPassword,
    /// A header value: not a reference or code, and random-looking.
    HeaderValue,
    /// An `Authorization` value: a header value that is not a scheme name whose credentials
    /// were already redacted (`AWS4-HMAC-SHA256 [REDACTED_SECRET]`).
    Authorization,
    /// A flag value: not a reference or a placeholder such as `TOKEN`.
    FlagValue,
    /// A generic assignment: a quoted literal, or an unquoted value with letters and digits that
    /// is not code (a call, a path, a reference).
    Assignment,
}

/// A cheap test of the bytes around a keyword hit, run before a rule's regex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Near {
    /// Always run the regex.
    Anything,
    /// An assignment or header: after the keyword, the rest of an identifier, a quote and
    /// blanks, comes `=` or `:` (`token =`, `"api_key":`, `X-Auth-Token:`).
    Assignment,
    /// A flag: a `-` comes before the keyword in its name, and `=` or a blank follows it.
    Flag,
}

impl Near {
    fn holds(self, text: &[u8], start: usize, end: usize) -> bool {
        match self {
            Near::Anything => true,
            Near::Assignment => {
                let rest = text.get(end..).unwrap_or_default();
                let mut bytes = rest.iter().take(64).copied().peekable();
                while bytes
                    .next_if(|&b| is_identifier_byte(b) || b == b'.')
                    .is_some()
                {}
                while bytes.next_if(|&b| b == b'\\').is_some() {}
                let _ = bytes.next_if(|&b| b == b'"' || b == b'\'');
                while bytes.next_if(|&b| b == b' ' || b == b'\t').is_some() {}
                matches!(bytes.next(), Some(b'=' | b':'))
            }
            Near::Flag => {
                let name_start = identifier_start(text, start);
                let dash_before = text
                    .get(name_start..start)
                    .is_some_and(|name| name.contains(&b'-'));
                dash_before && matches!(text.get(end), Some(b'=' | b' ' | b'\t'))
            }
        }
    }
}

struct CompiledRule {
    rule: &'static Rule,
    regex: Regex,
}

struct Engine {
    rules: Vec<CompiledRule>,
    /// For each keyword (automaton pattern id), the rules it triggers.
    keyword_rules: Vec<Vec<usize>>,
    /// `None` only if the automaton failed to build; every rule then runs on the whole text.
    keywords: Option<AhoCorasick>,
    secret_key_name: Option<Regex>,
    errors: Vec<String>,
}

static ENGINE: LazyLock<Engine> = LazyLock::new(Engine::build);

fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .unicode(false)
        .size_limit(64 << 20)
        .dfa_size_limit(16 << 20)
        .build()
}

impl Engine {
    fn build() -> Engine {
        let mut errors = Vec::new();
        let mut rules = Vec::with_capacity(RULES.len());
        for rule in RULES {
            match compile(rule.pattern) {
                Ok(regex) => rules.push(CompiledRule { rule, regex }),
                Err(error) => errors.push(format!("rule `{}`: {error}", rule.id)),
            }
        }
        let mut keywords: Vec<&'static str> = Vec::new();
        let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
        for (index, compiled) in rules.iter().enumerate() {
            for &keyword in compiled.rule.keywords {
                match keywords
                    .iter()
                    .position(|k| k.eq_ignore_ascii_case(keyword))
                {
                    Some(at) => keyword_rules
                        .get_mut(at)
                        .into_iter()
                        .for_each(|r| r.push(index)),
                    None => {
                        keywords.push(keyword);
                        keyword_rules.push(vec![index]);
                    }
                }
            }
        }
        // The search below reports non-overlapping hits, so where one keyword contains another
        // (`token` in `auth-token`, `sk-` in `sk-proj-`), only one of them may be reported for
        // an occurrence. Each such pair triggers the rules of both, so nothing is missed.
        let closure = keyword_rules.clone();
        for (index, keyword) in keywords.iter().enumerate() {
            for (other_index, other) in keywords.iter().enumerate() {
                if index != other_index && contains_ignore_case(other, keyword) {
                    let (mine, theirs) = (
                        closure.get(index).cloned().unwrap_or_default(),
                        closure.get(other_index).cloned().unwrap_or_default(),
                    );
                    if let Some(rules) = keyword_rules.get_mut(index) {
                        rules.extend(theirs);
                    }
                    if let Some(rules) = keyword_rules.get_mut(other_index) {
                        rules.extend(mine);
                    }
                }
            }
        }
        for rules in &mut keyword_rules {
            rules.sort_unstable();
            rules.dedup();
        }
        let automaton = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&keywords);
        let keywords = match automaton {
            Ok(automaton) => Some(automaton),
            Err(error) => {
                errors.push(format!("keyword automaton: {error}"));
                None
            }
        };
        let secret_key_name = match compile(SECRET_KEY_NAME) {
            Ok(regex) => Some(regex),
            Err(error) => {
                errors.push(format!("secret key name: {error}"));
                None
            }
        };
        Engine {
            rules,
            keyword_rules,
            keywords,
            secret_key_name,
            errors,
        }
    }

    /// The byte spans to replace, sorted, disjoint and on character boundaries.
    fn secret_spans(&self, text: &[u8]) -> Vec<(usize, usize)> {
        let windows = self.windows(text);
        let mut spans = Vec::new();
        if windows.is_empty() {
            return spans;
        }
        // Windows come grouped by rule, so capture slots are allocated once per rule.
        let mut current: Option<(usize, CaptureLocations)> = None;
        for (rule_index, start, end) in windows {
            let Some(compiled) = self.rules.get(rule_index) else {
                continue;
            };
            if current.as_ref().map(|(index, _)| *index) != Some(rule_index) {
                current = Some((rule_index, compiled.regex.capture_locations()));
            }
            if let Some((_, locs)) = current.as_mut() {
                compiled.scan(text, start, end, locs, &mut spans);
            }
        }
        normalize_spans(text, spans)
    }

    /// Merged `(rule, start, end)` windows to scan, sorted by rule then start.
    fn windows(&self, text: &[u8]) -> Vec<(usize, usize, usize)> {
        let Some(keywords) = &self.keywords else {
            return (0..self.rules.len()).map(|r| (r, 0, text.len())).collect();
        };
        let mut windows = Vec::new();
        let mut stop_cache = StopCache::default();
        for hit in keywords.find_iter(text) {
            let Some(rule_indices) = self.keyword_rules.get(hit.pattern().as_usize()) else {
                continue;
            };
            for &rule_index in rule_indices {
                let Some(compiled) = self.rules.get(rule_index) else {
                    continue;
                };
                let rule = compiled.rule;
                if !rule.near.holds(text, hit.start(), hit.end()) {
                    continue;
                }
                // One byte before the key, so a rule's left-boundary class sees a real boundary.
                let start =
                    identifier_start(text, hit.start().saturating_sub(rule.back)).saturating_sub(1);
                let reach = hit.end().saturating_add(rule.forward).min(text.len());
                let end = stop_cache.next_stop(text, reach);
                windows.push((rule_index, start, end));
            }
        }
        windows.sort_unstable();
        let mut merged: Vec<(usize, usize, usize)> = Vec::with_capacity(windows.len());
        for (rule, start, end) in windows {
            match merged.last_mut() {
                Some(last) if last.0 == rule && start <= last.2 => last.2 = last.2.max(end),
                _ => merged.push((rule, start, end)),
            }
        }
        merged
    }
}

impl CompiledRule {
    /// Finds the rule's matches that start in `start..end` and records their secret spans.
    fn scan(
        &self,
        text: &[u8],
        start: usize,
        end: usize,
        locs: &mut CaptureLocations,
        spans: &mut Vec<(usize, usize)>,
    ) {
        // The window's end is a stop byte (or the end of text), which no value contains and no
        // rule needs to look past, so cutting the haystack there changes no match.
        let haystack = text.get(..end).unwrap_or(text);
        let mut at = start;
        while at < haystack.len() {
            let Some(whole) = self.regex.captures_read_at(locs, haystack, at) else {
                break;
            };
            if let Some(secret) = locs.get(self.rule.secret_group)
                && secret.1 > secret.0
                && (!self.rule.word_start || is_word_start(text, whole.start()))
                && passes(self.rule.check, text, locs, secret)
            {
                spans.push(secret);
            }
            at = if self.rule.word_start && !is_word_start(text, whole.start()) {
                whole.start() + 1
            } else {
                whole.end().max(whole.start() + 1)
            };
        }
    }
}

/// Caches the last "next stop byte" answer: no stop byte lies in `from..stop`. Keyword hits come
/// in increasing order, so a long run (a base64 blob) is scanned once, not once per hit.
#[derive(Default)]
struct StopCache {
    from: usize,
    stop: usize,
}

impl StopCache {
    fn next_stop(&mut self, text: &[u8], from: usize) -> usize {
        if self.from <= from && from <= self.stop && self.stop > 0 {
            return self.stop;
        }
        let stop = text
            .get(from..)
            .and_then(|rest| rest.iter().position(|&b| is_stop_byte(b)))
            .map_or(text.len(), |offset| from + offset);
        *self = StopCache { from, stop };
        stop
    }
}

/// Bytes that end every secret value: whitespace, quotes, backslash, brackets, braces,
/// parentheses, angle brackets, comma, semicolon, `&`.
pub(crate) fn is_stop_byte(byte: u8) -> bool {
    byte.is_ascii_whitespace()
        || matches!(
            byte,
            b'"' | b'\''
                | b'`'
                | b'\\'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'('
                | b')'
                | b'<'
                | b'>'
                | b','
                | b';'
                | b'&'
        )
}

fn contains_ignore_case(haystack: &str, needle: &str) -> bool {
    haystack
        .as_bytes()
        .windows(needle.len())
        .any(|window| window.eq_ignore_ascii_case(needle.as_bytes()))
}

fn is_identifier_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-'
}

/// Moves `at` back to the start of the identifier it is in (at most 256 bytes).
fn identifier_start(text: &[u8], mut at: usize) -> usize {
    let floor = at.saturating_sub(256);
    while at > floor && text.get(at - 1).copied().is_some_and(is_identifier_byte) {
        at -= 1;
    }
    at
}

/// Sorts and merges spans, widening each to character boundaries.
fn normalize_spans(text: &[u8], mut spans: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let is_continuation = |at: usize| text.get(at).is_some_and(|b| (b & 0xC0) == 0x80);
    for (start, end) in &mut spans {
        while *start > 0 && is_continuation(*start) {
            *start -= 1;
        }
        while *end < text.len() && is_continuation(*end) {
            *end += 1;
        }
    }
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

// ----- Checks ---------------------------------------------------------------------------------

fn passes(check: Check, text: &[u8], locs: &CaptureLocations, secret: (usize, usize)) -> bool {
    let value = text.get(secret.0..secret.1).unwrap_or_default();
    let rest = text.get(secret.1..).unwrap_or_default();
    match check {
        Check::Always => true,
        Check::HasDigit => value.iter().any(u8::is_ascii_digit),
        Check::NotReference => !is_reference(value),
        Check::UrlPassword => !is_reference(value) && !is_filler(value),
        Check::FlagValue => {
            !is_reference(value)
                && !is_placeholder(value)
                && !is_constant_name(value)
                && !is_lowercase_word(value, 12)
        }
        Check::HeaderValue => is_header_value(value, rest),
        Check::Authorization => {
            let after_blanks = rest.iter().position(|b| !matches!(b, b' ' | b'\t'));
            let precedes_marker = after_blanks.is_some_and(|n| n > 0)
                && after_blanks
                    .and_then(|n| rest.get(n..))
                    .is_some_and(|r| r.starts_with(REDACTED_SECRET.as_bytes()));
            is_header_value(value, rest) && !precedes_marker
        }
        Check::Assignment => {
            // Group 3 is the quote that opens the value.
            let quoted = locs.get(3).is_some_and(|(s, e)| e > s);
            value.len() >= 8
                && !locs
                    .get(1)
                    .is_some_and(|key| is_type_annotation(text, key, secret.0))
                && !is_reference(value)
                && !is_code(value, rest)
                && !value.first().is_some_and(|b| b"=:/.@".contains(b))
                && if quoted {
                    !is_placeholder(value) && !is_constant_name(value)
                } else {
                    !is_constant_name(value)
                        && value.iter().any(u8::is_ascii_digit)
                        && value.iter().any(u8::is_ascii_alphabetic)
                }
        }
    }
}

/// A credential in a header: not a reference, a constant name or code, and random-looking
/// (letters only is a type or a word, such as `AuthorizationRef`).
fn is_header_value(value: &[u8], rest: &[u8]) -> bool {
    !is_reference(value)
        && !value.first().is_some_and(|b| b"=:".contains(b))
        && !is_placeholder(value)
        && !is_constant_name(value)
        && !is_code(value, rest)
        && character_classes(value) >= 2
        && !value.iter().all(u8::is_ascii_alphabetic)
}

/// True when a match may start at `at`: at the start of text, after a byte that is not a
/// letter, digit or `_`, or after a JSON escape (`\n`, `\r`, `\t`).
fn is_word_start(text: &[u8], at: usize) -> bool {
    let Some(before) = at.checked_sub(1).and_then(|i| text.get(i)) else {
        return true;
    };
    let escaped = at
        .checked_sub(2)
        .and_then(|i| text.get(i))
        .is_some_and(|&b| b == b'\\');
    !(before.is_ascii_alphanumeric() || *before == b'_')
        || (escaped && matches!(before, b'n' | b'r' | b't'))
}

/// `$VAR`, `${VAR}`, `{{ var }}`, `%VAR%`, `<placeholder>`.
fn is_reference(value: &[u8]) -> bool {
    matches!(value.first(), Some(b'$' | b'{' | b'%' | b'<'))
        || find(value, b"${").is_some()
        || find(value, b"{{").is_some()
}

/// Constant names such as `CLIENT_SECRET_0`: how code names a secret, not the secret.
fn is_constant_name(value: &[u8]) -> bool {
    value.contains(&b'_')
        && value
            .first()
            .is_some_and(|b| b.is_ascii_uppercase() || *b == b'_')
        && value
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
}

/// `TOKEN`, `API_KEY` (names) or fillers ([`is_filler`]), not values.
fn is_placeholder(value: &[u8]) -> bool {
    value
        .iter()
        .all(|b| b.is_ascii_uppercase() || *b == b'_' || *b == b'-')
        || is_filler(value)
}

/// `xxxxxxxx`, `********`, `password`, `changeme`: what examples put in place of a secret.
fn is_filler(value: &[u8]) -> bool {
    let same_char = value.windows(2).all(|w| w.first() == w.get(1));
    let lower = value.to_ascii_lowercase();
    same_char
        || [
            &b"password"[..],
            b"passwd",
            b"changeme",
            b"secret",
            b"redacted",
        ]
        .contains(&lower.as_slice())
}

/// Only lower-case letters, `_` and `-`, at most `max_len` bytes: an identifier, not a value.
fn is_lowercase_word(value: &[u8], max_len: usize) -> bool {
    value.len() <= max_len
        && value
            .iter()
            .all(|b| b.is_ascii_lowercase() || *b == b'_' || *b == b'-')
}

/// Code, not a literal: a call (`next_token(`), a generic type (`Key<'_>`), a path
/// (`Token::new`), or a member access (`node.colon2_token`).
fn is_code(value: &[u8], rest: &[u8]) -> bool {
    if matches!(rest.first(), Some(b'(' | b'<'))
        || find(value, b"::").is_some()
        || find(value, b"->").is_some()
    {
        return true;
    }
    let mut segments = value.split(|&b| b == b'.');
    value.contains(&b'.')
        && segments.all(|segment| {
            segment.len() <= 32
                && segment
                    .first()
                    .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
                && segment
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
        })
}

/// True when `key: value` is a declaration's type annotation (`pub const X_TOKEN: ty_7 = ...`,
/// `let password: Secret2 = ...`): the key follows a declaration keyword and `:` separates it
/// from the value.
fn is_type_annotation(text: &[u8], key: (usize, usize), value_start: usize) -> bool {
    const DECLARATIONS: [&[u8]; 8] = [
        b"const",
        b"static",
        b"let",
        b"pub",
        b"mut",
        b"var",
        b"val",
        b"readonly",
    ];
    let separator = text.get(key.1..value_start).unwrap_or_default();
    if !separator.contains(&b':') || separator.contains(&b'=') {
        return false;
    }
    let before = text.get(..key.0).unwrap_or_default().trim_ascii_end();
    let word_start = before
        .iter()
        .rposition(|b| !b.is_ascii_alphabetic())
        .map_or(0, |at| at + 1);
    let word = before.get(word_start..).unwrap_or_default();
    DECLARATIONS.contains(&word)
}

/// How many of lower-case, upper-case, digit and symbol the value mixes.
fn character_classes(value: &[u8]) -> usize {
    let has = |f: fn(&u8) -> bool| usize::from(value.iter().any(f));
    has(u8::is_ascii_lowercase)
        + has(u8::is_ascii_uppercase)
        + has(u8::is_ascii_digit)
        + has(|b| !b.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_and_the_automaton_compile() {
        assert!(rule_errors().is_empty(), "{:?}", rule_errors());
        assert_eq!(ENGINE.rules.len(), RULES.len());
    }

    #[test]
    fn rule_ids_are_unique_and_every_rule_has_keywords() {
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
        assert!(RULES.len() >= 40);
        for rule in RULES {
            assert!(!rule.keywords.is_empty(), "{}", rule.id);
            for keyword in rule.keywords {
                assert_eq!(*keyword, keyword.to_ascii_lowercase(), "{}", rule.id);
            }
        }
    }

    #[test]
    fn declarations_are_type_annotations() {
        let text = b"pub const IFLA_INET6_TOKEN: _bindgen_ty_7 = 1;";
        let key = (10, 26);
        assert_eq!(&text[key.0..key.1], b"IFLA_INET6_TOKEN");
        assert!(is_type_annotation(text, key, 28));
        let yaml = b"db_token: ab12cd34ef";
        assert!(!is_type_annotation(yaml, (0, 8), 10));
        assert_eq!(
            redact_secrets("pub const IFLA_INET6_TOKEN: _bindgen_ty_7 = 1;"),
            "pub const IFLA_INET6_TOKEN: _bindgen_ty_7 = 1;"
        );
    }

    #[test]
    fn code_is_recognized() {
        assert!(is_code(b"lexer.next_token", b"();"));
        assert!(is_code(b"self.config.token", b""));
        assert!(is_code(b"node.colon2_token", b","));
        assert!(is_code(b"Token::new", b""));
        assert!(is_code(b"Curve25519SeedBin", b"<'_>"));
        assert!(!is_code(b"abc123def456", b" == x"));
        assert!(!is_code(b"v1.2.3-secret9", b""));
    }

    #[test]
    fn spans_widen_to_character_boundaries_and_merge() {
        let text = "aé b".as_bytes();
        assert_eq!(normalize_spans(text, vec![(2, 3), (0, 1)]), vec![(0, 3)]);
    }
}
