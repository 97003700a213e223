//! `agent-memory mcp`: the memory tools served over MCP on stdin/stdout with the `rmcp` SDK.
//!
//! Every tool is listed with the input and output schemas of the tool registry
//! (`agent_memory::protocol::tools`). A tool's result is `structuredContent` (the result or,
//! with `isError: true`, the structured failure; its output schema admits both), with the same
//! JSON as text content for clients that read only text. An unknown tool is a protocol error.
//!
//! With `--thread THREAD` it also serves that thread's goal tools (`get_goal`, `update_goal`)
//! from the home's goal store, answered exactly as `agent-memory goal update` answers: a refusal
//! is a structured error (`isError: true`). Without a thread no goal tool is listed, so a model
//! never sees a tool that always fails.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use agent_memory::goals::{GoalStore, GoalToolContext, GoalToolOutcome};
use agent_memory::introspect::{Introspector, ToolOutcome};
use agent_memory::protocol::introspect::MemoryToolFailure;
use agent_memory::protocol::tools::{GET_GOAL_TOOL, UPDATE_GOAL_TOOL, goal_tools};
use anyhow::Context;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use super::goal::open_at;
use super::home::{resolve_home, runtime};
use super::memory::{MemoryArgs, open_memory, report_error};

/// What the server tells a client about itself at initialization.
const INSTRUCTIONS: &str = "agent-memory: the user's long-term memory from past sessions. \
    Search it (memory_search) before answering about past work, decisions or preferences; \
    memory_status says where memory stands. If a call fails with disabled or unavailable set, \
    tell the user: missing memory then says nothing about what they said before.";

/// Arguments of `agent-memory mcp`. It speaks JSON-RPC on stdout, so `--json` changes nothing.
#[derive(Debug, clap::Args)]
pub(crate) struct McpArgs {
    #[command(flatten)]
    memory: MemoryArgs,
    /// Also serve this thread's goal tools (`get_goal`, `update_goal`).
    #[arg(long, value_name = "THREAD")]
    thread: Option<String>,
}

pub(crate) fn run(args: McpArgs) -> ExitCode {
    match serve(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => report_error(&error),
    }
}

fn serve(args: &McpArgs) -> anyhow::Result<()> {
    let memory = open_memory(&args.memory)?;
    let goals = match &args.thread {
        Some(thread) => {
            let home = resolve_home(args.memory.home.as_deref())?;
            Some(ThreadGoals {
                thread: thread.clone(),
                store: Arc::new(Mutex::new(open_at(&home)?)),
            })
        }
        None => None,
    };
    let server = MemoryServer::new(memory, goals)?;
    runtime()?.block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .context("starting the MCP server on stdio")?;
        running.waiting().await.context("running the MCP server")?;
        Ok(())
    })
}

/// The goal tools of one thread.
struct ThreadGoals {
    thread: String,
    store: Arc<Mutex<GoalStore>>,
}

/// The MCP server of one home.
struct MemoryServer {
    memory: Arc<Introspector>,
    goals: Option<ThreadGoals>,
    tools: Vec<Tool>,
}

impl MemoryServer {
    fn new(memory: Introspector, goals: Option<ThreadGoals>) -> anyhow::Result<MemoryServer> {
        let goal_definitions = goal_tools()
            .into_iter()
            .filter(|definition| [GET_GOAL_TOOL, UPDATE_GOAL_TOOL].contains(&definition.name))
            .filter(|_| goals.is_some());
        let tools = memory
            .tool_definitions()
            .into_iter()
            .chain(goal_definitions)
            .map(|definition| {
                serde_json::from_value::<Tool>(definition.mcp_tool())
                    .with_context(|| format!("the MCP form of {}", definition.name))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(MemoryServer {
            memory: Arc::new(memory),
            goals,
            tools,
        })
    }

    /// Runs a goal tool on the thread's goal; a refusal is a structured error.
    async fn call_goal_tool(
        &self,
        name: String,
        arguments: Value,
    ) -> Result<CallToolResult, McpError> {
        let Some(goals) = &self.goals else {
            return Err(McpError::invalid_params(
                format!("unknown tool `{name}`"),
                None,
            ));
        };
        let (store, thread) = (Arc::clone(&goals.store), goals.thread.clone());
        let outcome = tokio::task::spawn_blocking(move || {
            let mut store = store
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            store.call_goal_tool(&GoalToolContext::thread(&thread), &name, &arguments)
        })
        .await
        .map_err(|error| McpError::internal_error(error.to_string(), None))?
        .map_err(|error| McpError::internal_error(error.to_string(), None))?;
        Ok(match &outcome {
            GoalToolOutcome::Answered(_) => CallToolResult::structured(outcome.to_json()),
            GoalToolOutcome::Refused(_) => CallToolResult::structured_error(outcome.to_json()),
        })
    }
}

impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "agent-memory",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if !self.tools.iter().any(|tool| tool.name == name) {
            return Err(McpError::invalid_params(
                format!("unknown tool `{name}`"),
                None,
            ));
        }
        let arguments = request.arguments.map_or(Value::Null, Value::Object);
        if [GET_GOAL_TOOL, UPDATE_GOAL_TOOL].contains(&name.as_str()) {
            let arguments = if arguments.is_null() {
                Value::Object(serde_json::Map::new())
            } else {
                arguments
            };
            return Ok(self.call_goal_tool(name, arguments).await?.into());
        }
        let memory = Arc::clone(&self.memory);
        let tool = name.clone();
        // The tools read files and SQLite: off the async threads.
        let outcome = tokio::task::spawn_blocking(move || memory.call_tool(&tool, arguments))
            .await
            .map_err(|error| McpError::internal_error(error.to_string(), None))?;
        let result = match outcome {
            Some(ToolOutcome::Ok(value)) => CallToolResult::structured(value),
            Some(ToolOutcome::Failed(failure)) => {
                CallToolResult::structured_error(failure_value(&failure)?)
            }
            None => {
                return Err(McpError::invalid_params(
                    format!("unknown tool `{name}`"),
                    None,
                ));
            }
        };
        Ok(result.into())
    }
}

fn failure_value(failure: &MemoryToolFailure) -> Result<Value, McpError> {
    serde_json::to_value(failure).map_err(|error| McpError::internal_error(error.to_string(), None))
}
