//! The smallest useful rmcp stdio server: one tool, no state. The cold-start benchmark starts it
//! in the same run as our servers and prints their ratio to it, so the machine's speed that day
//! cancels out.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};

/// Arguments of `echo`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

#[derive(Debug, Clone)]
struct Minimal {
    tool_router: rmcp::handler::server::router::tool::ToolRouter<Self>,
}

#[tool_router]
impl Minimal {
    /// Sends the text back.
    #[tool]
    #[expect(clippy::unused_self, reason = "rmcp tools are methods")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Minimal {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("minimal-mcp-server", "0"))
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let server = Minimal {
        tool_router: Minimal::tool_router(),
    };
    server
        .serve(rmcp::transport::stdio())
        .await?
        .waiting()
        .await?;
    Ok(())
}
