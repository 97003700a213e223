//! The session window: pending tokens, commits, archives, the cursor, windows, failures and
//! assembly; the conformance cases of the reference about pending tokens and message
//! formatting; and the user reports about commits.

use std::path::Path;
use std::sync::Mutex;

use async_trait::async_trait;
use memory_protocol::compaction::{AssistantBlock, ConversationEntry, ConversationMessage};
use memory_protocol::working_memory::{
    WorkingMemoryCreateInput, WorkingMemorySection, WorkingMemoryUpdateInput, limits,
};
use memory_protocol::{ModelClient, ModelError, ModelRequest, ModelResponse, TaskKind};
use serde_json::json;
use working_memory::WorkingMemoryDocument;
use working_memory::session::{
    ABSTRACT_FILE, ARCHIVE_MESSAGES_FILE, ArchiveStatus, CallOutcomes, CommitStatus, DONE_FILE,
    MESSAGES_FILE, META_FILE, OVERVIEW_FILE, Session, SessionOptions, WINDOW_FILE, format_message,
    format_messages, pending_tokens,
};

use super::items_of;

pub(crate) fn user(id: &str, text: &str) -> ConversationEntry {
    ConversationEntry {
        id: id.into(),
        message: ConversationMessage::User { text: text.into() },
    }
}

fn reply(id: &str, text: &str) -> ConversationEntry {
    ConversationEntry {
        id: id.into(),
        message: ConversationMessage::Assistant {
            content: vec![AssistantBlock::Text { text: text.into() }],
        },
    }
}

fn call(id: &str, call_id: &str) -> ConversationEntry {
    ConversationEntry {
        id: id.into(),
        message: ConversationMessage::Assistant {
            content: vec![AssistantBlock::ToolCall {
                id: call_id.into(),
                name: "shell".into(),
                arguments: json!({"cmd": "cargo test"}),
            }],
        },
    }
}

fn result(id: &str, call_id: &str) -> ConversationEntry {
    ConversationEntry {
        id: id.into(),
        message: ConversationMessage::ToolResult {
            tool_call_id: call_id.into(),
            tool_name: "shell".into(),
            text: "ok".into(),
            is_error: false,
            useless: false,
        },
    }
}

/// The ids of the messages a request carried.
fn sent_ids(request: &ModelRequest) -> Vec<String> {
    let messages = match request.task {
        TaskKind::WorkingMemoryCreate => {
            serde_json::from_value::<WorkingMemoryCreateInput>(request.structured_input.clone())
                .unwrap()
                .messages
        }
        _ => {
            serde_json::from_value::<WorkingMemoryUpdateInput>(request.structured_input.clone())
                .unwrap()
                .messages
        }
    };
    messages.into_iter().map(|m| m.id).collect()
}

type Answer = Box<dyn Fn(&ModelRequest) -> Result<String, ModelError> + Send + Sync>;

/// A model that answers with a function of the request and records every request.
pub(crate) struct Recording {
    answer: Answer,
    pub(crate) requests: Mutex<Vec<ModelRequest>>,
}

impl Recording {
    pub(crate) fn new(
        answer: impl Fn(&ModelRequest) -> Result<String, ModelError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            answer: Box::new(answer),
            requests: Mutex::new(Vec::new()),
        }
    }

    /// Creates a document naming the messages it saw in Key Facts; updates append them.
    pub(crate) fn echo() -> Self {
        Self::new(|request| {
            let ids = sent_ids(request);
            Ok(match request.task {
                TaskKind::WorkingMemoryCreate => format!(
                    "# Working Memory\n\n## Session Title\nEcho session notes\n\n## Current State\nSaw {} message(s).\n\n## Key Facts & Decisions\n{}\n",
                    ids.len(),
                    ids.iter().map(|id| format!("- saw {id}")).collect::<Vec<_>>().join("\n")
                ),
                _ => json!({"sections": {
                    "Session Title": {"op": "KEEP"},
                    "Current State": {"op": "UPDATE", "content": format!("Saw {} more message(s).", ids.len())},
                    "Task & Goals": {"op": "KEEP"},
                    "Key Facts & Decisions": {"op": "APPEND", "items": ids.iter().map(|id| format!("saw {id}")).collect::<Vec<_>>()},
                    "Files & Context": {"op": "KEEP"},
                    "Errors & Corrections": {"op": "KEEP"},
                    "Open Issues": {"op": "KEEP"},
                }})
                .to_string(),
            })
        })
    }

    /// The answer to `request`, recorded like any other.
    pub(crate) fn complete_now(&self, request: &ModelRequest) -> Result<String, ModelError> {
        self.requests.lock().unwrap().push(request.clone());
        (self.answer)(request)
    }

    pub(crate) fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().unwrap().clone()
    }
}

#[async_trait]
impl ModelClient for Recording {
    fn name(&self) -> String {
        "recording".into()
    }

    fn context_window(&self) -> Option<u64> {
        None
    }

    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        self.requests.lock().unwrap().push(request.clone());
        (self.answer)(&request).map(|text| ModelResponse { text, usage: None })
    }
}

pub(crate) fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(future)
}

fn options(budget: u64) -> SessionOptions {
    SessionOptions {
        token_budget: budget,
        ..SessionOptions::default()
    }
}

fn talk(prefix: &str, n: usize) -> Vec<ConversationEntry> {
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                user(
                    &format!("{prefix}{i}"),
                    &format!("question {prefix}{i} about the tide tables"),
                )
            } else {
                reply(
                    &format!("{prefix}{i}"),
                    &format!("answer {prefix}{i}: the offsets are in minutes"),
                )
            }
        })
        .collect()
}

fn overview(dir: &Path) -> String {
    let session = Session::open(dir, SessionOptions::default()).unwrap();
    session.working_memory().unwrap().unwrap().1
}

/// The reference's pending-token rebuild cases.
mod rebuild_pending_tokens {
    use super::*;

    #[test]
    fn no_keep_sums_all() {
        assert_eq!(pending_tokens(&[120, 80, 400], 0), 600);
    }

