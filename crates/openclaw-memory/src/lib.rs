//! `openclaw-memory`: read-only access to OpenClaw's memory files and user preferences as a
//! stdio MCP server. `copilot-bridge` adds it to every Copilot session it opens.
#![deny(clippy::print_stdout, clippy::print_stderr)]

/// Command-line parsing and dispatch.
mod cli;
/// The MCP server: identity, capabilities and tool routing.
mod server;

pub use crate::cli::{Cli, main_entry};
pub use crate::server::MemoryServer;
