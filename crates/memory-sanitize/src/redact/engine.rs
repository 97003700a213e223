//! The matcher: a keyword prefilter, per-rule regexes in windows around keyword hits, and the
//! actions that turn a match into secret spans.
//!
//! One Aho-Corasick automaton (a DFA, ASCII case-insensitive, walked as a flat table by
//! [`KeywordDfa`]) holds the keywords of all rules. The few short keywords that only mean
//! something in one case (`SK`, `MT`) are in it too, and a hit of one counts only when the text
//! has the keyword's exact case: a second automaton for them cost a second pass over every
//! byte, as long as the first, while checking the case costs a comparison per hit. A rule's
//! regex runs only in a window around a hit of one of its keywords, and only when a cheap check
//! of the bytes next to the hit passes ([`Near`]).

use std::sync::{LazyLock, OnceLock};

use memory_protocol::REDACTED_SECRET;
use regex::bytes::{CaptureLocations, Regex, RegexBuilder};

use super::assignment;
use super::assignment_match;
use super::checks::{
    find, is_code, is_constant_name, is_filler, is_hex, is_identifier_name, is_placeholder,
    is_reference, is_variable, looks_random,
};
use super::keyword_dfa::{Hit, KeywordDfa};
use super::multiline::{self, Carry};
use super::required;
use super::rules::{self, Action, Check, Near, Rule, ValueEnd};

/// Spans found so far in one text, and what continues past its end.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    pub(crate) spans: Vec<(usize, usize)>,
    pub(crate) carry: Carry,
}

impl Scan {
    pub(crate) fn push(&mut self, start: usize, end: usize) {
        if end > start {
            self.spans.push((start, end));
        }
    }
}

/// A rule with its regex and required bytes, each built the first time a window of the rule
/// is scanned: most texts hit the keywords of few rules, and building all of them took most of
/// the engine's start (about 35 of 60 ms per process), which every short-lived command and
/// every fleet worker paid before its first redaction.
struct CompiledRule {
    rule: &'static Rule,
    /// `None` inside when the pattern does not compile: the rule is then skipped, and
    /// [`rule_errors`] reports it.
    regex: OnceLock<Option<Regex>>,
    /// Byte sets one byte of each of which every match holds ([`required`]).
    required: OnceLock<Vec<Vec<u8>>>,
}

impl CompiledRule {
    fn new(rule: &'static Rule) -> Self {
        Self {
            rule,
            regex: OnceLock::new(),
            required: OnceLock::new(),
        }
    }

    fn regex(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| compile(self.rule.pattern).ok())
            .as_ref()
    }

    fn required(&self) -> &[Vec<u8>] {
        self.required
            .get_or_init(|| required::requirements(self.rule.pattern))
    }
}

/// A keyword automaton and, for each keyword, the rules it triggers.
struct Keywords {
    /// `None` when there are no keywords or the automaton failed to build.
    automaton: Option<KeywordDfa>,
    rules: Vec<Vec<Trigger>>,
}

/// A rule a keyword triggers.
#[derive(Clone, Copy)]
struct Trigger {
    rule: usize,
    /// For a case-sensitive rule, the keyword as it must be written.
    exact: Option<&'static str>,
}

pub(crate) struct Engine {
    rules: Vec<CompiledRule>,
    keywords: Keywords,
    /// What failed to build at start (the keyword automaton); rules are reported by
    /// [`rule_errors`].
    errors: Vec<String>,
}

pub(crate) static ENGINE: LazyLock<Engine> = LazyLock::new(Engine::build);

/// Rules whose pattern does not compile, and a keyword automaton that failed to build, with
/// the reason; builds every rule (see [`CompiledRule`]).
pub(crate) fn rule_errors() -> &'static [String] {
    static ERRORS: LazyLock<Vec<String>> = LazyLock::new(|| {
        let mut errors: Vec<String> = ENGINE
            .rules
            .iter()
            .filter_map(|compiled| {
                compile(compiled.rule.pattern)
                    .err()
                    .map(|error| format!("rule `{}`: {error}", compiled.rule.id))
            })
            .collect();
        errors.extend(ENGINE.errors.iter().cloned());
        errors
    });
    &ERRORS
}

fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .unicode(false)
        .size_limit(64 << 20)
        .dfa_size_limit(8 << 20)
        .build()
}

