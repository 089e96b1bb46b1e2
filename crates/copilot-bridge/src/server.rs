//! The MCP face of the bridge: server identity, capabilities, the combined tool router, and the
//! state the tools share.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use bridge_core::config::Config;
use bridge_core::confine::Root;
use bridge_mcp::{ToolError, plain_input_schemas};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool_handler};

/// Instructions sent to MCP clients in the `initialize` response.
const INSTRUCTIONS: &str = "Delegates coding work to GitHub Copilot (the Copilot CLI over ACP) \
and reads, creates and lists files in the workspace. Every call is checked against the \
permission policy, redacted and audited; paths outside the workspace are refused.";

/// The `copilot-bridge` MCP server. Cheap to clone: clones share state.
#[derive(Debug, Clone)]
pub struct BridgeServer {
    shared: Arc<Shared>,
    tool_router: ToolRouter<Self>,
}

#[derive(Debug)]
struct Shared {
    config: Config,
    /// Where the workspace root is; opened on first use so a missing directory is reported to
    /// the caller of a file tool rather than stopping the server.
    workspace_path: PathBuf,
    workspace: OnceLock<Root>,
}

impl BridgeServer {
    /// Creates the server; `cwd` is the workspace root when the configuration names none.
    pub fn new(config: Config, cwd: PathBuf) -> Self {
        let workspace_path = config.workspace.clone().unwrap_or(cwd);
        let mut tool_router = Self::files_router();
        plain_input_schemas(&mut tool_router);
        Self {
            shared: Arc::new(Shared {
                config,
                workspace_path,
                workspace: OnceLock::new(),
            }),
            tool_router,
        }
    }

    /// The resolved configuration.
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// The tools this server offers, as listed to clients.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.tool_router.list_all()
    }

    /// The workspace root, opened on first use.
    pub(crate) fn workspace(&self) -> Result<Root, ToolError> {
        if let Some(root) = self.shared.workspace.get() {
            return Ok(root.clone());
        }
        let root = Root::open(&self.shared.workspace_path).map_err(|e| ToolError::model(&e))?;
        Ok(self.shared.workspace.get_or_init(|| root).clone())
    }
}

#[tool_handler(router = self.tool_router)]
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
