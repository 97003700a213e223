//! Path-like tokens: what Files & Context must not lose in a rewrite.
//!
//! A token is a URL (anything with `://`, kept whole), a file name with a known extension
//! (`App.tsx`, `config.json`, `C:\dir\x.rs`, `crates/a/src/lib.rs:88:14` gives
//! `crates/a/src/lib.rs`), or a slash path of identifier segments (`openviking/session/session`;
//! two short segments such as `and/or` or `I/O` do not count). The extension must end the
//! token, so `App.tsx` is never read as `App.ts`, nor `config.json` as `config.js`.

/// Extensions that make a word a file name.
const EXTENSIONS: &[&str] = &[
    "py", "pyi", "ipynb", "ts", "tsx", "js", "jsx", "mjs", "cjs", "md", "mdx", "rst", "txt",
    "yaml", "yml", "json", "jsonl", "toml", "ini", "cfg", "conf", "env", "lock", "sh", "bash",
    "zsh", "fish", "ps1", "cmd", "bat", "rs", "go", "c", "h", "cc", "cpp", "hpp", "java", "kt",
    "swift", "rb", "php", "cs", "sql", "html", "css", "scss", "vue", "svelte", "xml", "csv",
    "proto", "graphql", "gradle", "log", "png", "jpg", "jpeg", "gif", "svg", "pdf",
];

/// The length of the longest of [`EXTENSIONS`].
const LONGEST_EXTENSION: usize = 7;

/// Characters that end a word when looking for paths: the definition [`path_words`] follows
/// byte by byte, and its tests compare against.
#[cfg(test)]
fn is_word_break(ch: char) -> bool {
    ch.is_whitespace()
        || matches!(
            ch,
            '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>' | '"' | '\'' | '`' | ',' | ';' | '|'
        )
}

/// The path-like tokens of a text, sorted and deduplicated (case-sensitive).
pub fn path_tokens(text: &str) -> Vec<&str> {
    // Room for a path every few lines, so the list rarely grows.
    let mut found: Vec<&str> = Vec::with_capacity(text.len() / 64 + 4);
    found.extend(path_tokens_in_order(text));
    found.sort_unstable();
    found.dedup();
    found
}

/// The ASCII characters that end a word when looking for paths: whitespace and the
/// delimiters below. Other characters end a word when they are whitespace.
const ASCII_BREAKS: [bool; 128] = {
    let mut table = [false; 128];
    let breaks = b"\t\n\x0b\x0c\r ()[]{}<>\"'`,;|";
    let mut i = 0;
    while i < breaks.len() {
        table[breaks[i] as usize] = true;
        i += 1;
    }
    table
};

/// The words of `text`, split at the characters that end a word, that hold a dot, a slash or
/// a backslash: the only words that can hold a path. Found from those characters (one
/// vectorized search), each widened to its word, so the words of prose around them are never
/// read.
#[cfg(test)]
pub(crate) fn path_words(text: &str) -> impl Iterator<Item = &str> {
    classified_words(text).map(|(word, _)| word)
}

/// The path-like tokens of a text, in order, repeats included: [`path_token`] of each of
/// its path words (see `path_words`), with what the token needs to know of each word's bytes gathered while the
/// word's end is looked for.
pub(crate) fn path_tokens_in_order(text: &str) -> impl Iterator<Item = &str> {
    classified_words(text).filter_map(|(word, classes)| path_token_of(word, classes))
}

/// The words of `text`, split at the characters that end a word, that hold a dot, a slash or
/// a backslash (see `path_words`), each with its [`WordClasses`].
fn classified_words(text: &str) -> impl Iterator<Item = (&str, WordClasses)> {
    let bytes = text.as_bytes();
    // Where the last word returned ends: the search goes on from there, so the other hits
    // inside that word are never looked at.
    let mut done = 0;
    std::iter::from_fn(move || {
        let rest = bytes.get(done..)?;
        let hit = done + memchr::memchr3(b'.', b'/', b'\\', rest)?;
        let start = word_start(text, hit);
        let (end, classes) = scan_word(text, start);
        done = end;
        Some((text.get(start..end)?, classes))
    })
}

