//! The MCP face of the memory server: identity, capabilities, the tool router, and the one
//! envelope every tool call passes through (depth check, redaction, audit).

use std::sync::Arc;
use std::time::Instant;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool_handler};

use crate::calls::{CallGuard, Outcome};
use crate::gateway::Gateway;
use crate::service::MemoryService;
use crate::tools::{TOOL_NAMES, plain_input_schemas};

/// Instructions sent to MCP clients in the `initialize` response.
const INSTRUCTIONS: &str = "Read-only access to what OpenClaw remembers: search and read its \
memory notes and the user's preferences. Nothing here writes.";

/// The `openclaw-memory` MCP server.
#[derive(Debug, Clone)]
pub struct MemoryServer {
    service: Arc<MemoryService>,
    gateway: Option<Gateway>,
    guard: Arc<CallGuard>,
    tool_router: ToolRouter<Self>,
}

impl MemoryServer {
    /// A server over `service`, searching through `gateway` when one is configured.
    pub fn new(service: Arc<MemoryService>, gateway: Option<Gateway>, guard: CallGuard) -> Self {
        let mut tool_router = Self::search_router() + Self::read_router() + Self::prefs_router();
        plain_input_schemas(&mut tool_router);
        Self {
            service,
            gateway,
            guard: Arc::new(guard),
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
        let started = Instant::now();
        let tool = request.name.to_string();
        if !self.tool_router.has_route(&tool) {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{tool}`; this server offers {}",
                    TOOL_NAMES.join(", ")
                ),
                None,
            ));
        }
        let arguments = request.arguments.clone().unwrap_or_default();
        if let Err(refusal) = self.guard.check_depth(&arguments) {
            let result = CallToolResult::error(vec![ContentBlock::text(refusal.clone())]);
            self.guard
                .record(&tool, &arguments, &Outcome::Denied(&refusal), started);
            return Ok(result.into());
        }
        let call = ToolCallContext::new(self, request, context);
        let mut response = self.tool_router.call(call).await;
        if let Ok(CallToolResponse::Complete(result)) = &mut response {
            if result.is_error == Some(true) {
                explain_argument_error(&tool, result);
            }
            self.guard.redact(result);
        }
        let outcome = match &response {
            Ok(CallToolResponse::Complete(result)) => Outcome::Result(result),
            Ok(_) => Outcome::Other,
            Err(error) => Outcome::ProtocolError(error),
        };
        self.guard.record(&tool, &arguments, &outcome, started);
        response
    }
}

/// rmcp reports arguments that do not deserialize as "failed to deserialize parameters: …";
/// name the tool and what it accepts so the model can fix the call.
fn explain_argument_error(tool: &str, result: &mut CallToolResult) {
    const PREFIX: &str = "failed to deserialize parameters: ";
    let accepted = match tool {
        "openclaw_memory_search" => {
            "query (string, required), limit (integer 1-50), _depth (integer)"
        }
        "openclaw_memory_read" => {
            "file (string, e.g. \"memory/2026-11-21.md\"), from (integer ≥ 1), lines (integer \
             1-2000), _depth (integer)"
        }
        _ => "profile (string), _depth (integer)",
    };
    for block in &mut result.content {
        if let ContentBlock::Text(text) = block
            && let Some(detail) = text.text.strip_prefix(PREFIX)
        {
            text.text = format!("invalid arguments for {tool}: {detail}. It accepts: {accepted}");
        }
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
            CallGuard::new(3, None),
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
