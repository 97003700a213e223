//! Values found by the name before them: `KEY=value`, `key: value`, `"key": "value"`,
//! `Authorization: <scheme> <credentials>`.
//!
//! A key's name is split into words (`STRIPE_SECRET_KEY` → stripe, secret, key; `dbPass` → db,
//! pass) and judged by its last words: a *strong* name (password, secret, token, credential, API
//! key, ...) takes any literal value; a *weak* name (`*_key`, `auth`, `private`, `session`) only
//! a value that looks generated. Then the value is parsed in the syntax around it, and refused
//! when it is a reference, a placeholder or code (`checks.rs`).

use super::assignment_match::Groups;
use super::checks::{
    character_classes, find, is_code, is_filler, is_hex, is_identifier, is_keyword_value,
    is_placeholder, is_reference, is_word_identifier, looks_random, names_a_secret,
};
use super::engine::{Scan, is_key_byte};
use super::multiline::{
    follow_block, follow_quoted, indent_at, line_end, line_end_near, line_start_near, next_line,
};
use std::borrow::Cow;

use memory_protocol::REDACTED_SECRET;

/// How surely a key name says its value is a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strength {
    /// The name says so (`password`, `api_key`): any literal is redacted.
    Strong,
    /// The name may hold a secret (`stripe_key`, `auth`): a value that looks generated is.
    Weak,
}

/// Words that end a secret name however it is prefixed (`pgpassword`, `clientsecret`).
const STRONG_ENDINGS: [&str; 20] = [
    "password",
    "passwd",
    "passphrase",
    "passcode",
    "passwort",
    "secret",
    "secrets",
    "secrete",
    "secreto",
    "credential",
    "credentials",
    "contrasena",
    "contraseña",
    "senha",
    "token",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "keypass",
];

/// Short secret words that count only as a whole word (`db_pass`, but not `bypass`).
const STRONG_WORDS: [&str; 6] = ["pass", "pwd", "pw", "creds", "privkey", "passwords"];

/// A `*_key` name is a secret when the word before `key` is one of these.
const SECRET_KEY_PREFIXES: [&str; 33] = [
    "api",
    "app",
    "application",
    "auth",
    "access",
    "secret",
    "private",
    "priv",
    "master",
    "encryption",
    "encrypt",
    "signing",
    "sign",
    "service",
    "client",
    "account",
    "db",
    "database",
    "session",
    "hmac",
    "jwt",
    "cipher",
    "crypt",
    "crypto",
    "license",
    "subscription",
    "consumer",
    "shared",
    "storage",
    "admin",
    "root",
    "webhook",
    "aes",
];

/// A `*_key` name that never holds a secret.
const PUBLIC_KEY_PREFIXES: [&str; 26] = [
    "public",
    "pub",
    "primary",
    "foreign",
    "sort",
    "partition",
    "cache",
    "hash",
    "map",
    "lookup",
    "idempotency",
    "unique",
    "index",
    "dict",
    "object",
    "row",
    "column",
    "group",
    "routing",
    "dedup",
    "shard",
    "range",
    "composite",
    "natural",
    "hot",
    "short",
];

/// `*_token` names that are parser or pagination tokens, not credentials.
const NON_SECRET_TOKEN_PREFIXES: [&str; 45] = [
    "max",
    "num",
    "total",
    "input",
    "output",
    "cached",
    "reasoning",
    "prompt",
    "completion",
    "next",
    "prev",
    "previous",
    "last",
    "first",
    "current",
    "cur",
    "peek",
    "eof",
    "page",
    "continuation",
    "pagination",
    "cursor",
    "sync",
    "cancellation",
    "start",
    "stop",
    "end",
    "begin",
    "open",
    "close",
    "opening",
    "closing",
    "offending",
    "bad",
    "unexpected",
    "expected",
    "lookahead",
    "eos",
    "bos",
    "pad",
    "unk",
    "sep",
    "special",
    "error",
    "progress",
];

/// Words before a secret word that make the name a flag or an action about it.
const FLAG_PREFIXES: [&str; 28] = [
    "allow", "with", "use", "include", "has", "is", "show", "hide", "require", "requires",
    "required", "save", "remember", "need", "needs", "enable", "enabled", "disable", "disabled",
    "no", "skip", "verify", "validate", "check", "forgot", "supports", "accepts", "ignore",
];

/// Words before `pass` that make it a pass of an algorithm or a test, not a password.
const NON_SECRET_PASS_PREFIXES: [&str; 20] = [
    "all", "any", "none", "first", "second", "third", "last", "next", "own", "by", "test", "tests",
    "compile", "render", "multi", "single", "one", "two", "each", "every",
];

/// Trailing words that keep a name's meaning (`SECRET_KEY_BASE`, `password_confirmation`).
const NEUTRAL_SUFFIXES: [&str; 11] = [
    "value",
    "base",
    "raw",
    "plain",
    "plaintext",
    "hex",
    "b64",
    "base64",
    "confirmation",
    "confirm",
    "again",
];

