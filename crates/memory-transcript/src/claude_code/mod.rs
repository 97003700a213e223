//! Claude Code transcripts: `projects/<encoded cwd>/<session>.jsonl` under Claude Code's
//! configuration folder, one JSON object per line.
//!
//! [`parse_transcript`] reads a file's text into a [`Transcript`]: what the user typed, the
//! model's answers (one API answer is several lines sharing `message.id`, each repeating the
//! whole usage, merged here into one [`Answer`] whose usage counts once), tool results with
//! their structured forms, compaction summaries and boundaries. Everything Claude Code or a
//! hook injected is recognised and kept apart: `attachment` lines (instruction files, hook
//! output, the environment), `isMeta` user lines (Stop hook feedback, command caveats), slash
//! command echoes, and `<system-reminder>` or memory-fence text inside prompts and tool
//! results. Line kinds nobody has seen are kept as [`Entry::Unknown`]; a line that is not a
//! JSON object becomes a diagnostic and reading goes on.
//!
//! A subagent writes its own file under `<session>/subagents/` ([`subagent_files`]);
//! [`Transcript::attach_sidechain`] reads it as part of its session. [`Transcript::to_rollout`]
//! gives the session in the form the write path reads codex rollouts in, so extraction,
//! filtering and redaction are the same for both agents. [`ended`] is the list of sessions the
//! `SessionEnd` hook reported ended.

pub mod ended;
mod files;
mod parse;
mod rollout;

use serde_json::Value;

pub use files::subagent_files;
pub use parse::parse_transcript;

use crate::reader::Diagnostic;

/// The originator written into the session metadata of a converted transcript.
pub const ORIGINATOR: &str = "claude-code";

/// Which agent wrote a session file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TranscriptFormat {
    /// A codex rollout (every format version).
    CodexRollout,
    /// A Claude Code transcript.
    ClaudeCode,
}

/// Line types only Claude Code writes (conversation and bookkeeping lines).
const CLAUDE_LINE_TYPES: [&str; 8] = [
    "user",
    "assistant",
    "attachment",
    "system",
    "summary",
    "queue-operation",
    "file-history-snapshot",
    "last-prompt",
];

/// Claude Code's tools that bring in context from outside the session.
pub const EXTERNAL_CONTEXT_TOOLS: [&str; 2] = ["WebSearch", "WebFetch"];

/// Lines looked at to tell the formats apart.
const DETECT_LINES: usize = 16;

/// Which agent wrote the file whose text starts with `head`: the first line that is a JSON
/// object decides (a Claude Code line carries `sessionId` or a type only Claude Code writes, and
/// no codex `payload`). Anything else, an empty file included, is read as a codex rollout, whose
/// reader reports what is wrong with it.
pub fn detect_format(head: &str) -> TranscriptFormat {
    for line in head.lines().take(DETECT_LINES) {
        let Ok(Value::Object(map)) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if map.contains_key("payload") || map.contains_key("record_type") {
            return TranscriptFormat::CodexRollout;
        }
        let claude_type = map
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|kind| CLAUDE_LINE_TYPES.contains(&kind));
        if map.contains_key("sessionId") || claude_type {
            return TranscriptFormat::ClaudeCode;
        }
        return TranscriptFormat::CodexRollout;
    }
    TranscriptFormat::CodexRollout
}

/// One Claude Code session file, read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcript {
    /// The session id (`sessionId` of the lines).
    pub session_id: Option<String>,
    /// The working directory, from the lines (the folder name encodes it lossily).
    pub cwd: Option<String>,
    /// The git branch (`HEAD` outside a repository).
    pub git_branch: Option<String>,
    /// The Claude Code version that wrote the file.
    pub version: Option<String>,
    /// `cli` for interactive sessions, `sdk-cli` for `-p`.
    pub entrypoint: Option<String>,
    /// The first line's timestamp (RFC 3339).
    pub started_at: Option<String>,
    /// The last line's timestamp (RFC 3339).
    pub last_at: Option<String>,
    /// The subagent that wrote this file, when it is a subagent's (`agentId`, every
    /// conversation line `isSidechain`).
    pub agent_id: Option<String>,
    /// The entries, in file order (an answer sits where its first line was).
    pub entries: Vec<Entry>,
    /// Subagent transcripts read as part of this session.
    pub sidechains: Vec<Transcript>,
    /// Lines that could not be read, and why.
    pub diagnostics: Vec<Diagnostic>,
}

/// One entry of a transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// A `user` line holding text.
    User(UserText),
    /// One API answer (all the lines sharing its `message.id`).
    Answer(Answer),
    /// A tool's result.
    ToolResult(ToolResult),
    /// A compaction summary (`isCompactSummary`): what replaced the earlier context.
    CompactSummary {
        /// The summary text.
        text: String,
        /// When it was written.
        timestamp: Option<String>,
    },
    /// A compaction boundary (`system` line, subtype `compact_boundary`).
    CompactBoundary {
        /// `manual` or `auto`.
        trigger: Option<String>,
    },
    /// Context Claude Code or a hook injected (an `attachment` line), never the user's words.
    Attachment {
        /// `attachment.type`: `instructions`, `hook_success`, `hook_additional_context`, ...
        attachment_type: String,
    },
    /// Another `system` line (`stop_hook_summary`, `turn_duration`, ...).
    System {
        /// Its `subtype`.
        subtype: String,
    },
    /// A bookkeeping line (`queue-operation`, `last-prompt`, `cost-state`, ...).
    Bookkeeping {
        /// Its `type`.
        kind: String,
    },
    /// A line of a kind this reader does not know, kept by its `type` (empty when missing).
    Unknown {
        /// Its `type`.
        kind: String,
    },
}

