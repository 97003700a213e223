//! `memory_read`: one memory file, a line range of it, or the section under a heading. Each
//! read is recorded with the threads its text names, as usage for selection.

use std::io::Read;

use memory_protocol::introspect::{
    MemoryFailureCode, MemoryLineRange, MemoryReadRequest, MemoryReadResult, MemoryToolFailure,
};

use crate::blocks::heading_text;
use crate::index::MemoryRead;
use crate::introspector::Introspector;
use crate::paths::{FOLDER, RelativePath, ResolveError, open_file};
use crate::tools::{failure, invalid_input, not_found, refusal, resolve_failure, unavailable};

/// Most characters one read returns; a longer range is cut at a line boundary.
pub(crate) const MAX_READ_CHARS: usize = 20_000;
/// Largest file read at all.
const MAX_READ_FILE_BYTES: u64 = 16 << 20;
/// Headings named in a not-found answer.
const HEADINGS_SHOWN: usize = 20;

impl Introspector {
    /// Reads `request.path` (all of it, a line range, or one heading's section).
    pub fn read(&self, request: &MemoryReadRequest) -> Result<MemoryReadResult, MemoryToolFailure> {
        self.require_enabled()?;
        let shown = request.path.as_str();
        let relative = RelativePath::parse(shown).map_err(|refused| refusal(shown, refused))?;
        if relative.is_root() {
            return Err(invalid_input(
                "name a file to read; memory_list shows them".to_owned(),
            ));
        }
        let heading = request.heading.as_deref().map(str::trim);
        if heading.is_some() && (request.start_line.is_some() || request.end_line.is_some()) {
            return Err(invalid_input(
                "give either a heading or a line range, not both".to_owned(),
            ));
        }
        if heading == Some("") {
            return Err(invalid_input("the heading is blank".to_owned()));
        }
        let start = request.start_line.unwrap_or(1);
        if start == 0 {
            return Err(invalid_input("start_line is 1-based".to_owned()));
        }
        if let Some(end) = request.end_line
            && end < start
        {
            return Err(invalid_input(format!(
                "end_line {end} is before start_line {start}"
            )));
        }
        let path = relative.display();
        let (mut file, metadata) = match open_file(self.root(), &relative) {
            Ok(opened) => opened,
            Err(ResolveError::NotRegular(kind)) if kind == FOLDER => {
                return Err(invalid_input(format!(
                    "`{path}` is a folder; list it with memory_list"
                )));
            }
            Err(error) => return Err(resolve_failure(self, shown, &error)),
        };
        if metadata.len() > MAX_READ_FILE_BYTES {
            return Err(failure(
                MemoryFailureCode::Failed,
                format!("`{path}` is larger than {} MiB", MAX_READ_FILE_BYTES >> 20),
            ));
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|error| {
            unavailable(
                format!("`{path}`: {}", crate::io_reason(&error)),
                &self.display_root(),
            )
        })?;
        let version = crate::version_of(&bytes);
        let text = String::from_utf8(bytes)
            .map_err(|_| unavailable(format!("`{path}`: not valid UTF-8"), &self.display_root()))?;
        let lines: Vec<&str> = text.lines().collect();
        let total = count(lines.len());

        let mut other_sections = Vec::new();
        let (first, last) = match heading {
            Some(wanted) => {
                let mut found = sections(&lines, wanted).into_iter();
                let first = found.next().ok_or_else(|| {
                    let known: Vec<&str> = lines
                        .iter()
                        .filter_map(|line| heading_text(line).map(|(_, title)| title))
                        .take(HEADINGS_SHOWN)
                        .collect();
                    not_found(format!(
                        "no heading `{wanted}` in `{path}`; its headings: {}",
                        if known.is_empty() {
                            "none".to_owned()
                        } else {
                            known.join(", ")
                        }
                    ))
                })?;
                other_sections = found.collect();
                (first.start_line, first.end_line)
            }
            None if total == 0 && start == 1 => (1, 0),
            None if start > total => {
                return Err(invalid_input(format!(
                    "start_line {start} is past the end of `{path}` ({total} lines)"
                )));
            }
            None => (start, request.end_line.unwrap_or(total).min(total)),
        };

        let (content, end_line, truncated) = take_lines(&lines, first, last);
        let result = MemoryReadResult {
            path: path.clone(),
            heading: heading.map(str::to_owned),
            start_line: first,
            end_line,
            total_lines: total,
            content,
            truncated,
            version,
            other_sections,
        };
        let read = MemoryRead {
            path,
            thread_ids: thread_ids_in(&result.content),
            read_at: self.now(),
        };
        // Usage is best effort: a read the index cannot record is still a good read.
        if let Err(problem) = self.with_index(|index| index.record_read(&read)) {
            tracing::debug!(error = %problem, "memory read not recorded");
        }
        Ok(result)
    }
}

