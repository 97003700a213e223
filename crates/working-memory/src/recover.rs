//! Reading the model's tool arguments, and recovering what can be recovered when they are
//! malformed.
//!
//! In order, the first that yields at least one section wins:
//!
//! 1. the text as JSON: `{"sections": {...}}`, or the seven sections at the top level (the
//!    wrapper forgotten), or a wrapper holding them (`{"raw": "..."}`, `{"arguments": ...}`,
//!    a tool-call object, a JSON string of any of these);
//! 2. the same after cutting a markdown fence or prose around the outermost braces;
//! 3. a tolerant scan, section by section: each section name in quotes (straight, curly or
//!    single), a colon, then a forgiving object reader that takes keys in any order, accepts
//!    raw line breaks and unescaped quotes inside strings (a quote closes a string only where
//!    JSON could continue), curly and single quotes as delimiters, and text cut short (a
//!    truncated string is dropped, complete items of a truncated list are kept);
//! 4. the scan again on the text with one level of JSON string escaping removed, for
//!    arguments that were encoded twice.
//!
//! A section whose operation cannot be read is not recovered, so the merge keeps it. Nothing
//! here panics or uses look-around: the reader is hand-written.

use memory_protocol::working_memory::WorkingMemorySection;
use serde_json::{Map, Value};

use super::ops::{SectionOps, read_op};

/// How the arguments were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryPath {
    /// Valid JSON in the expected shape.
    Exact,
    /// Valid JSON inside a wrapper (an object, a JSON string, a fence or prose).
    Unwrapped,
    /// Malformed: sections read one by one by the tolerant scan.
    Repaired,
    /// No operation at all (`null`, `{"sections": {}}`, `{"sections": null}`): every section
    /// is kept, each with a guard record saying it had no operation.
    Empty,
}

/// What was read from the arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// One operation per section that could be read.
    pub ops: SectionOps,
    /// How.
    pub path: RecoveryPath,
}

impl Recovery {
    /// The sections whose operation was read, in document order.
    pub fn recovered(&self) -> Vec<WorkingMemorySection> {
        WorkingMemorySection::ALL
            .into_iter()
            .filter(|section| self.ops.get(*section).is_some())
            .collect()
    }
}

/// Deepest wrapper followed.
const MAX_DEPTH: usize = 6;

/// Reads tool arguments given as text (see the module docs). `None` when no section could be
/// read at all.
pub fn read_arguments(raw: &str) -> Option<Recovery> {
    read_text(raw, 0)
}

/// Reads tool arguments already parsed as JSON.
pub fn read_arguments_value(value: &Value) -> Option<Recovery> {
    read_value(value, 0)
}

fn read_text(raw: &str, depth: usize) -> Option<Recovery> {
    let text = raw.trim();
    if text.is_empty() || depth > MAX_DEPTH {
        return None;
    }
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        if depth == 0 && value.is_null() {
            return Some(Recovery {
                ops: SectionOps::new(),
                path: RecoveryPath::Empty,
            });
        }
        if let Some(found) = read_value(&value, depth) {
            return Some(found);
        }
    }
    for inner in [fenced(text), braced(text)].into_iter().flatten() {
        if inner.len() < text.len()
            && let Ok(value) = serde_json::from_str::<Value>(inner)
            && let Some(mut found) = read_value(&value, depth + 1)
        {
            found.path = found.path.max_with(RecoveryPath::Unwrapped);
            return Some(found);
        }
    }
    if let Some(found) = scan(text) {
        return Some(found);
    }
    if text.contains("\\\"") {
        return scan(&unescape_once(text));
    }
    None
}