    #[test]
    fn keep_2_of_5() {
        assert_eq!(pending_tokens(&[100, 200, 300, 7, 9], 2), 600);
    }

    #[test]
    fn keep_more_than_total() {
        assert_eq!(pending_tokens(&[100, 200], 5), 0);
    }

    #[test]
    fn none_tokens_treated_as_zero() {
        // A message without text estimates to zero tokens.
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
        session.set_keep_recent_count(0).unwrap();
        session
            .append(vec![user("a", ""), user("b", "abcdefgh")])
            .unwrap();
        assert_eq!(session.messages()[0].tokens, 0);
        assert_eq!(session.state().pending_tokens, 2);
    }

    #[test]
    fn empty_messages() {
        assert_eq!(pending_tokens(&[], 0), 0);
        assert_eq!(pending_tokens(&[], 3), 0);
    }

    #[test]
    fn keep_equals_total() {
        assert_eq!(pending_tokens(&[5, 6, 7], 3), 0);
    }
}

/// The reference's clamping cases: whatever `window.json` says, counts come back in range.
mod pending_tokens_clamp {
    use super::*;

    fn open_with(state: serde_json::Value, messages: &[ConversationEntry]) -> Session {
        let dir = tempfile::tempdir().unwrap().keep();
        std::fs::write(dir.join(WINDOW_FILE), state.to_string()).unwrap();
        let lines: String = messages
            .iter()
            .map(|m| format!("{}\n", serde_json::to_string(m).unwrap()))
            .collect();
        std::fs::write(dir.join(MESSAGES_FILE), lines).unwrap();
        Session::open(dir, SessionOptions::default()).unwrap()
    }

    #[test]
    fn negative_pending_tokens_clamped_on_rebuild() {
        let session = open_with(json!({"pending_tokens": -500, "keep_recent_count": 0}), &[]);
        assert_eq!(session.state().pending_tokens, 0);
    }

    #[test]
    fn negative_keep_recent_count_treated_as_zero() {
        let messages = [user("a", &"x".repeat(400)), user("b", &"y".repeat(800))];
        let session = open_with(
            json!({"pending_tokens": 0, "keep_recent_count": -3}),
            &messages,
        );
        assert_eq!(session.state().keep_recent_count, 0);
        assert_eq!(session.state().pending_tokens, 300);
    }

    #[test]
    fn from_dict_clamps_negative_pending() {
        let session = open_with(
            json!({"pending_tokens": -1, "keep_recent_count": 99999, "cursor": "m3"}),
            &[],
        );
        assert_eq!(session.state().pending_tokens, 0);
        assert_eq!(session.state().keep_recent_count, 10_000);
        assert_eq!(session.state().cursor.as_deref(), Some("m3"));
    }
}

/// The reference's message-formatting cases, in our message model: its context parts map to
/// shell executions, its tool statuses to whether the call's result is present.
mod format_message_for_wm {
    use super::*;

    fn one(entry: &ConversationEntry) -> String {
        format_message(entry, &CallOutcomes::default())
    }

    #[test]
    fn text_only() {
        assert_eq!(one(&user("a", "Hello world")), "[User]: Hello world");
    }

    #[test]
    fn tool_part_included() {
        assert_eq!(
            format_messages(&[call("a", "c1"), result("b", "c1")]),
            "[Tool Call]: shell({\"cmd\":\"cargo test\"})\n\n[Tool Result: shell]: ok"
        );
    }

    #[test]
    fn context_part_included() {
        let entry = ConversationEntry {
            id: "s".into(),
            message: ConversationMessage::ShellExecution {
                command: "git status".into(),
                output: "clean".into(),
                exit_code: Some(0),
            },
        };
        assert_eq!(one(&entry), "[Shell]: $ git status (exit 0)\nclean");
    }

    #[test]
    fn mixed_parts() {
        let entry = ConversationEntry {
            id: "a".into(),
            message: ConversationMessage::Assistant {
                content: vec![
                    AssistantBlock::Text {
                        text: "Running it.".into(),
                    },
                    AssistantBlock::Thinking {
                        thinking: "hidden".into(),
                    },
                    AssistantBlock::ToolCall {
                        id: "c".into(),
                        name: "shell".into(),
                        arguments: json!({}),
                    },
                ],
            },
        };
        let calls = CallOutcomes {
            answered: ["c"].into(),
            ..CallOutcomes::default()
        };
        assert_eq!(
            format_message(&entry, &calls),
            "[Assistant]: Running it.\n[Tool Call]: shell({})"
        );
    }

    #[test]
    fn empty_parts() {
        let entry = ConversationEntry {
            id: "a".into(),
            message: ConversationMessage::Assistant { content: vec![] },
        };
        assert_eq!(one(&entry), "[Assistant]: (no content)");
    }

    #[test]
    fn whitespace_only_text_skipped() {
        let entry = ConversationEntry {
            id: "a".into(),
            message: ConversationMessage::Assistant {
                content: vec![
                    AssistantBlock::Text {
                        text: "  \n ".into(),
                    },
                    AssistantBlock::Text {
                        text: "done".into(),
                    },
                ],
            },
        };
        assert_eq!(one(&entry), "[Assistant]: done");
    }

    #[test]
    fn tool_with_empty_output() {
        let entry = ConversationEntry {
            id: "r".into(),
            message: ConversationMessage::ToolResult {
                tool_call_id: "c".into(),
                tool_name: "write".into(),
                text: " ".into(),
                is_error: true,
                useless: false,
            },
        };
        assert_eq!(one(&entry), "[Tool Result: write (error)]: (no output)");
    }

    #[test]
    fn tool_default_status() {
        assert_eq!(
            format_messages(&[call("a", "c9")]),
            "[Tool Call]: shell({\"cmd\":\"cargo test\"}) (no result yet)"
        );
    }
}

