//! Logging setup shared by both servers: everything goes to stderr, because stdout carries the
//! MCP protocol.

use tracing_subscriber::EnvFilter;

/// Environment variable that overrides the log filter (`tracing` directive syntax).
pub const LOG_FILTER_ENV: &str = "RUST_LOG";

/// Installs a global `tracing` subscriber that writes plain text to stderr.
///
/// `default_filter` applies when `RUST_LOG` is unset or invalid. Calling this twice is harmless:
/// the second call leaves the first subscriber in place.
pub fn init_stderr(default_filter: &str) {
    let filter =
        EnvFilter::try_from_env(LOG_FILTER_ENV).unwrap_or_else(|_| EnvFilter::new(default_filter));
    let _already_set = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init();
}
