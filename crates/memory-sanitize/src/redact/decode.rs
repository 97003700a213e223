//! A decoded view of escaped text, so rules see a secret the way it was written.
//!
//! Transcripts hold text inside JSON strings, often nested (a tool call's arguments are JSON
//! inside a JSON string), and some serializers escape more than they must (`\/`, `\u002b`). A
//! secret written as `abc\/def\u002bghi`, or a private key whose lines are joined by `\n`, would
//! slip past rules written for plain text. The view replaces every backslash escape, whatever its
//! nesting depth (a run of backslashes before the escape letter), by the byte it stands for, and
//! keeps where each escape came from so spans found in the view map back to the raw text.
//!
//! Escapes decoded: `\n`, `\r`, `\t`, `\"`, `\'`, `\/`, `` \` `` and `\uXXXX` (with surrogate
//! pairs). Anything else (`\d`, `\\` before a non-escape letter, a bad `\u`) stays as written.

use std::borrow::Cow;

/// One decoded escape: raw bytes `raw_start..raw_start + raw_len` became decoded bytes
/// `decoded_start..decoded_start + decoded_len`.
#[derive(Debug, Clone, Copy)]
struct Escape {
    raw_start: usize,
    decoded_start: usize,
    raw_len: u32,
    decoded_len: u8,
}

/// Text with its escapes decoded, and the map back to the raw text.
#[derive(Debug)]
pub(crate) struct DecodedView<'a> {
    text: Cow<'a, [u8]>,
    escapes: Vec<Escape>,
    /// The text buffer when the view borrows the raw text, kept for [`Self::into_buffers`].
    spare: Vec<u8>,
}

/// Buffers a [`DecodedView`] decodes into, kept from one segment to the next: a segment is up
/// to 256 KiB, and allocating that afresh for each one cost page faults on every segment.
#[derive(Debug, Default)]
pub(crate) struct Buffers {
    text: Vec<u8>,
    escapes: Vec<Escape>,
}

