//! Secrets that span lines: private-key bodies, YAML block scalars, quoted values left open, a
//! value on the line after its key, and the `data:` block of a Kubernetes `Secret`.
//!
//! Each is followed line by line from where it starts. When the text ends while one is still
//! open, its state goes into a [`Carry`], and the next text (the next line of a stream, or the
//! next segment of a long text) resumes it from its first byte. So a stream redacted line by line
//! and the same text redacted whole find the same secrets.
//!
//! Every walker stops at the first line that cannot belong to what it follows, and none follows
//! more than a bounded number of lines or bytes: a `BEGIN ... PRIVATE KEY` header with no `END`
//! never swallows the rest of a log.

use super::assignment;
use super::checks::{find, is_placeholder, is_variable};
use super::engine::Scan;

/// The longest private-key body followed (bytes of base64); a real key is under 16 KiB.
const MAX_BODY_BYTES: usize = 64 << 10;
/// The most lines a YAML block scalar or a quoted value is followed for.
const MAX_VALUE_LINES: usize = 256;
/// Lines after `kind: Secret` within which its `data:` block must start.
const KUBERNETES_REACH: usize = 60;

/// What continues past the end of the text scanned so far.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Carry {
    /// Inside a private-key body: base64 bytes seen so far.
    pub(crate) body: Option<usize>,
    /// Inside a YAML block scalar holding a secret: the key line's indentation.
    pub(crate) block: Option<usize>,
    /// A secret-named key ended its line with its separator: the next line holds its value.
    pub(crate) pending: bool,
    /// Inside a quoted secret value: its quote byte and the lines followed so far.
    pub(crate) quoted: Option<(u8, usize)>,
    /// Inside a Kubernetes `Secret` document.
    pub(crate) kubernetes: Option<Kubernetes>,
}

/// Where a Kubernetes `Secret` document walk stands.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kubernetes {
    /// Indentation of the `data:` line when inside its block.
    data_indent: Option<usize>,
    /// Lines seen since `kind: Secret` without a data block.
    lines_before_data: usize,
    /// Data blocks finished (a Secret has `data` and `stringData` at most).
    blocks_done: usize,
}

/// Resumes what the previous text left open, from the start of `text`.
pub(crate) fn resume(text: &[u8], carry: Carry, scan: &mut Scan) {
    if let Some(bytes) = carry.body {
        let end = follow_body(text, 0, bytes, scan);
        scan.push(0, end);
    }
    if let Some(indent) = carry.block {
        follow_block(text, 0, indent, scan);
    }
    if carry.pending {
        assignment::follow_pending(text, 0, scan);
    }
    if let Some((quote, lines)) = carry.quoted {
        follow_quoted(text, 0, quote, lines, scan);
    }
    if let Some(state) = carry.kubernetes {
        follow_kubernetes(text, 0, state, scan);
    }
}

// ----- Lines ----------------------------------------------------------------------------------

/// The end of the line holding `at` (its `\n`, or the end of text).
pub(crate) fn line_end(text: &[u8], at: usize) -> usize {
    text.get(at..)
        .and_then(|rest| memchr::memchr(b'\n', rest))
        .map_or(text.len(), |offset| at + offset)
}

/// How far the per-hit line lookups ([`line_end_near`], [`line_start_near`]) look from a
/// keyword hit. A key's line prefix and its value lie well within this; without the bound,
/// thousands of hits on one long line (minified JSON, a tool output with no line breaks)
/// would each scan to the line's ends, and redaction would be quadratic in the line length.
pub(crate) const LINE_LOOK: usize = 16 << 10;

/// [`line_end`], looking at most [`LINE_LOOK`] bytes ahead (the line is taken to end there).
pub(crate) fn line_end_near(text: &[u8], at: usize) -> usize {
    let limit = text.len().min(at.saturating_add(LINE_LOOK));
    text.get(at..limit)
        .and_then(|rest| memchr::memchr(b'\n', rest))
        .map_or(limit.max(at.min(text.len())), |offset| at + offset)
}

/// The start of the line after the one holding `at`, if there is one.
pub(crate) fn next_line(text: &[u8], at: usize) -> Option<usize> {
    let end = line_end(text, at);
    (end < text.len()).then_some(end + 1)
}

/// The start of the line holding `at`, looking at most [`LINE_LOOK`] bytes back (the line is
/// taken to start there).
pub(crate) fn line_start_near(text: &[u8], at: usize) -> usize {
    let from = at.saturating_sub(LINE_LOOK);
    text.get(from..at)
        .and_then(|before| memchr::memrchr(b'\n', before))
        .map_or(from, |newline| from + newline + 1)
}

/// `start..end` without a trailing `\r`.
fn content_end(text: &[u8], start: usize, end: usize) -> usize {
    if end > start && text.get(end - 1) == Some(&b'\r') {
        end - 1
    } else {
        end
    }
}