#[test]
fn state_is_persisted_and_rebuilt_on_load() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    session.append(talk("m", 14)).unwrap();
    let pending = session.state().pending_tokens;
    assert!(pending > 0);
    // Messages appended by another writer are counted on the next load.
    let extra = serde_json::to_string(&user("late", &"z".repeat(40))).unwrap();
    let mut text = std::fs::read_to_string(dir.path().join(MESSAGES_FILE)).unwrap();
    text.push_str(&extra);
    text.push('\n');
    std::fs::write(dir.path().join(MESSAGES_FILE), text).unwrap();
    let reopened = Session::open(dir.path(), SessionOptions::default()).unwrap();
    assert_eq!(reopened.messages().len(), 15);
    assert!(reopened.state().pending_tokens > pending);
    assert_eq!(reopened.state().keep_recent_count, 10);
}

#[test]
fn a_commit_is_due_at_half_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::open(dir.path(), options(1_000)).unwrap();
    session.set_keep_recent_count(0).unwrap();
    let first = session.append(vec![user("a", &"x".repeat(1_996))]).unwrap();
    assert_eq!(first.pending_tokens, 499);
    assert!(!first.commit_due);
    let second = session.append(vec![user("b", "abcd")]).unwrap();
    assert_eq!(second.pending_tokens, 500);
    assert!(second.commit_due);
    let model = Recording::echo();
    let report = block_on(session.commit_if_due(&model)).unwrap().unwrap();
    assert_eq!(report.status, CommitStatus::Done);
    assert_eq!(session.state().pending_tokens, 0);
    assert!(block_on(session.commit_if_due(&model)).unwrap().is_none());
}

/// OpenViking #4963: every commit re-sent the whole session. The second request holds only
/// the messages archived since the first.
#[test]
fn commit_twice_sends_only_new_messages() {
    let dir = tempfile::tempdir().unwrap();
    let model = Recording::echo();
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    session.append(talk("a", 14)).unwrap();
    let first = block_on(session.commit(&model, 4)).unwrap();
    assert_eq!(first.status, CommitStatus::Done);
    assert_eq!(first.archived_messages, 10);
    session.append(talk("b", 6)).unwrap();
    let second = block_on(session.flush(&model)).unwrap();
    assert_eq!(second.status, CommitStatus::Done);
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].task, TaskKind::WorkingMemoryCreate);
    assert_eq!(
        sent_ids(&requests[0]),
        (0..10).map(|i| format!("a{i}")).collect::<Vec<_>>()
    );
    assert_eq!(requests[1].task, TaskKind::WorkingMemoryUpdate);
    // The 4 kept from the first commit and 2 of the new ones; nothing the memory had seen.
    let expected: Vec<String> = ["a10", "a11", "a12", "a13", "b0", "b1"]
        .map(String::from)
        .to_vec();
    assert_eq!(sent_ids(&requests[1]), expected);
    assert!(
        !requests[1].input.contains("question a0 "),
        "old messages are not in the prompt"
    );
    assert_eq!(session.state().cursor.as_deref(), Some("b1"));
    let memory = overview(dir.path());
    for id in ["a0", "a9", "a13", "b1"] {
        assert!(memory.contains(&format!("saw {id}")), "{id}: {memory}");
    }
}

/// The same report, the other half: a long backlog is sent in windows of bounded size, never
/// as one prompt.
#[test]
fn a_large_backlog_is_sent_in_bounded_windows() {
    let dir = tempfile::tempdir().unwrap();
    let model = Recording::echo();
    let mut session = Session::open(
        dir.path(),
        SessionOptions {
            token_budget: 128_000,
            update_input_tokens: 200,
        },
    )
    .unwrap();
    session.append(talk("m", 60)).unwrap();
    let report = block_on(session.compact(&model)).unwrap();
    assert_eq!(report.status, CommitStatus::Done);
    assert!(report.windows > 1, "{report:?}");
    let requests = model.requests();
    let mut seen = Vec::new();
    for request in &requests {
        let ids = sent_ids(request);
        let messages: Vec<ConversationEntry> = talk("m", 60)
            .into_iter()
            .filter(|m| ids.contains(&m.id))
            .collect();
        let tokens: u64 = messages
            .iter()
            .map(working_memory::session::estimate_message)
            .sum();
        assert!(tokens <= 200, "a window of {tokens} tokens");
        seen.extend(ids);
    }
    assert_eq!(seen.len(), 60, "every message sent once");
}

/// OpenViking #3226: prompts rejected as too large, yet the task reported "completed" with
/// nothing stored; and issue 27: a failed commit piled up failed archives. A model that always
/// answers context overflow fails the commit visibly and leaves the folder byte-identical: no
/// archive, the messages still live and assembled, the keep count not stored.
#[test]
fn an_always_overflowing_model_fails_visibly_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let model = Recording::new(|_| {
        Err(ModelError::ContextOverflow {
            message: "prompt is too long".into(),
        })
    });
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    session.append(talk("m", 16)).unwrap();
    let before = snapshot(dir.path());
    let report = block_on(session.commit(&model, 2)).unwrap();
    assert_eq!(report.status, CommitStatus::Failed);
    assert!(
        report
            .error
            .as_deref()
            .unwrap()
            .contains("prompt is too long")
    );
    assert_eq!(report.archived_messages, 0);
    assert_eq!(
        snapshot(dir.path()),
        before,
        "a failed commit writes nothing"
    );
    assert!(session.archives().unwrap().is_empty());
    assert!(session.working_memory().unwrap().is_none());
    assert!(session.state().cursor.is_none(), "the cursor does not move");
    assert_eq!(
        session.state().keep_recent_count,
        10,
        "keep 2 is not stored"
    );
    assert_eq!(session.messages().len(), 16);
    // The window was split down to single messages before giving up, not retried forever.
    assert!(model.requests().len() <= 6, "{}", model.requests().len());
    let assembled = session.assemble(128_000).unwrap();
    assert!(assembled.instructions.is_none());
    assert_eq!(assembled.messages.len(), 16);
    // A second failure writes nothing either: no failed archives pile up.
    block_on(session.commit(&model, 2)).unwrap();
    assert_eq!(snapshot(dir.path()), before);
    // The next commit with a working model sends the same messages.
    let working = Recording::echo();
    session.append(talk("n", 4)).unwrap();
    let retry = block_on(session.commit(&working, 2)).unwrap();
    assert_eq!(retry.status, CommitStatus::Done);
    assert_eq!(retry.sent_messages, 18);
    let memory = overview(dir.path());
    assert!(
        memory.contains("saw m0") && memory.contains("saw n1"),
        "{memory}"
    );
}

