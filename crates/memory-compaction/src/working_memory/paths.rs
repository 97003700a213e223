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
    found.extend(path_words(text).filter_map(path_token));
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
pub(crate) fn path_words(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut hits = memchr::memchr3_iter(b'.', b'/', b'\\', bytes);
    // Where the last word returned ends: hits before it are in that word.
    let mut done = 0;
    std::iter::from_fn(move || {
        for hit in hits.by_ref() {
            if hit < done {
                continue;
            }
            let start = word_start(text, hit);
            let end = word_end(text, hit);
            done = end;
            if let Some(word) = text.get(start..end) {
                return Some(word);
            }
        }
        None
    })
}

/// True when the byte is an ASCII character that ends a word.
fn is_ascii_break(byte: u8) -> bool {
    byte.is_ascii() && ASCII_BREAKS[usize::from(byte)]
}

/// Where the word holding the ASCII byte at `at` starts.
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

/// Where the word holding the byte at `at` ends.
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
    let bytes = word.as_bytes();
    // Every path has a dot, a slash or a backslash: most words are out at once. (Words are
    // short: plain loops over their bytes cost less than vectorized searches here.)
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

/// True when `extension` is one of [`EXTENSIONS`], in any case. Lower-cased into a small
/// buffer and compared only with the known extensions of its length.
fn is_known_extension(extension: &str) -> bool {
    let mut lower = [0u8; LONGEST_EXTENSION];
    let Some(slot) = lower.get_mut(..extension.len()) else {
        return false;
    };
    slot.copy_from_slice(extension.as_bytes());
    slot.make_ascii_lowercase();
    EXTENSIONS.iter().any(|known| known.as_bytes() == &*slot)
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
    if !all_path_chars(body) {
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

fn is_slash_path(word: &str) -> bool {
    if !word.as_bytes().contains(&b'/')
        || !all_path_chars(word)
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
