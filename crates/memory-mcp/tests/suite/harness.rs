//! The client side of the MCP tests: call a tool, and read its structured result checked
//! against the output schema the tool declared. memory-mcp's tests use it, and so does the
//! CLI's end-to-end test of `agent-memory mcp`, which includes this file by its path.

use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::RunningService;
use serde_json::Value;

/// The memory tools, in the order the server lists them.
pub(crate) const MEMORY_TOOLS: [&str; 5] = [
    "memory_status",
    "memory_list",
    "memory_read",
    "memory_search",
    "memory_note",
];

pub(crate) type Client = RunningService<RoleClient, ()>;

/// Calls `tool` with `arguments` (a JSON object).
pub(crate) async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .unwrap()
}

/// The structured content of `result`, checked against the output schema `tool` declared.
pub(crate) fn structured(tools: &[Tool], tool: &str, result: &CallToolResult) -> Value {
    let declared = tools
        .iter()
        .find(|candidate| candidate.name == tool)
        .unwrap();
    let schema = Value::Object(declared.output_schema.as_deref().cloned().unwrap());
    let content = result
        .structured_content
        .clone()
        .unwrap_or_else(|| panic!("{tool}: no structuredContent"));
    let validator = jsonschema::validator_for(&schema).unwrap();
    let problems: Vec<String> = validator
        .iter_errors(&content)
        .map(|error| format!("{} at {}", error, error.instance_path()))
        .collect();
    assert!(problems.is_empty(), "{tool}: {problems:?}\n{content}");
    // Clients that read only text get the same JSON.
    let text = result.content[0].as_text().unwrap().text.clone();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), content);
    content
}

/// The paths of the entries a listing answer holds (`memory_list`, `agent-memory list --json`).
pub(crate) fn listed_paths(list: &Value) -> Vec<&str> {
    list["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["path"].as_str().unwrap())
        .collect()
}

/// A home whose memory folder holds a handbook and a summary.
pub(crate) fn home_with_memory() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join("memories");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("MEMORY.md"),
        "# Handbook\n\n## Tests\n\nRun the suite with cargo nextest.\n",
    )
    .unwrap();
    std::fs::write(
        root.join("memory_summary.md"),
        "v1\n- The user prefers short commit messages.\n",
    )
    .unwrap();
    home
}