/// Every file under `dir` with its bytes.
pub(crate) fn snapshot(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.insert(path.clone(), Vec::new());
                stack.push(path);
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// Issue 27: a message larger than the model's window failed every later commit. It is now
/// sent cut (head and tail, with a marker), the commit is done, and the next one works.
#[test]
fn a_message_larger_than_the_model_window_is_cut_and_commits_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let echo = Recording::echo();
    // A model that refuses any prompt over 200,000 characters (about 50,000 tokens).
    let model = Recording::new(move |request| {
        if request.input.len() > 200_000 {
            Err(ModelError::ContextOverflow {
                message: "prompt is too long".into(),
            })
        } else {
            echo.complete_now(request)
        }
    });
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    let huge = (0..200_000)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut entries = vec![user("big", &huge)];
    entries.extend(talk("m", 6));
    session.append(entries).unwrap();
    let report = block_on(session.commit(&model, 2)).unwrap();
    assert_eq!(report.status, CommitStatus::Done, "{:?}", report.error);
    assert_eq!(report.archived_messages, 5);
    assert_eq!(report.cut_messages, ["big"]);
    let sent = &model.requests()[0].input;
    assert!(sent.contains("w0 w1") && sent.contains("chars omitted]"));
    // The archive keeps the message whole; only what the model saw was cut.
    let archived = session.archives().unwrap()[0].messages().unwrap();
    assert_eq!(archived[0], user("big", &huge));
    session.append(talk("n", 4)).unwrap();
    let next = block_on(session.commit(&model, 2)).unwrap();
    assert_eq!(next.status, CommitStatus::Done);
    assert!(
        session
            .archives()
            .unwrap()
            .iter()
            .all(|a| a.status == ArchiveStatus::Done)
    );
}

/// Issue 27 (Deliver 3): opening a session and assembling it never write, even when live
/// messages repeat the newest archive's (a commit interrupted before it rewrote the live
/// file): those are left out in memory only.
#[test]
fn opening_and_assembling_a_session_never_write() {
    let dir = tempfile::tempdir().unwrap();
    let model = Recording::echo();
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    session.append(talk("m", 6)).unwrap();
    block_on(session.commit(&model, 2)).unwrap();
    // As if the commit stopped after marking the archive done: the live file still has all.
    let mut lines: Vec<String> = talk("m", 6)
        .iter()
        .map(|entry| serde_json::to_string(entry).unwrap())
        .collect();
    lines.push(serde_json::to_string(&user("m6", "a new message")).unwrap());
    std::fs::write(dir.path().join(MESSAGES_FILE), lines.join("\n") + "\n").unwrap();
    let before = snapshot(dir.path());
    let reopened = Session::open(dir.path(), SessionOptions::default()).unwrap();
    let live: Vec<&str> = reopened
        .messages()
        .iter()
        .map(|m| m.entry.id.as_str())
        .collect();
    assert_eq!(live, ["m4", "m5", "m6"]);
    reopened.assemble(16_000).unwrap();
    reopened.working_memory().unwrap();
    assert_eq!(snapshot(dir.path()), before);
}

/// OpenViking #1682: a commit threshold so high that short sessions never reached memory. A
/// flush commits whatever the threshold.
#[test]
fn a_short_session_reaches_memory_through_flush() {
    let dir = tempfile::tempdir().unwrap();
    let model = Recording::echo();
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    session.set_keep_recent_count(0).unwrap();
    let appended = session.append(talk("m", 3)).unwrap();
    assert!(!appended.commit_due);
    assert!(block_on(session.commit_if_due(&model)).unwrap().is_none());
    let report = block_on(session.flush(&model)).unwrap();
    assert_eq!(report.status, CommitStatus::Done);
    assert!(overview(dir.path()).contains("saw m2"));
}

#[test]
fn a_commit_never_separates_a_tool_call_from_its_result() {
    let dir = tempfile::tempdir().unwrap();
    let model = Recording::echo();
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    session
        .append(vec![
            user("u1", "run the tests"),
            call("c1", "t1"),
            result("r1", "t1"),
            reply("a1", "they pass"),
            call("c2", "t2"),
        ])
        .unwrap();
    // Keeping 3 would cut between `c1` and its result `r1`: the cut moves before `c1`.
    let report = block_on(session.commit(&model, 3)).unwrap();
    assert_eq!(report.archived_messages, 1);
    let live: Vec<&str> = session
        .messages()
        .iter()
        .map(|m| m.entry.id.as_str())
        .collect();
    assert_eq!(live, ["c1", "r1", "a1", "c2"]);
    // Compacting archives everything but the call still waiting for its result.
    let report = block_on(session.compact(&model)).unwrap();
    assert_eq!(report.archived_messages, 3);
    let live: Vec<&str> = session
        .messages()
        .iter()
        .map(|m| m.entry.id.as_str())
        .collect();
    assert_eq!(live, ["c2"]);
}

#[test]
fn compact_does_not_change_the_stored_keep_count() {
    let dir = tempfile::tempdir().unwrap();
    let model = Recording::echo();
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    session.append(talk("m", 12)).unwrap();
    block_on(session.commit(&model, 7)).unwrap();
    assert_eq!(session.state().keep_recent_count, 7);
    let report = block_on(session.compact(&model)).unwrap();
    assert_eq!(report.archived_messages, 7);
    assert!(session.messages().is_empty());
    assert_eq!(session.state().keep_recent_count, 7);
    let reopened = Session::open(dir.path(), SessionOptions::default()).unwrap();
    assert_eq!(reopened.state().keep_recent_count, 7);
}