/// Splits a key name into lower-case words: on `_`, `-`, `.`, `$`, spaces, digit runs and, when
/// `camel`, camel-case humps (`X-API-Key` → x, api, key; `dbPass2` → db, pass, 2).
///
/// Words are slices of `lower` (the key lower-cased, byte for byte), so splitting allocates
/// nothing but the list; a word that is not UTF-8 is converted lossily.
fn words<'a>(key: &[u8], lower: &'a [u8], camel: bool) -> Vec<Cow<'a, str>> {
    let mut words = Vec::new();
    let mut current: Option<usize> = None;
    let mut previous: Option<u8> = None;
    let mut flush = |start: &mut Option<usize>, end: usize| {
        if let Some(word) = start.take().and_then(|start| lower.get(start..end)) {
            words.push(String::from_utf8_lossy(word));
        }
    };
    for (i, &b) in key.iter().enumerate() {
        let letter = b.is_ascii_alphabetic() || b >= 0x80;
        if !(letter || b.is_ascii_digit()) {
            flush(&mut current, i);
            previous = None;
            continue;
        }
        let next = key.get(i + 1).copied();
        let boundary = match previous {
            Some(p) => {
                (camel
                    && ((p.is_ascii_lowercase() && b.is_ascii_uppercase())
                        || (p.is_ascii_uppercase()
                            && b.is_ascii_uppercase()
                            && next.is_some_and(|n| n.is_ascii_lowercase()))))
                    || (p.is_ascii_digit() != b.is_ascii_digit())
            }
            None => false,
        };
        if boundary {
            flush(&mut current, i);
        }
        current.get_or_insert(i);
        previous = Some(b);
    }
    flush(&mut current, key.len());
    words
}

/// How surely the name `key` says its value is a secret, or `None` when it does not. The name
/// is split with and without its camel-case humps (`apiKey`, but also `api_kEy`), and the
/// surer judgement wins.
pub(crate) fn key_strength(key: &[u8]) -> Option<Strength> {
    // Most keys near a keyword hit name nothing secret (`"type"`, `"call_id"`); they are
    // refused here without splitting them into words.
    if !names_a_secret_word(key) {
        return None;
    }
    judge_words(key)
}

/// [`key_strength`] without the quick refusal.
fn judge_words(key: &[u8]) -> Option<Strength> {
    let lower = key.to_ascii_lowercase();
    let camel_words = without_neutral_suffixes(words(key, &lower, true));
    // `withCredentials`, `showPassword`, `isSecret`, `requireToken`: a flag about the secret.
    let flag = camel_words
        .len()
        .checked_sub(2)
        .and_then(|i| camel_words.get(i))
        .is_some_and(|word| FLAG_PREFIXES.contains(&word.as_ref()));
    if flag {
        return None;
    }
    let camel = judge(key, camel_words);
    if camel == Some(Strength::Strong) {
        return camel;
    }
    match judge(key, words(key, &lower, false)) {
        Some(Strength::Strong) => Some(Strength::Strong),
        plain => camel.or(plain),
    }
}

/// Pieces of which every name [`judge`] accepts holds one (ASCII case aside): each word it
/// accepts ends in, or is, a word that contains one of them (`pw` in `pwd`, `key` in
/// `apikey`, `contrase` in `contraseña`, `sid` alone). A name without any cannot be a secret's.
const SECRET_PIECES: [&[u8]; 13] = [
    b"pass",
    b"pw",
    b"cred",
    b"secret",
    b"contrase",
    b"senha",
    b"token",
    b"key",
    b"auth",
    b"priv",
    b"session",
    b"cookie",
    b"sid",
];

fn names_a_secret_word(key: &[u8]) -> bool {
    SECRET_PIECES.iter().any(|piece| {
        key.windows(piece.len())
            .any(|window| window.eq_ignore_ascii_case(piece))
    })
}