impl RecoveryPath {
    fn max_with(self, other: RecoveryPath) -> RecoveryPath {
        let rank = |path: RecoveryPath| match path {
            RecoveryPath::Exact => 0,
            RecoveryPath::Unwrapped => 1,
            RecoveryPath::Repaired => 2,
            RecoveryPath::Empty => 3,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }
}

/// Keys under which a wrapper holds the arguments.
const WRAPPER_KEYS: [&str; 7] = [
    "arguments",
    "raw",
    "input",
    "parameters",
    "args",
    "function",
    "tool_call",
];

fn read_value(value: &Value, depth: usize) -> Option<Recovery> {
    if depth > MAX_DEPTH {
        return None;
    }
    match value {
        Value::Object(object) => {
            if let Some(Value::Object(sections)) = object.get("sections") {
                let ops = SectionOps::from_sections(sections);
                if !ops.is_empty() {
                    let path = if depth == 0 {
                        RecoveryPath::Exact
                    } else {
                        RecoveryPath::Unwrapped
                    };
                    return Some(Recovery { ops, path });
                }
            }
            let top = SectionOps::from_sections(object);
            if !top.is_empty() {
                return Some(Recovery {
                    ops: top,
                    path: RecoveryPath::Unwrapped,
                });
            }
            let no_sections = match object.get("sections") {
                Some(Value::Null) => true,
                Some(Value::Object(sections)) => sections.is_empty(),
                _ => false,
            };
            if no_sections {
                return Some(Recovery {
                    ops: SectionOps::new(),
                    path: RecoveryPath::Empty,
                });
            }
            for key in WRAPPER_KEYS {
                if let Some(inner) = object.get(key)
                    && let Some(mut found) = read_value(inner, depth + 1)
                {
                    found.path = found.path.max_with(RecoveryPath::Unwrapped);
                    return Some(found);
                }
            }
            None
        }
        Value::String(text) => read_text(text, depth + 1).map(|mut found| {
            found.path = found.path.max_with(RecoveryPath::Unwrapped);
            found
        }),
        Value::Array(values) => values.iter().find_map(|inner| {
            read_value(inner, depth + 1).map(|mut found| {
                found.path = found.path.max_with(RecoveryPath::Unwrapped);
                found
            })
        }),
        _ => None,
    }
}

/// The body of the first markdown code fence.
fn fenced(text: &str) -> Option<&str> {
    let start = text.find("```")?;
    let after = &text[start + 3..];
    let body_start = after.find('\n').map_or(0, |at| at + 1);
    let body = &after[body_start..];
    let end = body.find("```").unwrap_or(body.len());
    Some(body[..end].trim())
}

/// From the first `{` to the last `}`.
fn braced(text: &str) -> Option<&str> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    (end > start).then(|| &text[start..=end])
}

/// Removes one level of JSON string escaping (`\"` to `"`, `\\` to `\`, `\n` to a line
/// break, ...).
fn unescape_once(text: &str) -> String {
    let mut scanner = Scanner::new(text);
    let mut out = String::with_capacity(text.len());
    while let Some(ch) = scanner.bump() {
        if ch == '\\' {
            scanner.escape(&mut out);
        } else {
            out.push(ch);
        }
    }
    out
}

const QUOTES: [char; 4] = ['"', '\u{201C}', '\u{201D}', '\''];

/// The tolerant scan: each section's first readable operation.
fn scan(text: &str) -> Option<Recovery> {
    let lower = text.to_ascii_lowercase();
    let mut ops = SectionOps::new();
    for section in WorkingMemorySection::ALL {
        let name = section.header().to_ascii_lowercase();
        for (at, _) in lower.match_indices(&name) {
            if let Some(value) = section_value(text, at, at + name.len()) {
                let read = read_op(&value);
                if read.problem.is_none()
                    || !matches!(read.op, memory_protocol::working_memory::SectionOp::Keep)
                {
                    ops.set(section, read);
                    break;
                }
            }
        }
    }
    (!ops.is_empty()).then_some(Recovery {
        ops,
        path: RecoveryPath::Repaired,
    })
}

