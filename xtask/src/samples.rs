//! The public wire types: one JSON Schema each, and sample instances that must validate.

use anyhow::{Context, Result};
use memory_protocol::compaction::{
    AssistantBlock, CompactionDetails, CompactionEntry, CompactionPlan, ConversationEntry,
    ConversationMessage, SessionEntry, SummaryInput,
};
use memory_protocol::consolidation::{
    ConsolidationInput, ConsolidationNote, ConsolidationOutput, SelectionChanges,
};
use memory_protocol::goal::{
    CreateGoalArgs, GoalAccountResult, GoalRefusalCode, GoalSteering, GoalSteeringKind,
    GoalToolRefusal, GoalToolResponse, GoalTurnError, GoalTurnRecord, GoalTurnTrigger, ThreadGoal,
    ThreadGoalStatus, UpdateGoalArgs, UpdateGoalStatus,
};
use memory_protocol::introspect::{
    MemoryEntryType, MemoryFailureCode, MemoryIndexState, MemoryIndexStatus, MemoryLineRange,
    MemoryListEntry, MemoryListRequest, MemoryListResult, MemoryMode, MemoryNoteRequest,
    MemoryNoteResult, MemoryNotesStatus, MemoryReadRequest, MemoryReadResult, MemoryScope,
    MemorySearchHit, MemorySearchRequest, MemorySearchResult, MemorySnapshot, MemoryState,
    MemoryStatusRequest, MemoryStatusResult, MemorySummaryUse, MemoryToolFailure,
};
use memory_protocol::model::{ReasoningEffort, TaskKind};
use memory_protocol::rollout::{ContentItem, ResponseItem, RolloutLine, SessionMeta};
use memory_protocol::stage_one::{JobStatus, StageOneInput, StageOneJob, StageOneOutputRecord};
use memory_protocol::working_memory::{
    GuardKind, GuardRecord, OpName, SectionBody, SectionOp, SectionSizeWarning,
    WorkingMemoryCreateInput, WorkingMemoryMergeResult, WorkingMemorySection,
    WorkingMemorySections, WorkingMemoryUpdate, WorkingMemoryUpdateInput,
};
use memory_protocol::{
    ContextWindow, ContextWindowSource, ModelError, ModelRequest, ModelResponse, RateLimitSnapshot,
    StageOneOutput, TokenUsage,
};
use schemars::schema_for;
use serde::Serialize;
use serde_json::{Value, json};

use crate::project_root;

macro_rules! schemas {
    ($($ty:ty),* $(,)?) => {
        vec![$((stringify!($ty), schema_value(schema_for!($ty)))),*]
    };
}

fn schema_value(schema: schemars::Schema) -> Value {
    schema.to_value()
}

/// One schema per public wire type, by type name.
pub(crate) fn schemas() -> Vec<(&'static str, Value)> {
    schemas![
        RolloutLine,
        ResponseItem,
        ContentItem,
        SessionMeta,
        StageOneInput,
        StageOneOutput,
        StageOneJob,
        StageOneOutputRecord,
        ConsolidationInput,
        ConsolidationOutput,
        ThreadGoal,
        ThreadGoalStatus,
        UpdateGoalArgs,
        CreateGoalArgs,
        GoalToolResponse,
        GoalToolRefusal,
        GoalTurnRecord,
        GoalAccountResult,
        GoalSteering,
        SectionOp,
        WorkingMemoryUpdate,
        WorkingMemoryMergeResult,
        WorkingMemoryCreateInput,
        WorkingMemoryUpdateInput,
        ConversationMessage,
        ConversationEntry,
        SessionEntry,
        CompactionEntry,
        CompactionPlan,
        SummaryInput,
        MemoryState,
        MemoryToolFailure,
        MemoryListRequest,
        MemoryListResult,
        MemoryReadRequest,
        MemoryReadResult,
        MemorySearchRequest,
        MemorySearchResult,
        MemoryStatusRequest,
        MemoryStatusResult,
        MemoryNoteRequest,
        MemoryNoteResult,
        ModelRequest,
        ModelResponse,
        ModelError,
        TokenUsage,
        RateLimitSnapshot,
        ContextWindow,
    ]
}