fn without_neutral_suffixes(mut words: Vec<Cow<'_, str>>) -> Vec<Cow<'_, str>> {
    while words.len() > 1
        && words.last().is_some_and(|w| {
            NEUTRAL_SUFFIXES.contains(&w.as_ref()) || w.bytes().all(|b| b.is_ascii_digit())
        })
    {
        words.pop();
    }
    words
}

fn judge(key: &[u8], words: Vec<Cow<'_, str>>) -> Option<Strength> {
    let words = without_neutral_suffixes(words);
    let last = words.last()?.as_ref();
    let previous = words.len().checked_sub(2).and_then(|i| words.get(i));
    let previous = previous.map(AsRef::as_ref).unwrap_or_default();
    // `next-token`, `x.token`: `token` standing alone after `-` or `.` is what codex redacts,
    // so it stays a secret name whatever comes before it.
    let alone = key
        .rsplit(|&b| matches!(b, b'-' | b'.' | b'$' | b' '))
        .next()
        .is_some_and(|segment| segment.eq_ignore_ascii_case(b"token"));
    if alone {
        return Some(Strength::Strong);
    }
    if last == "token" || last.ends_with("token") {
        let prefix = if last == "token" {
            previous
        } else {
            last.trim_end_matches("token")
        };
        let parser_token = if last == "token" {
            NON_SECRET_TOKEN_PREFIXES.contains(&prefix)
        } else {
            NON_SECRET_TOKEN_PREFIXES
                .iter()
                .any(|p| prefix.ends_with(p))
        };
        return (!parser_token).then_some(Strength::Strong);
    }
    // A bare `credentials` is as often a mode (`credentials: 'same-origin'`) as a secret.
    if matches!(last, "credential" | "credentials") && words.len() == 1 {
        return Some(Strength::Weak);
    }
    // `allPass`, `firstPass`, `bypass`: a pass that is not a password.
    if last == "pass" && NON_SECRET_PASS_PREFIXES.contains(&previous) {
        return None;
    }
    if STRONG_ENDINGS.iter().any(|ending| last.ends_with(ending)) || STRONG_WORDS.contains(&last) {
        return Some(Strength::Strong);
    }
    if last == "key" || last == "keys" {
        if SECRET_KEY_PREFIXES.contains(&previous) {
            return Some(Strength::Strong);
        }
        if PUBLIC_KEY_PREFIXES.contains(&previous) {
            return None;
        }
        return Some(Strength::Weak);
    }
    if let Some(prefix) = last.strip_suffix("key")
        && SECRET_KEY_PREFIXES.contains(&prefix)
    {
        return Some(Strength::Strong);
    }
    matches!(
        last,
        "auth" | "private" | "session" | "sessionid" | "cookie" | "sid"
    )
    .then_some(Strength::Weak)
}

/// The syntax an assignment is written in, which decides where an unquoted value ends and
/// whether a bare identifier is a literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// `KEY=value`, no blanks around `=`: env files, shell, INI, command-line prefixes.
    Env,
    /// `?key=value&...`: a URL query.
    Query,
    /// `key: value` opening a line: YAML, HTTP headers.
    Yaml,
    /// Anything else: `key = value`, `key := value`, `{ key: value }`, comparisons.
    Code,
}

/// A secret-named key and its separator (groups 1 to 5 of `generic-assignment`): parses the
/// value after it.
pub(crate) fn assignment(text: &[u8], locs: &Groups, scan: &mut Scan) {
    let (Some(key), Some(separator)) = (locs.get(1), locs.get(3)) else {
        return;
    };
    let Some(strength) = text.get(key.0..key.1).and_then(key_strength) else {
        return;
    };
    // `https://x-access-token:...@host`: a URL's user info, which the URL rules judge; and
    // `arn:aws:secretsmanager:*:*:secret:name`: a field of an identifier, not a key.
    let before = text.get(..key.0).unwrap_or_default();
    if before.ends_with(b"//") || before.ends_with(b":") {
        return;
    }
    let key_quoted = locs.get(2).is_some();
    // A quoted key is the whole quoted string (`"AWS::ApiGateway::ApiKey"` is not `ApiKey`).
    if key_quoted
        && !text
            .get(key.0.wrapping_sub(1))
            .is_some_and(|b| matches!(b, b'"' | b'\'' | b'`'))
    {
        return;
    }
    let sep = text.get(separator.0..separator.1).unwrap_or_default();
    let comparison = matches!(sep, b"==" | b"===" | b"!=" | b"!==");
    let value_start = locs
        .get(4)
        .or_else(|| locs.get(5))
        .map_or(separator.1, |(start, _)| start);
    let blank = |a: usize, b: usize| {
        text.get(a..b)
            .unwrap_or_default()
            .iter()
            .any(|&c| c == b' ' || c == b'\t')
    };
    let key_start = if key_quoted {
        key.0.saturating_sub(1)
    } else {
        key.0
    };
    let style = if sep == b"="
        && !key_quoted
        && text
            .get(key.0.wrapping_sub(1))
            .is_some_and(|&b| b == b'?' || b == b'&')
    {
        Style::Query
    } else if sep == b"=" && !key_quoted && !blank(key.1, value_start) {
        Style::Env
    } else if sep == b":" && opens_line(text, key_start) {
        Style::Yaml
    } else {
        Style::Code
    };
    let value = Value {
        strength,
        style,
        comparison,
        // A value below its key, or a quote left open, only after `:` or `=` (not `=>`).
        key_opens_line: opens_line(text, key_start) && matches!(sep, b":" | b"="),
        key_indent: indent_at(text, line_start_near(text, key.0)),
        key_words: text.get(key.0..key.1).unwrap_or_default(),
    };
    value.parse(text, value_start, scan);
    // `let password: String = "..."`: the value after the type.
    if style == Style::Code && sep == b":" && !key_quoted {
        let eol = line_end_near(text, value_start);
        let line = text.get(value_start..eol).unwrap_or_default();
        if let Some(eq) = line.iter().take(80).position(|&b| b == b'=')
            && !matches!(line.get(eq + 1), Some(b'=' | b'>'))
            && is_type(line.get(..eq).unwrap_or_default())
        {
            let after = value_start + eq + 1;
            let blanks = text
                .get(after..)
                .unwrap_or_default()
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count();
            Value {
                comparison: false,
                ..value
            }
            .parse(text, after + blanks, scan);
        }
    }
}

