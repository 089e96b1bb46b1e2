//! `openclaw-memory`: read-only access to OpenClaw's memory files and user preferences as a
//! stdio MCP server. `copilot-bridge` adds it to every Copilot session it opens.
#![deny(clippy::print_stdout, clippy::print_stderr)]

/// `openclaw-memory check`: what this server will see.
mod check;
/// Command-line parsing and dispatch.
mod cli;
/// Which embedding model the search uses, if any.
mod embeddings;
/// The local search index: chunking, tokenizing, BM25, freshness.
mod index;
/// Which paths are memory, and validating user-supplied ones.
mod paths;
/// The index saved between processes: where, atomically, under a lock.
mod persist;
/// `USER.md` directives.
mod prefs;
/// The freshness scan of a warm start, overlapping the index load.
mod scan;
/// The MCP server: identity, capabilities and tool routing.
mod server;
/// The workspace, index and store behind the tools.
mod service;
/// Confined, read-only access to the workspace's files.
mod store;
/// The MCP tools.
mod tools;
/// Event-driven freshness: skip the per-file scan when nothing changed.
mod watch;
/// Line windows of a file (`openclaw_memory_read`).
mod window;
/// Finding OpenClaw's workspace.
mod workspace;

pub use crate::cli::main_entry;
pub use crate::index::embedding::WordModel;
pub use crate::index::rank::RankOptions;
pub use crate::index::{LocalHit, MemoryIndex};
pub use crate::paths::parse_day;
pub use crate::store::MemoryStore;
