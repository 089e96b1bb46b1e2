//! Measures cold start of a stdio MCP server: the time from spawning the process to reading its
//! `initialize` response, repeated, then prints a table (median, p90, min, max).
//!
//! Usage: `cold-start [--runs N] PROGRAM [ARGS…]`

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// Runs used when `--runs` is not given: enough for a stable median in about a second.
const DEFAULT_RUNS: usize = 50;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cold-start","version":"0"}}}"#;

fn main() -> anyhow::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = DEFAULT_RUNS;
    if args.first().map(String::as_str) == Some("--runs") {
        runs = args.get(1).context("--runs needs a number")?.parse()?;
        args.drain(..2);
    }
    let Some((program, rest)) = args.split_first() else {
        bail!("usage: cold-start [--runs N] PROGRAM [ARGS…]");
    };
    // The child runs in a scratch directory, so a relative program path must be made absolute.
    let program = &std::fs::canonicalize(program)
        .with_context(|| format!("no program at {program}"))?
        .to_string_lossy()
        .into_owned();
    let home = tempfile::TempDir::new()?;
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        samples.push(one_run(program, rest, home.path())?);
    }
    samples.sort_unstable();
    let pick = |q: f64| {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "an index into a short sample list"
        )]
        let i = ((samples.len() - 1) as f64 * q).round() as usize;
        samples[i]
    };
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let name = std::path::Path::new(program)
        .file_name()
        .map_or_else(|| program.clone(), |n| n.to_string_lossy().into_owned());
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "| server | runs | median ms | p90 ms | min ms | max ms |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    writeln!(
        out,
        "| {name} | {runs} | {:.2} | {:.2} | {:.2} | {:.2} |",
        ms(pick(0.5)),
        ms(pick(0.9)),
        ms(samples[0]),
        ms(samples[samples.len() - 1])
    )?;
    Ok(())
}

fn one_run(program: &str, args: &[String], home: &std::path::Path) -> anyhow::Result<Duration> {
    let start = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .env("HOME", home)
        .current_dir(home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot spawn {program}"))?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    writeln!(stdin, "{INITIALIZE}")?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().context("no stdout")?).read_line(&mut line)?;
    let elapsed = start.elapsed();
    if !line.contains("\"result\"") {
        bail!("{program} did not answer initialize: {line}");
    }
    drop(stdin);
    child.wait()?;
    Ok(elapsed)
}