/// A type annotation between a key's `:` and its `=` (`&str`, `Option<String>`,
/// `&'static str`, `[u8; 32]`): no quotes but lifetimes, no calls.
fn is_type(annotation: &[u8]) -> bool {
    let annotation = annotation.trim_ascii();
    annotation
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'&' | b'*' | b'['))
        && annotation.iter().all(|&b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'_' | b'&'
                        | b'*'
                        | b'<'
                        | b'>'
                        | b'['
                        | b']'
                        | b';'
                        | b':'
                        | b','
                        | b' '
                        | b'\''
                        | b'.'
                )
        })
        && annotation.iter().enumerate().all(|(i, &b)| {
            b != b'\''
                || i.checked_sub(1)
                    .and_then(|j| annotation.get(j))
                    .is_some_and(|p| matches!(p, b'&' | b'<'))
        })
}

/// True when only blanks and a line prefix (`export`, `- `, `set`) come before `at` on its line,
/// or when `at` opens a JSON string (`{"output":"key: value"}`), which is a line of its own.
fn opens_line(text: &[u8], at: usize) -> bool {
    let start = line_start_near(text, at);
    let mut before = text.get(start..at).unwrap_or_default().trim_ascii();
    for prefix in [
        &b"export"[..],
        b"set",
        b"setx",
        b"ENV",
        b"env",
        b"declare -x",
        b"readonly",
        b"-",
    ] {
        if let Some(rest) = before.strip_suffix(prefix)
            && rest.last().is_none_or(|b| !b.is_ascii_alphanumeric())
        {
            before = rest.trim_ascii_end();
        }
    }
    match before.strip_suffix(b"\"") {
        None => before.is_empty(),
        Some(open) => matches!(
            open.trim_ascii_end().last(),
            Some(b':' | b'[' | b',' | b'{')
        ),
    }
}

/// What the parser knows about the key whose value it parses.
#[derive(Debug, Clone, Copy)]
struct Value<'k> {
    strength: Strength,
    style: Style,
    comparison: bool,
    /// The key starts its line, so a value may follow on the next one (YAML).
    key_opens_line: bool,
    key_indent: usize,
    key_words: &'k [u8],
}

