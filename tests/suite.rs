//! One module per area under test.

mod config_examples;
mod stdio_servers;