/// What [`path_token`] notes of a word's bytes (see [`BYTE_CLASSES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct WordClasses {
    /// The classes seen.
    seen: u8,
    /// ASCII characters a path may not hold.
    not_path: usize,
    colons: usize,
}

impl WordClasses {
    /// The classes of every byte of `word`.
    fn of(word: &str) -> Self {
        let mut classes = Self {
            seen: 0,
            not_path: 0,
            colons: 0,
        };
        for &byte in word.as_bytes() {
            classes.note(BYTE_CLASSES[usize::from(byte)]);
        }
        classes
    }

    fn note(&mut self, class: u8) {
        self.seen |= class;
        self.not_path += usize::from((class & NOT_PATH) >> 2);
        self.colons += usize::from((class & COLON) >> 1);
    }
}

/// Where the word starting at `start` ends (at its first break, as `word_end` finds it from
/// any byte of the word), and the classes of its bytes.
// Inlined into the search for path words (with `word_start`): one call per path word cost
// more than the call itself, the word's loop compiling better in place.
#[inline(always)]
fn scan_word(text: &str, start: usize) -> (usize, WordClasses) {
    let bytes = text.as_bytes();
    let mut classes = WordClasses {
        seen: 0,
        not_path: 0,
        colons: 0,
    };
    let mut end = start;
    while let Some(&byte) = bytes.get(end) {
        // One lookup says whether the byte ends the word, starts a multi-byte character, or
        // is an ASCII byte of the word (and its classes).
        let class = SCAN_CLASSES[usize::from(byte)];
        if class & (BREAK | NON_ASCII) == 0 {
            classes.note(class);
            end += 1;
        } else if class & BREAK != 0 {
            break;
        } else {
            let Some(ch) = text.get(end..).and_then(|rest| rest.chars().next()) else {
                break;
            };
            if ch.is_whitespace() {
                break;
            }
            classes.seen |= NON_ASCII;
            end += ch.len_utf8();
        }
    }
    (end, classes)
}

/// True when the byte is an ASCII character that ends a word.
fn is_ascii_break(byte: u8) -> bool {
    byte.is_ascii() && ASCII_BREAKS[usize::from(byte)]
}

/// Where the word holding the ASCII byte at `at` starts.
#[inline(always)]
fn word_start(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    let mut start = at;
    while start > 0 {
        let Some(&byte) = bytes.get(start - 1) else {
            break;
        };
        if byte.is_ascii() {
            if is_ascii_break(byte) {
                break;
            }
            start -= 1;
        } else {
            // The character that ends here: back to its first byte.
            let mut first = start - 1;
            while first > 0 && !text.is_char_boundary(first) {
                first -= 1;
            }
            let whitespace = text
                .get(first..)
                .and_then(|rest| rest.chars().next())
                .is_some_and(char::is_whitespace);
            if whitespace {
                break;
            }
            start = first;
        }
    }
    start
}

/// Where the word holding the byte at `at` ends: the definition [`scan_word`] follows.
#[cfg(test)]
fn word_end(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    let mut end = at;
    while let Some(&byte) = bytes.get(end) {
        if byte.is_ascii() {
            if is_ascii_break(byte) {
                break;
            }
            end += 1;
        } else {
            let Some(ch) = text.get(end..).and_then(|rest| rest.chars().next()) else {
                break;
            };
            if ch.is_whitespace() {
                break;
            }
            end += ch.len_utf8();
        }
    }
    end
}

/// The path in one word, if it holds one.
pub fn path_token(word: &str) -> Option<&str> {
    path_token_of(word, WordClasses::of(word))
}