#[test]
fn nothing_to_archive_is_skipped_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let model = Recording::echo();
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    let empty = block_on(session.flush(&model)).unwrap();
    assert_eq!(empty.status, CommitStatus::Skipped);
    assert_eq!(empty.reason.as_deref(), Some("no messages"));
    session.append(talk("m", 3)).unwrap();
    let within = block_on(session.flush(&model)).unwrap();
    assert_eq!(within.status, CommitStatus::Skipped);
    assert_eq!(
        within.reason.as_deref(),
        Some("every message is within the keep window")
    );
    assert!(model.requests().is_empty());
}

/// A done archive holds the messages, the meta, the overview, the abstract and the done
/// marker. The marker is what makes it done: an archive whose update stopped before the marker
/// (simulated by removing it) is pending, its overview is not the working memory, and its raw
/// messages are assembled again.
#[test]
fn an_archive_is_done_only_with_its_marker() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    session.append(talk("m", 6)).unwrap();
    let report = block_on(session.commit(&Recording::echo(), 2)).unwrap();
    assert_eq!(report.status, CommitStatus::Done);
    let archive = &session.archives().unwrap()[0];
    assert_eq!(archive.name(), "archive_001");
    assert_eq!(archive.status, ArchiveStatus::Done);
    for file in [
        ARCHIVE_MESSAGES_FILE,
        META_FILE,
        OVERVIEW_FILE,
        ABSTRACT_FILE,
        DONE_FILE,
    ] {
        assert!(archive.dir.join(file).is_file(), "{file} missing");
    }
    let meta = archive.meta().unwrap().unwrap();
    assert_eq!(meta.message_count, 4);
    assert_eq!(meta.first_message_id.as_deref(), Some("m0"));
    assert_eq!(meta.last_message_id.as_deref(), Some("m3"));
    assert!(meta.working_memory.is_some());
    let abstract_line = std::fs::read_to_string(archive.dir.join(ABSTRACT_FILE)).unwrap();
    assert_eq!(abstract_line.trim().lines().count(), 1, "{abstract_line}");
    assert!(session.working_memory().unwrap().is_some());
    assert_eq!(
        session.assemble(128_000).unwrap().stats.archived_messages,
        0
    );

    std::fs::remove_file(archive.dir.join(DONE_FILE)).unwrap();
    let reopened = Session::open(dir.path(), SessionOptions::default()).unwrap();
    assert_eq!(
        reopened.archives().unwrap()[0].status,
        ArchiveStatus::Pending
    );
    assert!(reopened.working_memory().unwrap().is_none());
    let assembled = reopened.assemble(128_000).unwrap();
    assert!(assembled.instructions.is_none());
    assert_eq!(assembled.stats.archived_messages, 4);
    let ids: Vec<&str> = assembled.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["m0", "m1", "m2", "m3", "m4", "m5"]);
}

#[test]
fn an_interrupted_commit_does_not_duplicate_messages() {
    let dir = tempfile::tempdir().unwrap();
    let model = Recording::echo();
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    session.append(talk("m", 12)).unwrap();
    let live_before = std::fs::read_to_string(dir.path().join(MESSAGES_FILE)).unwrap();
    block_on(session.commit(&model, 2)).unwrap();
    // Simulate a crash after the archive was written but before the live file was rewritten.
    std::fs::write(dir.path().join(MESSAGES_FILE), live_before).unwrap();
    let reopened = Session::open(dir.path(), SessionOptions::default()).unwrap();
    let live: Vec<&str> = reopened
        .messages()
        .iter()
        .map(|m| m.entry.id.as_str())
        .collect();
    assert_eq!(live, ["m10", "m11"]);
}

#[test]
fn malformed_answers_are_recovered_and_failed_calls_fall_back_through_the_guards() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    session.append(talk("a", 8)).unwrap();
    block_on(session.compact(&Recording::echo())).unwrap();

    // A truncated tool answer: the Current State update is recovered, the rest kept.
    let truncated = Recording::new(|request| {
        Ok(match request.task {
            TaskKind::WorkingMemoryUpdate => {
                r#"{"sections": {"Current State": {"op": "UPDATE", "content": "Recovered state."}, "Key Facts & Decisions": {"op": "UPDATE", "content": "- nothing"#.into()
            }
            _ => unreachable!("no fallback needed"),
        })
    });
    session.append(talk("b", 2)).unwrap();
    let report = block_on(session.compact(&truncated)).unwrap();
    assert_eq!(report.status, CommitStatus::Done);
    assert_eq!(report.recovered, 1);
    let memory = WorkingMemoryDocument::parse(&overview(dir.path()));
    assert_eq!(
        memory.body(WorkingMemorySection::CurrentState),
        "Recovered state."
    );
    assert!(
        memory
            .body(WorkingMemorySection::KeyFactsAndDecisions)
            .contains("saw a0")
    );

    // An update call that fails: the fallback re-creates the document, and the guards still
    // refuse the title drift and keep the old facts (one bullet for ten is no consolidation).
    let failing = Recording::new(|request| {
        match request.task {
        TaskKind::WorkingMemoryUpdate => Err(ModelError::Transient { message: "502".into() }),
        _ => Ok("# Working Memory\n\n## Session Title\nUnrelated grocery list\n\n## Key Facts & Decisions\n- milk\n".into()),
    }
    });
    session.append(talk("c", 2)).unwrap();
    let report = block_on(session.compact(&failing)).unwrap();
    assert_eq!(report.status, CommitStatus::Done);
    assert_eq!(report.fallbacks, 1);
    let memory = WorkingMemoryDocument::parse(&overview(dir.path()));
    assert_eq!(
        memory.body(WorkingMemorySection::SessionTitle),
        "Echo session notes"
    );
    let facts = memory.body(WorkingMemorySection::KeyFactsAndDecisions);
    assert!(
        facts.contains("saw a0") && facts.contains("- milk"),
        "{facts}"
    );
}

