//! `copilot_read_file` round trips through the official MCP Rust SDK (`rmcp`'s client over the
//! child-process transport): the bridge's share of a read without a Python client's own work.
//! Prints one markdown table row (p50, p90, p99, max in ms).
//!
//! Usage: `read-bench [--runs N] BRIDGE`

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::transport::TokioChildProcess;

/// Reads timed when `--runs` is not given.
const DEFAULT_RUNS: usize = 2000;
/// Untimed reads first, to warm caches and the allocator.
const WARMUP: usize = 100;

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = DEFAULT_RUNS;
    if args.first().map(String::as_str) == Some("--runs") {
        runs = args.get(1).context("--runs needs a number")?.parse()?;
        args.drain(..2);
    }
    let [bridge] = args.as_slice() else {
        bail!("usage: read-bench [--runs N] BRIDGE");
    };
    let home = tempfile::TempDir::new()?;
    let work = home.path().join("work");
    std::fs::create_dir_all(&work)?;
    std::fs::write(
        work.join("notes.md"),
        "line of text for the benchmark\n".repeat(136),
    )?;

    let mut command = tokio::process::Command::new(bridge);
    command
        .arg("--workspace")
        .arg(&work)
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("COPILOT_LOG_LEVEL", "warning")
        .env("COPILOT_AUDIT_LOG_DIR", home.path().join("audit"))
        .kill_on_drop(true);
    let client = ().serve(TokioChildProcess::new(command)?).await?;
    let mut arguments = JsonObject::new();
    arguments.insert("path".into(), "notes.md".into());
    let mut samples: Vec<Duration> = Vec::with_capacity(runs);
    for i in 0..runs + WARMUP {
        let params =
            CallToolRequestParams::new("copilot_read_file").with_arguments(arguments.clone());
        let started = Instant::now();
        let result = client.call_tool(params).await?;
        let elapsed = started.elapsed();
        if result.is_error == Some(true) {
            bail!("the read failed: {result:?}");
        }
        if i >= WARMUP {
            samples.push(elapsed);
        }
    }
    client.cancel().await?;
    samples.sort_unstable();
    let pick = |q: f64| {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "an index into a few thousand samples"
        )]
        let at = ((samples.len() as f64 * q) as usize).min(samples.len() - 1);
        samples[at].as_secs_f64() * 1000.0
    };
    #[expect(clippy::print_stdout, reason = "a benchmark prints its table")]
    {
        println!(
            "| `copilot_read_file` round trip, 4 KiB, Rust SDK (rmcp) | {runs} | {:.3} | {:.3} | {:.3} | {:.3} |",
            pick(0.5),
            pick(0.9),
            pick(0.99),
            pick(1.0)
        );
    }
    Ok(())
}
