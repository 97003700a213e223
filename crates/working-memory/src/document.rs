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
//! Front matter is recognised only in its YAML form (a first line `---`, YAML lines, a closing
//! `---`): a document that opens with a `---` rule keeps every section.

use memory_protocol::working_memory::WorkingMemorySection;

/// The document's title line.
pub(crate) const DOCUMENT_TITLE: &str = "# Working Memory";

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
        let mut out = DOCUMENT_TITLE.to_owned();
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
pub(crate) fn section_named(name: &str) -> Option<WorkingMemorySection> {
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
pub(crate) fn normalize_body(text: &str) -> String {
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

/// True when a line of `text`, its leading whitespace aside, starts with `## `.
fn has_header_line(text: &str) -> bool {
    // Most bodies have no `## ` anywhere: one search of the whole text says so without
    // reading it line by line.
    text.contains("## ")
        && text
            .split('\n')
            .any(|line| line.trim_start().starts_with("## "))
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
}

/// The `## ` header lines of a text, in order, after its YAML front matter when it has one
/// ([`front_matter_end`]).
fn find_headers(text: &str) -> Vec<Header<'_>> {
    let mut headers = Vec::new();
    let mut start = front_matter_end(text).unwrap_or(0);
    for line in text.get(start..).unwrap_or_default().split_inclusive('\n') {
        let line_start = start;
        start += line.len();
        let first = line.trim_start();
        if let Some(name) = header_name(first) {
            headers.push(Header {
                start: line_start,
                body_start: start,
                name,
                section: section_named(name),
            });
        }
    }
    headers
}

/// Where a YAML front matter ends (just after its closing line), when the text opens with
/// one: a first line `---`, then only YAML lines (`key: value`, list items, indented or
/// blank lines, comments that are not `## ` headers), then a line `---` or `...`. A text that
/// merely starts with a `---` rule is no front matter, so its sections stay.
fn front_matter_end(text: &str) -> Option<usize> {
    let text_start = text
        .strip_prefix('\u{feff}')
        .map_or(0, |_| '\u{feff}'.len_utf8());
    let mut lines = text.get(text_start..)?.split_inclusive('\n');
    let mut at = text_start;
    let opening = lines.next()?;
    if opening.trim_end() != "---" {
        return None;
    }
    at += opening.len();
    for line in lines {
        at += line.len();
        let trimmed = line.trim_end();
        if trimmed == "---" || trimmed == "..." {
            return Some(at);
        }
        if !is_yaml_line(trimmed) {
            return None;
        }
    }
    None
}

/// True for a line YAML front matter holds: blank, indented, a list item, a comment that is
/// not a `## ` header, or `key:` followed by a space or the end of the line.
fn is_yaml_line(line: &str) -> bool {
    if line.trim().is_empty() || line.starts_with([' ', '\t']) || line.starts_with("- ") {
        return true;
    }
    if line.starts_with('#') {
        return header_name(line).is_none();
    }
    let Some((key, rest)) = line.split_once(':') else {
        return false;
    };
    let key = key.trim_matches(['"', '\'']);
    !key.is_empty()
        && key
            .chars()
            .all(|ch| ch.is_alphanumeric() || matches!(ch, '_' | '-' | '.' | ' '))
        && (rest.is_empty() || rest.starts_with(' '))
}

fn parse(text: &str) -> WorkingMemoryDocument {
    let headers = find_headers(text);
    // Each unknown section goes to the known section before it, or the first known one.
    let first_known = headers.iter().find_map(|header| header.section);
    let fallback = first_known.unwrap_or(WorkingMemorySection::KeyFactsAndDecisions);
    let mut bodies: [String; 7] = Default::default();
    let mut current: Option<WorkingMemorySection> = None;
    for (i, header) in headers.iter().enumerate() {
        let body_end = headers.get(i + 1).map_or(text.len(), |next| next.start);
        let body = normalize_body(text.get(header.body_start..body_end).unwrap_or_default());
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
    use super::*;

    #[test]
    fn only_yaml_front_matter_hides_what_it_holds() {
        let yaml = "---\ntitle: tides\ntags:\n  - harbour\n# a comment\n---\n## Open Issues\nx";
        assert_eq!(find_headers(yaml).len(), 1);
        assert_eq!(front_matter_end(yaml), Some(yaml.find("## Open").unwrap()));
        // A `---` rule before the sections is no front matter: every header counts.
        let rule = "---\n## Session Title\nTides\n---\n## Open Issues\nx";
        assert_eq!(front_matter_end(rule), None);
        assert_eq!(find_headers(rule).len(), 2);
        // Prose between two rules is not YAML either; an unclosed opening hides nothing.
        assert_eq!(front_matter_end("---\nSome prose here.\n---\n"), None);
        assert_eq!(find_headers("---\n## Open Issues\n").len(), 1);
        assert_eq!(
            find_headers("\n  ---\n## Open Issues\n ---\n## Open Issues\nx").len(),
            2
        );
    }

    #[test]
    fn headers_need_a_space_and_only_whitespace_before() {
        let text = "# Working Memory\n  ## Open Issues\n##Open Issues\nx ## Open Issues\n### Open Issues\n## ";
        let names: Vec<&str> = find_headers(text)
            .iter()
            .map(|header| header.name)
            .collect();
        assert_eq!(names, ["Open Issues"]);
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
