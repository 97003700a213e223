//! The one path recogniser: which words of a text are paths, and which tool arguments are.
//!
//! In prose ([`path_token`], [`path_tokens`]), a token is a URL (a scheme and `://`, kept
//! whole), a file name with a known extension
//! (`App.tsx`, `config.json`, `C:\dir\x.rs`, `crates/a/src/lib.rs:88:14` gives
//! `crates/a/src/lib.rs`), or a slash path of identifier segments (`openviking/session/session`;
//! two short segments such as `and/or` or `I/O` do not count). The extension must end the
//! token, so `App.tsx` is never read as `App.ts`, nor `config.json` as `config.js`. The working
//! memory's Files & Context guard and the anchors a memory rewrite must keep ([`crate::anchors`])
//! read paths this way.
//!
//! Where the position already says "a file" (a file tool's `path` argument, the operand of
//! `cat` or `rm`), a bare name such as `Makefile` is a path too: [`plausible_path`] only refuses
//! what cannot be one (options, URLs, globs and variables, devices, whitespace).

/// Extensions that make a word a file name.
const EXTENSIONS: &[&str] = &[
    "py", "pyi", "ipynb", "ts", "tsx", "js", "jsx", "mjs", "cjs", "md", "mdx", "rst", "txt",
    "yaml", "yml", "json", "jsonl", "toml", "ini", "cfg", "conf", "env", "lock", "sh", "bash",
    "zsh", "fish", "ps1", "cmd", "bat", "rs", "go", "c", "h", "cc", "cpp", "hpp", "java", "kt",
    "swift", "rb", "php", "cs", "sql", "html", "css", "scss", "vue", "svelte", "xml", "csv",
    "proto", "graphql", "gradle", "log", "png", "jpg", "jpeg", "gif", "svg", "pdf",
];

/// Characters that end a word when looking for paths.
fn is_word_break(ch: char) -> bool {
    ch.is_whitespace()
        || matches!(
            ch,
            '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>' | '"' | '\'' | '`' | ',' | ';' | '|'
        )
}

/// The path-like tokens of a text, sorted and deduplicated (case-sensitive).
pub fn path_tokens(text: &str) -> Vec<&str> {
    let mut found: Vec<&str> = path_tokens_in_order(text).collect();
    found.sort_unstable();
    found.dedup();
    found
}

/// The path-like tokens of a text, in order, repeats included: [`path_token`] of each word.
pub fn path_tokens_in_order(text: &str) -> impl Iterator<Item = &str> {
    text.split(is_word_break).filter_map(path_token)
}

