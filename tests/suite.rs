//! One module per area under test.

mod bridge_files;
mod config_examples;
mod stdio_servers;
