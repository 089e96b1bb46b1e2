//! Measures cold start of stdio MCP servers: the time from spawning the process to reading its
//! `initialize` response. With several programs the runs are interleaved (one of each, then the
//! next round), so a machine that slows down mid-run slows all of them alike; with `--baseline`
//! each row also gives its median as a ratio to the baseline's, measured in the same run.
//!
//! Usage: `cold-start [--runs N] [--baseline PROGRAM] PROGRAM…`

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
    let mut baseline = None;
    loop {
        match args.first().map(String::as_str) {
            Some("--runs") => {
                runs = args.get(1).context("--runs needs a number")?.parse()?;
                args.drain(..2);
            }
            Some("--baseline") => {
                baseline = Some(args.get(1).context("--baseline needs a program")?.clone());
                args.drain(..2);
            }
            _ => break,
        }
    }
    if args.is_empty() {
        bail!("usage: cold-start [--runs N] [--baseline PROGRAM] PROGRAM…");
    }
    let mut programs = args;
    if let Some(baseline) = &baseline {
        programs.push(baseline.clone());
    }
    // The child runs in a scratch directory, so a relative program path must be made absolute.
    let programs = programs
        .iter()
        .map(|p| {
            std::fs::canonicalize(p)
                .with_context(|| format!("no program at {p}"))
                .map(|p| p.to_string_lossy().into_owned())
        })
        .collect::<anyhow::Result<Vec<String>>>()?;
    let home = tempfile::TempDir::new()?;
    let mut samples = vec![Vec::with_capacity(runs); programs.len()];
    for _ in 0..runs {
        for (program, samples) in programs.iter().zip(&mut samples) {
            samples.push(one_run(program, home.path())?);
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let medians: Vec<Duration> = samples
        .iter_mut()
        .map(|s| {
            s.sort_unstable();
            pick(s, 0.5)
        })
        .collect();
    let base = baseline.as_ref().and(medians.last().copied());
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "| server | runs | median ms | p90 ms | min ms | max ms | median ÷ baseline |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|---|")?;
    for ((program, samples), median) in programs.iter().zip(&samples).zip(&medians) {
        let name = std::path::Path::new(program)
            .file_name()
            .map_or_else(|| program.clone(), |n| n.to_string_lossy().into_owned());
        let ratio = base.map_or_else(String::new, |b| {
            format!("{:.2}", median.as_secs_f64() / b.as_secs_f64())
        });
        writeln!(
            out,
            "| {name} | {runs} | {:.2} | {:.2} | {:.2} | {:.2} | {ratio} |",
            ms(*median),
            ms(pick(samples, 0.9)),
            ms(samples[0]),
            ms(samples[samples.len() - 1])
        )?;
    }
    Ok(())
}

/// The `q` quantile of sorted `samples`.
fn pick(samples: &[Duration], q: f64) -> Duration {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a short sample list"
    )]
    let i = ((samples.len() - 1) as f64 * q).round() as usize;
    samples[i]
}

fn one_run(program: &str, home: &std::path::Path) -> anyhow::Result<Duration> {
    let start = Instant::now();
    let mut child = Command::new(program)
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
