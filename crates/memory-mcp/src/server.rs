//! The MCP server of one home: its tool list and how each call is answered.

use std::sync::{Arc, Mutex};

use goal_steering::{GapTurns, GoalStore, GoalToolContext, GoalToolOutcome};
use memory_introspect::{Introspector, ToolOutcome};
use memory_protocol::introspect::MemoryToolFailure;
use memory_protocol::tools::{GET_GOAL_TOOL, MEMORY_NOTE_TOOL, UPDATE_GOAL_TOOL, goal_tools};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::shared::{SharedLink, SyncWhen};
use crate::{Error, Result};

/// What the server tells a client about itself at initialization.
pub const INSTRUCTIONS: &str = "agent-memory: the user's long-term memory from past sessions. \
    Search it (memory_search) before answering about past work, decisions or preferences; \
    memory_status says where memory stands. If a call fails with disabled or unavailable set, \
    tell the user: missing memory then says nothing about what they said before.";

/// The goal tools of one thread.
///
/// The server remembers the id of the last goal it showed the client, and every `update_goal`
/// names it (unless the call names one itself): a late report meant for a goal the user has
/// since replaced is refused with the current goal instead of landing on it.
///
/// An MCP client reports no turns, so the server delimits them ([`GapTurns`]): a goal-tool
/// call that comes after a quiet gap of `[goals] mcp_turn_gap_seconds` (or the first of the
/// connection) starts a new goal turn, and the blocked audit counts one report per turn.
pub struct ThreadGoals {
    thread: String,
    store: Arc<Mutex<GoalStore>>,
    seen_goal_id: Mutex<Option<String>>,
    turns: Arc<Mutex<GapTurns>>,
}

impl ThreadGoals {
    /// The goal tools of `thread`, on `store`. The host keeps its own handle when the store
    /// must be dropped outside the server's async threads (a blocking client's connection).
    pub fn new(thread: impl Into<String>, store: Arc<Mutex<GoalStore>>) -> ThreadGoals {
        let gap = store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .config()
            .mcp_turn_gap;
        ThreadGoals {
            thread: thread.into(),
            store,
            seen_goal_id: Mutex::new(None),
            turns: Arc::new(Mutex::new(GapTurns::new(gap))),
        }
    }
}

impl std::fmt::Debug for ThreadGoals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadGoals")
            .field("thread", &self.thread)
            .finish_non_exhaustive()
    }
}

/// The MCP server of one home.
pub struct MemoryServer {
    memory: Arc<Introspector>,
    goals: Option<ThreadGoals>,
    shared: Option<SharedLink>,
    tools: Vec<Tool>,
}

impl std::fmt::Debug for MemoryServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryServer")
            .field("goals", &self.goals)
            .field("shared", &self.shared.is_some())
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

impl MemoryServer {
    /// The server over `memory`, with one thread's goal tools when `goals` is given and the
    /// fleet's memory when `shared` is.
    pub fn new(
        memory: Introspector,
        goals: Option<ThreadGoals>,
        shared: Option<SharedLink>,
    ) -> Result<MemoryServer> {
        let goal_definitions = goal_tools()
            .into_iter()
            .filter(|definition| [GET_GOAL_TOOL, UPDATE_GOAL_TOOL].contains(&definition.name))
            .filter(|_| goals.is_some());
        let tools = memory
            .tool_definitions()
            .into_iter()
            .chain(goal_definitions)
            .map(|definition| {
                serde_json::from_value::<Tool>(definition.mcp_tool()).map_err(|source| {
                    Error::ToolDefinition {
                        tool: definition.name,
                        source,
                    }
                })
            })
            .collect::<Result<_>>()?;
        Ok(MemoryServer {
            memory: Arc::new(memory),
            goals,
            shared,
            tools,
        })
    }

    /// Serves MCP on `reader` and `writer` until the client closes the connection.
    pub async fn serve<R, W>(self, reader: R, writer: W) -> Result<()>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        self.serve_on((reader, writer), "a stream").await
    }

    /// Serves MCP on stdin and stdout until the client closes the connection.
    pub async fn serve_stdio(self) -> Result<()> {
        self.serve_on(rmcp::transport::stdio(), "stdio").await
    }

    async fn serve_on<R, W>(self, transport: (R, W), name: &'static str) -> Result<()>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (reader, mut writer) = transport;
        let reader = crate::handshake::until_initialize(reader, &mut writer)
            .await
            .map_err(|source| Error::Handshake {
                transport: name,
                source,
            })?;
        let running = ServiceExt::serve(self, (reader, writer))
            .await
            .map_err(|source| Error::Start {
                transport: name,
                source: Box::new(source),
            })?;
        running.waiting().await.map_err(Error::Run)?;
        Ok(())
    }

    /// Runs a goal tool on the thread's goal; a refusal is a structured error.
    async fn call_goal_tool(
        &self,
        name: String,
        arguments: Value,
    ) -> std::result::Result<CallToolResult, McpError> {
        let Some(goals) = &self.goals else {
            return Err(unknown_tool(&name));
        };
        let (store, thread) = (Arc::clone(&goals.store), goals.thread.clone());
        let turns = Arc::clone(&goals.turns);
        let seen = goals
            .seen_goal_id
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let outcome = tokio::task::spawn_blocking(move || {
            let mut store = store
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            turns
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .before_call(&mut store, &thread)?;
            let context = GoalToolContext {
                thread_id: &thread,
                goal_id: seen.as_deref(),
            };
            store.call_goal_tool(&context, &name, &arguments)
        })
        .await
        .map_err(|error| McpError::internal_error(error.to_string(), None))?
        .map_err(|error| McpError::internal_error(error.to_string(), None))?;
        let shown = match &outcome {
            GoalToolOutcome::Answered(response) => response.goal.as_ref(),
            GoalToolOutcome::Refused(refusal) => refusal.goal.as_ref(),
        };
        if let Some(goal) = shown {
            *goals
                .seen_goal_id
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(goal.goal_id.clone());
        }
        Ok(match &outcome {
            GoalToolOutcome::Answered(_) => CallToolResult::structured(outcome.to_json()),
            GoalToolOutcome::Refused(_) => CallToolResult::structured_error(outcome.to_json()),
        })
    }
}

fn unknown_tool(name: &str) -> McpError {
    McpError::invalid_params(format!("unknown tool `{name}`"), None)
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
    ) -> std::result::Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if !self.tools.iter().any(|tool| tool.name == name) {
            return Err(unknown_tool(&name));
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
            None => return Err(unknown_tool(&name)),
        };
        Ok(result.into())
    }
}

fn failure_value(failure: &MemoryToolFailure) -> std::result::Result<Value, McpError> {
    serde_json::to_value(failure).map_err(|error| McpError::internal_error(error.to_string(), None))
}
