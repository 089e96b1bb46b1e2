//! One module per area under test.

mod config_examples;
mod memory_protocol;
mod memory_python;
mod stdio_servers;