impl Value<'_> {
    /// Parses the value starting at `at` and records its span (or what follows on next lines).
    fn parse(&self, text: &[u8], at: usize, scan: &mut Scan) {
        let eol = line_end_near(text, at);
        let rest = text.get(at..eol).unwrap_or_default();
        let rest_trimmed = rest.trim_ascii_end();
        if rest_trimmed.is_empty() {
            // Only a key opening its line: elsewhere a line ending in `:` opens a block of
            // code (`if password:`).
            if self.strength == Strength::Strong && !self.comparison && self.key_opens_line {
                match next_line(text, at) {
                    Some(next) => follow_pending(text, next, scan),
                    None => scan.carry.pending = true,
                }
            }
            return;
        }
        // Quotes, with Python's string prefixes (`b"..."`, `r'...'`).
        let prefix = rest
            .iter()
            .take(2)
            .take_while(|b| matches!(b, b'b' | b'B' | b'r' | b'R' | b'u' | b'U' | b'f' | b'F'))
            .count();
        if let Some(&quote) = rest.get(prefix)
            && matches!(quote, b'"' | b'\'' | b'`')
        {
            let raw_string = rest
                .get(..prefix)
                .is_some_and(|p| p.contains(&b'r') || p.contains(&b'R'));
            self.quoted(text, at + prefix, eol, quote, raw_string, scan);
            return;
        }
        if self.comparison {
            return;
        }
        if is_block_indicator(rest_trimmed) {
            match next_line(text, at) {
                Some(next) => follow_block(text, next, self.key_indent, scan),
                None => scan.carry.block = Some(self.key_indent),
            }
            return;
        }
        self.unquoted(text, at, eol, scan);
    }

    /// A value opening with `quote` at `open`.
    /// `raw_string`: a Python `r'...'` string, which holds a regex when it has `\` or `[`.
    fn quoted(
        &self,
        text: &[u8],
        open: usize,
        eol: usize,
        quote: u8,
        raw_string: bool,
        scan: &mut Scan,
    ) {
        let triple = text
            .get(open..open + 3)
            .is_some_and(|q| q.iter().all(|&b| b == quote));
        let inner_start = if triple { open + 3 } else { open + 1 };
        let line = text.get(inner_start..eol).unwrap_or_default();
        let close = if triple {
            find(line, &[quote; 3])
        } else {
            line.iter().position(|&b| b == quote)
        };
        match close {
            Some(len) => {
                let inner = line.get(..len).unwrap_or_default();
                // Backticks quote code and Markdown spans (``token: `interface` ``): judged as
                // an unquoted value.
                let regex = raw_string && (inner.contains(&b'\\') || inner.contains(&b'['));
                let accepted = !regex
                    && if quote == b'`' {
                        self.accepts_unquoted(inner, line.get(len..).unwrap_or_default())
                    } else {
                        self.accepts_quoted(inner)
                    };
                if accepted {
                    scan.push(inner_start, inner_start + len);
                }
            }
            None => {
                // The value goes on below its line: only for a key that opens its line and says
                // secret, and only when something of it is on this line (an opening quote
                // alone is code; a quote after a key inside a line often closes a string).
                let first = line.trim_ascii_end();
                if !self.key_opens_line {
                    // No value spans lines here: what follows the quote is judged as a word.
                    self.unquoted(text, inner_start, eol, scan);
                    return;
                }
                if self.strength != Strength::Strong
                    || !first.iter().any(u8::is_ascii_alphanumeric)
                    || find(first, REDACTED_SECRET.as_bytes()).is_some()
                    || is_reference(first)
                    || first.contains(&b'(')
                {
                    return;
                }
                scan.push(inner_start, inner_start + first.len());
                match next_line(text, inner_start) {
                    Some(next) => follow_quoted(text, next, quote, 1, scan),
                    None => scan.carry.quoted = Some((quote, 1)),
                }
            }
        }
    }

    fn accepts_quoted(&self, inner: &[u8]) -> bool {
        // `#f8f8f2`, `#anchor`: a colour or a fragment.
        if inner.is_empty()
            || inner.first() == Some(&b'#')
            || find(inner, REDACTED_SECRET.as_bytes()).is_some()
            || is_reference(inner)
            || is_placeholder(inner)
            || is_keyword_value(inner)
            || is_template(inner)
            || self.names_a_secret(inner)
            || (self.comparison
                && !(inner.iter().any(u8::is_ascii_digit)
                    && inner.iter().any(u8::is_ascii_alphabetic)))
        {
            return false;
        }
        match self.strength {
            Strength::Weak => looks_random(inner) && !is_hex(inner) && !is_public_key(inner),
            Strength::Strong => {
                inner.len() >= 4
                    && (inner.len() >= 8 || character_classes(inner) >= 2)
                    && !self.is_prose(inner)
            }
        }
    }

    /// The value spells a secret word, a word of its own key of four letters or more
    /// (`ACCESS_KEY = 'AWSAccessKeyId'`), or the weak word of its key: a name, not a secret.
    fn names_a_secret(&self, value: &[u8]) -> bool {
        let weak: &[&[u8]] = match self.strength {
            Strength::Weak => &[b"key", b"auth", b"session", b"cookie"],
            Strength::Strong => &[],
        };
        let lower = self.key_words.to_ascii_lowercase();
        let key_words = words(self.key_words, &lower, false);
        let key_words: Vec<&[u8]> = key_words
            .iter()
            .filter(|word| word.len() >= 4)
            .map(|word| word.as_bytes())
            .collect();
        names_a_secret(value, weak) || names_a_secret(value, &key_words)
    }

    /// A sentence or a message about the secret rather than the secret: `"Enter your
    /// password"`, `"invalid token: {}"`, `"must not be empty."`.
    fn is_prose(&self, inner: &[u8]) -> bool {
        // Blanks around the value (`"s3cr3t "`) separate no words.
        let inner = inner.trim_ascii();
        let spaces = inner.iter().filter(|&&b| b == b' ').count();
        if spaces == 0 {
            return false;
        }
        // Two words are a label (`"RFC 2518"`, `"top secret"`), unless one is a token a
        // generator wrote, letters and digits only and eight or more of them (`"k3Xa91pQ
        // prod"`); a passphrase has three words or more.
        if spaces < 2 {
            return !inner.split(|&b| b == b' ').any(|word| {
                let word = trim_punctuation(word);
                word.len() >= 8
                    && word.iter().all(u8::is_ascii_alphanumeric)
                    && word.iter().any(u8::is_ascii_digit)
                    && word.iter().any(u8::is_ascii_alphabetic)
            });
        }
        let lower = inner.to_ascii_lowercase();
        let key_lower = self.key_words.to_ascii_lowercase();
        let mentions_key = words(self.key_words, &key_lower, true)
            .iter()
            .any(|word| word.len() >= 3 && find(&lower, word.as_bytes()).is_some());
        mentions_key
            || inner
                .trim_ascii_end()
                .last()
                .is_some_and(|b| matches!(b, b'.' | b'!' | b'?' | b':'))
            || spaces >= 6
    }

    /// An unquoted value at `at`.
    fn unquoted(&self, text: &[u8], at: usize, eol: usize, scan: &mut Scan) {
        let line = text.get(at..eol).unwrap_or_default();
        let len = line
            .iter()
            .take_while(|&&b| match self.style {
                Style::Query => {
                    !(b.is_ascii_whitespace() || matches!(b, b'&' | b'#' | b'"' | b'\''))
                }
                _ => !(b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b'`')),
            })
            .count();
        let run = line.get(..len).unwrap_or_default();
        // Syntax after a value, kept: `token = abc123;`, `f(token=abc)`, `{a: b}`, `a=b, c=d`.
        let trimmed_len = run.len()
            - run
                .iter()
                .rev()
                .take_while(|b| matches!(b, b',' | b';' | b')' | b']' | b'}' | b'>'))
                .count();
        let value = run.get(..trimmed_len).unwrap_or_default();
        let after = text.get(at + trimmed_len..).unwrap_or_default();
        if !self.accepts_unquoted(value, after) {
            return;
        }
        scan.push(at, at + trimmed_len);
    }

    fn accepts_unquoted(&self, value: &[u8], after: &[u8]) -> bool {
        if value.is_empty()
            || find(value, REDACTED_SECRET.as_bytes()).is_some()
            || value
                .first()
                .is_some_and(|b| matches!(b, b'=' | b':' | b'#' | b'|' | b'>'))
            || is_reference(value)
            || is_placeholder(value)
            || is_keyword_value(value)
            || is_code(value, after)
            || is_template(value)
            || self.names_a_secret(value)
            || value.eq_ignore_ascii_case(self.key_words)
        {
            return false;
        }
        // Where the syntax is code (`key = value` with blanks, `key: value` inside a line), a
        // bare identifier made of words is a variable or a type (`token = accessToken`,
        // `invalid token: expected identifier`), and `Type=default` is a declaration. A YAML line
        // (`key: value` opening its line) holds data: a bare value there is code only when code
        // syntax follows it (`token: myToken,`). Random letters are no identifier made of words
        // (`is_word_identifier`), so a generated value is never taken for a variable.
        let code = self.style == Style::Code;
        let variable = is_word_identifier(value) && (code || has_code_tail(after));
        let declaration = value.iter().position(|&b| b == b'=').is_some_and(|eq| {
            let (name, default) = value.split_at(eq);
            let default = default.get(1..).unwrap_or_default();
            // `abc123==`: base64 padding, not a default.
            is_identifier(name)
                && !default.iter().all(|&b| b == b'=')
                && (code
                    || (self.style == Style::Yaml
                        && (is_keyword_value(default) || is_number(default))))
        });
        let number = matches!(self.style, Style::Code | Style::Yaml) && is_number(value);
        // `password: FilterOrBool = False`, `key: KeyType | None`, `pass: x -> y`: an
        // annotation or an expression, whatever the style.
        let blanks = after
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        let rest = after.get(blanks..).unwrap_or_default();
        let annotation = blanks > 0
            && ((rest.first() == Some(&b'=') && !matches!(rest.get(1), Some(b'=' | b'>')))
                || rest.first() == Some(&b'|')
                || rest.starts_with(b"->"));
        if variable || declaration || number || annotation {
            return false;
        }
        match self.strength {
            Strength::Weak => looks_random(value) && !is_hex(value) && !is_public_key(value),
            Strength::Strong => value.len() >= 8,
        }
    }
}

