//! The MCP face of the memory server: server identity, capabilities and the tool router.

use rmcp::ServerHandler;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};

/// Instructions sent to MCP clients in the `initialize` response.
const INSTRUCTIONS: &str = "Read-only access to what OpenClaw remembers: search and read its \
memory notes and the user's preferences. Nothing here writes.";

/// The `openclaw-memory` MCP server.
#[derive(Debug, Clone, Default)]
pub struct MemoryServer;

impl MemoryServer {
    /// Creates the server.
    pub fn new() -> Self {
        Self
    }
}

impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                env!("CARGO_PKG_NAME"),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }
}