fn values<T: Serialize>(items: &[T]) -> Result<Vec<Value>> {
    items
        .iter()
        .map(|item| serde_json::to_value(item).context("serializing a sample"))
        .collect()
}

/// The rollout fixtures (hand-written JSONL), parsed. Each line must parse.
fn rollout_lines() -> Result<Vec<RolloutLine>> {
    let dir = project_root().join("fixtures/rollouts");
    let mut lines = Vec::new();
    for name in [
        "codex-reference-example.jsonl",
        "codex-version-variants.jsonl",
        "codex-legacy-format.jsonl",
    ] {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        for (number, line) in text.lines().enumerate() {
            let parsed = RolloutLine::parse(line)
                .with_context(|| format!("{}:{}", path.display(), number + 1))?;
            lines.push(parsed);
        }
    }
    Ok(lines)
}

/// Sample instances per schema name. Every schema has at least one.
pub(crate) fn instances() -> Result<Vec<(&'static str, Vec<Value>)>> {
    let lines = rollout_lines()?;
    let response_items: Vec<&ResponseItem> = lines
        .iter()
        .filter_map(|line| match &line.item {
            memory_protocol::RolloutItem::ResponseItem(item) => Some(item),
            _ => None,
        })
        .collect();
    let content_items: Vec<&ContentItem> = response_items
        .iter()
        .filter_map(|item| match item {
            ResponseItem::Message(message) => Some(message.content.iter()),
            _ => None,
        })
        .flatten()
        .collect();
    let session_metas: Vec<&SessionMeta> = lines
        .iter()
        .filter_map(|line| match &line.item {
            memory_protocol::RolloutItem::SessionMeta(meta) => Some(meta),
            _ => None,
        })
        .collect();

    let goal = ThreadGoal {
        thread_id: "0196a1b2-0000-7000-8000-000000000001".to_owned(),
        goal_id: "5b0c7e1a-3f7d-4c8e-9a51-2d6f0e4b7c90".to_owned(),
        objective: "make the parser tests green".to_owned(),
        status: ThreadGoalStatus::Active,
        status_reason: None,
        token_budget: Some(50_000),
        tokens_used: 1_234,
        time_used_seconds: 56,
        created_at: 1_777_629_960,
        updated_at: 1_777_630_000,
    };
    let goal_turn = GoalTurnRecord {
        turn_id: "turn-3".to_owned(),
        goal_id: goal.goal_id.clone(),
        trigger: GoalTurnTrigger::Continuation,
        plan_mode: false,
        input_tokens: Some(1_200),
        cached_input_tokens: Some(200),
        output_tokens: Some(300),
        tokens_charged: 1_300,
        seconds: 41,
        tool_calls: 6,
        goal_tool_calls: 0,
        refused_goal_tool_calls: 0,
        error: None::<GoalTurnError>,
        status_after: ThreadGoalStatus::Active,
        recorded_at: 1_777_630_000,
    };
    let sections = WorkingMemorySections {
        session_title: SectionOp::Keep,
        current_state: SectionOp::Update {
            content: "Parser tests pass; formatter still failing on empty input.".to_owned(),
        },
        task_and_goals: SectionOp::Keep,
        key_facts_and_decisions: SectionOp::Append {
            items: vec!["Empty input returns `Ok(vec![])`, not an error.".to_owned()],
        },
        files_and_context: SectionOp::Append {
            items: vec!["src/parser.rs".to_owned()],
        },
        errors_and_corrections: SectionOp::Keep,
        open_issues: SectionOp::Keep,
    };
    let summary = MemorySummaryUse {
        tokens: 812,
        budget_tokens: 2_500,
        percent: 32,
    };
    let status = MemoryStatusResult {
        state: MemoryState::Ready,
        mode: MemoryMode::Writable,
        scope: MemoryScope::Global,
        root: "/home/alice/.agent-memory/memories".to_owned(),
        as_of: 1_777_700_000,
        files: 7,
        bytes: 18_432,
        revision: "3585ec04e3ef".to_owned(),
        last_write_at: Some(1_777_630_000),
        summary: Some(summary),
        index: MemoryIndexStatus {
            state: MemoryIndexState::Fresh,
            files: 7,
            blocks: 143,
            reindexed_files: 1,
            problem: None,
        },
        notes: MemoryNotesStatus {
            files: 2,
            pending: 1,
            today: 1,
            daily_limit: 20,
            max_note_bytes: 2_000,
        },
        last_injected: Some(MemorySnapshot {
            as_of: 1_777_690_000,
            state: MemoryState::Ready,
            summary: Some(summary),
            files: 6,
            revision: "0c1d2e3f4a5b".to_owned(),
        }),
        problem: None,
    };

    let record = StageOneOutputRecord {
                thread_id: "0196a1b2-0000-7000-8000-000000000001".to_owned(),
                cwd: Some("/home/alice/proj".to_owned()),
                rollout_path: "/home/alice/.codex/sessions/2026/05/01/rollout-2026-05-01T10-00-00-0196a1b2-0000-7000-8000-000000000001.jsonl".to_owned(),
                git_branch: Some("main".to_owned()),
                raw_memory: "...".to_owned(),
                rollout_summary: "...".to_owned(),
                rollout_slug: None,
                source_updated_at: 1_777_630_000,
                generated_at: 1_777_653_600,
                usage_count: 2,
                last_used_at: Some(1_777_700_000),
                selected: true,
            };

    Ok(vec![
        ("RolloutLine", values(&lines)?),
        ("ResponseItem", values(&response_items)?),
        ("ContentItem", values(&content_items)?),
        ("SessionMeta", values(&session_metas)?),
        (
            "StageOneOutput",
            values(&[
                StageOneOutput {
                    raw_memory: "---\ndescription: fixing parser tests\n---\n### Task 1\n..."
                        .to_owned(),
                    rollout_summary: "# Fixed the empty-input parser test\n...".to_owned(),
                    rollout_slug: Some("fix-parser-empty-input".to_owned()),
                },
                StageOneOutput::default(),
            ])?,
        ),
        (
            "StageOneJob",
            values(&[StageOneJob {
                thread_id: "0196a1b2-0000-7000-8000-000000000001".to_owned(),
                status: JobStatus::Running,
                owner_token: Some("6f1c2d9e-4b7a-4c51-9d0e-2a3b4c5d6e7f".to_owned()),
                lease_expires_at: Some(1_777_633_600),
                attempts: 0,
                retry_after_at: None,
                last_error: None,
                input_watermark: 1_777_630_000,
                last_success_watermark: None,
            }])?,
        ),
        (
            "StageOneOutputRecord",
            values(std::slice::from_ref(&record))?,
        ),
        (
            "StageOneInput",
            values(&[StageOneInput {
                thread_id: record.thread_id.clone(),
                rollout_path: record.rollout_path.clone(),
                rollout_cwd: record.cwd.clone(),
                items: response_items
                    .iter()
                    .take(3)
                    .map(|item| (*item).clone())
                    .collect(),
                truncated: false,
            }])?,
        ),
        (
            "ConsolidationInput",
            values(&[ConsolidationInput {
                memory_md: String::new(),
                memory_summary_md: String::new(),
                selected: vec![record.clone()],
                changes: SelectionChanges {
                    added: vec![record.thread_id.clone()],
                    changed: Vec::new(),
                    removed: vec!["0196a0f1-0000-7000-8000-000000000009".to_owned()],
                },
                rollout_summary_files: [(
                    record.thread_id.clone(),
                    "rollout_summaries/2026-05-01T10-00-00-jqmb-fix_parser.md".to_owned(),
                )]
                .into_iter()
                .collect(),
                summary_token_budget: 2_500,
                notes: vec![ConsolidationNote {
                    path: "notes/2026-05-01T10-00-00Z-1a2b.md".to_owned(),
                    text: "# Agent note\nwritten_at: 2026-05-01T10:00:00Z\nwritten_by: an agent, with memory_note\n\nThe user prefers tabs.\n".to_owned(),
                }],
            }])?,
        ),
        (
            "ConsolidationOutput",
            values(&[ConsolidationOutput {
                memory_md: "# Task Group: /home/alice/proj\n...".to_owned(),
                memory_summary_md: "v1\n## User Profile\n...".to_owned(),
                obsolete: vec!["npm run old-build".to_owned()],
            }])?,
        ),
        ("ThreadGoal", values(std::slice::from_ref(&goal))?),
        (
            "ThreadGoalStatus",
            values(&[
                ThreadGoalStatus::Active,
                ThreadGoalStatus::Paused,
                ThreadGoalStatus::Blocked,
                ThreadGoalStatus::UsageLimited,
                ThreadGoalStatus::BudgetLimited,
                ThreadGoalStatus::Complete,
            ])?,
        ),
        (
            "UpdateGoalArgs",
            values(&[
                UpdateGoalArgs {
                    status: UpdateGoalStatus::Complete,
                    reason: Some("cargo test passes; every parser case is covered".to_owned()),
                    goal_id: Some("0196a1b2-0000-7000-8000-00000000g001".to_owned()),
                },
                UpdateGoalArgs {
                    status: UpdateGoalStatus::Blocked,
                    reason: Some("the fixture server rejects our token".to_owned()),
                    goal_id: None,
                },
            ])?,
        ),
        (
            "CreateGoalArgs",
            values(&[CreateGoalArgs {
                objective: "migrate the CLI to clap 4".to_owned(),
            }])?,
        ),
        (
            "GoalToolResponse",
            values(&[GoalToolResponse {
                remaining_tokens: goal.remaining_tokens(),
                goal: Some(goal.clone()),
                completion_budget_report: None,
            }])?,
        ),
        (
            "GoalToolRefusal",
            values(&[GoalToolRefusal {
                code: GoalRefusalCode::BlockedAuditPending,
                message: "Blocked not accepted yet: reports so far: 1/3. ...".to_owned(),
                retryable: false,
                reports_so_far: Some(1),
                reports_required: Some(3),
                goal: Some(goal.clone()),
            }])?,
        ),
        ("GoalTurnRecord", values(std::slice::from_ref(&goal_turn))?),
        (
            "GoalAccountResult",
            values(&[GoalAccountResult {
                goal: goal.clone(),
                turn: goal_turn.clone(),
                budget_limit_reached: false,
                breaker_tripped: false,
                already_recorded: false,
            }])?,
        ),
        (
            "GoalSteering",
            values(&[GoalSteering {
                kind: GoalSteeringKind::Continuation,
                source: "goal".to_owned(),
                text: "<agent_memory_internal_context source=\"goal\">\nContinue working toward \
                       the active goal of this thread.\n...\n</agent_memory_internal_context>"
                    .to_owned(),
            }])?,
        ),
        (
            "SectionOp",
            values(&[
                SectionOp::Keep,
                SectionOp::Update {
                    content: "New body.".to_owned(),
                },
                SectionOp::Append {
                    items: vec!["one".to_owned(), "two".to_owned()],
                },
            ])?,
        ),
        (
            "WorkingMemoryUpdate",
            values(&[WorkingMemoryUpdate { sections }])?,
        ),
        (
            "WorkingMemoryMergeResult",
            values(&[WorkingMemoryMergeResult {
                document: "# Working Memory\n\n## Session Title\nParser test fixes\n\n## Current State\n\n## Task & Goals\n\n## Key Facts & Decisions\n\n## Files & Context\n\n## Errors & Corrections\n\n## Open Issues\n".to_owned(),
                guards: vec![GuardRecord {
                    section: WorkingMemorySection::ErrorsAndCorrections,
                    guard: GuardKind::ErrorsAppendOnly,
                    op_in: "UPDATE".to_owned(),
                    op_out: OpName::Append,
                    reason: "the section is append-only: 1 new entry appended, the rewrite refused".to_owned(),
                }],
            }])?,
        ),
        (
            "WorkingMemoryCreateInput",
            values(&[WorkingMemoryCreateInput {
                messages: conversation_entries(),
                previous: None,
            }])?,
        ),
        (
            "WorkingMemoryUpdateInput",
            values(&[WorkingMemoryUpdateInput {
                sections: WorkingMemorySection::ALL
                    .into_iter()
                    .map(|section| SectionBody {
                        section,
                        body: match section {
                            WorkingMemorySection::SessionTitle => "Parser test fixes".to_owned(),
                            _ => String::new(),
                        },
                    })
                    .collect(),
                messages: conversation_entries(),
                warnings: vec![SectionSizeWarning {
                    section: WorkingMemorySection::KeyFactsAndDecisions,
                    bullets: 31,
                    tokens: 1_240,
                }],
            }])?,
        ),
        ("ConversationMessage", values(&conversation())?),
        ("ConversationEntry", values(&conversation_entries())?),
        (
            "SessionEntry",
            values(
                &conversation()
                    .into_iter()
                    .enumerate()
                    .map(|(i, message)| {
                        SessionEntry::Message(ConversationEntry {
                            id: format!("e{i}"),
                            message,
                        })
                    })
                    .chain([SessionEntry::Compaction(compaction_entry())])
                    .collect::<Vec<_>>(),
            )?,
        ),
        ("CompactionEntry", values(&[compaction_entry()])?),
        (
            "CompactionPlan",
            values(&[CompactionPlan {
                messages_total: 412,
                messages_summarized: 371,
                messages_kept: 41,
                first_kept_entry_id: Some("e371".to_owned()),
                split_turn: false,
                windows: 2,
                tokens_before: 171_204,
                tokens_after: Some(24_310),
                dropped_useless: 3,
                truncated_tool_results: 58,
                redactions: 1,
            }])?,
        ),
        (
            "SummaryInput",
            values(&[SummaryInput {
                messages: conversation(),
                previous_summary: Some("## Goal\nMake the parser tests green.".to_owned()),
                focus: None,
                additional_context: vec!["Plan mode: no edits until the plan is approved.".to_owned()],
                max_output_tokens: 13_107,
            }])?,
        ),
        (
            "MemoryState",
            values(&[
                MemoryState::Disabled,
                MemoryState::Empty,
                MemoryState::Ready,
                MemoryState::Degraded,
                MemoryState::Unavailable,
            ])?,
        ),
        (
            "MemoryToolFailure",
            values(&[
                MemoryToolFailure {
                    code: MemoryFailureCode::Unavailable,
                    disabled: false,
                    unavailable: true,
                    error: Some("memory_summary.md: permission denied".to_owned()),
                    warning: Some(
                        "Tell the user that long-term memory could not be read.".to_owned(),
                    ),
                    action: Some("Check the files under ~/.agent-memory/memories.".to_owned()),
                },
                MemoryToolFailure {
                    code: MemoryFailureCode::NotFound,
                    disabled: false,
                    unavailable: false,
                    error: Some("`notes/x.md` does not exist".to_owned()),
                    warning: None,
                    action: Some("memory_list shows what exists.".to_owned()),
                },
            ])?,
        ),
        (
            "MemoryListRequest",
            values(&[MemoryListRequest {
                path: Some("rollout_summaries".to_owned()),
                depth: Some(2),
            }])?,
        ),
        (
            "MemoryListResult",
            values(&[MemoryListResult {
                path: String::new(),
                depth: 1,
                entries: vec![
                    MemoryListEntry {
                        path: "MEMORY.md".to_owned(),
                        entry_type: MemoryEntryType::File,
                        bytes: 6_120,
                        depth: 1,
                    },
                    MemoryListEntry {
                        path: "rollout_summaries".to_owned(),
                        entry_type: MemoryEntryType::Directory,
                        bytes: 9_311,
                        depth: 1,
                    },
                ],
                truncated: false,
                warning: None,
            }])?,
        ),
        (
            "MemoryReadRequest",
            values(&[
                MemoryReadRequest {
                    path: "MEMORY.md".to_owned(),
                    start_line: Some(1),
                    end_line: Some(40),
                    heading: None,
                },
                MemoryReadRequest {
                    path: "MEMORY.md".to_owned(),
                    start_line: None,
                    end_line: None,
                    heading: Some("Build and test".to_owned()),
                },
            ])?,
        ),
        (
            "MemoryReadResult",
            values(&[MemoryReadResult {
                path: "MEMORY.md".to_owned(),
                heading: Some("Build and test".to_owned()),
                start_line: 12,
                end_line: 14,
                total_lines: 80,
                content: "### Build and test\n- `cargo test -p parser`\n".to_owned(),
                truncated: false,
                version: "5d41402abc4b2a76".to_owned(),
                other_sections: vec![MemoryLineRange {
                    start_line: 41,
                    end_line: 46,
                }],
            }])?,
        ),
        (
            "MemorySearchRequest",
            values(&[MemorySearchRequest {
                query: "\"cargo test\" parser".to_owned(),
                path: None,
                max_results: Some(10),
            }])?,
        ),
        (
            "MemorySearchResult",
            values(&[MemorySearchResult {
                query: "\"cargo test\" parser".to_owned(),
                hits: vec![MemorySearchHit {
                    path: "MEMORY.md".to_owned(),
                    line: 13,
                    score: 4.217,
                    heading: Some("Build and test".to_owned()),
                    snippet: "- `cargo test -p parser`".to_owned(),
                    all_terms: true,
                    also_in: vec!["raw_memories.md:31".to_owned()],
                }],
                truncated: false,
                state: MemoryState::Ready,
                index: MemoryIndexState::Fresh,
                warning: None,
            }])?,
        ),
        (
            "MemoryNoteRequest",
            values(&[
                MemoryNoteRequest {
                    text: "The user prefers tabs.".to_owned(),
                    topic: Some("style".to_owned()),
                    ..MemoryNoteRequest::default()
                },
                MemoryNoteRequest {
                    text: "The user prefers spaces.".to_owned(),
                    topic: Some("style".to_owned()),
                    id: Some("notes/2026-05-01T10-00-00Z-1a2b.md".to_owned()),
                    version: Some("5d41402abc4b2a76".to_owned()),
                    delete: false,
                },
            ])?,
        ),
        (
            "MemoryNoteResult",
            values(&[MemoryNoteResult {
                path: "notes/2026-05-01T10-00-00Z-1a2b.md".to_owned(),
                bytes: 108,
                redacted: false,
                indexed: true,
                notes_today: 1,
                daily_limit: 20,
                warning: None,
                version: Some("7c211433f0207159".to_owned()),
                deleted: false,
            }])?,
        ),
        ("MemoryStatusRequest", values(&[MemoryStatusRequest {}])?),
        ("MemoryStatusResult", values(&[status])?),
        (
            "ModelRequest",
            values(&[ModelRequest {
                task: TaskKind::StageOneExtraction,
                instructions: "(the stage-one system prompt)".to_owned(),
                input: "(the rendered stage-one input)".to_owned(),
                structured_input: json!({ "rollout_path": "/tmp/r.jsonl", "items": [] }),
                output_schema: Some(StageOneOutput::output_schema()),
                reasoning_effort: Some(ReasoningEffort::Low),
                max_output_tokens: None,
            }])?,
        ),
        (
            "ModelResponse",
            values(&[ModelResponse {
                text: "{\"raw_memory\":\"\",\"rollout_summary\":\"\",\"rollout_slug\":null}"
                    .to_owned(),
                usage: Some(TokenUsage {
                    input_tokens: 12_000,
                    cached_input_tokens: 0,
                    output_tokens: 40,
                    reasoning_output_tokens: 0,
                }),
            }])?,
        ),
        (
            "ModelError",
            values(&[
                ModelError::RateLimited {
                    retry_after_ms: Some(2_000),
                    message: "slow down".to_owned(),
                },
                ModelError::ContextOverflow {
                    message: "too long".to_owned(),
                },
                ModelError::Transient {
                    message: "HTTP 503".to_owned(),
                },
            ])?,
        ),
        ("TokenUsage", values(&[TokenUsage::default()])?),
        (
            "RateLimitSnapshot",
            values(&[RateLimitSnapshot {
                limit_requests: Some(500),
                remaining_requests: Some(120),
                limit_tokens: Some(200_000),
                remaining_tokens: None,
                observed_at: 1_767_225_600,
            }])?,
        ),
        (
            "ContextWindow",
            values(&[
                ContextWindow {
                    tokens: Some(272_000),
                    source: ContextWindowSource::KnownModel,
                },
                ContextWindow {
                    tokens: None,
                    source: ContextWindowSource::Default,
                },
            ])?,
        ),
    ])
}