/// A number as code writes it: `134217728`, `0x00000013`, `1_000`, `42u32`, `3.5e-2`.
/// `word` without what is not an ASCII letter or digit at its ends (`"k3Xa91pQz7",` is
/// `k3Xa91pQz7`).
fn trim_punctuation(word: &[u8]) -> &[u8] {
    let start = word
        .iter()
        .position(u8::is_ascii_alphanumeric)
        .unwrap_or(word.len());
    let end = word
        .iter()
        .rposition(u8::is_ascii_alphanumeric)
        .map_or(start, |at| at + 1);
    word.get(start..end).unwrap_or_default()
}

fn is_number(value: &[u8]) -> bool {
    value.first().is_some_and(u8::is_ascii_digit)
        && value
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'+'))
        && (value.iter().all(|b| b.is_ascii_digit() || *b == b'_')
            || value.starts_with(b"0x")
            || value.starts_with(b"0b")
            || value.starts_with(b"0o")
            || value
                .iter()
                .skip_while(|b| b.is_ascii_digit() || matches!(b, b'_' | b'.'))
                .all(|b| {
                    matches!(b, b'u' | b'i' | b'f' | b'e' | b'E' | b'-' | b'+')
                        || b.is_ascii_digit()
                }))
}

/// A public key in base64 DER (`SubjectPublicKeyInfo`: RSA, EC P-256, Ed25519): public by
/// design, though it sits next to a `key` name.
fn is_public_key(value: &[u8]) -> bool {
    [
        &b"MIIBIjANBgkqhkiG9w0BAQEFAAOC"[..],
        b"MIICIjANBgkqhkiG9w0BAQEFAAOC",
        b"MFkwEwYHKoZIzj0C",
        b"MHYwEAYHKoZIzj0C",
        b"MCowBQYDK2Vw",
    ]
    .iter()
    .any(|prefix| value.starts_with(prefix))
}

/// A YAML object member written in code (`token: myToken,`): what follows the value is syntax.
fn has_code_tail(after: &[u8]) -> bool {
    matches!(after.first(), Some(b',' | b';' | b')' | b'}'))
}

/// `|`, `>`, `|-`, `>+2`: a YAML block scalar indicator, maybe followed by a comment.
fn is_block_indicator(rest: &[u8]) -> bool {
    let (indicator, comment) = match rest.iter().position(|&b| b == b'#') {
        Some(at) => (rest.get(..at).unwrap_or_default().trim_ascii(), true),
        None => (rest, false),
    };
    let _ = comment;
    matches!(indicator.first(), Some(b'|' | b'>'))
        && indicator
            .iter()
            .skip(1)
            .all(|b| matches!(b, b'-' | b'+') || b.is_ascii_digit())
}

