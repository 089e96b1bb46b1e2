//! `openclaw-memory`: read-only access to OpenClaw's memory files and user preferences as a
//! stdio MCP server. `copilot-bridge` adds it to every Copilot session it opens.
#![deny(clippy::print_stdout, clippy::print_stderr)]

/// `openclaw-memory check`: what this server will see.
mod check;
/// Command-line parsing and dispatch.
mod cli;
/// The OpenClaw gateway client (protocol v4).
pub mod gateway;
/// The local search index: chunking, tokenizing, BM25, freshness.
pub mod index;
/// Which paths are memory, and validating user-supplied ones.
pub mod paths;
/// `USER.md` directives.
pub mod prefs;
/// The MCP server: identity, capabilities and tool routing.
mod server;
/// The workspace, index and store behind the tools.
pub mod service;
/// Confined, read-only access to the workspace's files.
pub mod store;
/// The MCP tools.
pub mod tools;
/// Event-driven freshness: skip the per-file scan when nothing changed.
pub mod watch;
/// Line windows of a file (`openclaw_memory_read`).
pub mod window;
/// Finding OpenClaw's workspace.
pub mod workspace;

pub use crate::cli::{Cli, main_entry};
pub use crate::gateway::{Gateway, GatewaySettings};
pub use crate::index::{LocalHit, MemoryIndex};
pub use crate::server::MemoryServer;
pub use crate::service::{MemoryService, ServiceOptions};
