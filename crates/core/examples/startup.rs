//! Times what a server builds before it can answer MCP `initialize` (the core half of
//! `Envelope::from_config`: policy, audit log), then the first use of the lazily built parts.
//! Each run is a fresh process, so every `LazyLock` starts cold; run it several times:
//! `for i in $(seq 20); do target/release/examples/startup; done`.
#![expect(
    clippy::print_stdout,
    reason = "an example that prints its measurements"
)]

use std::path::Path;
use std::time::Instant;

use bridge_core::audit::AuditLog;
use bridge_core::policy::{ActionKind, Policy, PolicyRequest};
use bridge_core::redact::Redactor;

fn main() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let start = Instant::now();
    let policy = Policy::default();
    let audit = runtime.block_on(async { AuditLog::open(&home.path().join("audit"), "bench") })?;
    let to_initialize = start.elapsed();

    let start = Instant::now();
    let redacted = Redactor::shared().redact("token ghp_0123456789abcdefghijABCDEFGHIJ012345 here");
    let first_redact = start.elapsed();
    let start = Instant::now();
    let decision = policy.evaluate(&PolicyRequest {
        tool: "bash",
        kind: ActionKind::Execute,
        text: "ls -la",
        paths: &[],
        workspace: Some(Path::new("/")),
    });
    let first_policy = start.elapsed();
    drop((audit, redacted, decision));
    println!(
        "before_initialize_us={} first_redact_us={} first_policy_us={}",
        to_initialize.as_micros(),
        first_redact.as_micros(),
        first_policy.as_micros()
    );
    Ok(())
}