/// A format string or template, not a value: `{}`, `{0}`, `%s`, `%(name)s`.
fn is_template(value: &[u8]) -> bool {
    find(value, b"{}").is_some()
        || find(value, b"%s").is_some()
        || find(value, b"%d").is_some()
        || find(value, b"%(").is_some()
        || (value.contains(&b'{') && value.contains(&b'}'))
}

/// The value of a secret-named key whose line ended after the separator: the first token of
/// the next non-blank line starting at `from`, unless that line is another key or a list item.
pub(crate) fn follow_pending(text: &[u8], from: usize, scan: &mut Scan) {
    let mut at = from;
    for _ in 0..3 {
        let eol = line_end(text, at);
        let line = text.get(at..eol).unwrap_or_default();
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            match next_line(text, at) {
                Some(next) => {
                    at = next;
                    continue;
                }
                None => {
                    scan.carry.pending = true;
                    return;
                }
            }
        }
        let lead = indent_at(text, at);
        let start = at + lead;
        let token_len = text
            .get(start..eol)
            .unwrap_or_default()
            .iter()
            .take_while(|b| !b.is_ascii_whitespace())
            .count();
        let token = text.get(start..start + token_len).unwrap_or_default();
        let is_key = token.len() > 1
            && token.ends_with(b":")
            && token
                .iter()
                .rev()
                .skip(1)
                .all(|&b| is_key_byte(b) || matches!(b, b'.' | b'"' | b'\''));
        if is_key
            || matches!(
                token.first(),
                Some(b'-' | b'#' | b'{' | b'[' | b'|' | b'>' | b'/')
            )
        {
            return;
        }
        let value = Value {
            strength: Strength::Strong,
            style: Style::Yaml,
            comparison: false,
            key_opens_line: false,
            key_indent: 0,
            key_words: b"",
        };
        value.parse(text, start, scan);
        return;
    }
}

/// An `Authorization` header (groups 1 to 3 of `authorization-header`): the scheme decides
/// what the credentials are.
pub(crate) fn authorization(text: &[u8], locs: &regex::bytes::CaptureLocations, scan: &mut Scan) {
    let Some(key) = locs.get(1) else {
        return;
    };
    let mut at = locs
        .get(3)
        .map(|(_, end)| end)
        .or_else(|| locs.get(2).map(|(_, end)| end))
        .unwrap_or(key.1);
    // Skip to the value: blanks, the separator, blanks, an opening quote.
    let eol = line_end_near(text, at);
    while at < eol
        && text
            .get(at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b':' | b'=' | b'"' | b'\'' | b'`' | b'\\'))
    {
        at += 1;
    }
    let line = text.get(at..eol).unwrap_or_default();
    let word_len = line
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
        .count();
    let word = line.get(..word_len).unwrap_or_default();
    let after_word = line.get(word_len..).unwrap_or_default();
    let gap = after_word
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    let has_scheme = word_len > 0
        && gap > 0
        && after_word
            .get(gap)
            .is_some_and(|b| !matches!(b, b'=' | b':'));
    if !has_scheme {
        // A bare credential: a position that only ever holds one, so anything that is not a
        // name, a reference or code.
        let token = credential_token(line);
        let rest = line.get(token.len()..).unwrap_or_default();
        let key_name = text.get(key.0..key.1).unwrap_or_default();
        if token.len() >= 8
            && character_classes(token) >= 2
            && !is_identifier(token)
            && !is_code(token, rest)
            && !token.eq_ignore_ascii_case(key_name)
            && accepts_credential(token)
        {
            scan.push(at, at + token.len());
        }
        return;
    }
    let scheme = word.to_ascii_lowercase();
    let start = at + word_len + gap;
    let params = text.get(start..eol).unwrap_or_default();
    match scheme.as_slice() {
        b"digest" | b"oauth" | b"hawk" | b"aws4-hmac-sha256" => {
            for name in [
                &b"response"[..],
                b"oauth_signature",
                b"oauth_token",
                b"mac",
                b"signature",
            ] {
                if let Some((s, e)) = parameter(params, name) {
                    scan.push(start + s, start + e);
                }
            }
        }
        _ => {
            let token = credential_token(params);
            if token.len() >= 8 && accepts_credential(token) {
                scan.push(start, start + token.len());
            }
        }
    }
}

/// The credential characters at the start of `line`.
fn credential_token(line: &[u8]) -> &[u8] {
    let len = line
        .iter()
        .take_while(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'.' | b'_' | b'~' | b'+' | b'/' | b'=' | b'-' | b':' | b'%'
                )
        })
        .count();
    line.get(..len).unwrap_or_default()
}

fn accepts_credential(token: &[u8]) -> bool {
    !is_reference(token)
        && !is_placeholder(token)
        && !is_filler(token)
        && !is_keyword_value(token)
        && find(token, REDACTED_SECRET.as_bytes()).is_none()
}

