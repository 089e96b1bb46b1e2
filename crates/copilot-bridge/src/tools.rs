//! The bridge's MCP tools, one file per group, each with its own named router that
//! [`crate::server::BridgeServer`] combines.

/// `copilot_code_task`, `copilot_code`, `copilot_code_verbose`.
pub(crate) mod code;
/// `copilot_read_file`, `copilot_create_file`, `copilot_list_files`.
pub(crate) mod files;
/// `copilot_orchestrate`.
pub(crate) mod orchestrate;