/// [`path_token`] of a word whose classes are known. One pass over the word says what the
/// rules below would otherwise find in several: most words are ASCII with no colon but in
/// their trailing punctuation (no URL, no line suffix, no drive), and for those the
/// characters a path may not hold are counted once instead of looked for again.
fn path_token_of(word: &str, classes: WordClasses) -> Option<&str> {
    let WordClasses {
        seen,
        not_path,
        colons,
    } = classes;
    // Every path has a dot, a slash or a backslash: most words are out at once.
    if seen & SEPARATOR == 0 {
        return None;
    }
    if seen & NON_ASCII != 0 {
        return path_token_general(word);
    }
    let bytes = word.as_bytes();
    // The trailing punctuation, with its colons and the characters of it a path may not
    // hold (all but the dots), counted in one pass from the end.
    let mut end = bytes.len();
    let mut cut_colons = 0;
    let mut cut_not_path = 0;
    while let Some(&byte) = end.checked_sub(1).and_then(|last| bytes.get(last)) {
        if !matches!(byte, b'.' | b',' | b':' | b'!' | b'?') {
            break;
        }
        cut_colons += usize::from(byte == b':');
        cut_not_path += usize::from(byte != b'.');
        end -= 1;
    }
    if cut_colons != colons {
        return path_token_general(word);
    }
    // No colon is left: no `://`, no `:88` line suffix, no `C:` drive.
    let stars = bytes
        .get(..end)
        .unwrap_or_default()
        .iter()
        .take_while(|byte| **byte == b'*')
        .count();
    let path = word.get(stars..end).unwrap_or_default();
    if path.is_empty() {
        return None;
    }
    // The characters cut from either end that a path may not hold.
    let cut_not_path = stars + cut_not_path;
    let all_path = not_path == cut_not_path;
    if (all_path && ascii_known_extension(path.as_bytes())) || slash_path_of(path, all_path) {
        Some(path)
    } else {
        None
    }
}

/// A dot, a slash or a backslash (see [`BYTE_CLASSES`]).
const SEPARATOR: u8 = 1;
/// A colon.
const COLON: u8 = 2;
/// An ASCII character that [`path_char`] refuses (counted by its value, 1).
const NOT_PATH: u8 = 1 << 2;
/// A byte of a multi-byte character.
const NON_ASCII: u8 = 1 << 3;

/// An ASCII character that ends a word (see `ASCII_BREAKS`); only in [`SCAN_CLASSES`].
const BREAK: u8 = 1 << 4;

/// [`BYTE_CLASSES`], with [`BREAK`] added for the ASCII characters that end a word.
const SCAN_CLASSES: [u8; 256] = {
    let mut table = BYTE_CLASSES;
    let mut byte = 0;
    while byte < 128 {
        if ASCII_BREAKS[byte] {
            table[byte] |= BREAK;
        }
        byte += 1;
    }
    table
};

/// What [`path_token`] notes of each byte.
const BYTE_CLASSES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        let mut class = 0;
        if b >= 0x80 {
            class |= NON_ASCII;
        } else if !ASCII_PATH_BYTES[byte] {
            class |= NOT_PATH;
        }
        if matches!(b, b'.' | b'/' | b'\\') {
            class |= SEPARATOR;
        }
        if b == b':' {
            class |= COLON;
        }
        table[byte] = class;
        byte += 1;
    }
    table
};

/// [`path_token`] for any word (URLs, line suffixes, drives, other scripts).
fn path_token_general(word: &str) -> Option<&str> {
    let bytes = word.as_bytes();
    if !bytes.iter().any(|b| matches!(b, b'.' | b'/' | b'\\')) {
        return None;
    }
    if let Some(scheme_end) = find_scheme_end(bytes) {
        let scheme = bytes.get(..scheme_end).unwrap_or_default();
        if !scheme.is_empty()
            && scheme
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || *b == b'+')
        {
            let url = trim_end_bytes(word, |b| matches!(b, b'.' | b',' | b':' | b'!' | b'?'));
            return (url.len() > scheme_end + 3).then_some(url);
        }
        return None;
    }
    let word = strip_line_suffix(trim_end_bytes(word, |b| {
        matches!(b, b'.' | b',' | b':' | b'!' | b'?')
    }));
    let word = word.trim_start_matches('*');
    if word.is_empty() {
        return None;
    }
    if has_known_extension(word) || is_slash_path(word) {
        Some(word)
    } else {
        None
    }
}

