//! The memory server as a [`ToolServer`]: its identity, its tool table, and what the tools
//! share (the workspace service and the optional gateway link). Every call passes through the
//! envelope (depth check, audit, redaction); the `ServerHandler` is `bridge_mcp::McpServer`.

use std::sync::{Arc, OnceLock};

use bridge_mcp::{Envelope, Identity, PolicyShape, ToolServer, ToolSpec, ToolTable};
use rmcp::handler::server::router::tool::ToolRoute;

use crate::service::MemoryService;
use openclaw_gateway::Gateway;

/// Who the memory server is.
pub(crate) const IDENTITY: Identity = Identity {
    name: env!("CARGO_PKG_NAME"),
    version: env!("CARGO_PKG_VERSION"),
    instructions: "Read-only access to what OpenClaw remembers: search and read its memory \
notes and the user's preferences. Nothing here writes.",
    orientation: "openclaw-memory is an MCP server: it speaks JSON-RPC on stdin/stdout, so an \
MCP client (copilot-bridge adds it to every Copilot session; OpenClaw, Claude Code, Codex and the \
Copilot CLI can register it) should start it, not a person.\n  Check what it sees:  \
openclaw-memory check\nPress Ctrl-C or Ctrl-D to quit.",
};

/// The `openclaw-memory` MCP server.
#[derive(Debug, Clone)]
pub struct MemoryServer {
    service: Arc<MemoryService>,
    gateway: Option<Gateway>,
    envelope: Arc<Envelope>,
    /// Built on first use (listing or calling a tool), not before the handshake.
    tools: Arc<OnceLock<ToolTable<Self>>>,
}

impl MemoryServer {
    /// A server over `service`, searching through `gateway` when one is configured; every call
    /// passes through `envelope` (depth, policy, audit, redaction).
    pub fn new(service: Arc<MemoryService>, gateway: Option<Gateway>, envelope: Envelope) -> Self {
        Self {
            service,
            gateway,
            envelope: Arc::new(envelope),
            tools: Arc::new(OnceLock::new()),
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
    #[cfg(test)]
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.tool_table().tools()
    }
}

/// Every tool of this server. They only read, and confine their own paths to the memory files,
/// so the policy sees each call as a read without paths.
fn table() -> ToolTable<MemoryServer> {
    type S = MemoryServer;
    ToolTable::new([
        ToolSpec::new(
            ToolRoute::new(S::memory_search_tool_attr(), S::memory_search),
            PolicyShape::read_only(),
        ),
        ToolSpec::new(
            ToolRoute::new(S::memory_read_tool_attr(), S::memory_read),
            PolicyShape::read_only(),
        ),
        ToolSpec::new(
            ToolRoute::new(S::user_prefs_tool_attr(), S::user_prefs),
            PolicyShape::read_only(),
        ),
    ])
}

impl ToolServer for MemoryServer {
    const IDENTITY: Identity = IDENTITY;

    fn tool_table(&self) -> &ToolTable<Self> {
        self.tools.get_or_init(table)
    }

    fn envelope(&self) -> &Envelope {
        &self.envelope
    }

    async fn shutdown(&self) {
        if let Some(gateway) = &self.gateway {
            gateway.shutdown().await;
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
            Envelope::new(
                bridge_mcp::EnvelopeSettings {
                    server: "openclaw-memory",
                    inherited_depth: Ok(bridge_core::depth::CallDepth::new(0)),
                    max_depth: 3,
                    policy: Arc::new(bridge_core::policy::Policy::default()),
                    workspace: None,
                    output_limit_bytes: 10 * 1024,
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

#[cfg(test)]
mod table_tests {
    #[test]
    fn every_tool_has_one_row_and_the_readme_documents_it() {
        let table = super::table();
        let readme = include_str!("../../../README.md");
        assert_eq!(table.names().len(), 3);
        assert_eq!(
            table.has_long_running(),
            <super::MemoryServer as bridge_mcp::ToolServer>::LONG_RUNNING_TOOLS
        );
        for name in table.names() {
            assert!(
                readme.contains(&format!("`{name}`")),
                "README.md does not document {name}"
            );
        }
    }
}