impl Engine {
    fn build() -> Engine {
        let mut errors = Vec::new();
        let rules: Vec<CompiledRule> = rules::all().map(CompiledRule::new).collect();
        let keywords = Keywords::build(&rules, &mut errors);
        Engine {
            rules,
            keywords,
            errors,
        }
    }

    /// The number of rules that compile.
    #[cfg(test)]
    pub(crate) fn rule_count(&self) -> usize {
        self.rules
            .iter()
            .filter(|compiled| compiled.regex().is_some())
            .count()
    }

    /// The spans to replace in `text` (already decoded), sorted, disjoint and on character
    /// boundaries. `carry` says what continues from the previous text, and is updated to what
    /// continues past this one.
    pub(crate) fn scan(&self, text: &[u8], carry: &mut Carry) -> Vec<(usize, usize)> {
        let mut scan = Scan::default();
        multiline::resume(text, std::mem::take(carry), &mut scan);
        let windows = self.windows(text);
        // Windows come grouped by rule, so capture slots are allocated once per rule.
        let mut current: Option<(usize, CaptureLocations)> = None;
        for (rule_index, start, end) in windows {
            let Some(compiled) = self.rules.get(rule_index) else {
                continue;
            };
            // A match lies inside its window, so a window without a byte every match holds
            // has none.
            if !required::holds(
                compiled.required(),
                text.get(start..end).unwrap_or_default(),
            ) {
                continue;
            }
            let Some(regex) = compiled.regex() else {
                continue;
            };
            if current.as_ref().map(|(index, _)| *index) != Some(rule_index) {
                current = Some((rule_index, regex.capture_locations()));
            }
            if let Some((_, locs)) = current.as_mut() {
                compiled.scan(regex, text, start, end, locs, &mut scan);
            }
        }
        *carry = scan.carry;
        normalize_spans(text, scan.spans)
    }

