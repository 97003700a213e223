//! Working memory: a seven-section document the model edits section by section.

use std::fmt;

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

/// Arguments of the `update_working_memory` tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkingMemoryUpdate {
    /// One operation per section.
    pub sections: WorkingMemorySections,
    /// Summaries of checkpointed spans, in ascending order, when the caller asked for them.
    #[serde(default)]
    pub checkpoint_summaries: Option<Vec<String>>,
}
