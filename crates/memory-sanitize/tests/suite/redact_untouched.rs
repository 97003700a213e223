//! False positives: text with no secret-like name or shape is never changed.

use std::borrow::Cow;

use memory_sanitize::{LineRedactor, redact_secrets};
use proptest::prelude::*;

/// Identifiers that are neither secret words nor provider prefixes.
const IDENTIFIERS: &[&str] = &[
    "value",
    "count",
    "index",
    "items",
    "result",
    "config",
    "path",
    "name",
    "data",
    "user",
    "buffer",
    "len",
    "size",
    "parser",
    "reader",
    "writer",
    "node",
    "tree",
    "list",
    "map",
    "state",
    "event",
    "error",
    "message",
    "request",
    "response",
    "client",
    "server",
    "handle",
    "line",
    "offset",
    "width",
    "height",
    "total",
    "prefix",
    "suffix",
    "label",
    "title",
    "body",
    "header",
    "field",
    "entry",
    "record",
    "row",
    "column",
    "table",
    "query",
    "filter",
    "limit",
    "page",
    "width_px",
    "max_len",
    "retry_count",
    "is_empty",
    "to_string",
    "from_str",
    "new",
    "default",
    "Vec",
    "String",
    "Option",
    "Result",
    "HashMap",
    "Self",
    "self",
    "None",
    "Some",
    "Ok",
    "Err",
];

const KEYWORDS: &[&str] = &[
    "fn", "let", "mut", "if", "else", "for", "in", "while", "return", "pub", "struct", "impl",
    "match", "use", "mod", "const", "static", "def", "class", "import", "from", "var", "function",
    "await", "async", "yield", "type", "enum", "trait", "where", "loop", "break", "continue",
];

const PUNCTUATION: &[&str] = &[
    " ", " ", " ", "(", ")", "{", "}", "[", "]", ";", ",", ".", "::", "->", "=>", " = ", ": ",
    " == ", " != ", " + ", " - ", " * ", " / ", "&", "&&", "||", "!", "?", "<", ">", "\n",
    "\n    ", "#", "//", "\"", "'", "_", "=", ":",
];

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(IDENTIFIERS).prop_map(str::to_owned),
        2 => prop::sample::select(KEYWORDS).prop_map(str::to_owned),
        6 => prop::sample::select(PUNCTUATION).prop_map(str::to_owned),
        1 => "[0-9]{1,6}",
        1 => "\"[a-z ]{0,20}\"",
        1 => "[a-z]{1,8}_[a-z]{1,8}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Generated code-like text holds no secret-like keyword or shape, so nothing is changed.
    #[test]
    fn code_like_text_without_secret_words_is_untouched(
        tokens in prop::collection::vec(token(), 0..80)
    ) {
        let text = tokens.concat();
        let out = redact_secrets(&text);
        prop_assert!(matches!(out, Cow::Borrowed(_)), "changed: {text:?} -> {out:?}");
        let mut redactor = LineRedactor::new();
        for line in text.split_inclusive('\n') {
            let out = redactor.redact_line(line.as_bytes());
            prop_assert!(matches!(out, Cow::Borrowed(_)), "changed line: {line:?}");
        }
    }
}
