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
    let create: CreateGoalArgs = serde_json::from_str(r#"{"objective": "ship it"}"#).unwrap();
    assert_eq!(create.objective, "ship it");
    let update: UpdateGoalArgs =
        serde_json::from_str(r#"{"status": "complete", "reason": null}"#).unwrap();
    assert_eq!(update.reason, None);
    assert_eq!(serde_json::to_value(update).unwrap()["status"], "complete");
}