/// Who wrote a `user` line's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserOrigin {
    /// The user typed it (or `-p` passed it).
    Typed,
    /// Claude Code wrote it on the user's side (`isMeta`: Stop hook feedback, command caveats).
    Meta,
    /// A slash command and its output (`<command-name>`, `<local-command-stdout>`).
    SlashCommand,
}

/// A `user` line holding text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserText {
    /// The line's `uuid`.
    pub uuid: Option<String>,
    /// When it was written.
    pub timestamp: Option<String>,
    /// Who wrote it.
    pub origin: UserOrigin,
    /// The text; for [`UserOrigin::Typed`], without injected blocks (`<system-reminder>`, our
    /// memory fences).
    pub text: String,
}

/// One API answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// `message.id` (`None` for a line without one, which is an answer of its own).
    pub message_id: Option<String>,
    /// `message.model`.
    pub model: Option<String>,
    /// When its first line was written.
    pub timestamp: Option<String>,
    /// The content blocks that matter, in order (thinking is left out).
    pub blocks: Vec<AnswerBlock>,
    /// The answer's usage, counted once.
    pub usage: Usage,
}

/// A block of an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum AnswerBlock {
    /// Text the model wrote.
    Text(String),
    /// A tool call.
    ToolUse(ToolUse),
}

/// A tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolUse {
    /// The call id the result names.
    pub id: String,
    /// The tool (`Bash`, `Read`, `mcp__server__tool`, ...).
    pub name: String,
    /// Its input.
    pub input: Value,
}

/// Token usage of one answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// `input_tokens` (not cached).
    pub input_tokens: i64,
    /// `cache_creation_input_tokens`.
    pub cache_creation_input_tokens: i64,
    /// `cache_read_input_tokens`.
    pub cache_read_input_tokens: i64,
    /// `output_tokens`.
    pub output_tokens: i64,
}

impl Usage {
    /// All input tokens: uncached, cache writes and cache reads.
    pub fn total_input(&self) -> i64 {
        self.input_tokens
            .saturating_add(self.cache_creation_input_tokens)
            .saturating_add(self.cache_read_input_tokens)
    }
}

/// A tool's result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The call it answers.
    pub tool_use_id: String,
    /// Its text, without injected blocks.
    pub content: String,
    /// Whether the tool failed.
    pub is_error: bool,
    /// The structured result (`toolUseResult`: Bash's `{stdout, stderr, ...}`, Read's `{file}`,
    /// Agent's `{agentId, ...}`), when the line has one.
    pub structured: Option<Value>,
    /// When it was written.
    pub timestamp: Option<String>,
}

/// The last turn of a transcript: from the last `user` text line (a prompt, Stop hook
/// feedback, a command) to the end.
#[derive(Debug, Clone, PartialEq)]
pub struct LastTurn<'a> {
    /// The `uuid` of the line that opened it.
    pub opening_uuid: Option<&'a str>,
    /// Its answers, in order.
    pub answers: Vec<&'a Answer>,
}

impl Transcript {
    /// The last turn, or `None` when no `user` text line opens one.
    pub fn last_turn(&self) -> Option<LastTurn<'_>> {
        let start = self
            .entries
            .iter()
            .rposition(|entry| matches!(entry, Entry::User(_)))?;
        let opening_uuid = match &self.entries[start] {
            Entry::User(user) => user.uuid.as_deref(),
            _ => None,
        };
        let answers = self.entries[start..]
            .iter()
            .filter_map(|entry| match entry {
                Entry::Answer(answer) => Some(answer),
                _ => None,
            })
            .collect();
        Some(LastTurn {
            opening_uuid,
            answers,
        })
    }

    /// The usage of every answer of the session, each counted once (subagents included).
    pub fn total_usage(&self) -> Usage {
        let mut total = Usage::default();
        let answers = self.entries.iter().chain(
            self.sidechains
                .iter()
                .flat_map(|sidechain| sidechain.entries.iter()),
        );
        for entry in answers {
            if let Entry::Answer(answer) = entry {
                let usage = answer.usage;
                total.input_tokens = total.input_tokens.saturating_add(usage.input_tokens);
                total.cache_creation_input_tokens = total
                    .cache_creation_input_tokens
                    .saturating_add(usage.cache_creation_input_tokens);
                total.cache_read_input_tokens = total
                    .cache_read_input_tokens
                    .saturating_add(usage.cache_read_input_tokens);
                total.output_tokens = total.output_tokens.saturating_add(usage.output_tokens);
            }
        }
        total
    }

    /// Whether the user typed anything in this session (injected context does not count).
    pub fn has_user_prompt(&self) -> bool {
        self.entries.iter().any(|entry| {
            matches!(entry, Entry::User(user)
                if user.origin == UserOrigin::Typed && !user.text.trim().is_empty())
        })
    }

    /// Whether the session searched or fetched the web ([`EXTERNAL_CONTEXT_TOOLS`]).
    pub fn used_external_context(&self) -> bool {
        self.entries.iter().any(|entry| match entry {
            Entry::Answer(answer) => answer.blocks.iter().any(|block| {
                matches!(block, AnswerBlock::ToolUse(call)
                    if EXTERNAL_CONTEXT_TOOLS.contains(&call.name.as_str()))
            }),
            _ => false,
        })
    }

    /// Whether this file is a subagent's.
    pub fn is_sidechain(&self) -> bool {
        self.agent_id.is_some()
    }

    /// Reads the subagent transcript `sidechain` as part of this session.
    pub fn attach_sidechain(&mut self, sidechain: Transcript) {
        self.sidechains.push(sidechain);
    }
}
