//! The one `ServerHandler` both servers run as. A server says who it is, hands over its tool
//! table and its envelope, and optionally how to interrupt and stop its own work; identity,
//! capabilities, tool listing and the enveloped call path are the same for both.

use std::future::Future;

use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ResultType, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

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

/// A [`ToolServer`] as an rmcp `ServerHandler`.
#[derive(Debug, Clone)]
pub struct McpServer<S>(pub S);

impl<S: ToolServer> ServerHandler for McpServer<S> {
    fn get_info(&self) -> ServerConfig {
        let identity = S::IDENTITY;
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(identity.name, identity.version))
            .with_instructions(identity.instructions)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let server = &self.0;
        let call = ToolCallContext::new(server, request, context);
        server.envelope().call(server.tool_table(), call).await
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
            tools: self.0.tool_table().tools(),
            meta: None,
            next_cursor: None,
            ttl_ms: cache_hints.then_some(0),
            cache_scope: cache_hints.then_some(CacheScope::Public),
        })
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.0.tool_table().router().get(name).cloned()
    }
}
