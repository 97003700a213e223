//! The document model: seven `## ` sections in a fixed order under `# Working Memory`.
//!
//! Parsing splits on lines whose trimmed text starts with `## ` (so `###` lines stay inside a
//! body) and matches section names leniently (case, spacing, `&` or `and`). A body that says
//! only `none`, `(none)` or `_none_` is empty. Rendering is canonical: the title line, then all
//! seven headers in order, each followed by its body when it has one, separated by blank
//! lines.
//!
//! Content is never dropped silently:
//!
//! - a section under an unknown `## Name` header is kept inside the known section before it,
//!   its header demoted to `### Name` (an unknown section before any known one goes to the
//!   first known section; a document with no known section at all keeps everything in
//!   Key Facts & Decisions);
//! - a known header that appears twice has both bodies, in order;
//! - a `## ` line inside a body (an UPDATE that carries a header) is demoted to `### `, so a
//!   rendered document always has exactly seven `## ` headers.
//!
//! Text before the first `## ` header (the `# Working Memory` line, YAML front matter, a
//! model's preamble such as "Here is the document:") is not part of any section and is dropped.

use memory_protocol::working_memory::WorkingMemorySection;

/// The document's title line.
pub const DOCUMENT_TITLE: &str = "# Working Memory";

/// A working-memory document: one body per section, each already normalized (trimmed, `none`
/// bodies empty, no `## ` lines).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkingMemoryDocument {
    bodies: [String; 7],
}

impl WorkingMemoryDocument {
    /// An empty document.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses a document (see the module docs). Never fails: any text gives a document.
    pub fn parse(text: &str) -> Self {
        parse(text)
    }

    /// The body of `section` (empty when the section is).
    pub fn body(&self, section: WorkingMemorySection) -> &str {
        &self.bodies[index(section)]
    }

    /// Replaces the body of `section`, normalizing it like a parsed body.
    pub fn set_body(&mut self, section: WorkingMemorySection, body: &str) {
        self.bodies[index(section)] = normalize_body(body);
    }

    /// True when every section is empty.
    pub fn is_empty(&self) -> bool {
        self.bodies.iter().all(String::is_empty)
    }

    /// The sections with their bodies, in document order.
    pub fn sections(&self) -> impl Iterator<Item = (WorkingMemorySection, &str)> {
        WorkingMemorySection::ALL
            .into_iter()
            .map(|section| (section, self.body(section)))
    }

    /// The canonical text.
    pub fn render(&self) -> String {
        let size: usize = self.bodies.iter().map(|body| body.len() + 32).sum();
        let mut out = String::with_capacity(size + DOCUMENT_TITLE.len() + 2);
        out.push_str(DOCUMENT_TITLE);
        out.push('\n');
        for (section, body) in self.sections() {
            out.push_str("\n## ");
            out.push_str(section.header());
            out.push('\n');
            if !body.is_empty() {
                out.push_str(body);
                out.push('\n');
            }
        }
        out
    }

    pub(crate) fn set_normalized(&mut self, section: WorkingMemorySection, body: String) {
        self.bodies[index(section)] = body;
    }

    /// Moves the body of `section` out, leaving it empty.
    pub(crate) fn take_body(&mut self, section: WorkingMemorySection) -> String {
        std::mem::take(&mut self.bodies[index(section)])
    }
}

fn index(section: WorkingMemorySection) -> usize {
    section as usize
}

/// True when `text` has at least one line that is exactly a section header (`## Name`, with a
/// known name). `### Session Title` does not count, nor does a header merely mentioned inside
/// a line. A document in an older format (a compaction summary, free text) is not one.
pub fn is_working_memory(text: &str) -> bool {
    text.split('\n')
        .filter_map(header_name)
        .any(|name| section_named(name).is_some())
}

/// The section a header name refers to: exact, or ignoring case, spacing and `&` versus `and`.
pub fn section_named(name: &str) -> Option<WorkingMemorySection> {
    if let Some(section) = WorkingMemorySection::from_header(name) {
        return Some(section);
    }
    let wanted = loose_name(name);
    WorkingMemorySection::ALL
        .into_iter()
        .find(|section| loose_name(section.header()) == wanted)
}