/// Where the first `://` of a word starts.
fn find_scheme_end(bytes: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = bytes.get(from..)?.iter().position(|b| *b == b':') {
        let colon = from + at;
        if bytes.get(colon + 1..colon + 3) == Some(b"//") {
            return Some(colon);
        }
        from = colon + 1;
    }
    None
}

/// Up to 8 bytes as one number, zero-padded: distinct for distinct extensions, which are at
/// most [`LONGEST_EXTENSION`] bytes long and hold no zero byte.
const fn packed(bytes: &[u8]) -> u64 {
    let mut out = 0u64;
    let mut i = 0;
    while i < bytes.len() && i < 8 {
        out |= (bytes[i] as u64) << (8 * i);
        i += 1;
    }
    out
}

/// Most extensions that start with one letter.
const PER_LETTER: usize = 12;

/// [`EXTENSIONS`] packed ([`packed`]) and filed by their first letter, so a word's extension
/// is compared with a few numbers instead of every known extension. A row ends at its first
/// zero.
const EXTENSIONS_BY_LETTER: [[u64; PER_LETTER]; 26] = {
    let mut table = [[0u64; PER_LETTER]; 26];
    let mut filled = [0usize; 26];
    let mut i = 0;
    while i < EXTENSIONS.len() {
        let extension = EXTENSIONS[i].as_bytes();
        assert!(extension.len() <= LONGEST_EXTENSION && extension[0].is_ascii_lowercase());
        let row = (extension[0] - b'a') as usize;
        table[row][filled[row]] = packed(extension);
        filled[row] += 1;
        i += 1;
    }
    table
};

/// True when `extension` is one of [`EXTENSIONS`], in any case: lower-cased into one number
/// and compared with the known extensions of its first letter.
fn is_known_extension(extension: &str) -> bool {
    is_known_extension_bytes(extension.as_bytes())
}

/// [`is_known_extension`] of the extension's bytes.
fn is_known_extension_bytes(bytes: &[u8]) -> bool {
    if bytes.is_empty() || bytes.len() > LONGEST_EXTENSION {
        return false;
    }
    let Some(first) = bytes.first().map(u8::to_ascii_lowercase) else {
        return false;
    };
    if !first.is_ascii_lowercase() {
        return false;
    }
    let mut lower = [0u8; 8];
    for (slot, byte) in lower.iter_mut().zip(bytes) {
        *slot = byte.to_ascii_lowercase();
    }
    let wanted = u64::from_le_bytes(lower);
    EXTENSIONS_BY_LETTER
        .get(usize::from(first - b'a'))
        .is_some_and(|row| {
            row.iter()
                .take_while(|known| **known != 0)
                .any(|known| *known == wanted)
        })
}

/// `word` without the ASCII characters `strip` accepts at its end.
fn trim_end_bytes(word: &str, strip: impl Fn(u8) -> bool) -> &str {
    let end = word
        .as_bytes()
        .iter()
        .rposition(|b| !strip(*b))
        .map_or(0, |at| at + 1);
    word.get(..end).unwrap_or_default()
}

/// `file.rs:88:14` without `:88:14`.
fn strip_line_suffix(word: &str) -> &str {
    let mut end = word;
    while let Some(colon) = end.as_bytes().iter().rposition(|b| *b == b':') {
        let tail = end.as_bytes().get(colon + 1..).unwrap_or_default();
        if !tail.is_empty() && tail.iter().all(u8::is_ascii_digit) {
            end = end.get(..colon).unwrap_or_default();
        } else {
            break;
        }
    }
    end
}

fn path_char(ch: char) -> bool {
    ch.is_alphanumeric() || matches!(ch, '_' | '-' | '.' | '/' | '\\' | '~' | '@' | '+')
}

/// The ASCII bytes [`path_char`] accepts.
const ASCII_PATH_BYTES: [bool; 128] = {
    let mut table = [false; 128];
    let mut byte = 0;
    while byte < 128 {
        let b = byte as u8;
        table[byte] = b.is_ascii_alphanumeric()
            || matches!(b, b'_' | b'-' | b'.' | b'/' | b'\\' | b'~' | b'@' | b'+');
        byte += 1;
    }
    table
};

