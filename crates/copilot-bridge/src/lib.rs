//! `copilot-bridge`: a stdio MCP server that lets any MCP client delegate coding work to the
//! GitHub Copilot CLI over the Agent Client Protocol, plus the command-line subcommands around it.
#![deny(clippy::print_stdout, clippy::print_stderr)]

/// The ACP client that drives the Copilot CLI.
pub mod acp;
/// Where a permission question goes when the policy says `ask`.
mod approval;
/// Command-line parsing and subcommand dispatch.
mod cli;
/// The subcommands for a person at a terminal: `exec`, `orchestrate`, `redact`, `validate`.
mod commands;
/// The flags every subcommand shares.
mod global_args;
/// An MCP client wired to the server in the same process (for the terminal subcommands).
mod in_process;
/// Long-lived Copilot sessions and their event queues (`copilot_session_*`).
mod live;
/// One delegated task → one finished Copilot turn.
mod runner;
/// The MCP server: identity, capabilities and tool routing.
mod server;
/// The session store behind `sessionId` continuation.
mod session_store;
/// The MCP tools, one file per group.
mod tools;

pub use crate::cli::{Cli, main_entry};
pub use crate::server::BridgeServer;
