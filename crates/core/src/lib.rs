//! Protocol-free mechanisms shared by the `copilot-bridge` and `openclaw-memory` MCP servers:
//! configuration, permission policy, secret redaction, path confinement, audit logging, call
//! depth (cycle) detection and retry classification. Nothing here speaks MCP, ACP or the network.
#![deny(missing_docs)]

pub mod audit;
pub mod check;
pub mod config;
pub mod confine;
pub mod depth;
pub mod logging;
pub mod orchestrator;
pub mod policy;
pub mod redact;
pub mod retry;
pub mod sync;
