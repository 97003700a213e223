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

use crate::goal::{CreateGoalArgs, GoalToolRefusal, GoalToolResponse, UpdateGoalArgs};
use crate::introspect::{
    MemoryListRequest, MemoryListResult, MemoryNoteRequest, MemoryNoteResult, MemoryReadRequest,
    MemoryReadResult, MemorySearchRequest, MemorySearchResult, MemoryStatusResult,
    MemoryToolFailure,
};
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

    /// A memory tool: parameters as in [`ToolDefinition::derived`], and an output schema that
    /// admits `Output` or a [`MemoryToolFailure`] (see [`result_or_failure_schema`]).
    pub fn memory_tool<Args: JsonSchema, Output: JsonSchema>(
        name: &'static str,
        description: &'static str,
    ) -> ToolDefinition {
        ToolDefinition {
            name,
            description,
            parameters: strict_schema::<Args>(),
            output_schema: Some(result_or_failure_schema::<Output>()),
        }
    }

    /// A goal tool: parameters as in [`ToolDefinition::derived`], and an output schema that
    /// admits a [`GoalToolResponse`] or a [`GoalToolRefusal`]: a refused call answers with
    /// structured content too (with `isError` over MCP).
    pub fn goal_tool<Args: JsonSchema>(
        name: &'static str,
        description: &'static str,
    ) -> ToolDefinition {
        ToolDefinition {
            name,
            description,
            parameters: strict_schema::<Args>(),
            output_schema: Some(either_schema::<GoalToolResponse, GoalToolRefusal>()),
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

    /// The MCP tool form (`tools/list`), with the output schema when there is one. MCP has no
    /// strict mode, so an optional argument is optional here: a property whose schema admits
    /// `null` is left out of `required` (see [`optional_fields_optional`]).
    pub fn mcp_tool(&self) -> Value {
        let mut tool = json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": optional_fields_optional(self.parameters.clone()),
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

/// `schema` (a strict parameters schema) with every property whose schema admits `null`
/// dropped from its object's `required` list, at every depth. Strict mode spells an optional
/// argument as a required key that may be `null`; serde reads a missing `Option` as `None`,
/// so for a client without strict mode the key is optional.
pub fn optional_fields_optional(mut schema: Value) -> Value {
    relax(&mut schema);
    schema
}

fn relax(node: &mut Value) {
    let Some(map) = node.as_object_mut() else {
        return;
    };
    let nullable: Vec<String> = map
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .filter(|(_, schema)| admits_null(schema))
                .map(|(name, _)| name.clone())
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Array(required)) = map.get_mut("required") {
        required.retain(|name| {
            !name
                .as_str()
                .is_some_and(|name| nullable.iter().any(|n| n == name))
        });
    }
    for (keyword, child) in map.iter_mut() {
        match keyword.as_str() {
            "properties" | "$defs" | "definitions" => {
                if let Some(children) = child.as_object_mut() {
                    children.values_mut().for_each(relax);
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Some(children) = child.as_array_mut() {
                    children.iter_mut().for_each(relax);
                }
            }
            "items" | "additionalProperties" => relax(child),
            _ => {}
        }
    }
}

/// Whether `schema` accepts `null` by its `type` or one of its `anyOf` branches.
fn admits_null(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(kind)) if kind == "null" => return true,
        Some(Value::Array(kinds)) if kinds.iter().any(|kind| kind == "null") => return true,
        _ => {}
    }
    schema
        .get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|branches| branches.iter().any(admits_null))
}

/// The output schema of a memory tool: an object that is either `Output` or a
/// [`MemoryToolFailure`]. A failed call still carries structured content (with `isError` over
/// MCP), and a client that validates it against the declared schema must accept it.
pub fn result_or_failure_schema<Output: JsonSchema>() -> Value {
    either_schema::<Output, MemoryToolFailure>()
}

/// An output schema admitting an object that is either `Answer` or `Refusal`, each kept whole
/// under `$defs` (their own definitions merged in).
pub fn either_schema<Answer: JsonSchema, Refusal: JsonSchema>() -> Value {
    let mut defs = serde_json::Map::new();
    let mut refs = Vec::new();
    for (name, mut schema) in [
        (Answer::schema_name(), schema_for!(Answer).to_value()),
        (Refusal::schema_name(), schema_for!(Refusal).to_value()),
    ] {
        if let Some(map) = schema.as_object_mut() {
            map.remove("$schema");
            if let Some(Value::Object(nested)) = map.remove("$defs") {
                defs.extend(nested);
            }
        }
        refs.push(json!({ "$ref": format!("#/$defs/{name}") }));
        defs.insert(name.into_owned(), schema);
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": format!("{} or {}", Answer::schema_name(), Refusal::schema_name()),
        "type": "object",
        "anyOf": refs,
        "$defs": defs,
    })
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

/// Name of the tool that saves a note to long-term memory (the one memory tool that writes).
pub const MEMORY_NOTE_TOOL: &str = "memory_note";
/// Name of the tool that reads the thread goal.
pub const GET_GOAL_TOOL: &str = "get_goal";
/// Name of the tool that starts a thread goal (without a budget).
pub const CREATE_GOAL_TOOL: &str = "create_goal";
/// Name of the tool that reports a thread goal complete or blocked.
pub const UPDATE_GOAL_TOOL: &str = "update_goal";

/// Every tool this project defines for a host's model.
pub fn all_tools() -> Vec<ToolDefinition> {
    let mut tools = memory_tools();
    tools.extend(goal_tools());
    tools.extend(working_memory_tools());
    tools
}

