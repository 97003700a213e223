//! The size bound of Key Facts & Decisions and Errors & Corrections: a section that grows past
//! its hard bound moves its oldest entries to the archive.
//!
//! Entries move oldest first until the section is back within its threshold (25 bullets,
//! 1,500 tokens, the pointer included). One pointer bullet at the top names every place
//! entries went: `[earlier entries moved to LOCATION, ...]`; moving again merges into it. The
//! consolidation sentinel and the pointer itself never move. The moved entries are returned
//! so the caller can write them where the pointer says.

use memory_protocol::working_memory::limits;

use super::text::{self, SectionSize, strip_marker};

/// What one bounding moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Moved {
    /// The new body, with the pointer.
    pub(crate) body: String,
    /// The moved entries, oldest first, without bullet markers.
    pub(crate) entries: Vec<String>,
}

fn pointer_locations(item: &str) -> Option<Vec<String>> {
    let inner = item
        .strip_prefix(limits::MOVED_POINTER_PREFIX)?
        .strip_suffix(']')?;
    Some(
        inner
            .split(", ")
            .map(str::trim)
            .filter(|location| !location.is_empty())
            .map(str::to_owned)
            .collect(),
    )
}

/// Moves the oldest entries of `body` out when `size`, its measure without the sentinel, is
/// past the hard bound. `None` when nothing had to move.
pub(crate) fn bound(body: &str, size: SectionSize, location: &str) -> Option<Moved> {
    if !size.is_past_hard_bound() {
        return None;
    }
    let mut locations: Vec<String> = Vec::new();
    // (line, movable item text) in order.
    let mut lines: Vec<(&str, Option<&str>)> = Vec::new();
    for line in body.split('\n') {
        let trimmed = line.trim();
        let item = strip_marker(trimmed).trim();
        if let Some(found) = pointer_locations(item) {
            for place in found {
                if !locations.contains(&place) {
                    locations.push(place);
                }
            }
            continue;
        }
        let movable = !(trimmed.is_empty()
            || trimmed.starts_with('#')
            || item == limits::CONSOLIDATION_SENTINEL);
        lines.push((line, movable.then_some(item)));
    }
    if !locations.iter().any(|place| place == location) {
        locations.push(location.to_owned());
    }
    let pointer = format!(
        "- {}{}]",
        limits::MOVED_POINTER_PREFIX,
        locations.join(", ")
    );
    let mut bullets = 1 + lines.iter().filter(|(_, item)| item.is_some()).count();
    let mut tokens = text::tokens(&pointer)
        + lines
            .iter()
            .map(|(line, _)| text::tokens(line) + 1)
            .sum::<usize>();
    let mut entries = Vec::new();
    let mut kept = Vec::with_capacity(lines.len());
    for (line, item) in lines {
        let over =
            bullets > limits::SECTION_BULLET_THRESHOLD || tokens > limits::SECTION_TOKEN_THRESHOLD;
        match item {
            Some(item) if over => {
                bullets -= 1;
                tokens -= text::tokens(line) + 1;
                entries.push(item.to_owned());
            }
            _ => kept.push(line),
        }
    }
    let mut new_body = pointer;
    for line in kept {
        new_body.push('\n');
        new_body.push_str(line);
    }
    Some(Moved {
        body: new_body.trim().to_owned(),
        entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measure(body: &str) -> SectionSize {
        SectionSize::of(&crate::guards::key_facts::without_sentinel(body))
    }

    #[test]
    fn moves_oldest_entries_behind_one_pointer() {
        let body: String = (1..=51).map(|i| format!("- error {i}\n")).collect();
        let moved = bound(&body, measure(&body), "archive_002/moved.md").unwrap();
        assert_eq!(moved.entries.first().map(String::as_str), Some("error 1"));
        let size = SectionSize::of(&moved.body);
        assert!(size.bullets <= limits::SECTION_BULLET_THRESHOLD, "{size:?}");
        assert!(
            moved
                .body
                .starts_with("- [earlier entries moved to archive_002/moved.md]\n")
        );
        assert!(moved.body.ends_with("- error 51"));
        // Growing past the bound again merges the pointer.
        let grown: String = format!(
            "{}\n{}",
            moved.body,
            (60..=90)
                .map(|i| format!("- error {i}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        let again = bound(&grown, measure(&grown), "archive_005/moved.md").unwrap();
        assert!(
            again.body.starts_with(
                "- [earlier entries moved to archive_002/moved.md, archive_005/moved.md]\n"
            ),
            "{}",
            again.body
        );
        assert_eq!(again.body.matches(limits::MOVED_POINTER_PREFIX).count(), 1);
    }
}
