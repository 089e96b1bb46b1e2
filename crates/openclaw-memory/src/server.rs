//! The MCP face of the memory server: identity, capabilities, the tool router, and the one
//! envelope every tool call passes through (depth check, redaction, audit).

use std::sync::Arc;

use bridge_core::policy::ToolKind;
use bridge_mcp::{CallShape, Envelope, plain_input_schemas};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, JsonObject, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool_handler};

use crate::gateway::Gateway;
use crate::service::MemoryService;

/// Instructions sent to MCP clients in the `initialize` response.
const INSTRUCTIONS: &str = "Read-only access to what OpenClaw remembers: search and read its \
memory notes and the user's preferences. Nothing here writes.";

/// The `openclaw-memory` MCP server.
#[derive(Debug, Clone)]
pub struct MemoryServer {
    service: Arc<MemoryService>,
    gateway: Option<Gateway>,
    envelope: Arc<Envelope>,
    tool_router: ToolRouter<Self>,
}

impl MemoryServer {
    /// A server over `service`, searching through `gateway` when one is configured; every call
    /// passes through `envelope` (depth, policy, audit, redaction).
    pub fn new(service: Arc<MemoryService>, gateway: Option<Gateway>, envelope: Envelope) -> Self {
        let mut tool_router = Self::search_router() + Self::read_router() + Self::prefs_router();
        plain_input_schemas(&mut tool_router);
        Self {
            service,
            gateway,
            envelope: Arc::new(envelope),
            tool_router,
        }
    }

    /// The workspace service behind the tools.
    pub(crate) fn service(&self) -> &Arc<MemoryService> {
        &self.service
    }

    /// The gateway client, when gateway mode is on.
    pub(crate) fn gateway(&self) -> Option<&Gateway> {
        self.gateway.as_ref()
    }

    /// The tools this server offers, as listed to clients.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.tool_router.list_all()
    }
}

/// Every tool of this server only reads; paths are confined to the memory files by the tools
/// themselves, so the policy sees the call as a read without paths.
pub fn describe(_tool: &str, _arguments: &JsonObject) -> CallShape {
    CallShape {
        kind: ToolKind::Read,
        paths: Vec::new(),
    }
}

// `tool_handler` fills in `list_tools` and `get_tool` from the router; `call_tool` is ours.
#[tool_handler(router = self.tool_router)]
impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                env!("CARGO_PKG_NAME"),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let call = ToolCallContext::new(self, request, context);
        self.envelope.call(&self.tool_router, call).await
    }
}

#[cfg(test)]
mod tests {
    use bridge_core::config::EnvLayer;

    use super::*;
    use crate::service::ServiceOptions;

    #[test]
    fn input_schemas_are_plain_objects_without_null_defaults() {
        let server = MemoryServer::new(
            MemoryService::new(ServiceOptions::default(), EnvLayer::default()),
            None,
            Envelope::new(
                bridge_mcp::EnvelopeSettings {
                    server: "openclaw-memory",
                    inherited_depth: Ok(bridge_core::depth::CallDepth::new(0)),
                    max_depth: 3,
                    policy: Arc::new(bridge_core::policy::Policy::default()),
                    workspace: None,
                    output_limit_bytes: 10 * 1024,
                    describe,
                },
                bridge_core::audit::AuditLog::disabled(),
            ),
        );
        let tools = server.tools();
        assert_eq!(tools.len(), 3);
        for tool in tools {
            let schema = serde_json::Value::Object(tool.input_schema.as_ref().clone());
            assert_eq!(schema["type"], "object", "{}", tool.name);
            assert!(!schema.to_string().contains("\"default\":null"), "{schema}");
            assert_eq!(schema["properties"]["_depth"]["type"], "integer");
        }
    }
}
