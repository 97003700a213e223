//! Working memory: a seven-section document the model edits section by section.
//!
//! - [`WorkingMemorySection`]: the seven sections, their exact headers and order;
//! - [`SectionOp`], [`WorkingMemorySections`], [`WorkingMemoryUpdate`]: the per-section
//!   operations, which are the arguments of the `update_working_memory` tool and the model's
//!   structured output ([`WorkingMemoryUpdate::output_schema`]);
//! - [`limits`]: the guard constants, shared by the guards and the prompts that teach them;
//! - [`GuardRecord`]: what a guard did to an operation;
//! - [`WorkingMemoryCreateInput`], [`WorkingMemoryUpdateInput`]: the structured input of the
//!   create and update requests.

use std::fmt;

use crate::compaction::ConversationEntry;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The seven sections, in document order.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum WorkingMemorySection {
    /// `Session Title`.
    #[serde(rename = "Session Title")]
    SessionTitle,
    /// `Current State`.
    #[serde(rename = "Current State")]
    CurrentState,
    /// `Task & Goals`.
    #[serde(rename = "Task & Goals")]
    TaskAndGoals,
    /// `Key Facts & Decisions`.
    #[serde(rename = "Key Facts & Decisions")]
    KeyFactsAndDecisions,
    /// `Files & Context`.
    #[serde(rename = "Files & Context")]
    FilesAndContext,
    /// `Errors & Corrections` (append-only).
    #[serde(rename = "Errors & Corrections")]
    ErrorsAndCorrections,
    /// `Open Issues`.
    #[serde(rename = "Open Issues")]
    OpenIssues,
}

impl WorkingMemorySection {
    /// All sections in document order.
    pub const ALL: [WorkingMemorySection; 7] = [
        WorkingMemorySection::SessionTitle,
        WorkingMemorySection::CurrentState,
        WorkingMemorySection::TaskAndGoals,
        WorkingMemorySection::KeyFactsAndDecisions,
        WorkingMemorySection::FilesAndContext,
        WorkingMemorySection::ErrorsAndCorrections,
        WorkingMemorySection::OpenIssues,
    ];

    /// The exact header text (rendered as `## <header>`).
    pub fn header(self) -> &'static str {
        match self {
            WorkingMemorySection::SessionTitle => "Session Title",
            WorkingMemorySection::CurrentState => "Current State",
            WorkingMemorySection::TaskAndGoals => "Task & Goals",
            WorkingMemorySection::KeyFactsAndDecisions => "Key Facts & Decisions",
            WorkingMemorySection::FilesAndContext => "Files & Context",
            WorkingMemorySection::ErrorsAndCorrections => "Errors & Corrections",
            WorkingMemorySection::OpenIssues => "Open Issues",
        }
    }

    /// The section with this exact header (case-sensitive).
    pub fn from_header(header: &str) -> Option<WorkingMemorySection> {
        Self::ALL.into_iter().find(|s| s.header() == header)
    }
}

impl fmt::Display for WorkingMemorySection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.header())
    }
}

/// One section's edit, tagged by `op`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", deny_unknown_fields)]
pub enum SectionOp {
    /// Keep the section as it is.
    #[serde(rename = "KEEP")]
    Keep,
    /// Replace the section's body (markdown, without the `## ` header line).
    #[serde(rename = "UPDATE")]
    Update {
        /// The new body.
        content: String,
    },
    /// Add bullet items (without markers; each is rendered as `- <item>`).
    #[serde(rename = "APPEND")]
    Append {
        /// The new items.
        items: Vec<String>,
    },
}

/// One operation per section; all seven are required.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkingMemorySections {
    /// `Session Title`.
    #[serde(rename = "Session Title")]
    pub session_title: SectionOp,
    /// `Current State`.
    #[serde(rename = "Current State")]
    pub current_state: SectionOp,
    /// `Task & Goals`.
    #[serde(rename = "Task & Goals")]
    pub task_and_goals: SectionOp,
    /// `Key Facts & Decisions`.
    #[serde(rename = "Key Facts & Decisions")]
    pub key_facts_and_decisions: SectionOp,
    /// `Files & Context`.
    #[serde(rename = "Files & Context")]
    pub files_and_context: SectionOp,
    /// `Errors & Corrections`.
    #[serde(rename = "Errors & Corrections")]
    pub errors_and_corrections: SectionOp,
    /// `Open Issues`.
    #[serde(rename = "Open Issues")]
    pub open_issues: SectionOp,
}