/// letta #3241: a size limit enforced on one write path but not another. The Key Facts bound
/// and the Errors append-only rule hold on the update, the recovered update, the first create
/// and the fallback alike.
#[test]
fn the_bounds_hold_on_every_write_path() {
    let many_facts = (1..=80)
        .map(|i| format!("- fact {i}"))
        .collect::<Vec<_>>()
        .join("\n");
    let created_doc = format!(
        "# Working Memory\n\n## Session Title\nEcho session notes\n\n## Key Facts & Decisions\n{many_facts}\n\n## Errors & Corrections\n- replaced everything\n"
    );
    let created = created_doc.clone();
    let update_args = json!({"sections": {
        "Key Facts & Decisions": {"op": "APPEND", "items": (1..=80).map(|i| format!("new {i}")).collect::<Vec<_>>()},
        "Errors & Corrections": {"op": "UPDATE", "content": "- replaced everything"},
    }})
    .to_string();
    let recovered_args = format!("Sure: {}", &update_args[..update_args.len() - 2]);
    let bounded = |document: &str| {
        let memory = WorkingMemoryDocument::parse(document);
        let facts: Vec<String> = items_of(memory.body(WorkingMemorySection::KeyFactsAndDecisions))
            .into_iter()
            .filter(|item| item != limits::CONSOLIDATION_SENTINEL)
            .collect();
        assert!(
            facts.len() <= limits::hard_bound_bullets(),
            "{} facts",
            facts.len()
        );
    };

    // Path 1: create. 80 facts come back bounded; the rest is moved to the archive.
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    session.append(vec![user("x1", "start")]).unwrap();
    let model = Recording::new(move |_| Ok(created.clone()));
    let report = block_on(session.compact(&model)).unwrap();
    assert_eq!(report.status, CommitStatus::Done);
    bounded(&overview(dir.path()));
    let archive = &session.archives().unwrap()[0];
    assert!(
        std::fs::read_to_string(archive.dir.join("moved.md"))
            .unwrap()
            .contains("- fact 1\n")
    );

    for (name, answer) in [("update", update_args), ("recovered", recovered_args)] {
        session
            .append(vec![user(&format!("{name}1"), "more")])
            .unwrap();
        let model = Recording::new(move |_| Ok(answer.clone()));
        let report = block_on(session.compact(&model)).unwrap();
        assert_eq!(report.status, CommitStatus::Done, "{name}");
        let memory = overview(dir.path());
        bounded(&memory);
        let errors = WorkingMemoryDocument::parse(&memory)
            .body(WorkingMemorySection::ErrorsAndCorrections)
            .to_owned();
        assert_eq!(
            errors, "- replaced everything",
            "{name}: a rewrite only appends"
        );
    }

    // Path 4: the fallback, after a failed update call.
    session.append(vec![user("f1", "more")]).unwrap();
    let fallback = Recording::new(move |request| match request.task {
        TaskKind::WorkingMemoryUpdate => Err(ModelError::Other {
            message: "bad gateway".into(),
        }),
        _ => Ok(created_doc.clone()),
    });
    let report = block_on(session.compact(&fallback)).unwrap();
    assert_eq!(report.fallbacks, 1);
    let memory = overview(dir.path());
    bounded(&memory);
    // The Errors section was only ever appended to: its first entry is still first.
    let errors = WorkingMemoryDocument::parse(&memory)
        .body(WorkingMemorySection::ErrorsAndCorrections)
        .to_owned();
    assert!(errors.starts_with("- replaced everything"), "{errors}");
}

/// pi-hermes-memory #68: an append-only section that hit its cap and stayed broken. Errors &
/// Corrections past its bound moves its oldest entries to the archive, and later appends keep
/// landing.
#[test]
fn an_append_only_section_at_its_cap_keeps_taking_new_entries() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    session.append(vec![user("x0", "start")]).unwrap();
    block_on(session.compact(&Recording::echo())).unwrap();
    let mut round = 0;
    let appender = Recording::new(move |request| {
        let ids = sent_ids(request);
        Ok(json!({"sections": {"Errors & Corrections": {"op": "APPEND", "items": ids.iter().map(|id| format!("`make deploy` failed in {id}")).collect::<Vec<_>>()}}}).to_string())
    });
    let mut all = Vec::new();
    for batch in 0..6 {
        let entries: Vec<ConversationEntry> = (0..10)
            .map(|i| user(&format!("e{batch}_{i}"), "deploy again"))
            .collect();
        all.extend(
            entries
                .iter()
                .map(|e| format!("`make deploy` failed in {}", e.id)),
        );
        session.append(entries).unwrap();
        let report = block_on(session.compact(&appender)).unwrap();
        assert_eq!(report.status, CommitStatus::Done);
        round += 1;
    }
    assert_eq!(round, 6);
    let memory = WorkingMemoryDocument::parse(&overview(dir.path()));
    let errors = items_of(memory.body(WorkingMemorySection::ErrorsAndCorrections));
    assert!(errors.len() <= limits::hard_bound_bullets());
    assert!(
        errors[0].starts_with(limits::MOVED_POINTER_PREFIX),
        "{errors:?}"
    );
    assert_eq!(
        errors.last().map(String::as_str),
        Some("`make deploy` failed in e5_9"),
        "the newest entry landed"
    );
    // Every entry is either still in the section or in an archive's moved.md.
    let mut moved = String::new();
    for archive in session.archives().unwrap() {
        if let Ok(text) = std::fs::read_to_string(archive.dir.join("moved.md")) {
            moved.push_str(&text);
        }
    }
    for entry in &all {
        assert!(
            errors.contains(entry) || moved.contains(&format!("- {entry}\n")),
            "{entry} lost"
        );
    }
}

