//! The MCP face of the bridge: server identity, capabilities and the tool router.

use rmcp::ServerHandler;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};

/// Instructions sent to MCP clients in the `initialize` response.
const INSTRUCTIONS: &str = "Delegates coding work to GitHub Copilot (the Copilot CLI over ACP). \
Every call is checked against the permission policy, redacted and audited.";

/// The `copilot-bridge` MCP server.
#[derive(Debug, Clone, Default)]
pub struct BridgeServer;

impl BridgeServer {
    /// Creates the server.
    pub fn new() -> Self {
        Self
    }
}

impl ServerHandler for BridgeServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                env!("CARGO_PKG_NAME"),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }
}
