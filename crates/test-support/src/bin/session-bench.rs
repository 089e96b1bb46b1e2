//! Events through `copilot_session_live`: the scripted ACP agent writes message deltas, each
//! stamped with the wall-clock time it was written; a client reads them through the bridge
//! (rmcp's client over stdio, `live` polled back to back) and, in the same run, straight from
//! the agent over ACP (the baseline: what a client of the agent itself would see).
//!
//! Two loads: a flood (N deltas as fast as the agent can write them) measures throughput, where
//! latency is mostly time spent queued between polls; a trickle (one delta every few ms, so a
//! `live` call is always waiting) measures what the bridge adds to one event on its way. Prints
//! a markdown table: events/s and per-event latency (agent write → client read) p50/p99 for both
//! paths and both loads, and the bridge's added latency (the difference of the percentiles).
//!
//! Usage: `session-bench [--deltas N] [--runs R] BRIDGE AGENT`

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

/// Deltas streamed when `--deltas` is not given.
const DEFAULT_DELTAS: usize = 10_000;
/// Runs of each side when `--runs` is not given (the table shows the median run).
const DEFAULT_RUNS: usize = 5;
/// Deltas of the trickle, and the pause after each.
const TRICKLE: (usize, u64) = (300, 3);

/// One run's measurements.
#[derive(Debug, Clone)]
struct Run {
    events_per_s: f64,
    latencies_us: Vec<u64>,
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// The stamps of `i@micros;` pieces in a delta.
fn stamps(delta: &str) -> impl Iterator<Item = u64> + '_ {
    delta
        .split(';')
        .filter_map(|piece| piece.split_once('@')?.1.parse().ok())
}

#[expect(
    clippy::cast_precision_loss,
    reason = "event counts and microseconds far below 2^52"
)]
fn finish(received: &[u64], latencies_us: Vec<u64>, started: u64) -> Run {
    let last = received.iter().copied().max().unwrap_or(started);
    let seconds = (last.saturating_sub(started)).max(1) as f64 / 1e6;
    Run {
        events_per_s: latencies_us.len() as f64 / seconds,
        latencies_us,
    }
}

/// Through the bridge: start a session, query `STREAM n`, read `live` until `onIdle`.
async fn through_bridge(
    bridge: &str,
    agent: &str,
    prompt: &str,
    deltas: usize,
) -> anyhow::Result<Run> {
    let home = tempfile::TempDir::new()?;
    let work = home.path().join("work");
    std::fs::create_dir_all(&work)?;
    let mut command = tokio::process::Command::new(bridge);
    command
        .arg("--workspace")
        .arg(&work)
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("COPILOT_CLI_PATH", agent)
        .env("COPILOT_LOG_LEVEL", "warning")
        .env("COPILOT_AUDIT_LOG_DIR", home.path().join("audit"))
        .kill_on_drop(true);
    let client = ().serve(TokioChildProcess::new(command)?).await?;
    let call = |name: &str, arguments: Value| {
        let arguments: JsonObject = serde_json::from_value(arguments).unwrap_or_default();
        CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
    };
    let started = client
        .call_tool(call(
            "copilot_session_start",
            json!({"workingDirectory": work}),
        ))
        .await?;
    let id = started
        .structured_content
        .as_ref()
        .and_then(|v| v["sessionId"].as_str())
        .with_context(|| format!("no sessionId: {started:?}"))?
        .to_owned();
    let begin = now_us();
    client
        .call_tool(call(
            "copilot_session_query",
            json!({"sessionId": id, "prompt": prompt}),
        ))
        .await?;
    let mut latencies = Vec::with_capacity(deltas);
    let mut received = Vec::with_capacity(deltas);
    let deadline = Instant::now() + Duration::from_mins(2);
    'read: while Instant::now() < deadline {
        let result = client
            .call_tool(call(
                "copilot_session_live",
                json!({"sessionId": id, "waitMs": 5000, "maxEvents": 1000}),
            ))
            .await?;
        let now = now_us();
        let Some(events) = result
            .structured_content
            .as_ref()
            .and_then(|v| v["events"].as_array())
        else {
            continue;
        };
        for event in events {
            if event["callback"] == "onMessage" {
                for stamp in stamps(event["delta"].as_str().unwrap_or_default()) {
                    latencies.push(now.saturating_sub(stamp));
                    received.push(now);
                }
            }
            if event["callback"] == "onIdle" {
                break 'read;
            }
        }
    }
    if latencies.len() != deltas {
        bail!(
            "the bridge delivered {} of {deltas} deltas",
            latencies.len()
        );
    }
    client.cancel().await?;
    Ok(finish(&received, latencies, begin))
}

