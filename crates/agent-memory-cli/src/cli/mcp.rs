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
//!
//! On a shared store (`--store`, `AGENT_MEMORY_STORE` or `[store] url`) the server serves the
//! fleet's memory: it syncs the memory root at start, again before a memory tool when the last
//! sync is more than a few seconds old, and right after a saved note, so the note reaches the
//! other machines; goal tools act on the shared goals. A store it cannot reach is a warning,
//! and the server goes on with this machine's copy.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_memory::goals::{GoalStore, GoalToolContext, GoalToolOutcome};
use agent_memory::introspect::{Introspector, ToolOutcome};
use agent_memory::protocol::introspect::MemoryToolFailure;
use agent_memory::protocol::tools::{
    GET_GOAL_TOOL, MEMORY_NOTE_TOOL, UPDATE_GOAL_TOOL, goal_tools,
};
use agent_memory::write::memory_root::MemoryRoot;
use agent_memory::write::shared_root::sync_shared_root;
use agent_memory::write::store::SharedStore;
use anyhow::Context;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use super::exit::warn_safe;
use super::goal::open_at;
use super::home::{load_config, resolve_home, runtime};
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
    let home = resolve_home(args.memory.home.as_deref())?;
    let loaded = load_config(args.memory.config.as_deref(), &home)?;
    let selection = args.memory.store.selection(&loaded.store);
    let runtime = runtime()?;
    let shared = match &selection.url {
        Some(_) => match super::store::open(&runtime, &home, &selection) {
            Ok(store) => Some(SharedLink {
                store,
                root: MemoryRoot::under_home(&home),
                last_sync: tokio::sync::Mutex::new(None),
            }),
            // As the other memory commands do: serve this machine's copy.
            Err(error) => {
                warn_safe!(
                    "warning: cannot reach the shared store ({error:#}); serving this machine's copy"
                );
                None
            }
        },
        None => None,
    };
    if let Some(shared) = &shared {
        runtime.block_on(shared.sync(SyncWhen::Now));
    }
    let memory = open_memory(&args.memory)?;
    let goals = match &args.thread {
        Some(thread) => Some(ThreadGoals {
            thread: thread.clone(),
            store: Arc::new(Mutex::new(open_at(&home, &selection)?)),
        }),
        None => None,
    };
    // The goal store is dropped here, after the runtime: a PostgreSQL goal store's blocking
    // client closes its connection on drop, which tokio forbids on its async threads.
    let goal_store = goals.as_ref().map(|goals| Arc::clone(&goals.store));
    let server = MemoryServer::new(memory, goals, shared)?;
    let served = runtime.block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .context("starting the MCP server on stdio")?;
        running.waiting().await.context("running the MCP server")?;
        Ok(())
    });
    drop(goal_store);
    served
}

/// Longest a memory tool reads this machine's copy of a shared memory without asking the store
/// for a newer revision. A check is one query (and the notes), so it stays short.
const SHARED_SYNC_INTERVAL: Duration = Duration::from_secs(3);

/// This machine's link to a shared store: memory tools read the fleet's newest memory root,
/// and a note saved here is sent to the store before the call returns.
struct SharedLink {
    store: SharedStore,
    root: MemoryRoot,
    /// When the last sync finished; held during a sync, so concurrent calls wait for one.
    last_sync: tokio::sync::Mutex<Option<Instant>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SyncWhen {
    Now,
    /// Unless the last sync is younger than [`SHARED_SYNC_INTERVAL`].
    Due,
}

impl SharedLink {
    /// Syncs the memory root with the store; a failure is a warning on stderr (stdout is the
    /// protocol) and the tools go on with this machine's copy.
    async fn sync(&self, when: SyncWhen) {
        let mut last = self.last_sync.lock().await;
        if when == SyncWhen::Due && last.is_some_and(|at| at.elapsed() < SHARED_SYNC_INTERVAL) {
            return;
        }
        match sync_shared_root(self.store.as_ref(), &self.root).await {
            Ok(_) => *last = Some(Instant::now()),
            Err(error) => warn_safe!(
                "warning: cannot sync with the shared store ({error}); using this machine's copy"
            ),
        }
    }
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
    shared: Option<SharedLink>,
    tools: Vec<Tool>,
}

impl MemoryServer {
    fn new(
        memory: Introspector,
        goals: Option<ThreadGoals>,
        shared: Option<SharedLink>,
    ) -> anyhow::Result<MemoryServer> {
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
            shared,
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
        if let Some(shared) = &self.shared {
            shared.sync(SyncWhen::Due).await;
        }
        let memory = Arc::clone(&self.memory);
        let tool = name.clone();
        // The tools read files and SQLite: off the async threads.
        let outcome = tokio::task::spawn_blocking(move || memory.call_tool(&tool, arguments))
            .await
            .map_err(|error| McpError::internal_error(error.to_string(), None))?;
        if let Some(shared) = &self.shared
            && name == MEMORY_NOTE_TOOL
            && matches!(outcome, Some(ToolOutcome::Ok(_)))
        {
            shared.sync(SyncWhen::Now).await;
        }
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
