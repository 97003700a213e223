//! The one table of prompt templates: every file under `prompts/`, embedded at build time, with
//! the boundary tags untrusted text must not open or close inside it. The render functions of
//! each family and the engine both read from here; nothing here reads from them.

use memory_protocol::names::boundary_tags;

/// One embedded template: its name (its path under `prompts/`), its source, and the boundary
/// tags untrusted text must not be able to open or close inside it.
#[derive(Debug)]
pub(crate) struct Template {
    pub(crate) name: &'static str,
    pub(crate) source: &'static str,
    pub(crate) boundary_tags: &'static [&'static str],
}

macro_rules! template {
    ($name:literal, $tags:expr) => {
        $crate::registry::Template {
            name: $name,
            source: include_str!(concat!("../../../prompts/", $name)),
            boundary_tags: $tags,
        }
    };
}

/// Every template, so the environment can resolve `{% include %}` and tests can walk them.
pub(crate) fn all() -> impl Iterator<Item = &'static Template> {
    [
        memories::TEMPLATES,
        compaction::TEMPLATES,
        working_memory::TEMPLATES,
        goals::TEMPLATES,
        introspect::TEMPLATES,
        hooks::TEMPLATES,
    ]
    .into_iter()
    .flatten()
    .copied()
}

/// The memories templates.
pub(crate) mod memories {
    use super::Template;
    use super::boundary_tags;

    pub(crate) const STAGE_ONE_SYSTEM: Template = template!("memories/stage_one_system.md", &[]);
    pub(crate) const STAGE_ONE_INPUT: Template = template!(
        "memories/stage_one_input.md",
        &[boundary_tags::ROLLOUT_CONTENT]
    );
    pub(crate) const CONSOLIDATION_SYSTEM: Template =
        template!("memories/consolidation_system.md", &[]);
    pub(crate) const CONSOLIDATION_INPUT: Template = template!(
        "memories/consolidation_input.md",
        &[boundary_tags::MEMORY_FILE, boundary_tags::RAW_MEMORY]
    );
    pub(crate) const READ_PATH: Template = template!("memories/read_path.md", &[]);

    pub(crate) const TEMPLATES: &[&Template] = &[
        &STAGE_ONE_SYSTEM,
        &STAGE_ONE_INPUT,
        &CONSOLIDATION_SYSTEM,
        &CONSOLIDATION_INPUT,
        &READ_PATH,
    ];
}

/// The compaction templates.
pub(crate) mod compaction {
    use super::Template;
    use super::boundary_tags;

    pub(crate) const SYSTEM: Template = template!("compaction/system.md", &[]);
    pub(crate) const SUMMARY: Template = template!("compaction/summary.md", &[]);
    pub(crate) const UPDATE_SUMMARY: Template = template!("compaction/update_summary.md", &[]);
    pub(crate) const SHORT_SUMMARY: Template = template!("compaction/short_summary.md", &[]);
    pub(crate) const TURN_PREFIX: Template = template!("compaction/turn_prefix.md", &[]);
    pub(crate) const REQUEST: Template = template!(
        "compaction/request.md",
        &[
            boundary_tags::CONVERSATION,
            boundary_tags::PREVIOUS_SUMMARY,
            boundary_tags::ADDITIONAL_CONTEXT,
        ]
    );

    pub(crate) const TEMPLATES: &[&Template] = &[
        &SYSTEM,
        &SUMMARY,
        &UPDATE_SUMMARY,
        &SHORT_SUMMARY,
        &TURN_PREFIX,
        &REQUEST,
    ];
}

/// The working memory templates.
pub(crate) mod working_memory {
    use super::Template;
    use super::boundary_tags;

    pub(crate) const CREATE: Template = template!(
        "working_memory/create.md",
        &[boundary_tags::CONVERSATION, boundary_tags::PREVIOUS_SUMMARY]
    );
    pub(crate) const UPDATE: Template = template!(
        "working_memory/update.md",
        &[
            boundary_tags::WORKING_MEMORY,
            boundary_tags::CONVERSATION,
            boundary_tags::SECTION_SIZE_WARNINGS
        ]
    );
    pub(crate) const ASSEMBLE: Template = template!(
        "working_memory/assemble.md",
        &[boundary_tags::WORKING_MEMORY]
    );

    pub(crate) const TEMPLATES: &[&Template] = &[&CREATE, &UPDATE, &ASSEMBLE];
}

/// The goals templates.
pub(crate) mod goals {
    use super::Template;
    use super::boundary_tags;

    pub(crate) const CONTINUATION: Template =
        template!("goals/continuation.md", &[boundary_tags::OBJECTIVE]);
    pub(crate) const BUDGET_LIMIT: Template =
        template!("goals/budget_limit.md", &[boundary_tags::OBJECTIVE]);
    pub(crate) const OBJECTIVE_UPDATED: Template = template!(
        "goals/objective_updated.md",
        &[boundary_tags::UNTRUSTED_OBJECTIVE]
    );

    pub(crate) const TEMPLATES: &[&Template] = &[&CONTINUATION, &BUDGET_LIMIT, &OBJECTIVE_UPDATED];
}

/// The introspect templates.
pub(crate) mod introspect {
    use super::Template;
    use super::boundary_tags;

    /// The tags text inside any memory fence may neither open nor close (nor the environment
    /// block that follows the fence).
    const MEMORY_TAGS: &[&str] = &[
        boundary_tags::MEMORY,
        boundary_tags::MEMORY_RECALL,
        boundary_tags::ENVIRONMENT,
    ];

    pub(crate) const MEMORY_BLOCK: Template = template!("introspect/memory_block.md", MEMORY_TAGS);
    pub(crate) const MEMORY_HEADER: Template =
        template!("introspect/memory_header.md", MEMORY_TAGS);
    pub(crate) const MEMORY_SOURCE: Template =
        template!("introspect/memory_source.md", MEMORY_TAGS);
    pub(crate) const RECALL: Template = template!("introspect/recall.md", MEMORY_TAGS);
    pub(crate) const RECALL_HIT: Template = template!("introspect/recall_hit.md", MEMORY_TAGS);
    pub(crate) const STATE_LINE: Template = template!("introspect/state_line.md", MEMORY_TAGS);
    pub(crate) const STATE_CHANGE: Template = template!("introspect/state_change.md", MEMORY_TAGS);
    pub(crate) const ENVIRONMENT: Template = template!(
        "introspect/environment.md",
        &[
            boundary_tags::ENVIRONMENT,
            boundary_tags::MEMORY,
            boundary_tags::MEMORY_RECALL
        ]
    );

    pub(crate) const TEMPLATES: &[&Template] = &[
        &MEMORY_BLOCK,
        &MEMORY_HEADER,
        &MEMORY_SOURCE,
        &RECALL,
        &RECALL_HIT,
        &STATE_LINE,
        &STATE_CHANGE,
        &ENVIRONMENT,
    ];
}

/// The hooks templates.
pub(crate) mod hooks {
    use super::Template;
    use super::boundary_tags;

    pub(crate) const AFTER_COMPACTION: Template = template!("hooks/after_compaction.md", &[]);
    pub(crate) const BEFORE_COMPACTION: Template = template!(
        "hooks/before_compaction.md",
        &[boundary_tags::UNTRUSTED_OBJECTIVE]
    );

    pub(crate) const TEMPLATES: &[&Template] = &[&AFTER_COMPACTION, &BEFORE_COMPACTION];
}
