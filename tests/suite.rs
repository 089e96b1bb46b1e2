//! One module per area under test.

mod acp_cli;
mod acp_harness;
mod acp_scripted;
mod bridge_approval;
mod bridge_approval_openclaw;
mod bridge_cli;
mod bridge_code;
mod bridge_files;
mod bridge_hooks;
mod bridge_memory_lookup;
mod bridge_orchestrate;
mod bridge_redact;
mod bridge_sessions;
mod bridge_shutdown;
mod bridge_tasks;
mod config_examples;
mod memory_audit;
mod memory_check;
mod memory_gateway;
mod memory_protocol;
mod memory_python;
mod openclaw_probe;
mod register_clients;
mod register_copilot_turn;
mod register_openclaw_turn;
mod stdio_servers;
