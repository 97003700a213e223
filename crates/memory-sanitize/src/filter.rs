//! What memory extraction may see of a rollout.
//!
//! Semantics follow codex's memory pipeline:
//!
//! - only `response_item` lines are kept; session metadata, turn context, compaction summaries,
//!   events (which duplicate the response items), state records and unknown line types are
//!   dropped;
//! - of the response items, reasoning and developer-role messages are dropped, and so are
//!   unknown item types except `agent_message`, `tool_search_call` and `tool_search_output`
//!   (`ghost_snapshot`, `image_generation_call` and future types carry nothing to remember);
//! - in user messages, a text part that is an injected AGENTS.md instruction block
//!   (`# AGENTS.md instructions` ... `</INSTRUCTIONS>`) or a `<skill>` block is removed;
//!   `<environment_context>` and `<subagent_notification>` parts stay. A user message left
//!   with no parts is dropped.
//!
//! [`serialize_for_memory`] writes what is kept as a compact JSON array, the material the
//! extraction prompt quotes (after secret redaction).

use memory_protocol::rollout::MessageItem;
use memory_protocol::{ResponseItem, RolloutItem};

/// Unknown item types that carry conversation content and are kept.
const KEPT_OTHER_ITEM_TYPES: [&str; 3] =
    ["agent_message", "tool_search_call", "tool_search_output"];

/// Text parts of user messages that codex injects and memory must not see, as
/// `(start, end)` markers matched case-insensitively on the trimmed text.
const EXCLUDED_USER_FRAGMENTS: [(&str, &str); 2] = [
    ("# AGENTS.md instructions", "</INSTRUCTIONS>"),
    ("<skill>", "</skill>"),
];

/// Keeps the response items memory extraction may see, in order, with injected user-message
/// fragments removed.
pub fn filter_for_memory(items: impl IntoIterator<Item = RolloutItem>) -> Vec<ResponseItem> {
    items
        .into_iter()
        .filter_map(|item| match item {
            RolloutItem::ResponseItem(item) => keep_for_memory(item),
            _ => None,
        })
        .collect()
}

/// The item as memory may see it, or `None` when it is dropped.
pub fn keep_for_memory(item: ResponseItem) -> Option<ResponseItem> {
    match item {
        ResponseItem::Message(message) => keep_message(message).map(ResponseItem::Message),
        ResponseItem::Reasoning(_) => None,
        ResponseItem::FunctionCall(_)
        | ResponseItem::FunctionCallOutput(_)
        | ResponseItem::CustomToolCall(_)
        | ResponseItem::CustomToolCallOutput(_)
        | ResponseItem::LocalShellCall(_)
        | ResponseItem::WebSearchCall(_) => Some(item),
        ResponseItem::Other(ref other) => KEPT_OTHER_ITEM_TYPES
            .contains(&other.item_type.as_str())
            .then_some(item),
    }
}

fn keep_message(mut message: MessageItem) -> Option<MessageItem> {
    if message.role.eq_ignore_ascii_case("developer") {
        return None;
    }
    if !message.role.eq_ignore_ascii_case("user") {
        return Some(message);
    }
    message
        .content
        .retain(|part| !part.text().is_some_and(is_injected_fragment));
    (!message.content.is_empty()).then_some(message)
}

/// True for an injected AGENTS.md or skill block.
fn is_injected_fragment(text: &str) -> bool {
    let (start_trimmed, end_trimmed) = (text.trim_start(), text.trim_end());
    EXCLUDED_USER_FRAGMENTS.iter().any(|(start, end)| {
        starts_with_ignore_case(start_trimmed, start) && ends_with_ignore_case(end_trimmed, end)
    })
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.as_bytes()
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
}

fn ends_with_ignore_case(text: &str, suffix: &str) -> bool {
    text.len() >= suffix.len()
        && text.as_bytes()[text.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

/// Writes the items as a compact JSON array.
pub fn serialize_for_memory(items: &[ResponseItem]) -> String {
    let mut out = Vec::with_capacity(items.len() * 256);
    out.push(b'[');
    for item in items {
        let mark = out.len();
        if mark > 1 {
            out.push(b',');
        }
        // These types serialize to JSON infallibly (string keys, no non-finite floats); should
        // that ever change, the item is left out rather than corrupting the array.
        if serde_json::to_writer(&mut out, item).is_err() {
            out.truncate(mark);
        }
    }
    out.push(b']');
    // serde_json writes UTF-8 only; the lossy conversion never replaces anything.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragment_markers_match_case_insensitively_after_trimming() {
        assert!(is_injected_fragment(
            "  # agents.md Instructions for /x\n<INSTRUCTIONS>\nhi\n</instructions>\n"
        ));
        assert!(is_injected_fragment("<skill>\nname\n</skill>"));
        assert!(!is_injected_fragment("<skill> unterminated"));
        assert!(!is_injected_fragment(
            "<environment_context>x</environment_context>"
        ));
        assert!(!is_injected_fragment("é"));
    }
}
