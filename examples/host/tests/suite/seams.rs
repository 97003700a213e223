//! The pure invariant checks catch what they name.

use memory_protocol::compaction::CompactionDetails;
use reference_host::HostRequest;
use reference_host::model::{HostMessage, ToolCall};
use reference_host::seams::{lost_modified_files, unpaired_calls};
use serde_json::json;

fn call(id: &str) -> ToolCall {
    ToolCall {
        call_id: id.to_owned(),
        name: "shell".to_owned(),
        arguments: json!({ "command": "ls" }),
    }
}

fn request(messages: Vec<HostMessage>) -> HostRequest {
    HostRequest {
        system: String::new(),
        messages,
        tools: Vec::new(),
    }
}

fn user() -> HostMessage {
    HostMessage::User {
        text: "hi".to_owned(),
    }
}

fn assistant(calls: &[&str]) -> HostMessage {
    HostMessage::Assistant {
        text: String::new(),
        tool_calls: calls.iter().map(|id| call(id)).collect(),
    }
}

fn result(id: &str) -> HostMessage {
    HostMessage::Tool {
        call_id: id.to_owned(),
        output: "ok".to_owned(),
    }
}

#[test]
fn paired_calls_and_results_pass() {
    let paired = request(vec![
        user(),
        assistant(&["a", "b"]),
        result("b"),
        result("a"),
        assistant(&[]),
    ]);
    assert_eq!(unpaired_calls(&paired), Vec::<String>::new());
}

#[test]
fn an_orphan_result_and_a_call_without_result_are_each_reported() {
    // A result whose call was summarized away (pi #4570's shape).
    let orphan_result = request(vec![result("gone"), user()]);
    assert_eq!(
        unpaired_calls(&orphan_result),
        vec!["result gone has no call before it"]
    );
    // A call the conversation moved on from without its result.
    let open_call = request(vec![user(), assistant(&["a"]), user()]);
    assert_eq!(unpaired_calls(&open_call), vec!["call a has no result"]);
    // A result after the next message no longer answers its call.
    let late = request(vec![assistant(&["a"]), user(), result("a")]);
    assert_eq!(unpaired_calls(&late).len(), 2);
}

fn details(files: &[&str], elided: u64) -> CompactionDetails {
    CompactionDetails {
        read_files: Vec::new(),
        modified_files: files.iter().map(|f| (*f).to_owned()).collect(),
        elided_files: elided,
    }
}

#[test]
fn a_modified_file_lost_without_being_elided_is_reported() {
    let before = details(&["src/a.rs", "src/b.rs"], 0);
    assert!(
        lost_modified_files(&before, &details(&["src/a.rs", "src/b.rs", "src/c.rs"], 0)).is_empty()
    );
    assert!(lost_modified_files(&before, &details(&["src/a.rs"], 1)).is_empty());
    assert_eq!(
        lost_modified_files(&before, &details(&["src/a.rs"], 0)),
        vec!["src/b.rs"]
    );
}