/// Straight from the agent over ACP, with a blocking line reader (no bridge in between).
fn direct(agent: &str, prompt: &str, deltas: usize) -> anyhow::Result<Run> {
    let work = tempfile::TempDir::new()?;
    let mut child = Command::new(agent)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    let mut lines = BufReader::new(child.stdout.take().context("no stdout")?).lines();
    let mut send = |message: Value| writeln!(stdin, "{message}");
    let mut answer = |id: i64| -> anyhow::Result<Value> {
        for line in lines.by_ref() {
            let message: Value = serde_json::from_str(&line?)?;
            if message["id"] == id {
                return Ok(message);
            }
        }
        bail!("the agent closed stdout")
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": 1, "clientCapabilities": {}}}))?;
    answer(1)?;
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
                "params": {"cwd": work.path(), "mcpServers": []}}))?;
    let session = answer(2)?["result"]["sessionId"].clone();
    let begin = now_us();
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
                "params": {"sessionId": session,
                           "prompt": [{"type": "text", "text": prompt}]}}),
    )?;
    let mut latencies = Vec::with_capacity(deltas);
    let mut received = Vec::with_capacity(deltas);
    for line in lines.by_ref() {
        let line = line?;
        let now = now_us();
        let message: Value = serde_json::from_str(&line)?;
        if message["id"] == 3 {
            break;
        }
        if let Some(text) = message["params"]["update"]["content"]["text"].as_str() {
            for stamp in stamps(text) {
                latencies.push(now.saturating_sub(stamp));
                received.push(now);
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    if latencies.len() != deltas {
        bail!("the agent delivered {} of {deltas} deltas", latencies.len());
    }
    Ok(finish(&received, latencies, begin))
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a short vector"
    )]
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

/// The run with the median rate.
fn median(mut runs: Vec<Run>) -> Run {
    runs.sort_by(|a, b| a.events_per_s.total_cmp(&b.events_per_s));
    runs.swap_remove(runs.len() / 2)
}

#[expect(clippy::print_stdout, reason = "a benchmark prints its table")]
#[expect(clippy::cast_precision_loss, reason = "microseconds")]
fn print_rows(load: &str, plain: &Run, bridged: &Run) {
    let mut b = bridged.latencies_us.clone();
    let mut p = plain.latencies_us.clone();
    b.sort_unstable();
    p.sort_unstable();
    let ms = |us: u64| us as f64 / 1000.0;
    let row = |path: &str, run: &Run, sorted: &[u64]| {
        println!(
            "| {load} | {path} | {:.0} | {:.3} | {:.3} |",
            run.events_per_s,
            ms(percentile(sorted, 0.5)),
            ms(percentile(sorted, 0.99))
        );
    };
    row("agent → client directly (baseline)", plain, &p);
    row("agent → bridge → `live` → client", bridged, &b);
    let added = |q: f64| ms(percentile(&b, q).saturating_sub(percentile(&p, q)));
    println!(
        "| {load} | the bridge's share | {:.2}x the baseline rate | +{:.3} | +{:.3} |",
        bridged.events_per_s / plain.events_per_s.max(1.0),
        added(0.5),
        added(0.99)
    );
}

#[tokio::main(flavor = "current_thread")]
#[expect(clippy::print_stdout, reason = "a benchmark prints its table")]
async fn main() -> anyhow::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut deltas = DEFAULT_DELTAS;
    let mut runs = DEFAULT_RUNS;
    while args.first().is_some_and(|a| a.starts_with("--")) {
        let value: usize = args.get(1).context("a flag needs a number")?.parse()?;
        match args[0].as_str() {
            "--deltas" => deltas = value,
            "--runs" => runs = value.max(1),
            other => bail!("unknown flag {other}"),
        }
        args.drain(..2);
    }
    let [bridge, agent] = args.as_slice() else {
        bail!("usage: session-bench [--deltas N] [--runs R] BRIDGE AGENT");
    };
    // The bridge runs in a scratch directory: give it absolute paths.
    let absolute = |path: &str| -> anyhow::Result<String> {
        Ok(std::fs::canonicalize(path)
            .with_context(|| format!("{path} not found"))?
            .display()
            .to_string())
    };
    let (bridge, agent) = (&absolute(bridge)?, &absolute(agent)?);
    println!("| load, median of {runs} runs | path | events/s | latency p50 (ms) | p99 (ms) |");
    println!("|---|---|---:|---:|---:|");
    let flood = format!("STREAM {deltas}");
    let trickle = format!("TRICKLE {} {}", TRICKLE.0, TRICKLE.1);
    for (load, prompt, count) in [
        (format!("flood, {deltas} deltas"), flood, deltas),
        (
            format!("trickle, {} deltas {} ms apart", TRICKLE.0, TRICKLE.1),
            trickle,
            TRICKLE.0,
        ),
    ] {
        let mut bridged = Vec::new();
        let mut plain = Vec::new();
        for _ in 0..runs {
            // Interleaved, so both paths see the same machine load.
            plain.push(direct(agent, &prompt, count)?);
            bridged.push(through_bridge(bridge, agent, &prompt, count).await?);
        }
        print_rows(&load, &median(plain), &median(bridged));
    }
    Ok(())
}