fn compaction_entry() -> CompactionEntry {
    CompactionEntry {
        id: "e5".to_owned(),
        summary: "## Goal\nMake the parser tests green.\n...\n\n<files>\n...\n</files>".to_owned(),
        short_summary: Some("I fixed the empty-input case of the parser.".to_owned()),
        first_kept_entry_id: Some("e3".to_owned()),
        pinned_entry_id: None,
        tokens_before: 171_204,
        tokens_after: 24_310,
        messages_summarized: 3,
        engine: "offline".to_owned(),
        details: CompactionDetails {
            read_files: vec!["src/lib.rs".to_owned()],
            modified_files: vec!["src/parser.rs".to_owned()],
            elided_files: 0,
        },
    }
}

fn conversation_entries() -> Vec<ConversationEntry> {
    conversation()
        .into_iter()
        .enumerate()
        .map(|(i, message)| ConversationEntry {
            id: format!("e{i}"),
            message,
        })
        .collect()
}

fn conversation() -> Vec<ConversationMessage> {
    vec![
        ConversationMessage::User {
            text: "Fix the failing parser test.".to_owned(),
        },
        ConversationMessage::Assistant {
            content: vec![
                AssistantBlock::Thinking {
                    thinking: "Run the tests first.".to_owned(),
                },
                AssistantBlock::ToolCall {
                    id: "call_1".to_owned(),
                    name: "bash".to_owned(),
                    arguments: json!({ "command": "cargo test -p parser" }),
                },
            ],
        },
        ConversationMessage::ToolResult {
            tool_call_id: "call_1".to_owned(),
            tool_name: "bash".to_owned(),
            text: "test parse_empty ... FAILED".to_owned(),
            is_error: true,
            useless: false,
        },
        ConversationMessage::ShellExecution {
            command: "git status".to_owned(),
            output: "On branch main".to_owned(),
            exit_code: Some(0),
        },
        ConversationMessage::Assistant {
            content: vec![AssistantBlock::Text {
                text: "Fixed; tests pass.".to_owned(),
            }],
        },
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_schema_has_samples() {
        let instances = super::instances().unwrap();
        for (name, _) in super::schemas() {
            let samples = instances.iter().find(|(n, _)| *n == name);
            assert!(
                samples.is_some_and(|(_, v)| !v.is_empty()),
                "schema {name} has no sample instance"
            );
        }
    }
}
