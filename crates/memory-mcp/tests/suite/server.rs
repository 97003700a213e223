//! The server end to end over an in-process pipe: rmcp's own client initializes, lists the
//! tools and calls each one; every structured result validates against the tool's declared
//! output schema, and failures set `isError`.

use std::path::Path;

use memory_introspect::{IntrospectConfig, Introspector};
use memory_mcp::MemoryServer;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use super::harness::{Client, MEMORY_TOOLS, call, home_with_memory, listed_paths, structured};

/// The server over `home`'s memory (`enabled` as `[memories] use_memories`), on one end of a
/// pipe; the client on the other.
async fn connect_with(home: &Path, enabled: bool) -> Client {
    let config = IntrospectConfig {
        enabled,
        ..IntrospectConfig::default()
    };
    let server = MemoryServer::new(Introspector::open(home, config).unwrap(), None, None).unwrap();
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_end);
    tokio::spawn(server.serve(server_read, server_write));
    let (client_read, client_write) = tokio::io::split(client_end);
    ().serve((client_read, client_write)).await.unwrap()
}

async fn connect(home: &Path) -> Client {
    connect_with(home, true).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_mcp_client_initializes_lists_and_calls_every_memory_tool() {
    let home = home_with_memory();
    let client = connect(home.path()).await;
    let server = client.peer_info().unwrap();
    assert_eq!(server.server_info.as_ref().unwrap().name, "agent-memory");
    assert!(server.capabilities.tools.is_some());

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, MEMORY_TOOLS);
    for tool in &tools {
        assert!(tool.output_schema.is_some(), "{}", tool.name);
        let description = tool.description.as_deref().unwrap();
        assert!(description.contains("tell the user"), "{}", tool.name);
    }

    let status = call(&client, "memory_status", json!({})).await;
    assert_eq!(status.is_error, Some(false));
    let status = structured(&tools, "memory_status", &status);
    assert_eq!(status["state"], "ready");
    let root = std::path::absolute(home.path().join("memories")).unwrap();
    assert_eq!(
        status["root"],
        root.to_str().unwrap(),
        "the server computes the root the CLI and the block use"
    );

    let note = call(
        &client,
        "memory_note",
        json!({"text": "The release branch is cut on Thursdays.", "topic": "releases"}),
    )
    .await;
    assert_eq!(note.is_error, Some(false));
    let note = structured(&tools, "memory_note", &note);
    let path = note["path"].as_str().unwrap().to_owned();

    // Synchronous: the note is searchable and readable as soon as the call returns.
    let search = call(
        &client,
        "memory_search",
        json!({"query": "release branch Thursdays"}),
    )
    .await;
    let search = structured(&tools, "memory_search", &search);
    assert_eq!(search["hits"][0]["path"], path.as_str(), "{search}");
    let phrase = call(
        &client,
        "memory_search",
        json!({"query": "\"cargo nextest\""}),
    )
    .await;
    let phrase = structured(&tools, "memory_search", &phrase);
    assert_eq!(phrase["hits"][0]["path"], "MEMORY.md", "{phrase}");

    let read = call(&client, "memory_read", json!({"path": path})).await;
    let read = structured(&tools, "memory_read", &read);
    assert!(
        read["content"]
            .as_str()
            .unwrap()
            .contains("cut on Thursdays")
    );
    let section = call(
        &client,
        "memory_read",
        json!({"path": "MEMORY.md", "heading": "Tests"}),
    )
    .await;
    let section = structured(&tools, "memory_read", &section);
    assert!(section["content"].as_str().unwrap().contains("nextest"));

    let list = call(&client, "memory_list", json!({})).await;
    let list = structured(&tools, "memory_list", &list);
    let listed = listed_paths(&list);
    for expected in ["MEMORY.md", "memory_summary.md", "notes", path.as_str()] {
        assert!(listed.contains(&expected), "{expected} in {listed:?}");
    }

    // A path escaping the root: isError, with a structured failure the schema admits.
    let refused = call(&client, "memory_read", json!({"path": "../config.toml"})).await;
    assert_eq!(refused.is_error, Some(true));
    let refused = structured(&tools, "memory_read", &refused);
    assert_eq!(refused["unavailable"], false);
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("`..` is refused")
    );

    // Invalid input is a failure, never an empty result.
    let invalid = call(&client, "memory_search", json!({"query": 7})).await;
    assert_eq!(invalid.is_error, Some(true));
    let invalid = structured(&tools, "memory_search", &invalid);
    assert!(invalid.get("hits").is_none(), "{invalid}");

    // An unknown tool is a protocol error, not a tool result.
    let unknown = client
        .call_tool(CallToolRequestParams::new("memory_delete"))
        .await;
    assert!(unknown.is_err(), "{unknown:?}");

    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_memory_answers_every_call_with_a_disabled_failure() {
    let home = home_with_memory();
    let client = connect_with(home.path(), false).await;
    let tools = client.list_all_tools().await.unwrap();
    let status = call(&client, "memory_status", json!({})).await;
    let status = structured(&tools, "memory_status", &status);
    assert_eq!(status["state"], "disabled");
    for (tool, arguments) in [
        ("memory_search", json!({"query": "nextest"})),
        ("memory_read", json!({"path": "MEMORY.md"})),
        ("memory_list", json!({})),
        ("memory_note", json!({"text": "remember this"})),
    ] {
        let result = call(&client, tool, arguments).await;
        assert_eq!(result.is_error, Some(true), "{tool}");
        let failure = structured(&tools, tool, &result);
        assert_eq!(failure["disabled"], true, "{tool}: {failure}");
    }
    client.cancel().await.unwrap();
}

