//! One module per area under test.

mod bridge_files;
mod bridge_hooks;
mod bridge_redact;
mod config_examples;
mod stdio_servers;
