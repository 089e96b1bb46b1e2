//! The bridge's MCP tools, one file per group: each defines its `#[tool]` methods on
//! [`BridgeServer`](crate::server::BridgeServer), and the server's tool table lists them.

/// `copilot_code_task`, `copilot_code`, `copilot_code_verbose`.
pub(crate) mod code;
/// `copilot_read_file`, `copilot_create_file`, `copilot_list_files`.
pub(crate) mod files;
/// `copilot_orchestrate`.
pub(crate) mod orchestrate;
/// Tools that may ask a person, in rounds for MCP 2026-07-28 clients.
pub(crate) mod rounds;
/// `copilot_session_start`, `_query`, `_live`, `_stop`, `_list`.
pub(crate) mod session;