/// mem0 #2790: a request before `initialize` is answered at once with a plain "initialize
/// first" error (not a protocol error about `_meta`), and the connection stays open: the same
/// client then initializes and is served.
#[tokio::test]
async fn a_request_before_initialize_is_told_to_initialize_first_and_can_then_initialize() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let home = tempfile::tempdir().unwrap();
    let memory = Introspector::open(home.path(), IntrospectConfig::default()).unwrap();
    let server = MemoryServer::new(memory, None, None).unwrap();
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_end);
    tokio::spawn(server.serve(server_read, server_write));
    let (client_read, mut client_write) = tokio::io::split(client_end);
    let mut client_read = BufReader::new(client_read);
    client_write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{}}\n")
        .await
        .unwrap();
    client_write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"tools/list\"}\n")
        .await
        .unwrap();
    let mut line = String::new();
    client_read.read_line(&mut line).await.unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["id"], 41, "{answer}");
    assert_eq!(answer["error"]["code"], -32002, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("initialize first: `tools/list` came before"),
        "{message}"
    );

    let client = ().serve((client_read, client_write)).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), MEMORY_TOOLS.len());
}

/// basic-memory #1077: warnings were logged on the server and never shown to the MCP client.
/// How a query was read, and a listing cut at its cap, reach the client in the result, in the
/// structured content and in the text that mirrors it.
#[tokio::test]
async fn report_basic_memory_1077_warnings_reach_the_client_in_the_result() {
    let home = home_with_memory();
    let client = connect(home.path()).await;
    let tools = client.list_all_tools().await.unwrap();
    let search = call(
        &client,
        "memory_search",
        json!({"query": "what does the user run before pushing"}),
    )
    .await;
    let search = structured(&tools, "memory_search", &search);
    let warning = search["warning"].as_str().unwrap_or_default();
    assert!(
        warning.contains("common words left out: what does the"),
        "{search}"
    );
    for n in 0..501 {
        let path = home.path().join(format!("memories/notes/n{n:03}.md"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, format!("note {n}\n")).unwrap();
    }
    let listed = call(&client, "memory_list", json!({"path": "notes"})).await;
    let listed = structured(&tools, "memory_list", &listed);
    assert_eq!(listed["truncated"], true, "{listed}");
    assert!(
        listed["warning"]
            .as_str()
            .unwrap_or_default()
            .contains("only the first 500 entries are listed"),
        "{listed}"
    );
    client.cancel().await.unwrap();
}
