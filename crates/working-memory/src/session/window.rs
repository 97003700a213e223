//! Cutting a message list without separating a tool call from its result, and windowing it to
//! a token budget.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use memory_protocol::compaction::{AssistantBlock, ConversationEntry, ConversationMessage};

/// The tool calls among `messages` that got no result and never will: the model or the user
/// spoke after the call (a later message that is not a tool result), so the host moved on
/// without answering it. A call with no result and only tool results after it is still
/// waiting, and is not in this set.
pub fn abandoned_calls(messages: &[ConversationEntry]) -> HashSet<&str> {
    let answered: HashSet<&str> = messages
        .iter()
        .filter_map(|entry| match &entry.message {
            ConversationMessage::ToolResult { tool_call_id, .. } => Some(tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    let last_turn = last_non_result(messages);
    let mut abandoned = HashSet::new();
    for (index, entry) in messages.iter().enumerate() {
        if last_turn.is_none_or(|last| last <= index) {
            break;
        }
        for id in call_ids(entry) {
            if !answered.contains(id) {
                abandoned.insert(id);
            }
        }
    }
    abandoned
}

/// Index of the last message that is not a tool result.
fn last_non_result(messages: &[ConversationEntry]) -> Option<usize> {
    messages
        .iter()
        .rposition(|entry| !matches!(entry.message, ConversationMessage::ToolResult { .. }))
}

fn call_ids(entry: &ConversationEntry) -> impl Iterator<Item = &str> {
    let blocks: &[AssistantBlock] = match &entry.message {
        ConversationMessage::Assistant { content } => content,
        _ => &[],
    };
    blocks.iter().filter_map(|block| match block {
        AssistantBlock::ToolCall { id, .. } => Some(id.as_str()),
        _ => None,
    })
}

/// Where a list of messages may be cut: `allowed[i]` is true when a cut just before message
/// `i` separates no tool call from its result. A call still waiting for its result (only tool
/// results after it) holds everything after it together, so even a cut after the last message
/// is refused then; an abandoned call ([`abandoned_calls`]) holds nothing: it goes with the
/// messages around it. Cutting before the first message is always allowed.
pub fn cut_points(messages: &[ConversationEntry]) -> Vec<bool> {
    let len = messages.len();
    let last_turn = last_non_result(messages);
    let mut call_at: HashMap<&str, usize> = HashMap::new();
    // Spans (call index, result index) that must stay together.
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (index, entry) in messages.iter().enumerate() {
        for id in call_ids(entry) {
            call_at.insert(id, index);
        }
        if let ConversationMessage::ToolResult { tool_call_id, .. } = &entry.message
            && let Some(call) = call_at.remove(tool_call_id.as_str())
        {
            spans.push((call, index));
        }
    }
    // Calls still waiting for their result hold the rest of the list; abandoned ones nothing.
    for (_, call) in call_at {
        if last_turn.is_none_or(|last| last <= call) {
            spans.push((call, len));
        }
    }
    let mut allowed = vec![true; len + 1];
    for (start, end) in spans {
        for slot in allowed.iter_mut().take(end.min(len) + 1).skip(start + 1) {
            *slot = false;
        }
    }
    allowed[0] = true;
    allowed
}

/// The index to cut at so that at least `keep` messages stay after it, moved earlier until the
/// cut separates no call from its result.
pub fn split_point(messages: &[ConversationEntry], keep: usize) -> usize {
    let allowed = cut_points(messages);
    let mut split = messages.len().saturating_sub(keep);
    while split > 0 && !allowed[split] {
        split -= 1;
    }
    split
}

/// Cuts `0..costs.len()` into consecutive windows of at most `budget` total cost, cutting only
/// where `allowed` says (see [`cut_points`]). An item, or a run that cannot be cut, larger
/// than the budget gets a window of its own. Generic over what is windowed: the costs are
/// all it needs.
pub fn windows(costs: &[u64], allowed: &[bool], budget: u64) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut used = 0u64;
    let mut last_cut: Option<usize> = None;
    let mut index = 0;
    while index < costs.len() {
        let cost = costs[index];
        if used > 0 && used.saturating_add(cost) > budget {
            if allowed.get(index).copied().unwrap_or(true) {
                out.push(start..index);
                start = index;
                used = 0;
                last_cut = None;
                continue;
            }
            if let Some(cut) = last_cut.filter(|cut| *cut > start) {
                out.push(start..cut);
                start = cut;
                used = costs[cut..index].iter().sum();
                last_cut = None;
                continue;
            }
        }
        if allowed.get(index).copied().unwrap_or(true) && index > start {
            last_cut = Some(index);
        }
        used = used.saturating_add(cost);
        index += 1;
    }
    if start < costs.len() {
        out.push(start..costs.len());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(id: usize, message: ConversationMessage) -> ConversationEntry {
        ConversationEntry {
            id: format!("m{id}"),
            message,
        }
    }

    fn call(id: &str) -> ConversationMessage {
        ConversationMessage::Assistant {
            content: vec![AssistantBlock::ToolCall {
                id: id.into(),
                name: "shell".into(),
                arguments: json!({}),
            }],
        }
    }

    fn result(id: &str) -> ConversationMessage {
        ConversationMessage::ToolResult {
            tool_call_id: id.into(),
            tool_name: "shell".into(),
            text: "ok".into(),
            is_error: false,
            useless: false,
        }
    }

    fn user() -> ConversationMessage {
        ConversationMessage::User { text: "hi".into() }
    }

    #[test]
    fn a_cut_never_falls_between_a_call_and_its_result() {
        let messages = vec![
            entry(0, user()),
            entry(1, call("a")),
            entry(2, result("a")),
            entry(3, user()),
            entry(4, call("b")),
        ];
        assert_eq!(
            cut_points(&messages),
            [true, true, false, true, true, false]
        );
        // Keeping 3 would cut between call `a` and its result: the cut moves before the call.
        assert_eq!(split_point(&messages, 3), 1);
        assert_eq!(split_point(&messages, 2), 3);
        // The call `b`, still waiting for its result, is not archived.
        assert_eq!(split_point(&messages, 0), 4);
    }

    #[test]
    fn an_abandoned_call_holds_nothing_together() {
        let messages = vec![
            entry(0, user()),
            entry(1, call("lost")),
            entry(2, user()),
            entry(3, call("b")),
            entry(4, result("b")),
            entry(5, call("c")),
        ];
        assert_eq!(abandoned_calls(&messages), HashSet::from(["lost"]));
        assert_eq!(
            cut_points(&messages),
            [true, true, true, true, false, true, false]
        );
        assert_eq!(split_point(&messages, 4), 2);
        // `c` is still waiting (nothing but tool results after it), so it stays live.
        assert_eq!(split_point(&messages, 0), 5);
    }

    #[test]
    fn windows_respect_budget_and_cut_points() {
        let allowed = [true, true, false, true, true];
        assert_eq!(windows(&[3, 3, 3, 3], &allowed, 6), [0..1, 1..3, 3..4]);
        assert_eq!(windows(&[10, 1], &[true, true, true], 5), [0..1, 1..2]);
        assert_eq!(windows(&[], &[true], 5), Vec::<Range<usize>>::new());
    }
}
