//! Text a host injects into user messages: instruction files, environment blocks, editor
//! context, notifications. It is context, not what the user said.
//!
//! [`INJECTED_BLOCKS`] is the one list of these wrappers. The memory filter removes the blocks
//! marked [`InjectedBlock::hidden_from_extraction`] from what an extraction model sees (codex's
//! semantics: instruction files and skills go, the environment block stays); anything that
//! derives facts from a user message (the offline engine, the scan's "has a user message"
//! check) removes all of them with [`strip_injected`] first.

/// How an injected block ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockEnd {
    /// At this closing marker (an unclosed block runs to the end of the text).
    Close(&'static str),
    /// At this marker, after which the user's own request follows (editor preambles:
    /// `# Context from my IDE setup:` ... `## My request for Codex:`, then the request). Without the
    /// marker the whole rest of the text is context.
    Request(&'static str),
}

/// One kind of injected block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InjectedBlock {
    /// Short name, for docs and tests.
    pub name: &'static str,
    /// The opening marker, matched ASCII case-insensitively.
    pub start: &'static str,
    /// Where the block ends.
    pub end: BlockEnd,
    /// Whether the memory filter removes a message part that is exactly this block before an
    /// extraction model sees the rollout.
    pub hidden_from_extraction: bool,
}

/// The marker after which an editor preamble gives the user's own request.
pub const EDITOR_REQUEST_MARKER: &str = "## My request for Codex:";

/// Every wrapper a host adds to user messages.
pub const INJECTED_BLOCKS: &[InjectedBlock] = &[
    InjectedBlock {
        name: "agents_md",
        start: "# AGENTS.md instructions",
        end: BlockEnd::Close("</INSTRUCTIONS>"),
        hidden_from_extraction: true,
    },
    InjectedBlock {
        name: "skill",
        start: "<skill>",
        end: BlockEnd::Close("</skill>"),
        hidden_from_extraction: true,
    },
    InjectedBlock {
        name: "environment_context",
        start: "<environment_context",
        end: BlockEnd::Close("</environment_context>"),
        hidden_from_extraction: false,
    },
    InjectedBlock {
        name: "user_instructions",
        start: "<user_instructions",
        end: BlockEnd::Close("</user_instructions>"),
        hidden_from_extraction: false,
    },
    InjectedBlock {
        name: "subagent_notification",
        start: "<subagent_notification",
        end: BlockEnd::Close("</subagent_notification>"),
        hidden_from_extraction: false,
    },
    InjectedBlock {
        name: "codex_internal_context",
        start: "<codex_internal_context",
        end: BlockEnd::Close("</codex_internal_context>"),
        hidden_from_extraction: false,
    },
    // Our own hidden steering messages (goal continuation, budget limit): host text, never
    // the user's words, so extraction never sees them either.
    InjectedBlock {
        name: "agent_memory_internal_context",
        start: "<agent_memory_internal_context",
        end: BlockEnd::Close("</agent_memory_internal_context>"),
        hidden_from_extraction: true,
    },
    // Context Claude Code wraps around what it adds to a turn (reminders, hook output).
    InjectedBlock {
        name: "system_reminder",
        start: "<system-reminder",
        end: BlockEnd::Close("</system-reminder>"),
        hidden_from_extraction: true,
    },
    // Our own memory fences: recalled memory must never come back as a new memory. The
    // recall fence goes first, since `<memory` would also open it.
    InjectedBlock {
        name: "memory_recall",
        start: "<memory-recall",
        end: BlockEnd::Close("</memory-recall>"),
        hidden_from_extraction: true,
    },
    InjectedBlock {
        name: "memory_block",
        start: "<memory source=",
        end: BlockEnd::Close("</memory>"),
        hidden_from_extraction: true,
    },
    InjectedBlock {
        name: "turn_aborted",
        start: "<turn_aborted",
        end: BlockEnd::Close("</turn_aborted>"),
        hidden_from_extraction: false,
    },
    InjectedBlock {
        name: "user_shell_command",
        start: "<user_shell_command",
        end: BlockEnd::Close("</user_shell_command>"),
        hidden_from_extraction: false,
    },
    InjectedBlock {
        name: "editor_context",
        start: "# Context from my IDE setup:",
        end: BlockEnd::Request(EDITOR_REQUEST_MARKER),
        hidden_from_extraction: false,
    },
    InjectedBlock {
        name: "editor_files",
        start: "# Files mentioned by the user:",
        end: BlockEnd::Request(EDITOR_REQUEST_MARKER),
        hidden_from_extraction: false,
    },
];

/// True when `part` (one text part of a user message) is, as a whole, a block the memory
/// filter hides from extraction: after trimming it starts with the block's opening marker and
/// ends with its closing one.
pub fn is_hidden_fragment(part: &str) -> bool {
    let (head, tail) = (part.trim_start(), part.trim_end());
    INJECTED_BLOCKS
        .iter()
        .filter(|block| block.hidden_from_extraction)
        .any(|block| match block.end {
            BlockEnd::Close(close) => {
                starts_with_ignore_case(head, block.start) && ends_with_ignore_case(tail, close)
            }
            BlockEnd::Request(_) => false,
        })
}

