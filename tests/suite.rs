//! One module per area under test.

mod bridge_files;
mod bridge_hooks;
mod config_examples;
mod stdio_servers;
