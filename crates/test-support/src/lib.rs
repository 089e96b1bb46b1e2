//! Helpers shared by the workspace's tests: finding the built binaries and talking raw MCP
//! (JSON-RPC over NDJSON) to a spawned server. Panicking on a broken test setup is the point here.
#![expect(
    clippy::expect_used,
    reason = "test helpers fail the test loudly on a broken setup"
)]

/// Locating the workspace's binaries from a test executable.
mod binaries;
/// The real Copilot CLI as a test peer: scratch home, workspace and BYOK environment.
mod copilot;
/// A spawned MCP server driven line by line over stdio.
mod mcp_process;
/// The scripted OpenAI-compatible model server.
mod model_server;
/// A real OpenClaw gateway, one at a time.
mod openclaw_gateway;
/// Locating the external test peers installed by `scripts/peers.sh`.
mod peers;

pub use crate::binaries::binary_path;
pub use crate::copilot::{ACP_ARGS, BYOK_API_KEY, CopilotBed};
pub use crate::mcp_process::{McpProcess, READ_TIMEOUT};
pub use crate::model_server::{MODEL_ID, ModelServer, RecordedRequest, Reply, UNSCRIPTED_REPLY};
pub use crate::openclaw_gateway::{GATEWAY_TOKEN, OpenclawGateway, free_port, openclaw_command};
pub use crate::peers::{
    claude_code, codex, copilot_cli, embedding_model, openclaw, peer, peers_dir, python,
};
