//! `agent-memory mcp` end to end: rmcp's own client spawns the binary, which finds the home's
//! goal store for `--thread`; the tools themselves are memory-mcp's (its tests call each one
//! over a pipe).

use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::json;

#[path = "../../../memory-mcp/tests/suite/harness.rs"]
pub(crate) mod harness;

use harness::{Client, MEMORY_TOOLS, call, home_with_memory, structured};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_thread_the_goal_tools_are_served_and_a_refusal_is_an_error() {
    let home = home_with_memory();
    let thread = "019a0000-0000-7000-8000-0000000000aa";
    let set = std::process::Command::new(env!("CARGO_BIN_EXE_agent-memory"))
        .args(["goal", "set", thread, "keep the docs build green", "--home"])
        .arg(home.path())
        .output()
        .unwrap();
    assert!(set.status.success(), "{set:?}");

    let transport = TokioChildProcess::new(
        tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-memory")).configure(|command| {
            command
                .arg("mcp")
                .arg("--home")
                .arg(home.path())
                .args(["--thread", thread]);
        }),
    )
    .unwrap();
    let client: Client = ().serve(transport).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    let mut expected = MEMORY_TOOLS.to_vec();
    expected.extend(["get_goal", "update_goal"]);
    assert_eq!(names, expected);

    let goal = call(&client, "get_goal", json!({})).await;
    assert_eq!(goal.is_error, Some(false));
    let goal = structured(&tools, "get_goal", &goal);
    assert_eq!(
        goal["goal"]["objective"], "keep the docs build green",
        "{goal}"
    );

    // One report of a blocker is not enough: refused (1/3), marked as an error, nothing changed.
    let refused = call(
        &client,
        "update_goal",
        json!({"status": "blocked", "reason": "the docs server is down"}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true));
    let refusal = refused.structured_content.clone().unwrap();
    assert_eq!(refusal["reportsSoFar"], 1, "{refusal}");
    let again = structured(
        &tools,
        "get_goal",
        &call(&client, "get_goal", json!({})).await,
    );
    assert_eq!(again["goal"]["status"], "active", "{again}");
    client.cancel().await.unwrap();
}