/// The value span of `name=value` or `name="value"` in a comma-separated parameter list.
fn parameter(params: &[u8], name: &[u8]) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(found) = params.get(from..).and_then(|rest| {
        rest.windows(name.len() + 1).position(|w| {
            w.get(..name.len())
                .is_some_and(|n| n.eq_ignore_ascii_case(name))
                && w.last() == Some(&b'=')
        })
    }) {
        let start = from + found;
        let boundary = start == 0
            || params
                .get(start - 1)
                .is_some_and(|b| matches!(b, b' ' | b',' | b'\t'));
        let mut value = start + name.len() + 1;
        from = value;
        if !boundary {
            continue;
        }
        let quoted = params.get(value) == Some(&b'"');
        if quoted {
            value += 1;
        }
        let len = params
            .get(value..)
            .unwrap_or_default()
            .iter()
            .take_while(|&&b| {
                if quoted {
                    b != b'"'
                } else {
                    !(b == b',' || b.is_ascii_whitespace() || b == b'"')
                }
            })
            .count();
        if len >= 4 {
            return Some((value, value + len));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Names made of the words the judgement knows and a few it does not.
    fn key_name() -> impl Strategy<Value = String> {
        let words: Vec<&'static str> = STRONG_ENDINGS
            .iter()
            .chain(&STRONG_WORDS)
            .chain(&SECRET_KEY_PREFIXES)
            .chain(&PUBLIC_KEY_PREFIXES)
            .chain(&NON_SECRET_TOKEN_PREFIXES)
            .chain(&FLAG_PREFIXES)
            .chain(&NON_SECRET_PASS_PREFIXES)
            .chain(&NEUTRAL_SUFFIXES)
            .chain(&[
                "key",
                "keys",
                "Key",
                "auth",
                "private",
                "session",
                "sessionid",
                "cookie",
                "sid",
                "SID",
                "Pw",
                "db",
                "user",
                "name",
                "2",
            ])
            .copied()
            .collect();
        let separators = vec!["", "_", "-", ".", "$", " "];
        prop::collection::vec(
            (
                prop::sample::select(words),
                prop::sample::select(separators),
            ),
            1..4,
        )
        .prop_map(|parts| parts.into_iter().map(|(w, s)| format!("{s}{w}")).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn the_quick_refusal_refuses_only_names_the_judgement_refuses(key in key_name()) {
            if judge_words(key.as_bytes()).is_some() {
                prop_assert!(names_a_secret_word(key.as_bytes()), "{key}");
            }
        }
    }

    fn strength(key: &str) -> Option<Strength> {
        key_strength(key.as_bytes())
    }

    #[test]
    fn key_names_are_judged_by_their_last_words() {
        for key in [
            "password",
            "DB_PASSWORD",
            "PGPASSWORD",
            "dbPass",
            "db_pass",
            "client_secret",
            "STRIPE_SECRET_KEY",
            "x-api-key",
            "apiKey",
            "APIKey",
            "GITHUB_TOKEN",
            "access_token",
            "csrftoken",
            "SECRET_KEY_BASE",
            "password_confirmation",
            "aws_secret_access_key",
            "authkey",
            "contraseña",
            "aws_credentials",
            "keypass",
            "api_kEy",
            "next-token",
        ] {
            assert_eq!(strength(key), Some(Strength::Strong), "{key}");
        }
        for key in [
            "stripe_key",
            "key",
            "auth",
            "private",
            "sessionid",
            "MAPS_KEY",
        ] {
            assert_eq!(strength(key), Some(Strength::Weak), "{key}");
        }
        for key in [
            "tokenizer",
            "max_tokens",
            "token_count",
            "password_hash",
            "password_file",
            "secret_name",
            "bypass",
            "compass",
            "passed",
            "primary_key",
            "public_key",
            "private_key_id",
            "next_token",
            "nextPageToken",
            "token_type",
            "keyboard",
            "monkey",
            "author",
            "oauth",
            "client_id",
            "withCredentials",
            "showPassword",
            "allPass",
        ] {
            assert_eq!(strength(key), None, "{key}");
        }
    }

    #[test]
    fn words_split_on_case_digits_and_separators() {
        let split = |key: &[u8], camel| -> Vec<String> {
            let lower = key.to_ascii_lowercase();
            words(key, &lower, camel)
                .into_iter()
                .map(Cow::into_owned)
                .collect()
        };
        assert_eq!(split(b"X-API-Key", true), ["x", "api", "key"]);
        assert_eq!(split(b"dbPass2", true), ["db", "pass", "2"]);
        assert_eq!(split(b"APIKey", true), ["api", "key"]);
        assert_eq!(split(b"my.secret.value", true), ["my", "secret", "value"]);
        assert_eq!(split(b"api_kEy", false), ["api", "key"]);
        assert_eq!(split(b"a\xff\xc3\xa9b-1", false), ["a\u{fffd}\u{e9}b", "1"]);
    }

    #[test]
    fn parameters_of_digest_credentials() {
        let params = br#"username="bob", realm="x", nonce="abc", response="6629fae49393a05397450978507c4ef1""#;
        let (s, e) = parameter(params, b"response").unwrap();
        assert_eq!(&params[s..e], b"6629fae49393a05397450978507c4ef1");
    }
}