/// The memory tools, in the order a host lists them.
pub fn memory_tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::memory_tool::<NoArgs, MemoryStatusResult>(
            "memory_status",
            "Live numbers about your long-term memory: its state (ready, empty, degraded, \
             unavailable or disabled), mode, root folder, files, revision, last write, search \
             index, summary budget use and notes. The memory block's header can be checked \
             against it. If the state is disabled or unavailable, tell the user: memory is off, \
             or could not be read, so missing memories say nothing about past sessions.",
        ),
        ToolDefinition::memory_tool::<MemoryListRequest, MemoryListResult>(
            "memory_list",
            "List the files of your long-term memory as a tree with sizes: `path` is a folder \
             relative to the memory root (the root when null), `depth` the levels to descend \
             (2 when null). Start here when you do not know what memory holds. Paths that leave \
             the root are refused. If the call fails with disabled or unavailable set, tell the \
             user that memory is off or could not be read.",
        ),
        ToolDefinition::memory_tool::<MemoryReadRequest, MemoryReadResult>(
            "memory_read",
            "Read a memory file relative to the memory root: the whole file, a line range \
             (`start_line`, `end_line`, 1-based and inclusive) or the section under one Markdown \
             `heading` (the first, when several match; `other_sections` gives the others' \
             lines). Long reads are cut; continue from `end_line + 1` when `truncated`. A \
             missing file or heading is a not_found failure, never an empty result. `version` \
             identifies what you read (memory_note needs it to change a note). If the call \
             fails with disabled or unavailable set, tell the user that memory is off or could \
             not be read.",
        ),
        ToolDefinition::memory_tool::<MemorySearchRequest, MemorySearchResult>(
            "memory_search",
            "Search long-term memory before answering about past work, decisions, commands or \
             the user's preferences. Blocks holding every word of `query` come first, then \
             those holding some (`all_terms` false); put an exact phrase in \"double quotes\". Hits are ranked (BM25) with path, line, score and the matching \
             line; open them with memory_read. No hits in state `empty` means nothing is \
             recorded yet. If the call fails with disabled or unavailable set, tell the user \
             that memory is off or could not be read, and do not conclude the user never said \
             something.",
        ),
        ToolDefinition::memory_tool::<MemoryNoteRequest, MemoryNoteResult>(
            MEMORY_NOTE_TOOL,
            "Save one durable fact, preference or decision to long-term memory when the user \
             asks you to remember something, or when you learn something later sessions need. \
             The note is written and searchable before this returns; the background write path \
             folds notes into the memory files. Secrets are redacted; a note and each day have \
             a size limit. To correct or remove a note, pass its `id` (its notes/ path) and the \
             `version` memory_read returned for it, with the new `text` or `delete: true`; a \
             conflict failure means it changed since you read it: read it again. If the call \
             fails (disabled, unavailable, read_only or a budget), tell the user the note was \
             not saved.",
        ),
    ]
}

/// The goal tools: the ones a goal store answers.
pub fn goal_tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::goal_tool::<NoArgs>(GET_GOAL_TOOL, GET_GOAL),
        ToolDefinition::goal_tool::<CreateGoalArgs>(CREATE_GOAL_TOOL, CREATE_GOAL),
        ToolDefinition::goal_tool::<UpdateGoalArgs>(UPDATE_GOAL_TOOL, UPDATE_GOAL),
    ]
}

/// The working-memory tools, for a host that keeps its context with the seven-section working
/// memory rather than (or besides) compaction.
pub fn working_memory_tools() -> Vec<ToolDefinition> {
    vec![ToolDefinition {
        name: UPDATE_TOOL_NAME,
        description: "Edit the session's working memory: give one operation for each of its \
                seven sections. KEEP leaves a section as it is, APPEND adds bullet items, UPDATE \
                replaces the section's body and must carry over everything still true. Guards \
                refuse edits that would lose facts; the result lists what they changed.",
        parameters: WorkingMemoryUpdate::output_schema(),
        output_schema: Some(schema_for!(WorkingMemoryMergeResult).to_value()),
    }]
}

const GET_GOAL: &str = "Read this thread's goal: its objective, status and the reason for it, the \
     token budget, tokens and seconds used, and tokens remaining. It changes nothing; call it when \
     you need to check what you are working toward or how much budget is left.";

const CREATE_GOAL: &str = "Start a goal for this thread. Call it only when the user (or the \
     system) explicitly asks you to pursue a goal; never on your own initiative. Pass the objective \
     as the user stated it, without narrowing it. There is no budget argument: token budgets \
     belong to the user. Refused when the objective is empty or longer than 4,000 characters, and \
     when the thread already has an unfinished goal, which only the user can replace or clear. A \
     refused call is not retryable: repeating it gives the same answer.";

const UPDATE_GOAL: &str = "Report how the thread goal ended. Only two statuses exist here. \
     \"complete\": only after a completion audit has proven every requirement of the objective \
     against evidence you inspected in the current state; put that evidence in `reason`. Never \
     because work is stopping or the budget is low. \"blocked\": only for a blocker you cannot \
     remove yourself, after every approach in reach has failed; put the blocker and what is needed \
     from outside in `reason`, worded the same way each time. A question for the user is not a \
     blocker. The system accepts \"blocked\" only on the third consecutive goal turn that \
     reports the same blocker, counting the turn the user started. Earlier reports are refused \
     with the count so far (\"reports so far: n/3\"): keep working on what is still possible and \
     report again next turn if the blocker persists. A goal turn without the report, a different \
     blocker, or a resumed goal starts the count again; a second report in the same turn counts \
     once. \"blocked\" is refused unless the goal is active, and \"complete\" once it is \
     complete: pausing, resuming, budgets and limits belong to the user and the system, and this \
     tool cannot change them. Refused calls are not retryable: repeating one changes nothing.";