/// Lines `first..=last` (1-based), cut to [`MAX_READ_CHARS`] at a line boundary; a first line
/// longer than the budget is cut itself. Returns the text, the last line returned and whether
/// anything was cut.
fn take_lines(lines: &[&str], first: u32, last: u32) -> (String, u32, bool) {
    let mut content = String::new();
    let mut chars = 0;
    let mut end = first.saturating_sub(1);
    for number in first..=last {
        let Some(line) = lines.get(number as usize - 1) else {
            break;
        };
        let extra = usize::from(!content.is_empty()) + line.chars().count();
        if chars + extra > MAX_READ_CHARS {
            if content.is_empty() {
                content = line.chars().take(MAX_READ_CHARS).collect();
                return (content, number, true);
            }
            return (content, end, true);
        }
        if !content.is_empty() {
            content.push('\n');
        }
        content.push_str(line);
        chars += extra;
        end = number;
    }
    (content, end, false)
}

/// The line ranges (1-based) of the sections under every heading whose text is `wanted`
/// (ignoring case and `#` marks), in file order: each runs up to the next heading of the same
/// or a higher level.
fn sections(lines: &[&str], wanted: &str) -> Vec<MemoryLineRange> {
    let wanted = heading_text(wanted).map_or(wanted, |(_, title)| title);
    lines
        .iter()
        .enumerate()
        .filter_map(|(start, line)| {
            let (level, title) = heading_text(line)?;
            if !title.eq_ignore_ascii_case(wanted) {
                return None;
            }
            let end = lines
                .iter()
                .enumerate()
                .skip(start + 1)
                .find(|(_, line)| heading_text(line).is_some_and(|(other, _)| other <= level))
                .map_or(lines.len(), |(index, _)| index);
            Some(MemoryLineRange {
                start_line: count(start + 1),
                end_line: count(end),
            })
        })
        .collect()
}

fn count(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// Thread ids a memory text names: `thread_id: X` lines (rollout summaries) and
/// ``thread `X` `` mentions (the handbook, raw memories), in order, without repeats.
pub(crate) fn thread_ids_in(text: &str) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    let mut push = |id: &str| {
        let id = id.trim();
        if !id.is_empty()
            && id.len() <= 128
            && !id.contains(char::is_whitespace)
            && !ids.iter().any(|known| known == id)
        {
            ids.push(id.to_owned());
        }
    };
    for line in text.lines() {
        if let Some(id) = line.trim_start().strip_prefix("thread_id:") {
            push(id);
        }
        let lower = line.to_ascii_lowercase();
        let mut from = 0;
        while let Some(at) = lower.get(from..).and_then(|rest| rest.find("thread `")) {
            let start = from + at + "thread `".len();
            let Some(end) = line.get(start..).and_then(|rest| rest.find('`')) else {
                break;
            };
            if let Some(id) = line.get(start..start + end) {
                push(id);
            }
            from = start + end + 1;
        }
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_end_at_the_next_heading_of_their_level() {
        let lines = [
            "# Memory",
            "## Build",
            "- cargo test",
            "### Flags",
            "- --locked",
            "## Style",
            "- tabs",
        ];
        let range = |start_line, end_line| MemoryLineRange {
            start_line,
            end_line,
        };
        assert_eq!(sections(&lines, "build"), [range(2, 5)]);
        assert_eq!(sections(&lines, "## Style"), [range(6, 7)]);
        assert_eq!(sections(&lines, "Flags"), [range(4, 5)]);
        assert_eq!(sections(&lines, "Deploy"), []);
    }

    #[test]
    fn every_section_under_a_repeated_heading_is_found_in_order() {
        let lines = [
            "# Memory",
            "## Project `/a`",
            "### Notes",
            "- a",
            "## Project `/b`",
            "### notes",
            "- b",
            "- b2",
            "### Build",
            "### NOTES",
        ];
        let found = sections(&lines, "Notes");
        let starts: Vec<(u32, u32)> = found
            .iter()
            .map(|range| (range.start_line, range.end_line))
            .collect();
        assert_eq!(starts, [(3, 4), (6, 8), (10, 10)]);
    }

    #[test]
    fn long_reads_are_cut_at_a_line() {
        let long = "x".repeat(MAX_READ_CHARS - 5);
        let lines = [long.as_str(), "second line", "third"];
        let (content, end, cut) = take_lines(&lines, 1, 3);
        assert!(cut);
        assert_eq!(end, 1);
        assert_eq!(content, long);
        let huge = "y".repeat(MAX_READ_CHARS * 2);
        let (content, end, cut) = take_lines(&[huge.as_str()], 1, 1);
        assert!(cut && end == 1 && content.chars().count() == MAX_READ_CHARS);
        assert_eq!(take_lines(&["a", "b"], 1, 2), ("a\nb".to_owned(), 2, false));
    }

    #[test]
    fn thread_ids_come_from_headers_and_mentions() {
        let text = "thread_id: 0194-a\n### 2025-06-15 · Fix · thread `t1`\n## Thread `t2` and Thread `t1`\nthread `with space`";
        assert_eq!(thread_ids_in(text), vec!["0194-a", "t1", "t2"]);
    }
}