    /// Merged `(rule, start, end)` windows to scan, sorted by rule then start.
    fn windows(&self, text: &[u8]) -> Vec<(usize, usize, usize)> {
        let mut windows = Vec::new();
        let mut stops = [
            StopCache::default(),
            StopCache::default(),
            StopCache::default(),
        ];
        let mut hits: Vec<Hit> = Vec::new();
        if let Some(automaton) = &self.keywords.automaton {
            automaton.hits(text, &mut hits);
        }
        for hit in &hits {
            let Some(triggers) = self.keywords.rules.get(hit.keyword) else {
                continue;
            };
            for trigger in triggers {
                if let Some(exact) = trigger.exact
                    && text.get(hit.start..hit.end) != Some(exact.as_bytes())
                {
                    continue;
                }
                let Some(compiled) = self.rules.get(trigger.rule) else {
                    continue;
                };
                let rule = compiled.rule;
                if !rule.near.holds(text, hit.start, hit.end) {
                    continue;
                }
                // One byte before the key, so a rule's left-boundary class sees a real
                // boundary.
                let start =
                    identifier_start(text, hit.start.saturating_sub(rule.back)).saturating_sub(1);
                let reach = hit.end.saturating_add(rule.forward).min(text.len());
                let end = match rule.value_end {
                    ValueEnd::StopByte => stops[0].next_stop(text, reach, is_stop_byte),
                    ValueEnd::Blank => stops[1].next_stop(text, reach, is_blank_stop),
                    ValueEnd::Line => stops[2].next_stop(text, reach, |b| b == b'\n'),
                };
                windows.push((trigger.rule, start, end));
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

impl Keywords {
    fn build(rules: &[CompiledRule], errors: &mut Vec<String>) -> Keywords {
        let mut keywords: Vec<&'static str> = Vec::new();
        let mut keyword_rules: Vec<Vec<Trigger>> = Vec::new();
        for (index, compiled) in rules.iter().enumerate() {
            for &keyword in compiled.rule.keywords {
                let trigger = Trigger {
                    rule: index,
                    exact: compiled.rule.case_sensitive.then_some(keyword),
                };
                match keywords
                    .iter()
                    .position(|k| k.eq_ignore_ascii_case(keyword))
                {
                    Some(at) => keyword_rules
                        .get_mut(at)
                        .into_iter()
                        .for_each(|r| r.push(trigger)),
                    None => {
                        keywords.push(keyword);
                        keyword_rules.push(vec![trigger]);
                    }
                }
            }
        }
        // Hits are searched overlapping (`eaaa` and `aaaaaaaaaa` in `eAAAAAAAAAA`, `pass` in
        // `password`), so a keyword never hides another.
        if keywords.is_empty() {
            return Keywords {
                automaton: None,
                rules: keyword_rules,
            };
        }
        let automaton = match KeywordDfa::build(&keywords) {
            Ok(automaton) => Some(automaton),
            Err(error) => {
                errors.push(format!("keyword automaton: {error}"));
                None
            }
        };
        Keywords {
            automaton,
            rules: keyword_rules,
        }
    }
}

impl Near {
    fn holds(self, text: &[u8], start: usize, end: usize) -> bool {
        match self {
            Near::Anything => true,
            Near::Assignment => {
                let rest = text.get(end..).unwrap_or_default();
                let mut bytes = rest.iter().take(96).copied().peekable();
                while bytes
                    .next_if(|&b| is_key_byte(b) || b == b'.' || b == b'[' || b == b']')
                    .is_some()
                {}
                while bytes.next_if(|&b| b == b'\\').is_some() {}
                let _ = bytes.next_if(|&b| matches!(b, b'"' | b'\'' | b'`'));
                while bytes.next_if(|&b| b == b' ' || b == b'\t').is_some() {}
                matches!(
                    bytes.next(),
                    Some(b'=' | b':' | b',' | b'>' | b'!' | b'?' | b'|')
                )
            }
            Near::Flag => {
                let name_start = identifier_start(text, start);
                let dash_before = text
                    .get(name_start..start)
                    .is_some_and(|name| name.contains(&b'-'));
                dash_before && matches!(text.get(end), Some(b'=' | b' ' | b'\t'))
            }
            Near::WordStart => is_word_start(text, start),
        }
    }
}

impl CompiledRule {
    /// Finds the rule's matches that start in `start..end` and records their secret spans.
    fn scan(
        &self,
        regex: &Regex,
        text: &[u8],
        start: usize,
        end: usize,
        locs: &mut CaptureLocations,
        scan: &mut Scan,
    ) {
        // The window's end is where a value ends (or the end of text), so cutting the haystack
        // there changes no match; procedural actions read on in `text` itself.
        let haystack = text.get(..end).unwrap_or(text);
        let rule = self.rule;
        if rule.action == Action::Assignment {
            scan_assignments(rule, text, haystack, start, scan);
            return;
        }
        let mut at = start;
        while at < haystack.len() {
            let Some(whole) = regex.captures_read_at(locs, haystack, at) else {
                break;
            };
            if rule.word_start && !is_word_start(text, whole.start()) {
                at = whole.start() + 1;
                continue;
            }
            match rule.action {
                Action::Replace => {
                    if let Some(secret) = locs.get(rule.secret_group)
                        && secret.1 > secret.0
                        && passes(rule.check, text, locs, secret)
                    {
                        scan.push(secret.0, secret.1);
                    }
                }
                // Found by `scan_assignments`, never by the regex.
                Action::Assignment => {}
                Action::Authorization => assignment::authorization(text, locs, scan),
                Action::PrivateKey => {
                    multiline::private_key(text, whole.start(), whole.end(), scan);
                }
                Action::BodyLines => multiline::body_lines(text, whole.end(), scan),
                Action::Kubernetes => multiline::kubernetes(text, whole.start(), whole.end(), scan),
            }
            // Procedural actions read on past the match: a key inside the value just parsed
            // (`"out":"password: ..."`, `?a=b&token=...`, `X=ACCESS_TOKEN=...`) must still be
            // found. The search resumes at the separator's last byte, since the next match
            // opens with the byte before its key.
            let next = match rule.action {
                Action::Assignment | Action::Authorization => locs
                    .get(3)
                    .map_or(whole.end(), |(_, separator_end)| separator_end - 1),
                _ => whole.end(),
            };
            at = next.max(whole.start() + 1);
        }
    }
}

/// [`CompiledRule::scan`] for the `generic-assignment` rule: the same loop over the rule's
/// matches, found by [`assignment_match::find`] instead of the regex (see there why).
fn scan_assignments(rule: &Rule, text: &[u8], haystack: &[u8], start: usize, scan: &mut Scan) {
    let mut at = start;
    while at < haystack.len() {
        let Some(groups) = assignment_match::find(haystack, at) else {
            break;
        };
        let Some(whole) = groups.get(0) else {
            break;
        };
        if rule.word_start && !is_word_start(text, whole.0) {
            at = whole.0 + 1;
            continue;
        }
        assignment::assignment(text, &groups, scan);
        // As for the regex: read on from the separator's last byte, so a key inside the value
        // just parsed is still found.
        let next = groups
            .get(3)
            .map_or(whole.1, |(_, separator_end)| separator_end - 1);
        at = next.max(whole.0 + 1);
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
    fn next_stop(&mut self, text: &[u8], from: usize, is_stop: fn(u8) -> bool) -> usize {
        if self.from <= from && from <= self.stop && self.stop > 0 {
            return self.stop;
        }
        let stop = text
            .get(from..)
            .and_then(|rest| rest.iter().position(|&b| is_stop(b)))
            .map_or(text.len(), |offset| from + offset);
        *self = StopCache { from, stop };
        stop
    }
}

/// Bytes that end every secret value of [`ValueEnd::StopByte`] rules: whitespace, quotes,
/// backslash, brackets, braces, parentheses, angle brackets, comma, semicolon, `&`.
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

/// Bytes that end values of [`ValueEnd::Blank`] rules: whitespace, quotes, angle brackets.
fn is_blank_stop(byte: u8) -> bool {
    byte.is_ascii_whitespace() || matches!(byte, b'"' | b'\'' | b'`' | b'<' | b'>')
}

pub(crate) fn is_key_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-' || byte >= 0x80
}

/// Moves `at` back to the start of the key or identifier it is in (at most 256 bytes).
fn identifier_start(text: &[u8], mut at: usize) -> usize {
    let floor = at.saturating_sub(256);
    while at > floor
        && text
            .get(at - 1)
            .copied()
            .is_some_and(|b| is_key_byte(b) || b == b'.')
    {
        at -= 1;
    }
    at
}

/// True when a match may start at `at`: at the start of text, after a byte that is not a
/// letter, digit or `_`, or after a JSON escape (`\n`, `\r`, `\t`) left undecoded.
pub(crate) fn is_word_start(text: &[u8], at: usize) -> bool {
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

/// Sorts and merges spans, widening each to character boundaries.
pub(crate) fn normalize_spans(text: &[u8], mut spans: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let is_continuation = |at: usize| text.get(at).is_some_and(|b| (b & 0xC0) == 0x80);
    for (start, end) in &mut spans {
        *end = (*end).min(text.len());
        while *start > 0 && is_continuation(*start) {
            *start -= 1;
        }
        while *end < text.len() && is_continuation(*end) {
            *end += 1;
        }
    }
    spans.retain(|(start, end)| end > start);
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

// ----- Checks of single-regex rules -----------------------------------------------------------

fn passes(check: Check, text: &[u8], locs: &CaptureLocations, secret: (usize, usize)) -> bool {
    let value = text.get(secret.0..secret.1).unwrap_or_default();
    let rest = text.get(secret.1..).unwrap_or_default();
    if find(value, REDACTED_SECRET.as_bytes()).is_some() {
        return false;
    }
    match check {
        Check::Always => true,
        Check::HasDigit => value.iter().any(u8::is_ascii_digit),
        Check::DigitAndLetter => {
            value.iter().any(u8::is_ascii_digit)
                && value.iter().any(u8::is_ascii_alphabetic)
                && !is_filler(value)
        }
        Check::NotPlaceholder => !is_reference(value) && !is_placeholder(value),
        Check::EmbeddedPassword => !is_variable(value) && !is_filler(value),
        Check::UrlUserToken => looks_random(value) || (value.len() >= 32 && is_hex(value)),
        Check::FlagValue => {
            !is_reference(value)
                && !is_placeholder(value)
                && !is_constant_name(value)
                && !is_lowercase_word(value, 12)
        }
        Check::ProseValue => {
            let inner = value.get(1..).unwrap_or_default();
            !is_reference(value)
                && !is_placeholder(value)
                && !is_constant_name(value)
                && !is_filler(value)
                && (value.iter().any(u8::is_ascii_digit)
                    || value.iter().any(|b| b"!@#%^&*+=?~".contains(b))
                    || inner.iter().any(u8::is_ascii_uppercase))
        }
        Check::Bearer => {
            // `Bearer resource_metadata="..."`: a challenge's parameter, not a token.
            let parameter = value.ends_with(b"=")
                && rest.first() == Some(&b'"')
                && is_identifier_name(value.strip_suffix(b"=").unwrap_or(value));
            !is_placeholder(value) && !is_code(value, rest) && !parameter
        }
        Check::BasicCredentials => is_basic_credentials(value),
        Check::SameTag => {
            let tag = |group| {
                locs.get(group)
                    .and_then(|(s, e)| text.get(s..e))
                    .unwrap_or_default()
            };
            tag(1).eq_ignore_ascii_case(tag(3)) && !is_reference(value) && !is_placeholder(value)
        }
    }
}

/// Only lower-case letters, `_` and `-`, at most `max_len` bytes: an identifier, not a value.
fn is_lowercase_word(value: &[u8], max_len: usize) -> bool {
    value.len() <= max_len
        && value
            .iter()
            .all(|b| b.is_ascii_lowercase() || *b == b'_' || *b == b'-')
}

/// Base64 of printable `user:password`.
fn is_basic_credentials(value: &[u8]) -> bool {
    let Some(decoded) = base64_decode(value) else {
        return false;
    };
    decoded.iter().all(|b| (0x20..0x7F).contains(b))
        && decoded
            .iter()
            .position(|&b| b == b':')
            .is_some_and(|colon| colon > 0 && colon + 1 < decoded.len())
}

fn base64_decode(value: &[u8]) -> Option<Vec<u8>> {
    let digits = value
        .strip_suffix(b"==")
        .or_else(|| value.strip_suffix(b"="));
    let digits = digits.unwrap_or(value);
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    let mut buffer = 0u32;
    let mut bits = 0;
    for &b in digits {
        let sextet = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        buffer = (buffer << 6) | u32::from(sextet);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((buffer >> bits) & 0xFF).ok()?);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_and_both_automata_compile() {
        assert!(rule_errors().is_empty(), "{:?}", rule_errors());
        assert_eq!(ENGINE.rule_count(), rules::all().count());
    }

    #[test]
    fn rule_ids_are_unique_and_keywords_are_written_as_matched() {
        let mut ids: Vec<&str> = rules::all().map(|r| r.id).collect();
        ids.sort_unstable();
        let count = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), count);
        for rule in rules::all() {
            assert!(!rule.keywords.is_empty(), "{}", rule.id);
            if !rule.case_sensitive {
                for keyword in rule.keywords {
                    assert_eq!(*keyword, keyword.to_ascii_lowercase(), "{}", rule.id);
                }
            }
        }
    }

    #[test]
    fn basic_credentials_decode() {
        assert!(is_basic_credentials(b"dXNlcjpwYXNzd29yZA=="));
        assert!(is_basic_credentials(b"YWxhZGRpbjpvcGVuc2VzYW1l"));
        assert!(!is_basic_credentials(b"authentication"));
        assert!(!is_basic_credentials(b"c2VjcmV0"));
        assert!(!is_basic_credentials(b"QWxhZGRpbjo="));
    }

    #[test]
    fn case_sensitive_keywords_count_only_in_their_case() {
        let rule = |id: &str| {
            ENGINE
                .rules
                .iter()
                .position(|compiled| compiled.rule.id == id)
                .unwrap()
        };
        let discord = rule("discord-bot-token");
        let opens = |text: &[u8], index: usize| {
            ENGINE
                .windows(text)
                .iter()
                .any(|&(rule, _, _)| rule == index)
        };
        assert!(opens(b"x MTabc", discord));
        assert!(opens(b"x NjAbc", discord));
        for other_case in [&b"x mtabc"[..], b"x mTabc", b"x Mtabc", b"x NJabc"] {
            assert!(!opens(other_case, discord));
        }
        // A case-insensitive keyword of the same automaton still counts in any case.
        let github = rule("github-pat");
        assert!(opens(b"x GHP_abc", github));
        assert!(opens(b"x ghp_abc", github));
    }

    #[test]
    fn spans_widen_to_character_boundaries_and_merge() {
        let text = "aé b".as_bytes();
        assert_eq!(normalize_spans(text, vec![(2, 3), (0, 1)]), vec![(0, 3)]);
    }
}