/// Leading blanks of the line starting at `start`.
pub(crate) fn indent_at(text: &[u8], start: usize) -> usize {
    text.get(start..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count()
}

// ----- Private keys ---------------------------------------------------------------------------

/// Armor header lines that may come between a key header and its body.
const ARMOR_HEADERS: [&[u8]; 16] = [
    b"Proc-Type:",
    b"DEK-Info:",
    b"Comment:",
    b"Version:",
    b"Hash:",
    b"Charset:",
    b"MessageID:",
    b"Subject:",
    b"Encryption:",
    b"Private-MAC:",
    b"Private-Hash:",
    b"Key-Derivation:",
    b"Argon2-Memory:",
    b"Argon2-Passes:",
    b"Argon2-Parallelism:",
    b"Argon2-Salt:",
];

fn is_base64_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_')
}

/// A private-key header at `start..end` (`-----BEGIN ... PRIVATE KEY-----`): the header and the
/// body after it are one secret. A header followed on its line by anything but key material
/// (`"-----BEGIN PRIVATE KEY-----";` in code) only mentions a key and is left alone.
pub(crate) fn private_key(text: &[u8], start: usize, end: usize, scan: &mut Scan) {
    let eol = line_end(text, end);
    let rest_end = content_end(text, end, eol);
    let rest = text.get(end..rest_end).unwrap_or_default();
    if rest.iter().all(|b| b.is_ascii_whitespace()) {
        let body_end = match next_line(text, end) {
            Some(next) => {
                let body_end = follow_body(text, next, 0, scan);
                // A body seen whole that is too short or masked (`XXXX`) is an example.
                let body = text.get(next..body_end).unwrap_or_default();
                let body =
                    find(body, b"-----END").map_or(body, |end| body.get(..end).unwrap_or(body));
                let material = body.iter().filter(|b| b.is_ascii_alphanumeric()).count();
                let masked = body
                    .iter()
                    .filter(|b| matches!(b, b'X' | b'x' | b'.' | b'*'))
                    .count();
                if scan.carry.body.is_none() && (material < 16 || masked * 2 >= material) {
                    return;
                }
                Some(body_end).filter(|&e| e > next)
            }
            None => {
                scan.carry.body = Some(0);
                None
            }
        };
        scan.push(start, body_end.unwrap_or(end));
        return;
    }
    // The body on the header's own line: words of base64 up to an `END` marker.
    let mut at = end;
    let mut body = 0;
    let mut last = end;
    while at < rest_end {
        let word_start = at
            + text
                .get(at..rest_end)
                .unwrap_or_default()
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count();
        if word_start >= rest_end {
            break;
        }
        let tail = text.get(word_start..rest_end).unwrap_or_default();
        if let Some(marker_end) = end_marker(tail) {
            if body >= 16 {
                scan.push(start, word_start + marker_end);
            }
            return;
        }
        let word_len = tail.iter().take_while(|&&b| is_base64_byte(b)).count();
        if word_len == 0 {
            break;
        }
        body += word_len;
        last = word_start + word_len;
        at = last;
        if tail.get(word_len).is_some_and(|b| !b.is_ascii_whitespace()) {
            break;
        }
    }
    if body < 16 {
        return;
    }
    if last >= rest_end {
        // The line ended with key material: the body may go on below.
        let body_end = match next_line(text, end) {
            Some(next) => Some(follow_body(text, next, body, scan)).filter(|&e| e > next),
            None => {
                scan.carry.body = Some(body);
                None
            }
        };
        scan.push(start, body_end.unwrap_or(last));
    } else {
        scan.push(start, last);
    }
}

/// A header such as PuTTY's `Private-Lines: 14` or `$ANSIBLE_VAULT;1.1;AES256` ending at `end`:
/// the lines after it are the secret.
pub(crate) fn body_lines(text: &[u8], end: usize, scan: &mut Scan) {
    match next_line(text, end) {
        Some(next) => {
            let body_end = follow_body(text, next, 0, scan);
            scan.push(next, body_end);
        }
        None => scan.carry.body = Some(0),
    }
}

/// Where an `-----END ... -----` (or `---- END ... ----`) marker at the start of `tail` ends.
fn end_marker(tail: &[u8]) -> Option<usize> {
    let (dashes, label_start) = if tail.starts_with(b"-----END") {
        (&b"-----"[..], 8)
    } else if tail.starts_with(b"---- END") {
        (&b"----"[..], 8)
    } else {
        return None;
    };
    let label = tail.get(label_start..)?;
    let close = find(label, dashes)?;
    let after = label_start + close + dashes.len();
    let trailing = tail
        .get(after..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&b| b == b'-')
        .count();
    Some(after + trailing)
}