impl WorkingMemorySections {
    /// The operation for `section`.
    pub fn get(&self, section: WorkingMemorySection) -> &SectionOp {
        match section {
            WorkingMemorySection::SessionTitle => &self.session_title,
            WorkingMemorySection::CurrentState => &self.current_state,
            WorkingMemorySection::TaskAndGoals => &self.task_and_goals,
            WorkingMemorySection::KeyFactsAndDecisions => &self.key_facts_and_decisions,
            WorkingMemorySection::FilesAndContext => &self.files_and_context,
            WorkingMemorySection::ErrorsAndCorrections => &self.errors_and_corrections,
            WorkingMemorySection::OpenIssues => &self.open_issues,
        }
    }

    /// The sections with their operations, in document order.
    pub fn iter(&self) -> impl Iterator<Item = (WorkingMemorySection, &SectionOp)> {
        WorkingMemorySection::ALL
            .into_iter()
            .map(|s| (s, self.get(s)))
    }
}

/// Arguments of the `update_working_memory` tool, and the model's structured output for an
/// update request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkingMemoryUpdate {
    /// One operation per section.
    pub sections: WorkingMemorySections,
}

/// Name of the tool a host's model calls to edit the working memory.
pub const UPDATE_TOOL_NAME: &str = "update_working_memory";

impl WorkingMemoryUpdate {
    /// The strict JSON Schema of the arguments: an object with `sections`, which holds all seven
    /// sections, each one of three closed shapes (`KEEP`; `UPDATE` with `content`; `APPEND`
    /// with `items`). Written by hand so every shape stays inside the strict subset; the same
    /// schema is the model's output format and the tool's parameters.
    pub fn output_schema() -> serde_json::Value {
        let op = |name: &str, field: Option<(&str, serde_json::Value)>| {
            let mut properties = serde_json::Map::new();
            properties.insert(
                "op".to_owned(),
                serde_json::json!({"type": "string", "enum": [name]}),
            );
            let mut required = vec![serde_json::Value::from("op")];
            if let Some((key, schema)) = field {
                properties.insert(key.to_owned(), schema);
                required.push(serde_json::Value::from(key));
            }
            serde_json::json!({
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false
            })
        };
        let section_op = serde_json::json!({
            "anyOf": [
                op("KEEP", None),
                op("UPDATE", Some(("content", serde_json::json!({
                    "type": "string",
                    "description": "The section's complete new body in markdown, without its `## ` header line."
                })))),
                op("APPEND", Some(("items", serde_json::json!({
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "New bullet items without their `- ` marker."
                })))),
            ]
        });
        let mut sections = serde_json::Map::new();
        for section in WorkingMemorySection::ALL {
            sections.insert(section.header().to_owned(), section_op.clone());
        }
        let headers: Vec<&str> = WorkingMemorySection::ALL
            .iter()
            .map(|s| s.header())
            .collect();
        serde_json::json!({
            "type": "object",
            "properties": {
                "sections": {
                    "type": "object",
                    "description": "One operation for each of the seven sections.",
                    "properties": sections,
                    "required": headers,
                    "additionalProperties": false
                }
            },
            "required": ["sections"],
            "additionalProperties": false
        })
    }
}

/// The guard constants. The guards in `working-memory` enforce them and the update prompt
/// teaches them, so both read them from here.
pub mod limits {
    /// A section with more bullets than this is oversized: the update prompt warns about it and
    /// Key Facts & Decisions takes at most [`OVERSIZED_APPEND_CAP`] new items per update.
    pub const SECTION_BULLET_THRESHOLD: usize = 25;
    /// A section with more estimated tokens than this is oversized.
    pub const SECTION_TOKEN_THRESHOLD: usize = 1_500;
    /// The hard bound of Key Facts & Decisions and Errors & Corrections is this many times
    /// their thresholds (50 bullets, 3,000 tokens). Key Facts never grows past it (the
    /// consolidation sentinel aside); Errors & Corrections moves its oldest entries to the
    /// archive when it would.
    pub const HARD_BOUND_FACTOR: usize = 2;
    /// New items Key Facts & Decisions accepts per update while it is between its threshold and
    /// its hard bound.
    pub const OVERSIZED_APPEND_CAP: usize = 5;
    /// A Key Facts rewrite keeping fewer bullets than this share of the old ones is refused;
    /// exactly this share passes.
    pub const KEY_FACTS_MIN_BULLET_RATIO: f64 = 0.15;
    /// A Key Facts rewrite keeping less than this share of the old anchors (dates, amounts,
    /// names, decision words) is refused; exactly this share passes.
    pub const KEY_FACTS_MIN_ANCHOR_COVERAGE: f64 = 0.70;
    /// The bullet Key Facts & Decisions gets once it reaches its hard bound. While it is there,
    /// new facts are refused until an UPDATE consolidates the section.
    pub const CONSOLIDATION_SENTINEL: &str = "[CONSOLIDATION REQUIRED: this section is at its size limit. Merge and shorten the existing bullets with UPDATE; new facts are refused until then.]";
    /// The tag an Open Issues item gets when an UPDATE dropped it without marking it resolved
    /// and the guard put it back.
    pub const RESTORED_MARKER: &str = "[restored]";
    /// The tag that marks an Open Issues item as resolved; a later update may then drop it.
    pub const RESOLVED_MARKER: &str = "[resolved]";
    /// The tag that marks a newly raised Open Issues item.
    pub const NEW_MARKER: &str = "[new]";
    /// How many leading characters of an Open Issues item must still appear in a rewrite for
    /// the item to count as kept.
    pub const OPEN_ISSUE_SNIPPET_CHARS: usize = 40;
    /// Start of the pointer bullet left where entries were moved to the archive.
    pub const MOVED_POINTER_PREFIX: &str = "[earlier entries moved to ";

