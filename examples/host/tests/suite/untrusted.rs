//! Functions that read untrusted text never panic: a bad script or a bad server answer is an
//! error that says what is wrong.

use proptest::prelude::*;
use reference_host::Script;
use reference_host::chat::parse_reply;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_text_as_a_script_is_read_or_refused(text in "\\PC{0,300}") {
        let _ = Script::from_json(&text);
    }

    #[test]
    fn any_server_answer_is_read_or_refused(
        content in prop::option::of("\\PC{0,40}"),
        arguments in "\\PC{0,40}",
        name in "[a-z_]{0,12}",
        garbage in "\\PC{0,200}",
    ) {
        let _ = parse_reply(&garbage);
        let body = serde_json::json!({"choices": [{"message": {
            "content": content,
            "tool_calls": [{"id": "c1", "function": {"name": name, "arguments": arguments}}]
        }}]});
        let reply = parse_reply(&body.to_string()).unwrap();
        prop_assert_eq!(reply.tool_calls.len(), 1);
        prop_assert_eq!(reply.text, content.unwrap_or_default());
    }
}

#[test]
fn a_script_naming_an_unknown_project_or_ending_a_turn_on_a_call_is_refused() {
    let unknown = r#"{"window_tokens": 1000, "projects": {}, "sessions": [
        {"project": "nope", "turns": [{"user": "hi", "replies": [{"text": "ok"}]}]}]}"#;
    let error = Script::from_json(unknown).unwrap_err().to_string();
    assert!(error.contains("\"nope\""), "{error}");
    let open = r#"{"window_tokens": 1000, "projects": {"a": {}}, "sessions": [
        {"project": "a", "turns": [{"user": "hi", "replies": [
            {"tool_calls": [{"name": "shell", "arguments": {"command": "ls"}}]}]}]}]}"#;
    let error = Script::from_json(open).unwrap_err().to_string();
    assert!(error.contains("turn 1 must end"), "{error}");
    let unknown_key = r#"{"window_tokens": 1000, "projects": {}, "sessions": [], "extra": 1}"#;
    let error = Script::from_json(unknown_key).unwrap_err().to_string();
    assert!(error.contains("extra"), "{error}");
}

#[test]
fn a_server_answer_without_a_choice_is_an_error() {
    let error = parse_reply(r#"{"error": {"message": "overloaded"}}"#).unwrap_err();
    assert!(error.to_string().contains("choices[0].message"), "{error}");
}
