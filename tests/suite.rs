//! One module per area under test.

mod acp_cli;
mod acp_harness;
mod acp_scripted;
mod config_examples;
mod stdio_servers;
