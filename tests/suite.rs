//! One module per area under test.

mod acp_cli;
mod acp_harness;
mod acp_scripted;
mod bridge_code;
mod bridge_files;
mod bridge_hooks;
mod bridge_redact;
mod config_examples;
mod stdio_servers;
