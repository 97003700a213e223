//! The goal tools over MCP, driven by rmcp's own client: every structured result, answer or
//! refusal, validates against the output schema the tool declared; optional inputs may be
//! left out; and the server delimits turns so the blocked audit can pass.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use goal_steering::{GoalConfig, GoalStore, ManualClock, NewGoal};
use memory_introspect::{IntrospectConfig, Introspector};
use memory_mcp::{MemoryServer, ThreadGoals};
use rmcp::ServiceExt;
use rmcp::model::Tool;
use serde_json::{Value, json};

use super::harness::{Client, call, structured};

const THREAD: &str = "mcp-thread";
const BLOCKER: &str = "The staging database refuses our credentials; an operator must reset them.";

/// A client connected to a server serving `THREAD`'s goals on `store`, with the tool list it
/// was given.
struct Session {
    client: Client,
    tools: Vec<Tool>,
    _home: tempfile::TempDir,
}

impl Session {
    async fn start(store: Arc<Mutex<GoalStore>>) -> Session {
        let home = tempfile::tempdir().unwrap();
        let memory = Introspector::open(home.path(), IntrospectConfig::default()).unwrap();
        let goals = ThreadGoals::new(THREAD, store);
        let server = MemoryServer::new(memory, Some(goals), None).unwrap();
        let (client_end, server_end) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server_end);
        tokio::spawn(server.serve(server_read, server_write));
        let (client_read, client_write) = tokio::io::split(client_end);
        let client = ().serve((client_read, client_write)).await.unwrap();
        let tools = client.list_all_tools().await.unwrap();
        Session {
            client,
            tools,
            _home: home,
        }
    }

    /// Calls `tool`; returns (isError, structured content), the content validated against the
    /// tool's declared output schema and equal to the text content.
    async fn call(&self, tool: &str, arguments: Value) -> (bool, Value) {
        let result = call(&self.client, tool, arguments).await;
        let content = structured(&self.tools, tool, &result);
        (result.is_error == Some(true), content)
    }

    /// The input schema `tool` declared.
    fn input_schema(&self, tool: &str) -> Value {
        let declared = self.tools.iter().find(|t| t.name == tool).unwrap();
        Value::Object((*declared.input_schema).clone())
    }
}

fn store_on(clock: Arc<ManualClock>) -> Arc<Mutex<GoalStore>> {
    let store = GoalStore::open_in_memory(GoalConfig::default())
        .unwrap()
        .with_clock(clock);
    Arc::new(Mutex::new(store))
}

fn set_goal(store: &Mutex<GoalStore>, objective: &str) -> String {
    store
        .lock()
        .unwrap()
        .set_goal(
            THREAD,
            &NewGoal {
                objective: objective.to_owned(),
                token_budget: Some(50_000),
                replace: false,
                expected_goal_id: None,
            },
        )
        .unwrap()
        .goal_id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_goal_answer_and_refusal_validates_against_the_declared_schema() {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let store = store_on(clock);
    let session = Session::start(Arc::clone(&store)).await;
    let names: Vec<&str> = session.tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.contains(&"get_goal") && names.contains(&"update_goal"),
        "{names:?}"
    );
    // Optional inputs are optional: only the status is required.
    assert_eq!(
        session.input_schema("update_goal")["required"],
        json!(["status"])
    );

    let (failed, empty) = session.call("get_goal", json!({})).await;
    assert!(!failed);
    assert_eq!(empty["goal"], Value::Null);
    let (failed, no_goal) = session
        .call("update_goal", json!({"status": "complete"}))
        .await;
    assert!(failed);
    assert_eq!(no_goal["code"], "noGoal");

    let goal_id = set_goal(&store, "migrate the billing tables");
    let (_, got) = session.call("get_goal", json!({})).await;
    assert_eq!(got["goal"]["goalId"], goal_id.as_str());
    assert_eq!(got["remainingTokens"], 50_000);
    for (arguments, code) in [
        (json!({"status": "paused"}), "invalidArguments"),
        (json!({"status": "blocked"}), "reasonRequired"),
        (
            json!({"status": "blocked", "reason": BLOCKER}),
            "blockedAuditPending",
        ),
        (
            json!({"status": "blocked", "reason": BLOCKER}),
            "alreadyReportedThisTurn",
        ),
        (
            json!({"status": "complete", "goal_id": "an-old-goal"}),
            "staleGoal",
        ),
    ] {
        let (failed, refusal) = session.call("update_goal", arguments.clone()).await;
        assert!(failed, "{arguments}");
        assert_eq!(refusal["code"], code, "{refusal}");
        assert_eq!(refusal["retryable"], false);
    }
    let (failed, done) = session
        .call(
            "update_goal",
            json!({"status": "complete", "reason": "every table migrated"}),
        )
        .await;
    assert!(!failed, "{done}");
    assert_eq!(done["goal"]["status"], "complete");
    assert!(done["completionBudgetReport"].is_string(), "{done}");
    let (failed, again) = session
        .call("update_goal", json!({"status": "complete"}))
        .await;
    assert!(failed);
    assert_eq!(again["code"], "statusNotAllowed");
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_blocked_reports_across_three_turns_block_the_goal_over_mcp() {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let store = store_on(Arc::clone(&clock));
    set_goal(&store, "deploy the release to staging");
    let gap = GoalConfig::default().mcp_turn_gap;
    let session = Session::start(Arc::clone(&store)).await;
    let report = json!({"status": "blocked", "reason": BLOCKER});

    // Turn 1: the model reads the goal, works, reports, and retries within the turn.
    session.call("get_goal", json!({})).await;
    clock.advance(Duration::from_secs(2));
    let (_, first) = session.call("update_goal", report.clone()).await;
    assert_eq!(
        (first["code"].clone(), first["reportsSoFar"].clone()),
        (json!("blockedAuditPending"), json!(1))
    );
    clock.advance(Duration::from_secs(3));
    let (_, retry) = session.call("update_goal", report.clone()).await;
    assert_eq!(retry["code"], "alreadyReportedThisTurn");
    // get_goal inside the turn does not end it.
    session.call("get_goal", json!({})).await;
    let (_, retry) = session.call("update_goal", report.clone()).await;
    assert_eq!(retry["reportsSoFar"], 1, "{retry}");

    // Turn 2, after the thread was quiet for the gap.
    clock.advance(gap);
    let (_, second) = session.call("update_goal", report.clone()).await;
    assert_eq!(
        (second["code"].clone(), second["reportsSoFar"].clone()),
        (json!("blockedAuditPending"), json!(2))
    );

    // Turn 3.
    clock.advance(gap * 2);
    let (failed, third) = session.call("update_goal", report.clone()).await;
    assert!(!failed, "{third}");
    assert_eq!(third["goal"]["status"], "blocked");
    let (_, shown) = session.call("get_goal", json!({})).await;
    assert_eq!(shown["goal"]["status"], "blocked");
    assert_eq!(shown["goal"]["statusReason"], BLOCKER);
    session.client.cancel().await.unwrap();
}
