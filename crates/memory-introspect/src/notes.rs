//! Notes in `notes/`: one file per note, named after the UTC second it was written
//! (`2026-03-15T08-02-11Z-1a2b.md`), so the name gives the day (for the daily budget) and the
//! order (for the block and for phase 2).

use memory_protocol::consolidation::NOTE_TITLE;
use memory_protocol::names::memory_root::NOTES_DIR;

pub(crate) use memory_protocol::consolidation::note_body;

use crate::scan::{FileEntry, RootScan};

/// `YYYY-MM-DD` of Unix seconds, UTC.
pub(crate) fn day(seconds: i64) -> String {
    jiff::Timestamp::from_second(seconds)
        .map(|time| time.strftime("%Y-%m-%d").to_string())
        .unwrap_or_else(|_| "0000-00-00".to_owned())
}

/// The stem of a note written at `seconds` with a distinguishing `suffix`.
pub(crate) fn note_stem(seconds: i64, suffix: u32) -> String {
    let time = jiff::Timestamp::from_second(seconds)
        .map(|time| time.strftime("%Y-%m-%dT%H-%M-%SZ").to_string())
        .unwrap_or_else(|_| "0000-00-00T00-00-00Z".to_owned());
    format!("{time}-{:04x}", suffix & 0xFFFF)
}

/// When a note was written: from its file name, else its modification time.
pub(crate) fn written_at(file: &FileEntry) -> i64 {
    let name = file.rel.rsplit('/').next().unwrap_or(&file.rel);
    name.get(..20)
        .and_then(|stamp| jiff::civil::DateTime::strptime("%Y-%m-%dT%H-%M-%SZ", stamp).ok())
        .and_then(|time| time.to_zoned(jiff::tz::TimeZone::UTC).ok())
        .map_or_else(|| file.mtime_seconds(), |time| time.timestamp().as_second())
}

/// The note files of a scan (Markdown files directly in `notes/`), oldest first.
pub(crate) fn note_files(scan: &RootScan) -> Vec<&FileEntry> {
    let mut notes: Vec<&FileEntry> = scan
        .under(NOTES_DIR)
        .filter(|file| {
            file.indexable()
                && file
                    .rel
                    .get(NOTES_DIR.len() + 1..)
                    .is_some_and(|name| !name.contains('/'))
        })
        .collect();
    notes.sort_by(|a, b| written_at(a).cmp(&written_at(b)).then(a.rel.cmp(&b.rel)));
    notes
}

/// Notes this machine wrote on the UTC day of `now`: the daily budget is each machine's, so
/// the notes a shared store brought from other machines ([`RootScan::received_notes`]) are
/// left out.
pub(crate) fn notes_on_day(scan: &RootScan, now: i64) -> u32 {
    let today = day(now);
    let count = note_files(scan)
        .into_iter()
        .filter(|file| !scan.received_notes.contains(&file.rel))
        .filter(|file| day(written_at(file)) == today)
        .count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// Who wrote a note, as its `written_by` line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteAuthor {
    /// An agent, through the `memory_note` tool.
    Agent,
    /// The user, from the command line (`agent-memory note`).
    User,
}

impl NoteAuthor {
    fn written_by(self) -> &'static str {
        match self {
            NoteAuthor::Agent => "an agent, with memory_note",
            NoteAuthor::User => "the user, with agent-memory note",
        }
    }
}

/// A note file's text.
pub(crate) fn render_note(
    topic: Option<&str>,
    written_at: i64,
    text: &str,
    author: NoteAuthor,
    cwd: Option<&str>,
) -> String {
    let time = jiff::Timestamp::from_second(written_at)
        .map(|time| time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default();
    let title = match topic {
        Some(topic) => format!("{NOTE_TITLE} ({topic})"),
        None => NOTE_TITLE.to_owned(),
    };
    let by = author.written_by();
    // A folder name may hold a line break; the header is one line per key.
    let project = cwd.map_or_else(String::new, |cwd| {
        format!(
            "{}{}\n",
            crate::project::NOTE_CWD_KEY,
            cwd.replace(['\n', '\r'], " ")
        )
    });
    format!("{title}\nwritten_at: {time}\nwritten_by: {by}\n{project}\n{text}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_names_its_time_and_reads_back() {
        let stem = note_stem(1_773_561_731, 0x1a2b);
        assert_eq!(stem, "2026-03-15T08-02-11Z-1a2b");
        let file = FileEntry {
            rel: format!("notes/{stem}.md"),
            size: 1,
            mtime_ns: 0,
            inode: 0,
        };
        assert_eq!(written_at(&file), 1_773_561_731);
        let text = render_note(
            Some("build"),
            1_773_561_731,
            "use `just ci`",
            NoteAuthor::Agent,
            None,
        );
        assert_eq!(
            text,
            "# Agent note (build)\nwritten_at: 2026-03-15T08:02:11Z\nwritten_by: an agent, with memory_note\n\nuse `just ci`\n"
        );
        assert_eq!(note_body(&text), "use `just ci`");
        let by_user = render_note(None, 1_773_561_731, "tabs", NoteAuthor::User, None);
        assert!(by_user.contains("\nwritten_by: the user, with agent-memory note\n"));
        assert_eq!(note_body(&by_user), "tabs");
        let scoped = render_note(None, 1, "tabs", NoteAuthor::User, Some("/src/a\nb"));
        assert!(scoped.contains("\ncwd: /src/a b\n\ntabs\n"), "{scoped}");
        assert_eq!(note_body(&scoped), "tabs");
        assert_eq!(note_body("hand written\n"), "hand written");
        assert_eq!(day(1_773_561_731), "2026-03-15");
    }
}
