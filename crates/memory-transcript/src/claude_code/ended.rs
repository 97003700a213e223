//! Sessions Claude Code reported ended. Its `SessionEnd` hook appends one line per end to a
//! list in the agent-memory home ([`ENDED_SESSIONS_FILE`]); the write path reads the list so an
//! ended session is extracted without waiting out the idle rule.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use serde_json::{Value, json};

/// The list, relative to the agent-memory home.
pub const ENDED_SESSIONS_FILE: &str = "hooks/claude-code/ended.jsonl";

/// One reported end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndedSession<'a> {
    /// The session (a Claude Code session id, the thread id of its transcript).
    pub session_id: &'a str,
    /// Its transcript.
    pub transcript_path: &'a Path,
    /// Why it ended, as Claude Code said (`other`, `clear`, `prompt_input_exit`, ...).
    pub reason: Option<&'a str>,
    /// When, in Unix seconds.
    pub ended_at: i64,
}

/// Appends `session` to the list at `path` (created with its folder when missing).
pub fn append_ended(path: &Path, session: &EndedSession<'_>) -> std::io::Result<()> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    let line = json!({
        "session_id": session.session_id,
        "transcript_path": session.transcript_path,
        "reason": session.reason,
        "ended_at": session.ended_at,
    });
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.write_all(format!("{line}\n").as_bytes())
}

/// The latest end of every session in the list at `path`; a missing list is empty. A line
/// that is not a record with a session id and an end time (a torn last line, an older line
/// without `ended_at`) is passed over: that session simply waits for the idle rule.
pub fn read_ended(path: &Path) -> std::io::Result<HashMap<String, i64>> {
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(error) => return Err(error),
    };
    Ok(parse_ended(&text))
}

fn parse_ended(text: &str) -> HashMap<String, i64> {
    let mut ended: HashMap<String, i64> = HashMap::new();
    for line in text.lines() {
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let session = record.get("session_id").and_then(Value::as_str);
        let at = record.get("ended_at").and_then(Value::as_i64);
        if let (Some(session), Some(at)) = (session, at) {
            let latest = ended.entry(session.to_owned()).or_insert(at);
            *latest = (*latest).max(at);
        }
    }
    ended
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_latest_end_of_each_session_is_kept_and_bad_lines_are_passed_over() {
        let dir = std::env::temp_dir().join(format!("ended-{}", std::process::id()));
        let path = dir.join(ENDED_SESSIONS_FILE);
        assert!(read_ended(&path).unwrap().is_empty());
        for (session, at) in [("a", 100), ("b", 50), ("a", 300), ("a", 200)] {
            let end = EndedSession {
                session_id: session,
                transcript_path: Path::new("/p/a.jsonl"),
                reason: Some("other"),
                ended_at: at,
            };
            append_ended(&path, &end).unwrap();
        }
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        file.write_all(
            b"{\"session_id\": \"c\"}\nnot json\n{\"session_id\": \"d\", \"ended_at\": 7",
        )
        .unwrap();
        let ended = read_ended(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            ended,
            HashMap::from([("a".to_owned(), 300), ("b".to_owned(), 50)])
        );
    }

    proptest! {
        #[test]
        fn any_list_text_is_read_without_panicking(text in "(\\PC|\n|\\{\"session_id\": \"s\", \"ended_at\": [0-9]{1,20}\\}){0,20}") {
            for at in parse_ended(&text).values() {
                prop_assert!(*at >= 0);
            }
        }
    }
}
