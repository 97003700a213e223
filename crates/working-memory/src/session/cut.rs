//! Cutting one message down to a token budget: its largest texts keep their head and tail
//! with a marker saying how much was left out, so a message larger than a window still
//! reaches the model (or the assembled context) instead of failing it.

use memory_protocol::compaction::{AssistantBlock, ConversationEntry, ConversationMessage};
use memory_sanitize::{CjkEstimate, TokenCounter, TruncationPolicy, truncate_middle};

use super::format::estimate_message;

/// `entry` with its largest texts cut (head and tail, with a marker) until its estimate
/// ([`estimate_message`]) is at most `max_tokens`. Ids and names are never cut, so a message
/// whose ids and names alone exceed the budget stays above it. Returns the entry unchanged
/// when it fits.
pub fn cut_message(entry: &ConversationEntry, max_tokens: u64) -> ConversationEntry {
    let mut out = entry.clone();
    if estimate_message(&out) <= max_tokens {
        return out;
    }
    // Each round cuts the largest text by the excess; a text counted as JSON (a call's
    // arguments) may need a second round for its escapes.
    for _ in 0..CUT_ROUNDS {
        let total = estimate_message(&out);
        if total <= max_tokens {
            break;
        }
        let excess = total - max_tokens;
        let mut parts = texts(&mut out);
        let Some(largest) = parts.iter_mut().max_by_key(|text| count(text.as_str())) else {
            break;
        };
        let size = count(largest.as_str());
        if size == 0 {
            break;
        }
        let target = size.saturating_sub(excess) as usize;
        let cut = truncate_middle(
            largest.as_str(),
            TruncationPolicy::Tokens(target),
            &CjkEstimate,
        )
        .into_owned();
        **largest = cut;
    }
    out
}

/// Most rounds of cutting one message.
const CUT_ROUNDS: usize = 8;

fn count(text: &str) -> u64 {
    CjkEstimate.count(text) as u64
}

/// The cuttable texts of a message. Tool-call arguments are cut as their JSON text, so a cut
/// call carries its arguments as one string.
fn texts(entry: &mut ConversationEntry) -> Vec<&mut String> {
    match &mut entry.message {
        ConversationMessage::User { text } => vec![text],
        ConversationMessage::Assistant { content } => {
            for block in content.iter_mut() {
                if let AssistantBlock::ToolCall { arguments, .. } = block
                    && !arguments.is_string()
                {
                    *arguments = serde_json::Value::String(arguments.to_string());
                }
            }
            content
                .iter_mut()
                .filter_map(|block| match block {
                    AssistantBlock::Text { text } => Some(text),
                    AssistantBlock::Thinking { thinking } => Some(thinking),
                    AssistantBlock::ToolCall {
                        arguments: serde_json::Value::String(text),
                        ..
                    } => Some(text),
                    AssistantBlock::ToolCall { .. } => None,
                })
                .collect()
        }
        ConversationMessage::ToolResult { text, .. } => vec![text],
        ConversationMessage::ShellExecution {
            command, output, ..
        } => vec![command, output],
    }
}