/// True when every character of `text` is a [`path_char`]; ASCII bytes are checked by table.
fn all_path_chars(text: &str) -> bool {
    for (at, &byte) in text.as_bytes().iter().enumerate() {
        if !byte.is_ascii() {
            return text.get(at..).unwrap_or_default().chars().all(path_char);
        }
        if !ASCII_PATH_BYTES[usize::from(byte)] {
            return false;
        }
    }
    true
}

fn has_known_extension(word: &str) -> bool {
    let body = match word.as_bytes() {
        [drive, b':', b'\\' | b'/', ..] if drive.is_ascii_alphabetic() => &word[2..],
        _ => word,
    };
    known_extension_of(body, all_path_chars(body))
}

/// [`has_known_extension`] of a word without a drive, once whether all its characters are
/// [`path_char`]s (`all_path`) is known.
fn known_extension_of(body: &str, all_path: bool) -> bool {
    if !all_path {
        return false;
    }
    let name = match body
        .as_bytes()
        .iter()
        .rposition(|b| matches!(b, b'/' | b'\\'))
    {
        Some(at) => body.get(at + 1..).unwrap_or_default(),
        None => body,
    };
    let Some(dot) = name.as_bytes().iter().rposition(|b| *b == b'.') else {
        return false;
    };
    let (stem, extension) = (
        name.get(..dot).unwrap_or_default(),
        name.get(dot + 1..).unwrap_or_default(),
    );
    !stem.is_empty()
        && extension.len() <= LONGEST_EXTENSION
        && stem.chars().any(char::is_alphanumeric)
        && is_known_extension(extension)
}

/// [`known_extension_of`] of an ASCII body whose bytes are all [`path_char`]s, read once
/// from its end: the extension up to its dot (stopping at a slash, or once it is longer than
/// any known one), then the stem back to its first letter or digit.
fn ascii_known_extension(body: &[u8]) -> bool {
    let mut at = body.len();
    let dot = loop {
        let Some(before) = at.checked_sub(1) else {
            return false;
        };
        at = before;
        match body.get(at) {
            Some(b'.') => break at,
            Some(b'/' | b'\\') | None => return false,
            Some(_) if body.len() - at > LONGEST_EXTENSION => return false,
            Some(_) => {}
        }
    };
    let extension = body.get(dot + 1..).unwrap_or_default();
    let mut stem_has_alphanumeric = false;
    for &byte in body.get(..dot).unwrap_or_default().iter().rev() {
        if matches!(byte, b'/' | b'\\') {
            break;
        }
        if byte.is_ascii_alphanumeric() {
            stem_has_alphanumeric = true;
            break;
        }
    }
    stem_has_alphanumeric && is_known_extension_bytes(extension)
}

fn is_slash_path(word: &str) -> bool {
    slash_path_of(word, all_path_chars(word))
}

/// [`is_slash_path`], once whether all the word's characters are [`path_char`]s (`all_path`)
/// is known.
fn slash_path_of(word: &str, all_path: bool) -> bool {
    if !word.as_bytes().contains(&b'/')
        || !all_path
        || word.as_bytes().windows(2).any(|pair| pair == b"//")
    {
        return false;
    }
    let segments = || {
        word.trim_start_matches(['.', '~'])
            .split('/')
            .filter(|segment| !segment.is_empty())
    };
    let mut count = 0;
    for segment in segments() {
        count += 1;
        let identifier = segment
            .starts_with(|ch: char| ch.is_alphabetic() || ch == '_' || ch == '.')
            && segment
                .chars()
                .all(|ch| ch.is_alphanumeric() || matches!(ch, '_' | '-' | '.'));
        if !identifier {
            return false;
        }
    }
    if count < 2 {
        return false;
    }
    count > 2 || segments().any(|segment| segment.len() >= 4 || segment.contains(['_', '-', '.']))
}

#[cfg(test)]
mod tests {
    use super::*;