/// The value after a quoted key at `start..end`, when the key is one.
fn section_value(text: &str, start: usize, end: usize) -> Option<Value> {
    let before = text[..start].chars().next_back()?;
    if !QUOTES.contains(&before) {
        return None;
    }
    let quote_at = start - before.len_utf8();
    if text[..quote_at].ends_with('\\') {
        return None;
    }
    let after = text[end..].chars().next()?;
    if !QUOTES.contains(&after) {
        return None;
    }
    let mut scanner = Scanner::new(text);
    scanner.pos = end + after.len_utf8();
    scanner.skip_ws();
    if scanner.peek() != Some(':') {
        return None;
    }
    scanner.bump();
    match scanner.value()? {
        loose @ Loose::Object(..) => Some(loose.into_value()),
        _ => None,
    }
}

/// A value read tolerantly; `complete` is false when the text ended inside it.
#[derive(Debug)]
enum Loose {
    Text(String, bool),
    Object(Vec<(String, Loose)>),
    List(Vec<Loose>),
    Literal(String),
}

impl Loose {
    /// The JSON value, without anything cut short: a truncated string is left out (of an object
    /// or a list).
    fn into_value(self) -> Value {
        match self {
            Loose::Text(text, _) => Value::String(text),
            Loose::Object(entries) => {
                let mut map = Map::new();
                for (key, value) in entries {
                    if matches!(value, Loose::Text(_, false)) {
                        continue;
                    }
                    map.entry(key.trim().to_ascii_lowercase())
                        .or_insert_with(|| value.into_value());
                }
                Value::Object(map)
            }
            Loose::List(values) => Value::Array(
                values
                    .into_iter()
                    .filter(|value| !matches!(value, Loose::Text(_, false)))
                    .map(Loose::into_value)
                    .collect(),
            ),
            Loose::Literal(text) => serde_json::from_str(&text).unwrap_or(Value::String(text)),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Closing {
    Key,
    Value,
}

/// Deepest nesting the tolerant reader follows.
const MAX_NESTING: usize = 32;

struct Scanner<'a> {
    text: &'a str,
    pos: usize,
    nesting: usize,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            pos: 0,
            nesting: 0,
        }
    }

    fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let ch = self.peek()?;
        self.pos += ch.len_utf8();
        Some(ch)
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }

    fn value(&mut self) -> Option<Loose> {
        self.skip_ws();
        match self.peek()? {
            '{' => self.object(),
            '[' => self.list(),
            quote if QUOTES.contains(&quote) => Some(self.string(Closing::Value)),
            _ => {
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|ch| !(ch.is_whitespace() || matches!(ch, ',' | '}' | ']')))
                {
                    self.bump();
                }
                let literal = &self.text[start..self.pos];
                (!literal.is_empty()).then(|| Loose::Literal(literal.to_owned()))
            }
        }
    }

    fn object(&mut self) -> Option<Loose> {
        if self.nesting >= MAX_NESTING {
            return None;
        }
        self.nesting += 1;
        self.bump();
        let mut entries = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None => break,
                Some('}') => {
                    self.bump();
                    break;
                }
                Some(',') => {
                    self.bump();
                }
                Some(ch) => {
                    let key = if QUOTES.contains(&ch) {
                        match self.string(Closing::Key) {
                            Loose::Text(key, true) => key,
                            _ => break,
                        }
                    } else {
                        let start = self.pos;
                        while self.peek().is_some_and(|c| !matches!(c, ':' | '}' | ',')) {
                            self.bump();
                        }
                        self.text[start..self.pos].trim().to_owned()
                    };
                    self.skip_ws();
                    if self.peek() != Some(':') {
                        break;
                    }
                    self.bump();
                    match self.value() {
                        Some(value) => entries.push((key, value)),
                        None => break,
                    }
                }
            }
        }
        self.nesting -= 1;
        Some(Loose::Object(entries))
    }

    fn list(&mut self) -> Option<Loose> {
        if self.nesting >= MAX_NESTING {
            return None;
        }
        self.nesting += 1;
        self.bump();
        let mut values = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None => break,
                Some(']') => {
                    self.bump();
                    break;
                }
                Some(',') => {
                    self.bump();
                }
                Some(_) => match self.value() {
                    Some(value) => {
                        let cut = matches!(value, Loose::Text(_, false));
                        values.push(value);
                        if cut {
                            break;
                        }
                    }
                    None => break,
                },
            }
        }
        self.nesting -= 1;
        Some(Loose::List(values))
    }

    /// A string from its opening quote; it ends at a quote where JSON could continue.
    fn string(&mut self, closing: Closing) -> Loose {
        let open = self.bump();
        let mut out = String::new();
        while let Some(ch) = self.bump() {
            match ch {
                '\\' => self.escape(&mut out),
                '"' | '\u{201D}' | '\u{201C}' | '\''
                    if closes(open, ch) && self.ends_here(closing) =>
                {
                    return Loose::Text(out, true);
                }
                _ => out.push(ch),
            }
        }
        Loose::Text(out, false)
    }

    /// True when what follows the current position lets a string end there.
    fn ends_here(&self, closing: Closing) -> bool {
        let rest = self.rest().trim_start();
        match closing {
            Closing::Key => rest.starts_with(':'),
            Closing::Value => {
                if rest.is_empty() || rest.starts_with(['}', ']']) {
                    return true;
                }
                match rest.strip_prefix(',') {
                    Some(next) => {
                        let next = next.trim_start();
                        next.is_empty()
                            || next.starts_with([
                                '}', ']', '{', '[', '"', '\u{201C}', '\u{201D}', '\'',
                            ])
                            || starts_with_literal(next)
                    }
                    None => false,
                }
            }
        }
    }

    /// Decodes the escape after a backslash into `out`; an unknown one is kept as written.
    fn escape(&mut self, out: &mut String) {
        let Some(ch) = self.bump() else {
            out.push('\\');
            return;
        };
        match ch {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            '"' | '\\' | '/' | '\'' => out.push(ch),
            'u' => match self.hex4() {
                Some(high @ 0xD800..=0xDBFF) => {
                    let save = self.pos;
                    let low = if self.rest().starts_with("\\u") {
                        self.pos += 2;
                        self.hex4()
                    } else {
                        None
                    };
                    match low {
                        Some(low @ 0xDC00..=0xDFFF) => {
                            let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                            out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                        }
                        _ => {
                            self.pos = save;
                            out.push('\u{FFFD}');
                        }
                    }
                }
                Some(code) => out.push(char::from_u32(code).unwrap_or('\u{FFFD}')),
                None => out.push_str("\\u"),
            },
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.rest().get(..4)?;
        let code = u32::from_str_radix(digits, 16).ok()?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.pos += 4;
        Some(code)
    }
}

/// True when `text` starts with a whole JSON literal (a number, `true`, `false`, `null`) that
/// ends where a value can: a list such as `["a", 42, "b"]` then splits at its items instead of
/// reading `a", 42, "b` as one string with unescaped quotes, while `"said "no", 5 times"` stays
/// one.
fn starts_with_literal(text: &str) -> bool {
    let end = text
        .find(|ch: char| ch.is_whitespace() || matches!(ch, ',' | '}' | ']'))
        .unwrap_or(text.len());
    let (token, after) = text.split_at(end);
    let after = after.trim_start();
    (after.is_empty() || after.starts_with([',', '}', ']']))
        && matches!(
            serde_json::from_str::<Value>(token),
            Ok(Value::Number(_) | Value::Bool(_) | Value::Null)
        )
}

/// True when `ch` can close a string opened by `open`.
fn closes(open: Option<char>, ch: char) -> bool {
    match open {
        Some('\'') => ch == '\'',
        Some('\u{201C}' | '\u{201D}') => matches!(ch, '\u{201D}' | '\u{201C}' | '"'),
        _ => ch == '"',
    }
}
