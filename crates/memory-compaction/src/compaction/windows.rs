//! Summarizer windows: cleaned messages packed, on message boundaries, into texts that each fit
//! the input budget.
//!
//! Sizes are measured on the serialized, truncated text each window will send (never on the raw
//! messages, whose tool output may be a hundred times longer), so a window is as full as the
//! budget allows. A single message larger than the budget gets a window of its own and is cut
//! proportionally, every long text field keeping its head and tail around a marker.

use memory_protocol::compaction::{AssistantBlock, ConversationMessage};
use memory_sanitize::{TokenCounter, TruncationPolicy, truncate_middle};
use serde_json::Value;

use super::serialize::{BLOCK_SEPARATOR, serialize_message};

/// One summarizer window.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    /// The messages it covers, as sent.
    pub messages: Vec<ConversationMessage>,
    /// Their serialization.
    pub text: String,
    /// Tokens of `text`.
    pub tokens: u64,
    /// The budget it was planned for.
    pub budget: u64,
    /// True when a message was cut to fit.
    pub clamped: bool,
}

/// Packs `messages` into windows of at most `budget` tokens each.
pub fn plan_windows(
    messages: Vec<ConversationMessage>,
    budget: u64,
    counter: &dyn TokenCounter,
) -> Vec<Window> {
    let separator = count(counter, BLOCK_SEPARATOR);
    let mut windows = Vec::new();
    let mut current = Window::empty(budget);
    for message in messages {
        let text = serialize_message(&message);
        let tokens = count(counter, &text);
        let joined = if current.messages.is_empty() {
            tokens
        } else {
            current.tokens + separator + tokens
        };
        if joined <= budget {
            current.push(message, &text, joined);
            continue;
        }
        if !current.messages.is_empty() {
            windows.push(std::mem::replace(&mut current, Window::empty(budget)));
        }
        if tokens <= budget {
            current.push(message, &text, tokens);
        } else {
            let (fitted, text, tokens) = fit_message(&message, budget, counter);
            current.push(fitted, &text, tokens);
            current.clamped = true;
            windows.push(std::mem::replace(&mut current, Window::empty(budget)));
        }
    }
    if !current.messages.is_empty() {
        windows.push(current);
    }
    exact_sizes(windows, budget, counter)
}

/// Replaces each window's summed size by the count of its whole text. Tokenizers can merge
/// across the joins, so the sum is an estimate; a window whose text turns out over the budget
/// gives its last message to a window of its own (the planning above keeps this rare).
fn exact_sizes(windows: Vec<Window>, budget: u64, counter: &dyn TokenCounter) -> Vec<Window> {
    let mut out = Vec::with_capacity(windows.len());
    let mut pending: std::collections::VecDeque<Window> = windows.into();
    while let Some(mut window) = pending.pop_front() {
        let tokens = count(counter, &window.text);
        if tokens <= budget || window.messages.len() < 2 {
            window.tokens = tokens;
            out.push(window);
            continue;
        }
        let mut head = Window::empty(budget);
        let last = window.messages.pop();
        for message in window.messages {
            let text = serialize_message(&message);
            head.push(message, &text, 0);
        }
        head.clamped = window.clamped;
        let mut tail = Window::empty(budget);
        if let Some(message) = last {
            let text = serialize_message(&message);
            tail.push(message, &text, 0);
        }
        pending.push_front(tail);
        pending.push_front(head);
    }
    out
}

impl Window {
    fn empty(budget: u64) -> Window {
        Window {
            messages: Vec::new(),
            text: String::new(),
            tokens: 0,
            budget,
            clamped: false,
        }
    }

    fn push(&mut self, message: ConversationMessage, text: &str, tokens: u64) {
        if !self.text.is_empty() && !text.is_empty() {
            self.text.push_str(BLOCK_SEPARATOR);
        }
        self.text.push_str(text);
        self.tokens = tokens;
        self.messages.push(message);
    }
}

fn count(counter: &dyn TokenCounter, text: &str) -> u64 {
    u64::try_from(counter.count(text)).unwrap_or(u64::MAX)
}

/// Most attempts at fitting one message; each gives up at least one more token, and the last
/// leaves every text field empty.
const MAX_FIT_ATTEMPTS: usize = 64;

