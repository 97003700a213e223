//! Escaping untrusted text so it cannot forge structure in a prompt.
//!
//! - [`escape_xml_text`] escapes `&`, `<` and `>` (in that order), for text placed between
//!   XML-like tags that the model should read as data.
//! - [`escape_boundary_tags`] neutralizes only the opening and closing forms of the named tags
//!   (any case, whitespace inside the brackets, attributes), leaving all other text as it is, so
//!   code and markup in transcripts stay readable.
//! - [`escape_control_tokens`] neutralizes chat-template control tokens such as `<|im_start|>`.
//!
//! All three are idempotent and return the input borrowed when nothing needed escaping.

use std::borrow::Cow;

/// Escapes `&`, `<` and `>` as `&amp;`, `&lt;` and `&gt;`.
///
/// Not idempotent by nature (`&amp;` becomes `&amp;amp;`); use it once, at rendering.
pub fn escape_xml_text(text: &str) -> Cow<'_, str> {
    if !text.contains(['&', '<', '>']) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            other => out.push(other),
        }
    }
    Cow::Owned(out)
}

/// Neutralizes every opening or closing form of the given tags by replacing its `<` with
/// `&lt;`.
///
/// A form is `<`, optional whitespace, an optional `/`, optional whitespace, the tag name in any
/// case, and then whitespace, `/` or `>` (so `<conversation>`, `< / Conversation >`,
/// `<conversation id="x">`, `<conversation/>` and a trailing `</conversation` all match, while
/// `<conversations>` does not).
/// The rest of the text is untouched. Idempotent: the output contains no such form.
pub fn escape_boundary_tags<'a>(text: &'a str, tags: &[&str]) -> Cow<'a, str> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut search_from = 0;
    while let Some(offset) = memchr_lt(&bytes[search_from..]) {
        let start = search_from + offset;
        search_from = start + 1;
        if tag_form_at(bytes, start, tags) {
            let buf = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
            buf.push_str(&text[copied..start]);
            buf.push_str("&lt;");
            copied = start + 1;
        }
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut buf) => {
            buf.push_str(&text[copied..]);
            Cow::Owned(buf)
        }
    }
}

fn memchr_lt(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'<')
}

/// True when `bytes[start]` is the `<` of an opening or closing form of one of `tags`.
fn tag_form_at(bytes: &[u8], start: usize, tags: &[&str]) -> bool {
    let mut i = start + 1;
    i = skip_whitespace(bytes, i);
    if bytes.get(i) == Some(&b'/') {
        i = skip_whitespace(bytes, i + 1);
    }
    tags.iter().any(|tag| {
        let name = tag.as_bytes();
        let end = i + name.len();
        !name.is_empty()
            && end <= bytes.len()
            && bytes[i..end].eq_ignore_ascii_case(name)
            && match bytes.get(end) {
                // A name cut off at the end of the text still counts: the template text that
                // follows could complete it.
                None => true,
                Some(b) => b.is_ascii_whitespace() || *b == b'/' || *b == b'>',
            }
    })
}

fn skip_whitespace(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// Neutralizes chat-template control tokens such as `<|im_start|>` or `<|eot_id|>`: a token is
/// `<|`, a body of 1 to 64 bytes without whitespace, `|`, `<` or `>`, and `|>`; it becomes
/// `<\|body\|>`. Text such as `a <| b` or F#'s `x |> f` is left alone. Idempotent: an escaped
/// token contains no `<|`, and its `\|>` cannot close an earlier `<|` because the escaped
/// token's own `<` lies between them.
pub fn escape_control_tokens(text: &str) -> Cow<'_, str> {
    const MAX_BODY_LEN: usize = 64;
    if !text.contains("<|") {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut search_from = 0;
    while let Some(offset) = text.get(search_from..).and_then(|rest| rest.find("<|")) {
        let open = search_from + offset;
        let body_start = open + 2;
        let body_len = bytes
            .iter()
            .skip(body_start)
            .take(MAX_BODY_LEN + 1)
            .position(|&b| b.is_ascii_whitespace() || matches!(b, b'|' | b'<' | b'>'));
        let close = body_len
            .filter(|&len| (1..=MAX_BODY_LEN).contains(&len))
            .map(|len| body_start + len)
            .filter(|&close| bytes.get(close..close + 2) == Some(b"|>".as_slice()));
        let Some(close) = close else {
            search_from = body_start;
            continue;
        };
        let buf = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
        buf.push_str(text.get(copied..open).unwrap_or_default());
        buf.push_str("<\\|");
        buf.push_str(text.get(body_start..close).unwrap_or_default());
        buf.push_str("\\|>");
        copied = close + 2;
        search_from = copied;
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut buf) => {
            buf.push_str(text.get(copied..).unwrap_or_default());
            Cow::Owned(buf)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_text_escapes_ampersand_first() {
        assert_eq!(
            escape_xml_text("a < b && c > d"),
            "a &lt; b &amp;&amp; c &gt; d"
        );
        assert!(matches!(escape_xml_text("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn boundary_tags_cover_case_whitespace_and_attributes() {
        let tags = ["conversation", "previous-summary"];
        let input = "x </conversation> < / CONVERSATION > <conversation id=\"1\"> \
                     <previous-summary/> <conversations> <b>";
        let out = escape_boundary_tags(input, &tags);
        assert_eq!(
            out,
            "x &lt;/conversation> &lt; / CONVERSATION > &lt;conversation id=\"1\"> \
             &lt;previous-summary/> <conversations> <b>"
        );
        assert_eq!(escape_boundary_tags(&out, &tags), out);
    }

    #[test]
    fn boundary_tags_leave_text_borrowed_when_clean() {
        assert!(matches!(
            escape_boundary_tags("a < b", &["objective"]),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            escape_boundary_tags("<objective", &["objective"]),
            "&lt;objective"
        );
        assert!(matches!(
            escape_boundary_tags("<objectives>", &["objective"]),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn control_tokens_are_neutralized_once() {
        let out = escape_control_tokens("<|im_start|>system<|message|> a <| b");
        assert_eq!(out, "<\\|im_start\\|>system<\\|message\\|> a <| b");
        assert_eq!(escape_control_tokens(&out), out);
    }
}