    /// The hard bound in bullets.
    pub const fn hard_bound_bullets() -> usize {
        SECTION_BULLET_THRESHOLD * HARD_BOUND_FACTOR
    }

    /// The hard bound in tokens.
    pub const fn hard_bound_tokens() -> usize {
        SECTION_TOKEN_THRESHOLD * HARD_BOUND_FACTOR
    }
}

/// An operation's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum OpName {
    /// `KEEP`.
    #[serde(rename = "KEEP")]
    Keep,
    /// `UPDATE`.
    #[serde(rename = "UPDATE")]
    Update,
    /// `APPEND`.
    #[serde(rename = "APPEND")]
    Append,
}

impl OpName {
    /// The name as the wire writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            OpName::Keep => "KEEP",
            OpName::Update => "UPDATE",
            OpName::Append => "APPEND",
        }
    }
}

impl SectionOp {
    /// This operation's name.
    pub fn name(&self) -> OpName {
        match self {
            SectionOp::Keep => OpName::Keep,
            SectionOp::Update { .. } => OpName::Update,
            SectionOp::Append { .. } => OpName::Append,
        }
    }
}

/// Which rule changed an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GuardKind {
    /// The operation was missing, unknown or malformed, so the section was kept.
    InvalidOp,
    /// An UPDATE with an empty body would have emptied a section.
    EmptyUpdate,
    /// Items already in the section (after normalization) were not added again.
    DuplicateItems,
    /// A new title shares no meaningful word with the old one.
    TitleStability,
    /// A Key Facts rewrite kept too few bullets or anchors, or grew the section.
    KeyFactsConsolidation,
    /// Key Facts took fewer new items because it is oversized, or got the sentinel.
    KeyFactsAntiBloat,
    /// A Files & Context rewrite dropped a path.
    FilesNoRegression,
    /// An Errors & Corrections rewrite was turned into an append of its new entries.
    ErrorsAppendOnly,
    /// A section past its hard bound moved its oldest entries to the archive.
    SectionBound,
    /// An Open Issues rewrite dropped unresolved items, which were put back.
    OpenIssuesRestore,
}

/// What a guard did to one section's operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GuardRecord {
    /// The section.
    pub section: WorkingMemorySection,
    /// The rule that acted.
    pub guard: GuardKind,
    /// The operation as the model wrote it, upper-cased (empty when there was none).
    pub op_in: String,
    /// The operation applied.
    pub op_out: OpName,
    /// What happened and why, for a reader.
    pub reason: String,
}

/// What a working-memory merge produced: the `update_working_memory` tool's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkingMemoryMergeResult {
    /// The merged document, in canonical form.
    pub document: String,
    /// Every guard that changed an operation, in section order.
    pub guards: Vec<GuardRecord>,
}

/// The structured input of a create request ([`crate::TaskKind::WorkingMemoryCreate`]): the
/// model answers with the whole document as markdown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkingMemoryCreateInput {
    /// The messages to write the document from, redacted, oldest first.
    pub messages: Vec<ConversationEntry>,
    /// The document to carry forward, when there is one (a fallback after a failed update, or a
    /// document in an older format).
    pub previous: Option<String>,
}

/// The structured input of an update request ([`crate::TaskKind::WorkingMemoryUpdate`]): the
/// model answers with a [`WorkingMemoryUpdate`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkingMemoryUpdateInput {
    /// The current document's section bodies, one per section in document order.
    pub sections: Vec<SectionBody>,
    /// The messages the document has not seen yet, redacted, oldest first.
    pub messages: Vec<ConversationEntry>,
    /// Sections over their size thresholds.
    pub warnings: Vec<SectionSizeWarning>,
}

/// One section's current body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SectionBody {
    /// The section.
    pub section: WorkingMemorySection,
    /// Its markdown body, without the header line (empty when the section is empty).
    pub body: String,
}

/// A section over a size threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SectionSizeWarning {
    /// The section.
    pub section: WorkingMemorySection,
    /// Bullets it holds.
    pub bullets: u64,
    /// Tokens it holds (estimated).
    pub tokens: u64,
}