/// The path in one word, if it holds one.
pub fn path_token(word: &str) -> Option<&str> {
    // Every path has a dot, a slash or a backslash: most words are out at once.
    if !word.contains(['.', '/', '\\']) {
        return None;
    }
    if let Some(scheme_end) = word.find("://") {
        if is_url_scheme(&word[..scheme_end]) {
            let url = word.trim_end_matches(['.', ',', ':', '!', '?']);
            return (url.len() > scheme_end + 3).then_some(url);
        }
        return None;
    }
    let word = strip_line_suffix(word.trim_end_matches(['.', ',', ':', '!', '?']));
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

/// Longest argument taken as a path, in characters.
const MAX_ARGUMENT_CHARS: usize = 300;

/// A tool argument in a file position, trimmed (and without a trailing `/` or `,`), or `None`
/// when it cannot be a file path: empty, too long, an option, a URL, a glob or variable, a
/// device, or holding whitespace or control characters.
pub fn plausible_path(argument: &str) -> Option<&str> {
    let path = argument.trim().trim_end_matches(['/', ',']);
    let looks_like_url = path
        .split_once("://")
        .is_some_and(|(scheme, _)| is_url_scheme(scheme));
    let plausible = !path.is_empty()
        && path.chars().count() <= MAX_ARGUMENT_CHARS
        && !path.starts_with('-')
        && !looks_like_url
        && !path.starts_with("/dev/")
        && !path.starts_with("/proc/")
        && !path.contains(['*', '?', '$', '`', '{', '}', '<', '>', '|', '\\'])
        && !path.chars().any(|c| c.is_whitespace() || c.is_control())
        && path.chars().any(|c| c.is_alphanumeric());
    plausible.then_some(path)
}

/// A URL scheme (`https`, `git+ssh`, `x-custom`): ASCII letters, digits, `+`, `-` and `.`.
fn is_url_scheme(scheme: &str) -> bool {
    !scheme.is_empty()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// `file.rs:88:14` without `:88:14`.
fn strip_line_suffix(word: &str) -> &str {
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

fn path_char(ch: char) -> bool {
    ch.is_alphanumeric() || matches!(ch, '_' | '-' | '.' | '/' | '\\' | '~' | '@' | '+')
}

/// True when `extension` is one of [`EXTENSIONS`], in any case.
fn is_known_extension(extension: &str) -> bool {
    EXTENSIONS
        .iter()
        .any(|known| known.eq_ignore_ascii_case(extension))
}

fn has_known_extension(word: &str) -> bool {
    let body = match word.as_bytes() {
        [drive, b':', b'\\' | b'/', ..] if drive.is_ascii_alphabetic() => &word[2..],
        _ => word,
    };
    if !body.chars().all(path_char) {
        return false;
    }
    let name = body.rsplit(['/', '\\']).next().unwrap_or(body);
    let Some((stem, extension)) = name.rsplit_once('.') else {
        return false;
    };
    !stem.is_empty() && stem.chars().any(char::is_alphanumeric) && is_known_extension(extension)
}

fn is_slash_path(word: &str) -> bool {
    if !word.contains('/') || !word.chars().all(path_char) || word.contains("//") {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Untrusted text: any string, or one dense in CJK, quotes, slashes, dots and colons.
    fn untrusted_text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "([\\p{Han}\\p{Hiragana}]|[a-z]{1,6}|\\PC|['\"`/\\\\.:*~_-]|\\s|://){0,40}",
        ]
    }

    proptest! {
        #[test]
        fn path_tokens_are_words_of_the_text(text in untrusted_text()) {
            let tokens = path_tokens(&text);
            for token in &tokens {
                prop_assert!(!token.is_empty());
                prop_assert!(text.contains(token), "{token:?} not in {text:?}");
                prop_assert!(!token.contains(is_word_break), "{token:?} spans a word break");
                prop_assert_eq!(path_token(token), Some(*token), "{:?} is not its own token", token);
            }
            prop_assert!(tokens.windows(2).all(|pair| pair[0] < pair[1]));
        }

        #[test]
        fn plausible_paths_are_trimmed_single_words(argument in untrusted_text()) {
            if let Some(path) = plausible_path(&argument) {
                prop_assert!(argument.contains(path));
                prop_assert!(!path.is_empty() && !path.starts_with('-'));
                prop_assert!(!path.chars().any(|c| c.is_whitespace() || c.is_control()));
                prop_assert_eq!(plausible_path(path), Some(path));
            }
        }
    }

    #[test]
    fn plausible_paths_refuse_what_cannot_be_a_file() {
        assert_eq!(plausible_path(" Makefile "), Some("Makefile"));
        assert_eq!(plausible_path("src/,"), Some("src"));
        assert_eq!(plausible_path("目录/文件.rs"), Some("目录/文件.rs"));
        for refused in [
            "",
            "-n",
            "https://example.com/a.rs",
            "git+ssh://host/repo",
            "*.rs",
            "$HOME/x",
            "/dev/null",
            "a b.txt",
            "a\\b",
            "...",
        ] {
            assert_eq!(plausible_path(refused), None, "{refused:?}");
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

    fn tokens(text: &str) -> Vec<&str> {
        path_tokens(text)
    }

    #[test]
    fn words_end_at_whitespace_and_delimiters() {
        assert_eq!(
            tokens("a/b.rs,(x.py)\u{a0}c\\d.md  [e/f.md]\u{2003}<g/h.rs>\tj`k.toml`"),
            ["a/b.rs", "c\\d.md", "e/f.md", "g/h.rs", "k.toml", "x.py"]
        );
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