/// `text` without any injected block; an editor preamble leaves only the request after its
/// marker. What remains is what the user wrote (possibly nothing).
pub fn strip_injected(text: &str) -> String {
    let mut out = text.to_owned();
    // The request marker first: everything before it is editor context, whatever opened it.
    if let Some(at) = find_ignore_case(&out, EDITOR_REQUEST_MARKER) {
        out = out
            .get(at + EDITOR_REQUEST_MARKER.len()..)
            .unwrap_or("")
            .to_owned();
    }
    for block in INJECTED_BLOCKS {
        let close = match block.end {
            BlockEnd::Close(close) => Some(close),
            BlockEnd::Request(_) => None,
        };
        out = remove_blocks(&out, block.start, close);
    }
    out
}

/// `text` without the blocks the memory filter hides from extraction, wherever they sit in it
/// (a transcript that stores a prompt as one string, with host context appended, keeps the
/// blocks inside the prompt rather than as parts of their own).
pub fn strip_hidden(text: &str) -> String {
    let mut out = text.to_owned();
    for block in INJECTED_BLOCKS
        .iter()
        .filter(|block| block.hidden_from_extraction)
    {
        if let BlockEnd::Close(close) = block.end {
            out = remove_blocks(&out, block.start, Some(close));
        }
    }
    out
}

/// Removes every `start ... close` span, matching ASCII case-insensitively; with no `close`
/// (or an unclosed block) the span runs to the end. Lowercasing ASCII keeps byte offsets and
/// both markers are ASCII, so every cut falls on a char boundary.
fn remove_blocks(text: &str, start: &str, close: Option<&str>) -> String {
    let lower = text.to_ascii_lowercase();
    let start = start.to_ascii_lowercase();
    let close = close.map(str::to_ascii_lowercase);
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    while let Some(found) = lower.get(cursor..).and_then(|rest| rest.find(&start)) {
        let begin = cursor + found;
        out.push_str(text.get(cursor..begin).unwrap_or(""));
        let after_start = begin + start.len();
        cursor = match close
            .as_deref()
            .and_then(|close| Some((lower.get(after_start..)?.find(close)?, close.len())))
        {
            Some((end, len)) => after_start + end + len,
            None => text.len(),
        };
    }
    out.push_str(text.get(cursor..).unwrap_or(""));
    out
}

fn find_ignore_case(text: &str, needle: &str) -> Option<usize> {
    text.to_ascii_lowercase().find(&needle.to_ascii_lowercase())
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.as_bytes()
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
}

fn ends_with_ignore_case(text: &str, suffix: &str) -> bool {
    text.len() >= suffix.len()
        && text
            .as_bytes()
            .get(text.len() - suffix.len()..)
            .is_some_and(|tail| tail.eq_ignore_ascii_case(suffix.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hidden_fragments_match_whole_parts_case_insensitively() {
        assert!(is_hidden_fragment(
            "  # agents.md Instructions for /x\n<INSTRUCTIONS>\nhi\n</instructions>\n"
        ));
        assert!(is_hidden_fragment("<skill>\nname\n</skill>"));
        assert!(!is_hidden_fragment("<skill> unterminated"));
        assert!(!is_hidden_fragment(
            "<environment_context>x</environment_context>"
        ));
        assert!(!is_hidden_fragment("é"));
    }

    #[test]
    fn every_block_is_stripped_and_editor_requests_kept() {
        let text = "<environment_context>\n<cwd>/x</cwd>\n</environment_context>\nFix it.\n\
                    # AGENTS.md instructions for /x\n<INSTRUCTIONS>use pnpm</INSTRUCTIONS>";
        assert_eq!(strip_injected(text).trim(), "Fix it.");
        assert_eq!(strip_injected("a <skill>unclosed"), "a ");
        let editor = "# Context from my IDE setup:\n\n## Active file: src/app.ts\n\n## Open tabs:\n\
                      - app.ts: src/app.ts\n\n## My request for Codex:\nMake the header sticky.";
        assert_eq!(strip_injected(editor).trim(), "Make the header sticky.");
        let files = "# Files mentioned by the user:\n\n## shot.png: /tmp/shot.png\n\n\
                     ## My request for Codex:\nFix the layout.";
        assert_eq!(strip_injected(files).trim(), "Fix the layout.");
        assert_eq!(
            strip_injected("# Context from my IDE setup:\n## Active file: a.rs").trim(),
            ""
        );
    }

    #[test]
    fn our_own_steering_messages_are_host_text_under_the_shared_tag() {
        let tag = memory_protocol::names::boundary_tags::INTERNAL_CONTEXT;
        let block = INJECTED_BLOCKS
            .iter()
            .find(|block| block.name == tag)
            .expect("listed");
        assert_eq!(block.start, format!("<{tag}"));
        assert_eq!(block.end, BlockEnd::Close(&*format!("</{tag}>").leak()));
        let message = format!("<{tag} source=\"goal\">\nKeep going.\n</{tag}>");
        assert!(is_hidden_fragment(&message));
        assert_eq!(
            strip_injected(&format!("{message}\nFix it.")).trim(),
            "Fix it."
        );
    }

    proptest! {
        #[test]
        fn stripping_never_grows_or_panics(text in "(\\PC|<environment_context>|</environment_context>|# Context from my IDE setup:|## My request for Codex:|<skill>|</skill>|\n){0,40}") {
            let stripped = strip_injected(&text);
            prop_assert!(stripped.len() <= text.len());
            let _ = is_hidden_fragment(&text);
        }
    }
}
