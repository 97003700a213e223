mod compaction;
mod fixtures;
mod goals;
mod injection;
mod introspect;
mod memories;
mod working_memory;

/// The text between `open` and `close`, which must each appear exactly once, in that order.
pub(crate) fn between<'a>(text: &'a str, open: &str, close: &str) -> &'a str {
    assert_eq!(text.matches(open).count(), 1, "{open} once in:\n{text}");
    assert_eq!(text.matches(close).count(), 1, "{close} once in:\n{text}");
    let start = text.find(open).unwrap() + open.len();
    let end = text.find(close).unwrap();
    assert!(start <= end, "{open} before {close}");
    &text[start..end]
}
