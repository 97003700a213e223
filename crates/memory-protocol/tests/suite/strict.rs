//! Every schema sent to a model, and every tool definition exported for hosts, stays inside the
//! strict subset.

use memory_protocol::StageOneOutput;
use memory_protocol::consolidation::ConsolidationOutput;
use memory_protocol::strict::violations;
use memory_protocol::tools::all_tools;
use serde_json::Value;

/// Every output schema a library request carries, by the name of its type. A crate that sends a
/// new output schema adds it here.
fn model_output_schemas() -> Vec<(&'static str, Value)> {
    vec![
        ("StageOneOutput", StageOneOutput::output_schema()),
        ("ConsolidationOutput", ConsolidationOutput::output_schema()),
    ]
}

#[test]
fn every_model_output_schema_is_strict() {
    for (name, schema) in model_output_schemas() {
        let found = violations(&schema);
        assert!(found.is_empty(), "{name}:\n{}", found.join("\n"));
    }
}

#[test]
fn every_tool_definition_is_strict_in_both_forms() {
    let tools = all_tools();
    assert!(!tools.is_empty());
    let mut names: Vec<&str> = tools.iter().map(|tool| tool.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), tools.len(), "tool names are unique");
    for tool in tools {
        let found = violations(&tool.parameters);
        assert!(found.is_empty(), "{}:\n{}", tool.name, found.join("\n"));
        let openai = tool.openai_function();
        assert_eq!(openai["strict"], true);
        assert_eq!(openai["parameters"], tool.parameters);
        let mcp = tool.mcp_tool();
        assert_eq!(mcp["inputSchema"], tool.parameters);
        assert!(!tool.description.trim().is_empty(), "{}", tool.name);
    }
}

#[test]
fn strict_tool_parameters_still_read_what_the_types_read() {
    use memory_protocol::goal::{CreateGoalArgs, UpdateGoalArgs};
    // A strict schema requires every key; the value `null` for an optional field must still
    // deserialize, or a model following the schema would send arguments we reject.
    let create: CreateGoalArgs =
        serde_json::from_str(r#"{"objective": "ship it", "token_budget": null}"#).unwrap();
    assert_eq!(create.token_budget, None);
    let update: UpdateGoalArgs = serde_json::from_str(r#"{"status": "complete"}"#).unwrap();
    assert_eq!(serde_json::to_value(update).unwrap()["status"], "complete");
}

#[test]
fn memory_tool_outputs_are_objects_admitting_the_result_or_a_failure() {
    use memory_protocol::tools::memory_tools;
    let tools = memory_tools();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name).collect();
    assert_eq!(
        names,
        vec![
            "memory_status",
            "memory_list",
            "memory_read",
            "memory_search",
            "memory_note"
        ]
    );
    for tool in tools {
        let schema = tool.output_schema.unwrap();
        // MCP clients drop an output schema whose root is not an object.
        assert_eq!(schema["type"], "object", "{}", tool.name);
        let alternatives: Vec<&str> = schema["anyOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|alternative| alternative["$ref"].as_str().unwrap())
            .collect();
        assert_eq!(alternatives.len(), 2, "{}", tool.name);
        assert_eq!(alternatives[1], "#/$defs/MemoryToolFailure");
        for reference in alternatives {
            let name = reference.trim_start_matches("#/$defs/");
            assert!(schema["$defs"][name].is_object(), "{}: {name}", tool.name);
        }
        assert!(
            tool.description.contains("tell the user"),
            "{}: the model is told to tell the user about disabled or unavailable memory",
            tool.name
        );
    }
}

#[test]
fn strict_memory_tool_arguments_read_nulls_as_absent() {
    use memory_protocol::introspect::{MemoryReadRequest, MemorySearchRequest};
    let read: MemoryReadRequest = serde_json::from_str(
        r#"{"path": "MEMORY.md", "start_line": null, "end_line": null, "heading": null}"#,
    )
    .unwrap();
    assert_eq!(read.start_line, None);
    let search: MemorySearchRequest =
        serde_json::from_str(r#"{"query": "x", "path": null, "max_results": null}"#).unwrap();
    assert_eq!(search.max_results, None);
    assert!(serde_json::from_str::<MemorySearchRequest>(r#"{"query": "x", "extra": 1}"#).is_err());
}
