//! Every schema sent to a model, and every tool definition exported for hosts, stays inside the
//! strict subset.

use memory_protocol::StageOneOutput;
use memory_protocol::consolidation::ConsolidationOutput;
use memory_protocol::strict::violations;
use memory_protocol::tools::{all_tools, optional_fields_optional};
use memory_protocol::working_memory::WorkingMemoryUpdate;
use serde_json::Value;

/// Every output schema a library request carries, by the name of its type. A crate that sends a
/// new output schema adds it here.
fn model_output_schemas() -> Vec<(&'static str, Value)> {
    vec![
        ("StageOneOutput", StageOneOutput::output_schema()),
        ("ConsolidationOutput", ConsolidationOutput::output_schema()),
        ("WorkingMemoryUpdate", WorkingMemoryUpdate::output_schema()),
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
        assert_eq!(
            mcp["inputSchema"],
            optional_fields_optional(tool.parameters.clone())
        );
        assert!(!tool.description.trim().is_empty(), "{}", tool.name);
    }
}

/// The MCP form of `name`'s input schema.
fn mcp_input(name: &str) -> Value {
    let tool = all_tools()
        .into_iter()
        .find(|tool| tool.name == name)
        .unwrap_or_else(|| panic!("{name} is registered"));
    tool.mcp_tool()["inputSchema"].clone()
}

#[test]
fn mcp_input_schemas_require_only_what_the_tools_require() {
    // Strict mode lists every key in `required`; MCP clients read `required` literally, so an
    // optional argument listed there would be demanded of every caller.
    assert_eq!(
        mcp_input("update_goal")["required"],
        serde_json::json!(["status"])
    );
    assert_eq!(
        mcp_input("create_goal")["required"],
        serde_json::json!(["objective"])
    );
    assert_eq!(mcp_input("memory_list")["required"], serde_json::json!([]));
    assert_eq!(
        mcp_input("memory_read")["required"],
        serde_json::json!(["path"])
    );
    // The strict form still lists them, each admitting null.
    let strict = all_tools()
        .into_iter()
        .find(|tool| tool.name == "update_goal")
        .unwrap()
        .parameters;
    assert_eq!(
        strict["required"],
        serde_json::json!(["status", "goal_id", "reason"])
    );
}

#[test]
fn memory_list_depth_bounds_match_the_code() {
    let depth = &mcp_input("memory_list")["properties"]["depth"];
    assert_eq!(depth["minimum"], 1, "{depth}");
    assert_eq!(depth["maximum"], 6, "{depth}");
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

#[test]
fn update_working_memory_tool_and_model_output_share_one_schema() {
    use memory_protocol::working_memory::{
        SectionOp, UPDATE_TOOL_NAME, WorkingMemorySection, WorkingMemoryUpdate,
    };
    let tool = all_tools()
        .into_iter()
        .find(|tool| tool.name == UPDATE_TOOL_NAME)
        .expect("update_working_memory is registered");
    assert_eq!(tool.parameters, WorkingMemoryUpdate::output_schema());
    let sections = &tool.parameters["properties"]["sections"];
    let required: Vec<&str> = sections["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap())
        .collect();
    let headers: Vec<&str> = WorkingMemorySection::ALL
        .iter()
        .map(|s| s.header())
        .collect();
    assert_eq!(required, headers, "all seven sections, in document order");
    let shapes = sections["properties"]["Open Issues"]["anyOf"]
        .as_array()
        .unwrap();
    let ops: Vec<&str> = shapes
        .iter()
        .map(|shape| shape["properties"]["op"]["enum"][0].as_str().unwrap())
        .collect();
    assert_eq!(ops, ["KEEP", "UPDATE", "APPEND"]);
    // A document that follows each shape reads as the typed arguments.
    let mut value = serde_json::Map::new();
    for (i, header) in headers.iter().enumerate() {
        let op = match i % 3 {
            0 => serde_json::json!({"op": "KEEP"}),
            1 => serde_json::json!({"op": "UPDATE", "content": "body"}),
            _ => serde_json::json!({"op": "APPEND", "items": ["a", "b"]}),
        };
        value.insert((*header).to_owned(), op);
    }
    let update: WorkingMemoryUpdate =
        serde_json::from_value(serde_json::json!({"sections": value})).unwrap();
    assert_eq!(update.sections.session_title, SectionOp::Keep);
    assert_eq!(
        update.sections.current_state,
        SectionOp::Update {
            content: "body".into()
        }
    );
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
