//! Packing messages into summarizer windows.

use memory_compaction::compaction::{fit_message, plan_windows, serialize_messages};
use memory_protocol::compaction::ConversationMessage;
use memory_sanitize::{ByteEstimate, TokenCounter, o200k};
use proptest::prelude::*;
use serde_json::json;

use super::support::{call, result, say, turns, user};

#[test]
fn a_span_that_fits_is_one_window_with_the_whole_text() {
    let messages = turns(3, 100);
    let whole = serialize_messages(&messages);
    let windows = plan_windows(messages.clone(), 100_000, &ByteEstimate);
    assert_eq!(windows.len(), 1);
    assert_eq!(windows[0].text, whole);
    assert_eq!(windows[0].messages, messages);
    assert_eq!(windows[0].tokens, ByteEstimate.count(&whole) as u64);
}

#[test]
fn a_long_span_is_split_on_message_boundaries_in_order() {
    let messages = turns(12, 16_000);
    let windows = plan_windows(messages.clone(), 10_000, &ByteEstimate);
    assert!(windows.len() > 1);
    let mut rejoined = Vec::new();
    for window in &windows {
        assert!(window.tokens <= 10_000, "{}", window.tokens);
        assert_eq!(window.tokens, ByteEstimate.count(&window.text) as u64);
        assert_eq!(window.text, serialize_messages(&window.messages));
        rejoined.extend(window.messages.clone());
    }
    assert_eq!(rejoined, messages);
}

#[test]
fn an_oversized_message_is_cut_proportionally_with_a_marker() {
    let huge = user(&"x".repeat(200_000));
    let windows = plan_windows(
        vec![say("before"), huge, say("after")],
        2_000,
        &ByteEstimate,
    );
    assert_eq!(windows.len(), 3);
    let cut = &windows[1];
    assert!(cut.clamped && cut.tokens <= 2_000, "{}", cut.tokens);
    assert!(cut.text.contains("chars omitted"), "{}", cut.text);
    assert!(cut.text.starts_with("[User]: xxx") && cut.text.ends_with("xxx"));
    assert!(
        cut.tokens > 1_500,
        "the cut uses most of the budget: {}",
        cut.tokens
    );
}

#[test]
fn a_cut_tool_call_keeps_its_arguments_as_text() {
    let message = call(
        "c",
        "write",
        json!({"path": "a.txt", "content": "y".repeat(50_000)}),
    );
    let (fitted, text, tokens) = fit_message(&message, 1_024, o200k());
    assert!(tokens <= 1_024);
    assert_eq!(tokens, o200k().count(&text) as u64);
    assert!(text.starts_with("[Tool Call]: write(\""), "{text}");
    assert!(matches!(fitted, ConversationMessage::Assistant { .. }));
}

fn any_message() -> impl Strategy<Value = ConversationMessage> {
    prop_oneof![
        "\\PC{0,1500}".prop_map(|t| user(&t)),
        "[a-z\\n ]{0,3000}".prop_map(|t| say(&t)),
        "\\PC{0,3000}".prop_map(|t| result("c", &t)),
        "[\\\\\"a-z]{0,2000}".prop_map(|t| call("c", "exec", json!({ "cmd": t }))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Every window fits its budget and every message lands in exactly one window, in order.
    #[test]
    fn windows_fit_and_cover_every_message_once(
        messages in proptest::collection::vec(any_message(), 0..20),
        budget in 64u64..1_500,
        exact in any::<bool>(),
    ) {
        let counter: &dyn TokenCounter = if exact { o200k() } else { &ByteEstimate };
        let windows = plan_windows(messages.clone(), budget, counter);
        let mut count = 0;
        for window in &windows {
            prop_assert!(!window.messages.is_empty());
            prop_assert!(window.tokens <= budget, "{} > {}", window.tokens, budget);
            prop_assert_eq!(window.tokens, counter.count(&window.text) as u64);
            count += window.messages.len();
        }
        prop_assert_eq!(count, messages.len());
    }
}
