//! Tools a host's own model calls, defined once and exported in every form a host needs.
//!
//! Each [`ToolDefinition`] carries its name, the description the model reads, a strict
//! parameters schema (see [`crate::strict`]) and, when the tool answers with structured
//! content, an output schema. [`ToolDefinition::openai_function`] and
//! [`ToolDefinition::mcp_tool`] give the two wire forms; `cargo xtask codegen` writes both under
//! `schemas/tools/`. A crate that adds a tool adds it to [`all_tools`], so the strictness test
//! and the export see it.

use schemars::{JsonSchema, schema_for};
use serde_json::{Value, json};

use crate::goal::{CreateGoalArgs, GoalToolResponse, UpdateGoalArgs};
use crate::strict::make_strict;
use crate::working_memory::{UPDATE_TOOL_NAME, WorkingMemoryMergeResult, WorkingMemoryUpdate};

/// One tool a model can call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// The tool's name, as the model calls it.
    pub name: &'static str,
    /// What the model reads about when and how to call it.
    pub description: &'static str,
    /// The arguments' schema, in the strict subset.
    pub parameters: Value,
    /// The result's schema, when the tool returns structured content.
    pub output_schema: Option<Value>,
}

impl ToolDefinition {
    /// A definition whose parameters and output schemas are derived from Rust types and made
    /// strict.
    pub fn derived<Args: JsonSchema, Output: JsonSchema>(
        name: &'static str,
        description: &'static str,
    ) -> ToolDefinition {
        ToolDefinition {
            name,
            description,
            parameters: strict_schema::<Args>(),
            output_schema: Some(schema_for!(Output).to_value()),
        }
    }

    /// The OpenAI function-tool form (Responses API), with strict argument checking.
    pub fn openai_function(&self) -> Value {
        json!({
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "strict": true,
        })
    }

    /// The MCP tool form (`tools/list`), with the output schema when there is one.
    pub fn mcp_tool(&self) -> Value {
        let mut tool = json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": self.parameters,
        });
        if let (Some(output), Some(map)) = (&self.output_schema, tool.as_object_mut()) {
            map.insert("outputSchema".to_owned(), output.clone());
        }
        tool
    }
}

/// The strict schema of `T`: derived by schemars, then rewritten by [`make_strict`], without
/// the `$schema` and `title` annotations a tool definition does not carry.
pub fn strict_schema<T: JsonSchema>() -> Value {
    let mut schema = make_strict(schema_for!(T).to_value());
    if let Some(map) = schema.as_object_mut() {
        map.remove("$schema");
        map.remove("title");
        map.remove("description");
    }
    schema
}

/// Arguments of a tool that takes none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

impl JsonSchema for NoArgs {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NoArgs".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "properties": {},
            "required": [],
            "additionalProperties": false
        })
    }
}

/// Every tool this project defines for a host's model.
pub fn all_tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::derived::<NoArgs, GoalToolResponse>(
            "get_goal",
            "Read this thread's goal: its objective, status, token budget and what is left of \
             it. Call it when you need to check what you are working toward.",
        ),
        ToolDefinition::derived::<CreateGoalArgs, GoalToolResponse>(
            "create_goal",
            "Set a goal for this thread when the user asks you to pursue one. Only the user can \
             set a token budget; a thread holds one unfinished goal at a time.",
        ),
        ToolDefinition::derived::<UpdateGoalArgs, GoalToolResponse>(
            "update_goal",
            "Report that the thread goal is complete (every requirement verified against \
             evidence) or blocked (the same blocker persisted across consecutive turns). You \
             cannot pause, resume or change the budget.",
        ),
        ToolDefinition {
            name: UPDATE_TOOL_NAME,
            description: "Edit the session's working memory: give one operation for each of its \
                seven sections. KEEP leaves a section as it is, APPEND adds bullet items, UPDATE \
                replaces the section's body and must carry over everything still true. Guards \
                refuse edits that would lose facts; the result lists what they changed.",
            parameters: WorkingMemoryUpdate::output_schema(),
            output_schema: Some(schema_for!(WorkingMemoryMergeResult).to_value()),
        },
    ]
}
