//! Times what a server builds before it can answer MCP `initialize` (the core half of
//! `Envelope::from_config`: the policy, default or from a file, and the audit log), then the first
//! use of the parts now built lazily. Each run is a fresh process, so every lazy part starts cold;
//! run it several times: `for i in $(seq 30); do target/release/examples/startup; done`.
#![expect(
    clippy::print_stdout,
    reason = "an example that prints its measurements"
)]

use std::path::Path;
use std::time::Instant;

use bridge_core::audit::AuditLog;
use bridge_core::policy::{ActionKind, Policy, PolicyRequest};
use bridge_core::redact::Redactor;

/// A policy file like the documented example: a few globs and two blocked patterns.
const POLICY_FILE: &str = r#"
blocked_tools = ["web_fetch", "*-deploy"]
blocked_patterns = ['\bshutdown\b', '(?i)drop\s+table']
blocked_paths = ["**/.env", "**/*.pem"]
ask_tools = ["git-push"]
"#;

fn main() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let policy_path = home.path().join("policy.toml");
    std::fs::write(&policy_path, POLICY_FILE)?;
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;

    let start = Instant::now();
    let policy = Policy::default();
    let policy_default = start.elapsed();
    let start = Instant::now();
    let from_file = Policy::load(&policy_path)?;
    let policy_file = start.elapsed();
    let start = Instant::now();
    let audit = runtime.block_on(async { AuditLog::open(&home.path().join("audit"), "bench") })?;
    let audit_open = start.elapsed();

    let start = Instant::now();
    let redacted = Redactor::shared().redact("token ghp_0123456789abcdefghijABCDEFGHIJ012345 here");
    let first_redact = start.elapsed();
    let request = PolicyRequest {
        tool: "bash",
        kind: ActionKind::Execute,
        text: "ls -la",
        paths: &[],
        workspace: Some(Path::new("/")),
    };
    let start = Instant::now();
    let decision = policy.evaluate(&request);
    let first_policy = start.elapsed();
    let start = Instant::now();
    let file_decision = from_file.evaluate(&request);
    let first_file_policy = start.elapsed();
    drop((audit, redacted, decision, file_decision));
    println!(
        "policy_default_us={} policy_file_us={} audit_open_us={} first_redact_us={} \
         first_evaluate_default_us={} first_evaluate_file_us={}",
        policy_default.as_micros(),
        policy_file.as_micros(),
        audit_open.as_micros(),
        first_redact.as_micros(),
        first_policy.as_micros(),
        first_file_policy.as_micros()
    );
    Ok(())
}