/// Cuts a message's text fields proportionally so its serialization fits `budget`. Returns the
/// cut message, its serialization and its size.
pub fn fit_message(
    message: &ConversationMessage,
    budget: u64,
    counter: &dyn TokenCounter,
) -> (ConversationMessage, String, u64) {
    let fields = text_fields(message);
    let field_tokens: Vec<u64> = fields.iter().map(|f| count(counter, f)).collect();
    let total: u64 = field_tokens.iter().sum::<u64>().max(1);
    let bare = with_fields(message, &vec![String::new(); fields.len()]);
    let overhead = count(counter, &serialize_message(&bare));
    let mut available = budget.saturating_sub(overhead);
    for attempt in 0..MAX_FIT_ATTEMPTS {
        let last = attempt + 1 == MAX_FIT_ATTEMPTS;
        let cut: Vec<String> = fields
            .iter()
            .zip(&field_tokens)
            .map(|(field, tokens)| {
                let share = if last {
                    0
                } else {
                    available.saturating_mul(*tokens) / total
                };
                let share = usize::try_from(share).unwrap_or(usize::MAX);
                truncate_middle(field, TruncationPolicy::Tokens(share), counter).into_owned()
            })
            .collect();
        let fitted = with_fields(message, &cut);
        let text = serialize_message(&fitted);
        let tokens = count(counter, &text);
        if tokens <= budget || last {
            return (fitted, text, tokens);
        }
        available = available.saturating_sub((tokens - budget).max(1));
    }
    // The last attempt always returns; the bare message is the safe answer all the same.
    let text = serialize_message(&bare);
    let tokens = count(counter, &text);
    (bare, text, tokens)
}

/// The long text fields of a message, in a fixed order ([`with_fields`] puts them back).
fn text_fields(message: &ConversationMessage) -> Vec<String> {
    match message {
        ConversationMessage::User { text } | ConversationMessage::ToolResult { text, .. } => {
            vec![text.clone()]
        }
        ConversationMessage::ShellExecution {
            command, output, ..
        } => vec![command.clone(), output.clone()],
        ConversationMessage::Assistant { content } => content
            .iter()
            .map(|block| match block {
                AssistantBlock::Text { text } => text.clone(),
                AssistantBlock::Thinking { thinking } => thinking.clone(),
                AssistantBlock::ToolCall { arguments, .. } => arguments_text(arguments),
            })
            .collect(),
    }
}

/// Arguments as the text that is cut: a string argument as it is, anything else as JSON.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// `message` with its text fields replaced by `fields` (in [`text_fields`] order). A tool call
/// whose arguments text changed carries it as a JSON string.
fn with_fields(message: &ConversationMessage, fields: &[String]) -> ConversationMessage {
    let field = |index: usize| fields.get(index).cloned().unwrap_or_default();
    match message {
        ConversationMessage::User { .. } => ConversationMessage::User { text: field(0) },
        ConversationMessage::ToolResult {
            tool_call_id,
            tool_name,
            is_error,
            useless,
            ..
        } => ConversationMessage::ToolResult {
            tool_call_id: tool_call_id.clone(),
            tool_name: tool_name.clone(),
            text: field(0),
            is_error: *is_error,
            useless: *useless,
        },
        ConversationMessage::ShellExecution { exit_code, .. } => {
            ConversationMessage::ShellExecution {
                command: field(0),
                output: field(1),
                exit_code: *exit_code,
            }
        }
        ConversationMessage::Assistant { content } => ConversationMessage::Assistant {
            content: content
                .iter()
                .enumerate()
                .map(|(index, block)| match block {
                    AssistantBlock::Text { .. } => AssistantBlock::Text { text: field(index) },
                    AssistantBlock::Thinking { .. } => AssistantBlock::Thinking {
                        thinking: field(index),
                    },
                    AssistantBlock::ToolCall {
                        id,
                        name,
                        arguments,
                    } => {
                        let text = field(index);
                        let arguments = if text == arguments_text(arguments) {
                            arguments.clone()
                        } else {
                            Value::String(text)
                        };
                        AssistantBlock::ToolCall {
                            id: id.clone(),
                            name: name.clone(),
                            arguments,
                        }
                    }
                })
                .collect(),
        },
    }
}
