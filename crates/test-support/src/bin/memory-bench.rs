//! Benchmarks `openclaw-memory` the way a client uses it: generates an OpenClaw workspace of
//! N dated notes (~2 KB each, default 5,000), spawns the real server, times the first search
//! (which builds the index), then many searches, and reads the server's peak RSS.
//!
//! Usage: `memory-bench [--notes N] [--queries Q] PATH/TO/openclaw-memory`

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

const WORDS: &[&str] = &[
    "deploy",
    "server",
    "invoice",
    "garden",
    "meeting",
    "postgres",
    "release",
    "backup",
    "laptop",
    "travel",
    "lisbon",
    "rust",
    "tokio",
    "budget",
    "doctor",
    "birthday",
    "kernel",
    "router",
    "coffee",
    "review",
    "design",
    "client",
    "contract",
    "schedule",
    "weather",
    "bicycle",
    "library",
    "concert",
    "dentist",
    "painting",
    "migration",
    "dashboard",
];
const QUERIES: &[&str] = &[
    "postgres migration",
    "lisbon travel",
    "invoice contract client",
    "birthday",
    "router kernel",
    "backup schedule server",
    "dentist appointment",
    "coffee meeting review",
    "budget laptop",
    "concert tickets",
    "tokio release",
    "garden weather painting",
];

fn main() -> anyhow::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut notes = 5_000_usize;
    let mut queries = 500_usize;
    while args.first().is_some_and(|a| a.starts_with("--")) {
        let flag = args.remove(0);
        let value: usize = args.first().context("flag needs a value")?.parse()?;
        args.remove(0);
        match flag.as_str() {
            "--notes" => notes = value,
            "--queries" => queries = value,
            _ => bail!("unknown flag {flag}"),
        }
    }
    let program = std::fs::canonicalize(args.first().context("usage: memory-bench BINARY")?)?;

    let home = tempfile::TempDir::new()?;
    let ws = home.path().join("workspace");
    generate(&ws, notes)?;

    let mut child = Command::new(&program)
        .env_clear()
        .env("HOME", home.path())
        .env("OPENCLAW_WORKSPACE_DIR", &ws)
        .env("COPILOT_AUDIT_LOG_DIR", home.path().join("audit"))
        .current_dir(home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let pid = child.id();
    let mut stdin = child.stdin.take().context("no stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().context("no stdout")?);
    let mut call = |id: usize, method: &str, params: &str| -> anyhow::Result<Duration> {
        let started = Instant::now();
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        )?;
        let mut line = String::new();
        loop {
            line.clear();
            if stdout.read_line(&mut line)? == 0 {
                bail!("the server closed stdout");
            }
            if line.contains(&format!(r#""id":{id}"#)) {
                break;
            }
        }
        if line.contains(r#""isError":true"#) || line.contains(r#""error""#) {
            bail!("call failed: {line}");
        }
        Ok(started.elapsed())
    };
    call(
        0,
        "initialize",
        r#"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}"#,
    )?;
    let search =
        |q: &str| format!(r#"{{"name":"openclaw_memory_search","arguments":{{"query":"{q}"}}}}"#);
    let first = call(1, "tools/call", &search(QUERIES[0]))?;
    let mut samples = Vec::with_capacity(queries);
    for i in 0..queries {
        samples.push(call(
            i + 2,
            "tools/call",
            &search(QUERIES[i % QUERIES.len()]),
        )?);
    }
    let rss_kib = std::fs::read_to_string(format!("/proc/{pid}/status"))?
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0);
    drop(stdin);
    child.wait()?;

    samples.sort_unstable();
    let pick = |q: usize| samples[(samples.len() - 1) * q / 100];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let mut out = String::new();
    writeln!(
        out,
        "| notes | first search (index build) ms | p50 ms | p99 ms | peak RSS MiB |"
    )?;
    writeln!(out, "|---|---|---|---|---|")?;
    #[expect(clippy::cast_precision_loss, reason = "a memory size in KiB")]
    let peak_mib = rss_kib as f64 / 1024.0;
    writeln!(
        out,
        "| {notes} | {:.1} | {:.2} | {:.2} | {peak_mib:.1} |",
        ms(first),
        ms(pick(50)),
        ms(pick(99)),
    )?;
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}

/// Writes `count` daily notes of about 2 KB plus MEMORY.md and USER.md, deterministically.
fn generate(ws: &std::path::Path, count: usize) -> anyhow::Result<()> {
    std::fs::create_dir_all(ws.join("memory"))?;
    std::fs::write(
        ws.join("MEMORY.md"),
        "# Memory\n\n- The build server is bluefin.\n",
    )?;
    std::fs::write(
        ws.join("USER.md"),
        "# USER.md\n\n- Prefers concise answers.\n",
    )?;
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for n in 0..count {
        let day = n % 28 + 1;
        let month = (n / 28) % 12 + 1;
        let year = 2010 + n / (28 * 12);
        let mut text = format!("# {year}-{month:02}-{day:02}\n\n");
        while text.len() < 2_000 {
            text.push_str("- ");
            for _ in 0..12 {
                #[expect(clippy::cast_possible_truncation, reason = "an index into WORDS")]
                let word = WORDS[(next() % WORDS.len() as u64) as usize];
                text.push_str(word);
                text.push(' ');
            }
            text.push('\n');
        }
        std::fs::write(
            ws.join(format!("memory/{year}-{month:02}-{day:02}-{n}.md")),
            text,
        )?;
    }
    Ok(())
}
