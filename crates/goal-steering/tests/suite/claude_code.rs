//! The Claude Code Stop hook adapter: reading a turn from a transcript, and the hook's answer.

use goal_steering::claude_code::{StopHookInput, last_turn};
use proptest::prelude::*;

use super::{THREAD, set, store};

/// A transcript as Claude Code writes it: an earlier turn, then a turn of two API answers
/// whose blocks are one line each (every line repeating the answer's usage), a tool result,
/// bookkeeping lines and one line that is not JSON.
const TRANSCRIPT: &str = r#"{"type":"user","uuid":"u1","message":{"role":"user","content":"first task"}}
{"type":"assistant","uuid":"a1","message":{"id":"msg_old","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":999,"output_tokens":999}}}
{"type":"user","uuid":"u2","isMeta":true,"message":{"role":"user","content":"Stop hook feedback:\ncontinue"}}
{"type":"assistant","uuid":"a2","message":{"id":"msg_1","content":[{"type":"text","text":"Running the tests."}],"usage":{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":1000,"output_tokens":50}}}
{"type":"assistant","uuid":"a3","message":{"id":"msg_1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cargo test"}}],"usage":{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":1000,"output_tokens":50}}}
{"type":"assistant","uuid":"a4","message":{"id":"msg_1","content":[{"type":"tool_use","id":"t2","name":"mcp__agent-memory__get_goal","input":{}}],"usage":{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":1000,"output_tokens":50}}}
{"type":"user","uuid":"r1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}
{"type":"queue-operation","operation":"dequeue","sessionId":"s"}
not json at all
{"type":"assistant","uuid":"a5","message":{"id":"msg_2","content":[{"type":"text","text":"All green."}],"usage":{"input_tokens":10,"cache_read_input_tokens":1200,"output_tokens":40}}}
"#;

#[test]
fn usage_is_counted_once_per_answer_and_only_for_the_last_turn() {
    let turn = last_turn(TRANSCRIPT).unwrap();
    assert_eq!(turn.turn_id, "claude-code:msg_2");
    assert_eq!(turn.answers, 2);
    assert_eq!(turn.input_tokens, (100 + 20 + 1000) + (10 + 1200));
    assert_eq!(turn.cached_input_tokens, 1000 + 1200);
    assert_eq!(turn.output_tokens, 50 + 40);
    assert_eq!(turn.tool_calls, 1, "the goal tool is not work");
    // Charged: input - cached + output = 120 + 10 + 90.
    assert_eq!(
        turn.input_tokens - turn.cached_input_tokens + turn.output_tokens,
        220
    );
}

#[test]
fn a_transcript_without_a_turn_and_a_bad_payload_are_clear_errors() {
    let error = last_turn("{\"type\":\"summary\"}\n").unwrap_err();
    assert!(error.to_string().contains("no turn"), "{error}");
    let error = StopHookInput::parse("{\"session_id\": 7}").unwrap_err();
    assert!(error.to_string().contains("Stop hook payload"), "{error}");
    // The parser's own error is kept as the cause, for a host that walks the chain.
    let cause = std::error::Error::source(&error).expect("a cause");
    assert!(cause.is::<serde_json::Error>(), "{cause:?}");
}

#[test]
fn the_stop_hook_blocks_while_active_and_records_each_turn_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    std::fs::write(&path, TRANSCRIPT).unwrap();
    let input = StopHookInput::parse(
        &serde_json::json!({"session_id": "other-session", "transcript_path": path,
            "hook_event_name": "Stop", "stop_hook_active": true})
        .to_string(),
    )
    .unwrap();
    let (mut store, _) = store();
    // No goal on the session: nothing recorded, no block.
    let none = store.claude_code_stop(&input, None).unwrap();
    assert_eq!((none.account, none.block), (None, None));
    set(&mut store, "make the parser tests green", Some(10_000));
    let outcome = store.claude_code_stop(&input, Some(THREAD)).unwrap();
    let account = outcome.account.unwrap();
    assert_eq!(account.turn.tokens_charged, 220);
    assert_eq!(account.turn.tool_calls, 1);
    let block = outcome.block.unwrap();
    assert_eq!(block.decision, "block");
    assert!(block.reason.contains("make the parser tests green"));
    // The same stop again (a retried hook): charged once.
    let again = store.claude_code_stop(&input, Some(THREAD)).unwrap();
    assert!(again.account.unwrap().already_recorded);
    assert_eq!(store.get(THREAD).unwrap().unwrap().tokens_used, 220);
    // A paused goal: the turn is recorded, no block.
    store.pause(THREAD, None).unwrap();
    std::fs::write(
        &path,
        format!("{TRANSCRIPT}{{\"type\":\"user\",\"uuid\":\"u9\",\"message\":{{\"content\":\"go\"}}}}\n{{\"type\":\"assistant\",\"message\":{{\"id\":\"msg_9\",\"content\":[],\"usage\":{{\"output_tokens\":5}}}}}}\n"),
    )
    .unwrap();
    let paused = store.claude_code_stop(&input, Some(THREAD)).unwrap();
    assert_eq!(paused.account.unwrap().turn.tokens_charged, 5);
    assert_eq!(paused.block, None);
}

proptest! {
    #[test]
    fn any_transcript_text_is_read_or_refused_never_a_panic(text in any::<String>(), lines in proptest::collection::vec("[ -~]{0,80}", 0..8)) {
        let _ = last_turn(&text);
        let joined = lines.join("\n");
        if let Ok(turn) = last_turn(&joined) {
            prop_assert!(turn.input_tokens >= turn.cached_input_tokens);
            prop_assert!(turn.output_tokens >= 0);
        }
        let _ = StopHookInput::parse(&text);
    }
}