#[test]
fn assemble_keeps_the_reply_reserve_and_trims_the_working_memory_by_the_rules() {
    let dir = tempfile::tempdir().unwrap();
    let facts = (1..=40)
        .map(|i| format!("- fact {i}: {}", "detail ".repeat(60)))
        .collect::<Vec<_>>()
        .join("\n");
    let files = (1..=150)
        .map(|i| format!("- src/file_{i}.rs: {}", "why ".repeat(60)))
        .collect::<Vec<_>>()
        .join("\n");
    let document = format!(
        "# Working Memory\n\n## Session Title\nLarge memory\n\n## Current State\nStill going.\n\n## Key Facts & Decisions\n{facts}\n\n## Files & Context\n{files}\n\n## Errors & Corrections\n- `x` failed once\n\n## Open Issues\n- flaky test\n"
    );
    let model = Recording::new(move |_| Ok(document.clone()));
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    session.append(talk("m", 4)).unwrap();
    block_on(session.compact(&model)).unwrap();
    session.append(talk("live", 6)).unwrap();
    let assembled = session.assemble(128_000).unwrap();
    let stats = &assembled.stats;
    assert_eq!(stats.reserved_for_reply, 20_000);
    assert!(stats.working_memory_tokens <= 8_000, "{stats:?}");
    assert!(stats.working_memory_trimmed_items > 0);
    let memory = assembled.working_memory.as_deref().unwrap();
    let parsed = WorkingMemoryDocument::parse(memory);
    assert_eq!(
        parsed.body(WorkingMemorySection::OpenIssues),
        "- flaky test"
    );
    assert_eq!(
        parsed.body(WorkingMemorySection::ErrorsAndCorrections),
        "- `x` failed once"
    );
    let kept_files = parsed.body(WorkingMemorySection::FilesAndContext);
    assert!(
        kept_files.contains("history/archive_001/.overview.md"),
        "a pointer to the archive"
    );
    assert!(
        kept_files.contains("src/file_150.rs") && !kept_files.contains("src/file_1.rs"),
        "oldest first"
    );
    let kept_facts = parsed.body(WorkingMemorySection::KeyFactsAndDecisions);
    assert!(kept_facts.contains("fact 40:"), "the newest fact stays");
    let instructions = assembled.instructions.as_deref().unwrap();
    assert!(instructions.contains("trust the\n  messages"));
    assert_eq!(assembled.messages.len(), 6);
    assert!(stats.estimated_tokens + stats.reserved_for_reply <= 128_000);

    // A small budget keeps 15% for the reply and stays within the rest.
    let small = session.assemble(26_000).unwrap();
    assert_eq!(small.stats.reserved_for_reply, 3_900);
    assert!(
        small.stats.estimated_tokens <= 26_000 - 3_900,
        "{:?}",
        small.stats
    );
    assert_eq!(small.messages.len(), 6);
}

/// A user message or reply of about `words` words.
fn long(id: &str, user_turn: bool, words: usize) -> ConversationEntry {
    let text = (0..words)
        .map(|i| format!("tide{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    if user_turn {
        user(id, &text)
    } else {
        reply(id, &text)
    }
}

/// Issue 27: one `exec_command` call abandoned near the start (no result ever came) and 38
/// long messages after it. The call once held every later cut: commits archived one message
/// and then nothing, and assembling at 40,000 tokens returned no message at all.
#[test]
fn an_abandoned_call_never_blocks_a_cut() {
    let dir = tempfile::tempdir().unwrap();
    let model = Recording::echo();
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    let mut entries = vec![
        user("u0", "build the release"),
        ConversationEntry {
            id: "c0".into(),
            message: ConversationMessage::Assistant {
                content: vec![AssistantBlock::ToolCall {
                    id: "call_lost".into(),
                    name: "exec_command".into(),
                    arguments: json!({"cmd": "cargo build --release"}),
                }],
            },
        },
    ];
    entries.extend((0..38).map(|i| long(&format!("m{i}"), i % 2 == 0, 900)));
    session.append(entries).unwrap();

    let first = block_on(session.commit(&model, 4)).unwrap();
    assert_eq!(first.status, CommitStatus::Done);
    assert_eq!(first.archived_messages, 36);
    // The abandoned call went to the model with a note that it got no answer.
    let sent = &model.requests()[0].input;
    assert!(
        sent.contains("exec_command") && sent.contains("(no answer:"),
        "{sent}"
    );

    session
        .append(
            (38..44)
                .map(|i| long(&format!("m{i}"), i % 2 == 0, 900))
                .collect(),
        )
        .unwrap();
    let second = block_on(session.commit(&model, 4)).unwrap();
    assert_eq!(second.status, CommitStatus::Done);
    assert_eq!(second.archived_messages, 6);

    let assembled = session.assemble(40_000).unwrap();
    assert!(!assembled.messages.is_empty());
    assert_eq!(
        assembled.messages.last().map(|m| m.id.as_str()),
        Some("m43")
    );
}

fn tool_pair(n: usize, words: usize) -> Vec<ConversationEntry> {
    let output = (0..words)
        .map(|i| format!("line{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    vec![
        call(&format!("c{n}"), &format!("t{n}")),
        ConversationEntry {
            id: format!("r{n}"),
            message: ConversationMessage::ToolResult {
                tool_call_id: format!("t{n}"),
                tool_name: "shell".into(),
                text: output,
                is_error: false,
                useless: false,
            },
        },
    ]
}

/// Issue 27 (Deliver 6): the reply's reserve is 15% below 40,000 tokens (it was 20,000 at
/// every budget, the whole of a 16,000 budget) and the configured reserve from there on.
#[test]
fn the_reply_reserve_follows_the_budget() {
    use working_memory::session::{REPLY_RESERVE_TOKENS, reply_reserve};
    assert_eq!(reply_reserve(16_000), 2_400);
    assert_eq!(reply_reserve(39_999), 5_999);
    assert_eq!(reply_reserve(40_000), REPLY_RESERVE_TOKENS);
    assert_eq!(reply_reserve(200_000), 30_000);
    assert_eq!(reply_reserve(0), 0);
    assert_eq!(reply_reserve(u64::MAX), u64::MAX / 100 * 15 + 15 * 15 / 100);
}

/// The newest user message opens a long run of tool calls: at a budget far below the run,
/// the assembled context still holds the user message, the newest call with its result, and
/// names every message it dropped.
#[test]
fn the_newest_user_message_and_the_newest_message_are_always_assembled() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    let mut entries = talk("h", 4);
    entries.push(user("ask", "fix the flaky tide test"));
    for n in 0..30 {
        entries.extend(tool_pair(n, 1_500));
    }
    session.append(entries).unwrap();
    let assembled = session.assemble(16_000).unwrap();
    let ids: Vec<&str> = assembled.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids.first(), Some(&"ask"), "{ids:?}");
    assert_eq!(&ids[ids.len() - 2..], ["c29", "r29"]);
    assert!(assembled.stats.estimated_tokens <= 16_000 - 2_400);
    assert_eq!(
        assembled.left_out.messages.len() + assembled.messages.len(),
        65
    );
    assert!(assembled.left_out.messages.contains(&"h0".to_owned()));
    assert!(assembled.left_out.messages.contains(&"r0".to_owned()));
    assert_eq!(
        assembled.stats.dropped_messages,
        assembled.left_out.messages.len()
    );
}

