//! The one `ServerHandler` both servers run as. A server says who it is, hands over its tool
//! table and its envelope, and optionally how to interrupt and stop its own work; identity,
//! capabilities, tool listing, the enveloped call path and MCP tasks for long-running tools are
//! the same for both.

use std::future::Future;

use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, CreateTaskResult,
    GetTaskParams, GetTaskResult, Implementation, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ResultType, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio_util::sync::CancellationToken;

use crate::envelope::Envelope;
use crate::tool_table::ToolTable;

/// Who a server is, as told to clients and to a person who starts it by hand.
#[derive(Debug, Clone, Copy)]
pub struct Identity {
    /// The server's name (its package and binary name).
    pub name: &'static str,
    /// Its version.
    pub version: &'static str,
    /// Instructions sent to clients in the handshake.
    pub instructions: &'static str,
    /// What to tell a person who started the server at a terminal instead of from a client.
    pub orientation: &'static str,
}

/// A server built from a tool table whose calls pass through an envelope.
pub trait ToolServer: Clone + Send + Sync + 'static {
    /// Who the server is.
    const IDENTITY: Identity;

    /// Whether some tool is long-running (see `ToolSpec::long_running`): the server then offers
    /// the MCP tasks extension. A constant, so answering the handshake needs no tool table.
    const LONG_RUNNING_TOOLS: bool = false;

    /// The server's tools.
    fn tool_table(&self) -> &ToolTable<Self>;

    /// The envelope every call passes through.
    fn envelope(&self) -> &Envelope;

    /// Cancels running work so each caller gets its partial result now; returns how many pieces
    /// of work there were. Called when the server is asked to stop.
    fn interrupt(&self) -> usize {
        0
    }

    /// Stops whatever the server started (child processes, network links), within a bound of
    /// its own. Called once, after the protocol has stopped.
    fn shutdown(&self) -> impl Future<Output = ()> + Send {
        async {}
    }
}

/// How long a task and its result stay observable: delegated turns and orchestrations run for
/// minutes, and a client may poll late (rmcp's default is 5 minutes).
pub const TASK_TTL_MS: u64 = 60 * 60 * 1000;
/// How often a client is asked to poll a task.
pub const TASK_POLL_MS: u64 = 2_000;

/// A [`ToolServer`] as an rmcp `ServerHandler`.
#[derive(Clone)]
pub struct McpServer<S> {
    server: S,
    tasks: TaskManager,
}

impl<S: std::fmt::Debug> std::fmt::Debug for McpServer<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl<S: ToolServer> McpServer<S> {
    /// The handler of `server`.
    pub fn new(server: S) -> Self {
        Self {
            server,
            tasks: TaskManager::new(),
        }
    }

    /// Runs the call as an MCP task: the client gets the task at once and polls `tasks/get`;
    /// `tasks/cancel` cancels the call the way a client's cancellation does (the turn stops).
    fn spawn_task(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> CreateTaskResult {
        let server = self.server.clone();
        let options = TaskOptions::new()
            .with_ttl_ms(TASK_TTL_MS)
            .with_poll_interval_ms(TASK_POLL_MS);
        let task = self.tasks.spawn(options, move |task: TaskContext| {
            Box::pin(async move {
                // The request itself has been answered; only `tasks/cancel` stops the call now.
                let cancel = CancellationToken::new();
                context.ct = cancel.clone();
                let call = ToolCallContext::new(&server, request, context);
                let running = server.envelope().call(server.tool_table(), call);
                tokio::pin!(running);
                let response = tokio::select! {
                    response = &mut running => response,
                    () = task.cancelled() => {
                        cancel.cancel();
                        running.await
                    }
                };
                match response {
                    _ if task.is_cancel_requested() => Err(TaskExit::Cancelled),
                    Ok(CallToolResponse::Complete(result)) => Ok(result),
                    Ok(_) => Err(TaskExit::Error(ErrorData::internal_error(
                        "the tool asked for input, which a task cannot give it",
                        None,
                    ))),
                    Err(error) => Err(TaskExit::Error(error)),
                }
            })
        });
        CreateTaskResult::new(task)
    }
}

impl<S: ToolServer> ServerHandler for McpServer<S> {
    fn get_info(&self) -> ServerConfig {
        let identity = S::IDENTITY;
        let capabilities = if S::LONG_RUNNING_TOOLS {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(identity.name, identity.version))
            .with_instructions(identity.instructions)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let server = &self.server;
        let wants_task = context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks());
        if wants_task && server.tool_table().is_long_running(&request.name) {
            return Ok(CallToolResponse::Task(self.spawn_task(request, context)));
        }
        let call = ToolCallContext::new(server, request, context);
        server.envelope().call(server.tool_table(), call).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel_task(&request.task_id)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // As rmcp's own `tool_handler` answers: clients of 2026-07-28 and later get cache hints.
        let cache_hints = context
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        Ok(ListToolsResult {
            result_type: Some(ResultType::COMPLETE),
            tools: self.server.tool_table().tools(),
            meta: None,
            next_cursor: None,
            ttl_ms: cache_hints.then_some(0),
            cache_scope: cache_hints.then_some(CacheScope::Public),
        })
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.server.tool_table().router().get(name).cloned()
    }
}