/// Shortest run of key material that counts as a body line when something follows it on the
/// line; a timestamp (`2026-05-01T10`, 13 bytes) is shorter.
const MIN_BODY_LINE: usize = 20;

/// Follows a key body from the line starting at `from`. Returns where the body ends (the end of
/// its last line, or of its `END` marker), `from` when the line is no key material; sets the
/// carry when the text ends inside the body.
fn follow_body(text: &[u8], from: usize, mut bytes: usize, scan: &mut Scan) -> usize {
    let mut end = from;
    let mut at = from;
    let mut blanks = 0;
    loop {
        let eol = line_end(text, at);
        let line_stop = content_end(text, at, eol);
        let line = text.get(at..line_stop).unwrap_or_default();
        let lead = line.iter().take_while(|b| b.is_ascii_whitespace()).count();
        let trimmed = line.get(lead..).unwrap_or_default().trim_ascii_end();
        if trimmed.is_empty() {
            blanks += 1;
            if blanks > 2 {
                return end;
            }
        } else if let Some(marker_end) = end_marker(trimmed) {
            return at + lead + marker_end;
        } else if ARMOR_HEADERS.iter().any(|h| trimmed.starts_with(h)) {
            blanks = 0;
            end = at + lead + trimmed.len();
        } else {
            let run = trimmed.iter().take_while(|&&b| is_base64_byte(b)).count();
            if run == 0 {
                return end;
            }
            if run < trimmed.len() {
                // Key material, then the string holding it closes (`..."}` in JSON), or a run
                // as long as a body line followed by anything: the body ends there. A short
                // run followed by something else (`2026-05-01T10:00:09Z INFO ...`, a log line
                // after a key with no END) is not part of the key.
                let closes = matches!(trimmed.get(run), Some(b'"' | b'\'' | b'`' | b'\\'));
                // A body line, then anything (`<vault line> ok`, `<key line>, `), still ends
                // the body.
                if closes || run >= MIN_BODY_LINE {
                    end = at + lead + run;
                }
                return end;
            }
            blanks = 0;
            bytes += run;
            end = at + lead + run;
            if bytes > MAX_BODY_BYTES {
                return end;
            }
        }
        if eol >= text.len() {
            scan.carry.body = Some(bytes);
            return end;
        }
        at = eol + 1;
    }
}

// ----- YAML block scalars and quoted values ----------------------------------------------------

/// Redacts the lines of a YAML block scalar (`key: |`) starting at the line `from`, while they
/// are indented deeper than the key line (`indent`).
pub(crate) fn follow_block(text: &[u8], from: usize, indent: usize, scan: &mut Scan) {
    let mut at = from;
    for _ in 0..MAX_VALUE_LINES {
        let eol = line_end(text, at);
        let stop = content_end(text, at, eol);
        let lead = indent_at(text, at);
        let content = text.get(at + lead..stop).unwrap_or_default();
        if !content.iter().all(|b| b.is_ascii_whitespace()) {
            if lead <= indent {
                return;
            }
            scan.push(at + lead, at + lead + content.trim_ascii_end().len());
        }
        if eol >= text.len() {
            scan.carry.block = Some(indent);
            return;
        }
        at = eol + 1;
    }
}

/// Redacts a quoted value from the line `from` up to its closing `quote`.
pub(crate) fn follow_quoted(
    text: &[u8],
    from: usize,
    quote: u8,
    mut lines: usize,
    scan: &mut Scan,
) {
    let mut at = from;
    while lines < MAX_VALUE_LINES {
        let eol = line_end(text, at);
        let stop = content_end(text, at, eol);
        let line = text.get(at..stop).unwrap_or_default();
        if let Some(close) = line.iter().position(|&b| b == quote) {
            scan.push(at, at + close);
            return;
        }
        scan.push(at, stop);
        lines += 1;
        if eol >= text.len() {
            scan.carry.quoted = Some((quote, lines));
            return;
        }
        at = eol + 1;
    }
}

// ----- Kubernetes Secrets ---------------------------------------------------------------------

/// `kind: Secret` at `start..end`: redacts the values of the document's `data:` and
/// `stringData:` blocks (YAML or pretty JSON), and of a `"data":{...}` object on the same line
/// (compact JSON).
pub(crate) fn kubernetes(text: &[u8], start: usize, end: usize, scan: &mut Scan) {
    let line = line_start_near(text, start);
    let eol = line_end(text, end);
    json_data_objects(text, line, eol, scan);
    match next_line(text, end) {
        Some(next) => follow_kubernetes(text, next, Kubernetes::default(), scan),
        None => scan.carry.kubernetes = Some(Kubernetes::default()),
    }
}