/// A tool result larger than the whole budget is the newest message: it is cut head and tail
/// (with a marker), named as cut, and the context stays within the budget.
#[test]
fn a_message_larger_than_the_budget_is_cut_not_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    let mut entries = vec![user("ask", "read the whole tide archive")];
    entries.extend(tool_pair(0, 150_000));
    session.append(entries).unwrap();
    for budget in [16_000, 40_000, 128_000] {
        let assembled = session.assemble(budget).unwrap();
        let ids: Vec<&str> = assembled.messages.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["ask", "c0", "r0"], "at {budget}");
        assert_eq!(assembled.left_out.cut_messages, ["r0"]);
        assert!(
            assembled.stats.estimated_tokens
                <= budget - working_memory::session::reply_reserve(budget)
        );
        let ConversationMessage::ToolResult { text, .. } = &assembled.messages[2].message else {
            panic!("not a result");
        };
        assert!(text.starts_with("line0 line1"), "the head is kept");
        assert!(text.ends_with("line149999"), "the tail is kept");
        assert!(
            text.contains("chars omitted]"),
            "a marker says what was cut"
        );
    }
}

/// The working memory gives way before any message is dropped: with a large working memory
/// and live messages that fit only beside a trimmed one, every message is assembled and the
/// working memory loses its oldest Key Facts (named in what was left out).
#[test]
fn the_working_memory_is_trimmed_before_messages_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let files: String = (0..150)
        .map(|i| format!("- src/station_{i}.rs: {}\n", "offsets ".repeat(60)))
        .collect();
    let model = Recording::new(move |_| {
        Ok(format!(
            "# Working Memory\n\n## Session Title\nTide offsets\n\n## Current State\nChecking stations.\n\n## Files & Context\n{files}"
        ))
    });
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    session.append(talk("m", 4)).unwrap();
    assert_eq!(
        block_on(session.commit(&model, 0)).unwrap().status,
        CommitStatus::Done
    );
    let mut live = vec![user("ask", "and station 7?")];
    for n in 0..6 {
        live.extend(tool_pair(n, 1_000));
    }
    session.append(live).unwrap();
    let whole = session.assemble(128_000).unwrap();
    assert_eq!(whole.stats.dropped_messages, 0);
    let whole_memory = whole.stats.working_memory_tokens;
    assert!(whole_memory > 6_000, "{whole_memory}");

    let tight = session.assemble(20_000).unwrap();
    assert_eq!(tight.left_out.messages, Vec::<String>::new());
    assert_eq!(tight.messages.len(), 13);
    assert!(tight.instructions.is_some());
    assert!(tight.left_out.working_memory_items > 0);
    assert!(tight.stats.working_memory_tokens < whole_memory);
    assert!(tight.stats.estimated_tokens <= 20_000 - 3_000);
    let memory = tight.working_memory.unwrap();
    assert!(memory.contains("## Session Title\nTide offsets"));
    // A newest message larger than the budget is cut to leave the working memory its floor.
    let mut giant = vec![user("huge", "dump every station")];
    giant.extend(tool_pair(99, 100_000));
    session.append(giant).unwrap();
    let cut = session.assemble(16_000).unwrap();
    assert_eq!(cut.left_out.cut_messages, ["r99"]);
    assert!(cut.instructions.is_some(), "{:?}", cut.stats);
    assert!(cut.stats.estimated_tokens <= 16_000 - 2_400);
    assert!(
        memory.contains("src/station_149.rs"),
        "the newest entries stay"
    );
    assert!(!memory.contains("src/station_0.rs"), "the oldest go first");
}

/// Issue 27: `wm commit --keep 0` stored 0 as the keep count, so every later commit archived
/// everything. Keep 0 archives everything now and leaves the stored count alone.
#[test]
fn keep_zero_archives_everything_without_storing_zero() {
    let dir = tempfile::tempdir().unwrap();
    let model = Recording::echo();
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    session.append(talk("m", 6)).unwrap();
    let report = block_on(session.commit(&model, 0)).unwrap();
    assert_eq!(report.archived_messages, 6);
    assert!(session.messages().is_empty());
    assert_eq!(session.state().keep_recent_count, 10);
    let reopened = Session::open(dir.path(), SessionOptions::default()).unwrap();
    assert_eq!(reopened.state().keep_recent_count, 10);
}

/// A damaged session file is an error that names the file and line and keeps the parser's
/// error as its cause; nothing is rewritten.
#[test]
fn a_damaged_session_file_names_the_line_and_keeps_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::open(dir.path(), SessionOptions::default()).unwrap();
    session.append(talk("m", 2)).unwrap();
    let messages = dir.path().join(MESSAGES_FILE);
    let mut text = std::fs::read_to_string(&messages).unwrap();
    text.push_str("{\"id\": \"m9\", \"message\": \n");
    std::fs::write(&messages, &text).unwrap();
    let error = Session::open(dir.path(), SessionOptions::default()).unwrap_err();
    assert!(
        matches!(&error, working_memory::Error::BadMessage { line: 3, .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().contains(":3: not a conversation entry: "),
        "{error}"
    );
    let cause = std::error::Error::source(&error).expect("a cause");
    assert!(cause.is::<serde_json::Error>(), "{cause:?}");
    assert_eq!(std::fs::read_to_string(&messages).unwrap(), text);

    let parsed = working_memory::session::parse_messages("[1]\n", Path::new("input")).unwrap_err();
    assert!(parsed.to_string().starts_with("input:1: "), "{parsed}");
}