    // The definition of a path token, written plainly with string searches: what the
    // byte-wise version must agree with.
    /// The path in one word, if it holds one.
    fn plain_path_token(word: &str) -> Option<&str> {
        // Every path has a dot, a slash or a backslash: most words are out at once.
        if !word.bytes().any(|b| matches!(b, b'.' | b'/' | b'\\')) {
            return None;
        }
        if let Some(scheme_end) = word.find("://") {
            let scheme = &word[..scheme_end];
            if !scheme.is_empty()
                && scheme
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'+')
            {
                let url = word.trim_end_matches(['.', ',', ':', '!', '?']);
                return (url.len() > scheme_end + 3).then_some(url);
            }
            return None;
        }
        let word = plain_strip_line_suffix(word.trim_end_matches(['.', ',', ':', '!', '?']));
        let word = word.trim_start_matches('*');
        if word.is_empty() {
            return None;
        }
        if plain_has_known_extension(word) || plain_is_slash_path(word) {
            Some(word)
        } else {
            None
        }
    }

    /// `file.rs:88:14` without `:88:14`.
    fn plain_strip_line_suffix(word: &str) -> &str {
        let mut end = word;
        while let Some((head, tail)) = end.rsplit_once(':') {
            if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) {
                end = head;
            } else {
                break;
            }
        }
        end
    }

    fn plain_path_char(ch: char) -> bool {
        ch.is_alphanumeric() || matches!(ch, '_' | '-' | '.' | '/' | '\\' | '~' | '@' | '+')
    }

    fn plain_has_known_extension(word: &str) -> bool {
        let body = match word.as_bytes() {
            [drive, b':', b'\\' | b'/', ..] if drive.is_ascii_alphabetic() => &word[2..],
            _ => word,
        };
        if !body.chars().all(plain_path_char) {
            return false;
        }
        let name = body.rsplit(['/', '\\']).next().unwrap_or(body);
        let Some((stem, extension)) = name.rsplit_once('.') else {
            return false;
        };
        !stem.is_empty()
            && stem.chars().any(char::is_alphanumeric)
            && extension.len() <= LONGEST_EXTENSION
            && EXTENSIONS
                .iter()
                .any(|known| known.eq_ignore_ascii_case(extension))
    }

    fn plain_is_slash_path(word: &str) -> bool {
        if !word.contains('/')
            || !word.chars().all(plain_path_char)
            || word.as_bytes().windows(2).any(|pair| pair == b"//")
        {
            return false;
        }
        let segments: Vec<&str> = word
            .trim_start_matches(['.', '~'])
            .split('/')
            .filter(|segment| !segment.is_empty())
            .collect();
        if segments.len() < 2 {
            return false;
        }
        let identifier = |segment: &&str| {
            segment.starts_with(|ch: char| ch.is_alphabetic() || ch == '_' || ch == '.')
                && segment
                    .chars()
                    .all(|ch| ch.is_alphanumeric() || matches!(ch, '_' | '-' | '.'))
        };
        if !segments.iter().all(identifier) {
            return false;
        }
        segments.len() > 2
            || segments
                .iter()
                .any(|segment| segment.len() >= 4 || segment.contains(['_', '-', '.']))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 4000, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..proptest::prelude::ProptestConfig::default() })]

        #[test]
        fn path_tokens_follow_the_definition(
            word in r"(a|Z|_|-|\.|/|\\|:|//|https|\+|~|@|\*|,|!|\?|1|88|é|ü|rs|tsx|json|py|C:\\|src|x_y| ){0,12}",
        ) {
            proptest::prop_assert_eq!(path_token(&word), plain_path_token(&word));
        }
    }

    #[test]
    fn known_extensions_are_the_listed_ones() {
        for extension in EXTENSIONS {
            assert!(is_known_extension(extension), "{extension}");
            assert!(
                is_known_extension(&extension.to_ascii_uppercase()),
                "{extension}"
            );
        }
        for other in [
            "",
            "p",
            "pyc",
            "Js2",
            "jsonld",
            "\u{e9}",
            "1",
            "tsxx",
            "typescript",
        ] {
            assert!(!is_known_extension(other), "{other}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 4000, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..proptest::prelude::ProptestConfig::default() })]

        /// The table holds exactly the list: any short text is known when the list has it.
        #[test]
        fn the_extension_table_is_the_list(extension in "[a-zA-Z0-9\u{e9}]{0,8}|(py|js|c|s|j|m)[a-zA-Z1]{0,3}") {
            let listed = EXTENSIONS
                .iter()
                .any(|known| known.eq_ignore_ascii_case(&extension));
            proptest::prop_assert_eq!(is_known_extension(&extension), listed);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..proptest::prelude::ProptestConfig::default() })]

        /// The tokens gathered with the words' ends are the tokens of the split words.
        #[test]
        fn path_tokens_are_those_of_the_split_words(
            text in r"(a|Z|_|-|\.|/|\\|:|//|https|,|!|1|é|\u{a0}|\u{2003}|rs|py|C:\\|src| |\(|\)|`|\n){0,16}",
        ) {
            let expected: Vec<&str> = text.split(is_word_break).filter_map(plain_path_token).collect();
            proptest::prop_assert_eq!(path_tokens_in_order(&text).collect::<Vec<_>>(), expected);
            for word in path_words(&text) {
                let start = word.as_ptr() as usize - text.as_ptr() as usize;
                let (end, classes) = scan_word(&text, start);
                proptest::prop_assert_eq!(end, word_end(&text, start));
                proptest::prop_assert_eq!(classes, WordClasses::of(word));
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 4000, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..proptest::prelude::ProptestConfig::default() })]

        /// The backward reading of an ASCII path body is `known_extension_of` it.
        #[test]
        fn ascii_extensions_are_known_extensions(
            body in r"(a|Z|_|-|\.|/|\\|~|@|\+|1|rs|tsx|json|py|jsonld|src|x_y){0,10}",
        ) {
            proptest::prop_assert!(all_path_chars(&body));
            proptest::prop_assert_eq!(
                ascii_known_extension(body.as_bytes()),
                known_extension_of(&body, true)
            );
        }
    }

    fn tokens(text: &str) -> Vec<&str> {
        path_tokens(text)
    }

    #[test]
    fn path_words_are_the_split_words_that_can_hold_a_path() {
        let text = "a/b.rs,(x.py)\u{a0}c\\d  [e]\u{2003}f.md\u{e9}.g <h/i>\tj";
        let expected: Vec<&str> = text
            .split(is_word_break)
            .filter(|word| word.contains(['.', '/', '\\']))
            .collect();
        assert_eq!(path_words(text).collect::<Vec<_>>(), expected);
        assert_eq!(path_words("").count(), 0);
        assert_eq!(path_words("end.rs").collect::<Vec<_>>(), ["end.rs"]);
    }

    #[test]
    fn the_longest_extension_is_the_longest() {
        assert_eq!(
            EXTENSIONS.iter().map(|known| known.len()).max(),
            Some(LONGEST_EXTENSION)
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 512, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..proptest::prelude::ProptestConfig::default() })]

        #[test]
        fn path_words_agree_with_a_split(text in r"(\PC|[ \t./\\\x{a0}\x{2003}()`|])*") {
            let expected: Vec<&str> = text
                .split(is_word_break)
                .filter(|word| word.contains(['.', '/', '\\']))
                .collect();
            proptest::prop_assert_eq!(path_words(&text).collect::<Vec<_>>(), expected);
        }
    }

    #[test]
    fn extensions_end_the_token() {
        assert_eq!(
            tokens("edit App.tsx and config.json"),
            ["App.tsx", "config.json"]
        );
        assert_eq!(tokens("x.jsx file.pyc"), ["x.jsx"]);
        assert_eq!(tokens(r"C:\dir\x.rs"), [r"C:\dir\x.rs"]);
        assert_eq!(
            tokens("at crates/a/src/lib.rs:88:14: boom"),
            ["crates/a/src/lib.rs"]
        );
    }

    #[test]
    fn urls_are_kept_whole() {
        assert_eq!(
            tokens("see https://example.com/images/unused.png."),
            ["https://example.com/images/unused.png"]
        );
    }

    #[test]
    fn slash_paths_need_identifier_segments() {
        assert_eq!(
            tokens("openviking/session/session"),
            ["openviking/session/session"]
        );
        assert!(tokens("and/or I/O 24/7 hello README").is_empty());
    }
}