fn follow_kubernetes(text: &[u8], from: usize, mut state: Kubernetes, scan: &mut Scan) {
    let mut at = from;
    loop {
        let eol = line_end(text, at);
        let stop = content_end(text, at, eol);
        let lead = indent_at(text, at);
        let content = text
            .get(at + lead..stop)
            .unwrap_or_default()
            .trim_ascii_end();
        if content == b"---" || content == b"..." {
            return;
        }
        let mut handled = false;
        if let Some(data_indent) = state.data_indent {
            if content.is_empty() {
                handled = true;
            } else if lead > data_indent {
                data_value(at + lead, content, scan);
                handled = true;
            } else {
                state.data_indent = None;
                state.blocks_done += 1;
                if state.blocks_done >= 2 {
                    return;
                }
            }
        }
        if !handled {
            if is_data_key(content) {
                state.data_indent = Some(lead);
            } else if !content.is_empty() {
                state.lines_before_data += 1;
                if state.lines_before_data > KUBERNETES_REACH {
                    return;
                }
            }
        }
        if eol >= text.len() {
            scan.carry.kubernetes = Some(state);
            return;
        }
        at = eol + 1;
    }
}

/// `data:`, `stringData:`, `"data": {` and the like.
fn is_data_key(content: &[u8]) -> bool {
    let unquoted: Vec<u8> = content.iter().copied().filter(|&b| b != b'"').collect();
    let trimmed = unquoted.trim_ascii();
    let without_brace = trimmed
        .strip_suffix(b"{")
        .unwrap_or(trimmed)
        .trim_ascii_end();
    without_brace.eq_ignore_ascii_case(b"data:")
        || without_brace.eq_ignore_ascii_case(b"stringdata:")
}

/// One line inside a data block: `name: value`, `"name": "value",`, or a continuation line.
fn data_value(start: usize, content: &[u8], scan: &mut Scan) {
    let colon = content
        .windows(2)
        .position(|w| w == b": ")
        .or_else(|| content.strip_suffix(b":").map(|c| c.len()));
    let (value_start, value) = match colon {
        Some(at) => {
            let after = at + 1;
            let value = content.get(after..).unwrap_or_default();
            let lead = value.iter().take_while(|b| b.is_ascii_whitespace()).count();
            (after + lead, value.get(lead..).unwrap_or_default())
        }
        None if content.first() == Some(&b'}') => return,
        None => (0, content),
    };
    let value = value.strip_suffix(b",").unwrap_or(value);
    let (offset, value) = match (value.first(), value.last()) {
        (Some(b'"' | b'\''), Some(b'"' | b'\'')) if value.len() >= 2 => {
            (1, value.get(1..value.len() - 1).unwrap_or_default())
        }
        _ => (0, value),
    };
    if value.is_empty()
        || matches!(value, b"|" | b">" | b"|-" | b">-" | b"{" | b"}")
        || is_variable(value)
        || is_placeholder(value)
    {
        return;
    }
    let at = start + value_start + offset;
    scan.push(at, at + value.len());
}

/// String values of `"data": {...}` / `"stringData": {...}` objects in `start..end`.
fn json_data_objects(text: &[u8], start: usize, end: usize, scan: &mut Scan) {
    let line = text.get(start..end).unwrap_or_default();
    for name in [&b"\"data\""[..], b"\"stringData\""] {
        let mut from = 0;
        while let Some(found) = line.get(from..).and_then(|rest| find(rest, name)) {
            let mut at = from + found + name.len();
            from = at;
            at += blanks(line, at);
            if line.get(at) != Some(&b':') {
                continue;
            }
            at += 1;
            at += blanks(line, at);
            if line.get(at) != Some(&b'{') {
                continue;
            }
            at += 1;
            // `"key":"value"` pairs up to the closing brace.
            while let Some(&b) = line.get(at) {
                if b == b'}' {
                    break;
                }
                if b != b'"' {
                    at += 1;
                    continue;
                }
                let Some(key_end) = closing_quote(line, at + 1) else {
                    return;
                };
                let mut value_at = key_end + 1 + blanks(line, key_end + 1);
                if line.get(value_at) != Some(&b':') {
                    at = key_end + 1;
                    continue;
                }
                value_at += 1;
                value_at += blanks(line, value_at);
                if line.get(value_at) != Some(&b'"') {
                    at = value_at;
                    continue;
                }
                let Some(value_end) = closing_quote(line, value_at + 1) else {
                    return;
                };
                let value = line.get(value_at + 1..value_end).unwrap_or_default();
                if !value.is_empty() && !is_variable(value) && !is_placeholder(value) {
                    scan.push(start + value_at + 1, start + value_end);
                }
                at = value_end + 1;
            }
        }
    }
}

fn blanks(line: &[u8], at: usize) -> usize {
    line.get(at..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count()
}

fn closing_quote(line: &[u8], from: usize) -> Option<usize> {
    line.get(from..)?
        .iter()
        .position(|&b| b == b'"')
        .map(|offset| from + offset)
}