impl<'a> DecodedView<'a> {
    /// Decodes `raw`; borrows it when it holds no backslash.
    #[cfg(test)]
    pub(crate) fn new(raw: &'a [u8]) -> DecodedView<'a> {
        DecodedView::new_in(raw, Buffers::default())
    }

    /// Decodes `raw` into `buffers` (taken whatever they hold); borrows `raw` when it holds
    /// no backslash. [`DecodedView::into_buffers`] gives the buffers back.
    pub(crate) fn new_in(raw: &'a [u8], buffers: Buffers) -> DecodedView<'a> {
        let Buffers {
            text: mut out,
            mut escapes,
        } = buffers;
        out.clear();
        escapes.clear();
        // `memchr`, not a byte loop: finding the backslashes is a pass over every byte.
        let Some(first) = memchr::memchr(b'\\', raw) else {
            return DecodedView {
                text: Cow::Borrowed(raw),
                escapes,
                spare: out,
            };
        };
        out.reserve(raw.len());
        let mut copied = 0;
        let mut at = first;
        while let Some(offset) = raw.get(at..).and_then(|rest| memchr::memchr(b'\\', rest)) {
            at += offset;
            let run_end = at
                + raw
                    .get(at..)
                    .unwrap_or_default()
                    .iter()
                    .take_while(|&&b| b == b'\\')
                    .count();
            let Some((decoded, consumed)) = decode_escape(raw, run_end) else {
                at = run_end;
                continue;
            };
            out.extend_from_slice(raw.get(copied..at).unwrap_or_default());
            let raw_len = run_end - at + consumed;
            escapes.push(Escape {
                raw_start: at,
                decoded_start: out.len(),
                raw_len: u32::try_from(raw_len).unwrap_or(u32::MAX),
                decoded_len: decoded.len,
            });
            out.extend_from_slice(decoded.bytes());
            at += raw_len;
            copied = at;
        }
        if escapes.is_empty() {
            return DecodedView {
                text: Cow::Borrowed(raw),
                escapes,
                spare: out,
            };
        }
        out.extend_from_slice(raw.get(copied..).unwrap_or_default());
        DecodedView {
            text: Cow::Owned(out),
            escapes,
            spare: Vec::new(),
        }
    }

    /// The buffers, for the next segment.
    pub(crate) fn into_buffers(self) -> Buffers {
        Buffers {
            text: match self.text {
                Cow::Owned(text) => text,
                Cow::Borrowed(_) => self.spare,
            },
            escapes: self.escapes,
        }
    }

    /// The decoded text.
    pub(crate) fn text(&self) -> &[u8] {
        &self.text
    }

    /// Maps a span of the decoded text back to the raw text, widened to whole escapes.
    pub(crate) fn raw_span(&self, (start, end): (usize, usize)) -> (usize, usize) {
        (self.raw_start(start), self.raw_end(end))
    }

    /// Where the decoded byte at `at` starts in the raw text.
    fn raw_start(&self, at: usize) -> usize {
        let index = self.escapes.partition_point(|e| e.decoded_start <= at);
        let Some(escape) = index.checked_sub(1).and_then(|i| self.escapes.get(i)) else {
            return at;
        };
        let decoded_end = escape.decoded_start + usize::from(escape.decoded_len);
        if at < decoded_end {
            escape.raw_start
        } else {
            escape.raw_start + escape.raw_len as usize + (at - decoded_end)
        }
    }

    /// Where the raw text ends for a span of the decoded text ending (exclusive) at `at`.
    fn raw_end(&self, at: usize) -> usize {
        let index = self.escapes.partition_point(|e| e.decoded_start < at);
        let Some(escape) = index.checked_sub(1).and_then(|i| self.escapes.get(i)) else {
            return at;
        };
        let decoded_end = escape.decoded_start + usize::from(escape.decoded_len);
        let raw_end = escape.raw_start + escape.raw_len as usize;
        if at <= decoded_end {
            raw_end
        } else {
            raw_end + (at - decoded_end)
        }
    }
}

/// Up to four UTF-8 bytes.
#[derive(Debug, Clone, Copy)]
struct Decoded {
    buf: [u8; 4],
    len: u8,
}

impl Decoded {
    fn byte(byte: u8) -> Decoded {
        Decoded {
            buf: [byte, 0, 0, 0],
            len: 1,
        }
    }

    fn char(c: char) -> Decoded {
        let mut buf = [0; 4];
        let len = c.encode_utf8(&mut buf).len();
        Decoded {
            buf,
            len: u8::try_from(len).unwrap_or(4),
        }
    }

    fn bytes(&self) -> &[u8] {
        self.buf.get(..usize::from(self.len)).unwrap_or_default()
    }
}

/// Decodes the escape whose letter is at `at` (just after a run of backslashes). Returns the
/// decoded bytes and how many bytes from `at` the escape takes, or `None` when it is not one.
fn decode_escape(raw: &[u8], at: usize) -> Option<(Decoded, usize)> {
    let letter = *raw.get(at)?;
    let byte = match letter {
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'"' | b'\'' | b'/' | b'`' => letter,
        b'u' => return decode_unicode(raw, at),
        _ => return None,
    };
    Some((Decoded::byte(byte), 1))
}

/// `uXXXX` at `at`, or a surrogate pair `uD83DuDE00` (the second escape with its own backslashes).
fn decode_unicode(raw: &[u8], at: usize) -> Option<(Decoded, usize)> {
    let first = hex4(raw, at + 1)?;
    if !(0xD800..0xDC00).contains(&first) {
        return char::from_u32(first).map(|c| (Decoded::char(c), 5));
    }
    // A high surrogate: a low one must follow as `\uXXXX` (any number of backslashes).
    let after = at + 5;
    let slashes = raw
        .get(after..)?
        .iter()
        .take_while(|&&b| b == b'\\')
        .count();
    let low_at = after + slashes;
    if slashes == 0 || raw.get(low_at) != Some(&b'u') {
        return None;
    }
    let second = hex4(raw, low_at + 1)?;
    if !(0xDC00..0xE000).contains(&second) {
        return None;
    }
    let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
    char::from_u32(code).map(|c| (Decoded::char(c), low_at + 5 - at))
}

fn hex4(raw: &[u8], at: usize) -> Option<u32> {
    let digits = raw.get(at..at + 4)?;
    digits.iter().try_fold(0u32, |acc, &b| {
        let digit = char::from(b).to_digit(16)?;
        Some(acc * 16 + digit)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed() {
        let view = DecodedView::new(b"no escapes here");
        assert!(matches!(view.text, Cow::Borrowed(_)));
        assert_eq!(view.raw_span((3, 10)), (3, 10));
    }

    #[test]
    fn escapes_of_any_depth_decode_and_map_back() {
        let raw = br#"a\nb\\\"c\u002bd\/e\qf"#;
        let view = DecodedView::new(raw);
        assert_eq!(view.text(), b"a\nb\"c+d/e\\qf");
        // `c+d` in the view is `c\u002bd` in the raw text.
        let start = 4;
        assert_eq!(&view.text()[start..start + 3], b"c+d");
        let (raw_start, raw_end) = view.raw_span((start, start + 3));
        assert_eq!(&raw[raw_start..raw_end], br"c\u002bd");
        // A span that starts inside an escape's output widens to the whole escape.
        let (raw_start, raw_end) = view.raw_span((5, 5 + 1));
        assert_eq!(&raw[raw_start..raw_end], br"\u002b");
    }

    #[test]
    fn surrogate_pairs_and_bad_escapes() {
        let view = DecodedView::new(br"x\ud83d\ude00y\u12zz\ud83dq");
        assert_eq!(view.text(), "x😀y\\u12zz\\ud83dq".as_bytes());
        let (s, e) = view.raw_span((1, 5));
        assert_eq!((s, e), (1, 13));
    }

    #[test]
    fn trailing_backslashes_are_kept() {
        let view = DecodedView::new(b"end\\\\");
        assert_eq!(view.text(), b"end\\\\");
    }
}