fn loose_name(name: &str) -> String {
    name.split_whitespace()
        .map(|word| {
            if word == "&" {
                "and".to_owned()
            } else {
                word.to_lowercase()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The name of a `## ` header line, or `None` for any other line.
fn header_name(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("## ")?;
    Some(rest.trim().trim_end_matches('#').trim())
}

/// Normalizes a body: trimmed, empty when it only says `none`, and every `## ` line demoted
/// to `### ` so it cannot open a section.
pub fn normalize_body(text: &str) -> String {
    let trimmed = text.trim();
    if is_none_body(trimmed) {
        return String::new();
    }
    let needs_demotion = has_header_line(trimmed);
    let cleaned = if trimmed.contains('\r') {
        trimmed.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        trimmed.to_owned()
    };
    if !needs_demotion {
        return cleaned;
    }
    cleaned
        .split('\n')
        .map(|line| {
            let indent = line.len() - line.trim_start().len();
            if line.trim_start().starts_with("## ") {
                format!("{}#{}", &line[..indent], &line[indent..])
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// True when [`normalize_body`]`(text)` is empty, without building it: only a body that is
/// blank or says `none` normalizes to nothing (replacing line breaks and demoting headers
/// keep a non-blank body non-blank).
pub(crate) fn normalizes_to_empty(text: &str) -> bool {
    is_none_body(text.trim())
}

/// [`normalize_body`] of an owned text, which is returned as it is when it needs nothing
/// (the common case: the guards build normalized bodies), so it is not copied.
pub(crate) fn normalize_owned(text: String) -> String {
    let trimmed = text.trim();
    if trimmed.len() == text.len()
        && !is_none_body(trimmed)
        && memchr::memchr(b'\r', trimmed.as_bytes()).is_none()
        && !has_header_line(trimmed)
    {
        return text;
    }
    normalize_body(&text)
}

/// True when a line of `text`, its leading whitespace aside, starts with `## `. The lines
/// are found from the `#` in the text (one vectorized search; most bodies have none), not
/// read one by one.
fn has_header_line(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut line_done = 0;
    for at in memchr::memchr_iter(b'#', bytes) {
        if at < line_done {
            continue;
        }
        line_done = memchr::memchr(b'\n', bytes.get(at..).unwrap_or_default())
            .map_or(bytes.len(), |end| at + end);
        if !bytes.get(at..).unwrap_or_default().starts_with(b"## ") {
            continue;
        }
        let line_start =
            memchr::memrchr(b'\n', bytes.get(..at).unwrap_or_default()).map_or(0, |end| end + 1);
        if text
            .get(line_start..at)
            .unwrap_or_default()
            .chars()
            .all(char::is_whitespace)
        {
            return true;
        }
    }
    false
}

/// `none`, `(none)`, `_none_`, `- none`, `None.` and the like.
fn is_none_body(trimmed: &str) -> bool {
    if trimmed.is_empty() {
        return true;
    }
    if trimmed.len() > 16 || trimmed.contains('\n') {
        return false;
    }
    let word = trimmed
        .trim_start_matches(['-', '*'])
        .trim()
        .trim_matches(['_', '*', '(', ')', '.', ' '])
        .to_ascii_lowercase();
    word == "none"
}

/// A body cut from parsed text: trimmed, empty when it says `none`, line breaks as `\n`, no
/// `## ` line. `plain` says the text has no `\r` and the body no line of only `## `, the only
/// two things besides trimming that [`normalize_body`] would change in a parsed body (every
/// other `## ` line was a header); a plain body is only trimmed.
fn clean_parsed(body: &str, plain: bool) -> String {
    let trimmed = body.trim();
    if is_none_body(trimmed) {
        String::new()
    } else if plain {
        // With room for an APPEND (the most common operation), so a merge that appends to the
        // parsed body does not move it to a larger allocation.
        let mut owned = String::with_capacity(trimmed.len() + trimmed.len() / 8 + 128);
        owned.push_str(trimmed);
        owned
    } else {
        normalize_body(trimmed)
    }
}

/// Appends `part` to a section body being assembled, a blank line between parts. The first
/// part becomes the body as it is, without a copy.
fn push_part(body: &mut String, part: String) {
    if part.is_empty() {
        return;
    }
    if body.is_empty() {
        *body = part;
        return;
    }
    body.push_str("\n\n");
    body.push_str(&part);
}

/// A `## ` header line of parsed text.
#[derive(Debug, PartialEq, Eq)]
struct Header<'a> {
    /// Where the header line starts.
    start: usize,
    /// Where its body starts (the next line).
    body_start: usize,
    name: &'a str,
    section: Option<WorkingMemorySection>,
    /// The body has a line of only `## `, which normalizing demotes.
    odd_line: bool,
}

/// Where the text after a YAML front matter starts: after the line that closes it, when the
/// first non-blank line opens one (`---`); 0 otherwise; the end of the text when it is never
/// closed (everything is front matter).
fn front_matter_end(text: &str) -> usize {
    let mut lines = text.split_inclusive('\n');
    let mut at = 0;
    let opens = loop {
        let Some(line) = lines.next() else {
            return 0;
        };
        at += line.len();
        let first = line.trim();
        if !first.is_empty() {
            break first == "---";
        }
    };
    if !opens {
        return 0;
    }
    for line in lines {
        at += line.len();
        if line.trim() == "---" {
            return at;
        }
    }
    text.len()
}

/// The `## ` header lines of a text, in order, outside a front matter.
fn find_headers(text: &str) -> Vec<Header<'_>> {
    // Room for the seven sections and a title, so the list rarely grows.
    let mut headers: Vec<Header<'_>> = Vec::with_capacity(8);
    let bytes = text.as_bytes();
    // Only lines whose text starts with `##` matter: they are found by one vectorized search
    // for `#` (a byte search needs no substring searcher built per document), each kept when
    // another `#` follows and only whitespace comes before it on its line. Only the first
    // `##` of a line is looked at, so a long line is read a bounded number of times.
    let from = front_matter_end(text);
    let rest = text.get(from..).unwrap_or_default();
    let mut line_done = 0;
    for found in memchr::memchr_iter(b'#', rest.as_bytes()) {
        let hash_at = from + found;
        if hash_at < line_done || bytes.get(hash_at + 1) != Some(&b'#') {
            continue;
        }
        let end = memchr::memchr(b'\n', bytes.get(hash_at..).unwrap_or_default())
            .map_or(text.len(), |at| hash_at + at + 1);
        line_done = end;
        let line_start =
            memchr::memrchr(b'\n', bytes.get(..hash_at).unwrap_or_default()).map_or(0, |at| at + 1);
        let indent = text.get(line_start..hash_at).unwrap_or_default();
        if !indent.chars().all(char::is_whitespace) {
            continue;
        }
        let first = text.get(hash_at..end).unwrap_or_default();
        match header_name(first) {
            Some(name) => headers.push(Header {
                start: line_start,
                body_start: end,
                name,
                section: section_named(name),
                odd_line: false,
            }),
            None => {
                if first.starts_with("## ")
                    && let Some(header) = headers.last_mut()
                {
                    header.odd_line = true;
                }
            }
        }
    }

    headers
}

fn parse(text: &str) -> WorkingMemoryDocument {
    let has_carriage_return = memchr::memchr(b'\r', text.as_bytes()).is_some();
    let headers = find_headers(text);
    // Each unknown section goes to the known section before it, or the first known one.
    let first_known = headers.iter().find_map(|header| header.section);
    let fallback = first_known.unwrap_or(WorkingMemorySection::KeyFactsAndDecisions);
    let mut bodies: [String; 7] = Default::default();
    let mut current: Option<WorkingMemorySection> = None;
    for (i, header) in headers.iter().enumerate() {
        let body_end = headers.get(i + 1).map_or(text.len(), |next| next.start);
        let body = clean_parsed(
            text.get(header.body_start..body_end).unwrap_or_default(),
            !has_carriage_return && !header.odd_line,
        );
        let name = header.name;
        match header.section {
            Some(section) => {
                current = Some(section);
                push_part(&mut bodies[index(section)], body);
            }
            None => {
                let target = current.unwrap_or(fallback);
                let heading = format!("### {name}");
                let heading = heading.trim_end();
                let kept = if body.is_empty() {
                    heading.to_owned()
                } else {
                    format!("{heading}\n{body}")
                };
                push_part(&mut bodies[index(target)], kept);
            }
        }
    }
    WorkingMemoryDocument { bodies }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The headers found line by line: the definition the search for `##` must follow.
    fn headers_line_by_line(text: &str) -> Vec<Header<'_>> {
        let mut headers: Vec<Header<'_>> = Vec::new();
        let mut in_front_matter = false;
        let mut seen_content = false;
        let mut start = 0;
        let ends = memchr::memchr_iter(b'\n', text.as_bytes())
            .map(|at| at + 1)
            .chain(std::iter::once(text.len()));
        for end in ends {
            let line_start = start;
            let line = &text[start..end];
            start = end;
            let first = line.trim_start();
            if first.is_empty() {
                continue;
            }
            if !seen_content {
                seen_content = true;
                if first.trim_end() == "---" {
                    in_front_matter = true;
                    continue;
                }
            }
            if in_front_matter {
                in_front_matter = first.trim_end() != "---";
                continue;
            }
            if !first.starts_with("##") {
                continue;
            }
            match header_name(first) {
                Some(name) => headers.push(Header {
                    start: line_start,
                    body_start: end,
                    name,
                    section: section_named(name),
                    odd_line: false,
                }),
                None => {
                    if first.starts_with("## ")
                        && let Some(header) = headers.last_mut()
                    {
                        header.odd_line = true;
                    }
                }
            }
        }
        headers
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..ProptestConfig::default() })]

        #[test]
        fn headers_are_found_as_line_by_line(
            text in "(## |##|###|---|Open Issues|x|a ## b| |\t|\u{a0}|\u{2003}|\r|\n|é){0,60}",
        ) {
            prop_assert_eq!(find_headers(&text), headers_line_by_line(&text));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..ProptestConfig::default() })]

        #[test]
        fn bodies_normalize_to_empty_when_said(text in "[ \t\n\r#(*_.\u{a0}-]{0,4}(none|None|NONE|x|## x)?[ \t\n\r#(*_.)\u{a0}-]{0,4}") {
            prop_assert_eq!(normalizes_to_empty(&text), normalize_body(&text).is_empty());
        }

        #[test]
        fn header_lines_are_found_as_line_by_line(text in "(## |##|#| |\\n|\\u{a0}|x|\\r){0,30}") {
            prop_assert_eq!(
                has_header_line(&text),
                text.split('\n').any(|line| line.trim_start().starts_with("## "))
            );
            prop_assert_eq!(normalize_owned(text.clone()), normalize_body(&text));
            prop_assert_eq!(normalizes_to_empty(&text), normalize_body(&text).is_empty());
        }
    }

    #[test]
    fn front_matter_hides_headers_until_it_closes() {
        let text = "\n  ---\n## Open Issues\n ---\n## Open Issues\nx";
        assert_eq!(find_headers(text), headers_line_by_line(text));
        assert_eq!(find_headers(text).len(), 1);
        assert!(find_headers("---\n## Open Issues\n").is_empty());
    }

    #[test]
    fn none_bodies_are_empty() {
        for body in [
            "none", "(none)", "_none_", "- none", "None.", "*None*", "  ",
        ] {
            assert_eq!(normalize_body(body), "", "{body:?}");
        }
        assert_eq!(
            normalize_body("none of the tests fail"),
            "none of the tests fail"
        );
    }

    #[test]
    fn header_lines_inside_a_body_are_demoted() {
        assert_eq!(
            normalize_body("a\n## b\n  ## c\n### d"),
            "a\n### b\n  ### c\n### d"
        );
    }
}
