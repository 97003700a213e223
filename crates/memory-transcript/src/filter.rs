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
//!   with no parts is dropped. The list of injected blocks is [`crate::injected`]'s, shared
//!   with everything that reads what the user said;
//! - messages between agents (`inter_agent_communication` lines) are kept, as items of that
//!   type, since a parent agent's instructions are part of what the session did.
//!
//! [`serialize_for_memory`] writes what is kept as a compact JSON array, the material the
//! extraction prompt quotes (after secret redaction).

use memory_protocol::rollout::{MessageItem, UnknownItem};
use memory_protocol::{ResponseItem, RolloutItem};
use serde_json::Value;

use crate::injected::is_hidden_fragment;

/// The rollout line type of a message between agents.
pub const INTER_AGENT_ITEM_TYPE: &str = "inter_agent_communication";

/// Unknown item types that carry conversation content and are kept.
const KEPT_OTHER_ITEM_TYPES: [&str; 4] = [
    "agent_message",
    "tool_search_call",
    "tool_search_output",
    INTER_AGENT_ITEM_TYPE,
];

/// Keeps the response items memory extraction may see, in order, with injected user-message
/// fragments removed.
pub fn filter_for_memory(items: impl IntoIterator<Item = RolloutItem>) -> Vec<ResponseItem> {
    items
        .into_iter()
        .filter_map(|item| match item {
            RolloutItem::ResponseItem(item) => keep_for_memory(item),
            RolloutItem::Other(other) if other.item_type == INTER_AGENT_ITEM_TYPE => {
                let fields = match other.payload {
                    Value::Object(fields) => fields,
                    Value::Null => return None,
                    value => std::iter::once(("content".to_owned(), value)).collect(),
                };
                Some(ResponseItem::Other(UnknownItem {
                    item_type: other.item_type,
                    fields,
                }))
            }
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
        .retain(|part| !part.text().is_some_and(is_hidden_fragment));
    (!message.content.is_empty()).then_some(message)
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
