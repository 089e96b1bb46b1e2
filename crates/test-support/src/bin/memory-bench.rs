//! Benchmarks `openclaw-memory` the way a client uses it: generates an OpenClaw workspace of
//! N dated notes (~2 KB each, default 5,000), spawns the real server, times the first search
//! (which builds the index and saves it), then many searches, and reads the server's peak RSS.
//! Then, in the same run: the warm first search (a fresh process with the index already on
//! disk), and with `--processes N`, N servers started at once on the same workspace with no
//! index on disk (the time until every one of them has answered its first search), each against
//! one cold process measured the same way.
//!
//! Usage: `memory-bench [--notes N] [--queries Q] [--processes N] [--vocabulary W]
//! [--embeddings DIR] PATH/TO/openclaw-memory`. With `--vocabulary W`, one word in four is drawn
//! from W made-up distinct words, so the index's vocabulary grows the way a real workspace's
//! does. With `--embeddings DIR`, the same run also measures the server with that embedding
//! model against words only: warm first search, searches whose words are in the notes, guesses
//! (queries whose words are not, where the lines closest in meaning are looked for), and peak
//! RSS, each with its ratio.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
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
/// Queries sharing no word with the notes: the search is a guess, and with an embedding model
/// every line is scored for closeness in meaning (the costliest search there is).
const GUESSES: &[&str] = &[
    "who looks after her teeth",
    "yearly vehicle inspection",
    "physician appointment",
    "holiday flight booking",
    "salary negotiation",
    "apartment lease renewal",
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

/// One server over stdio, killed when dropped.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: usize,
}

impl Server {
    /// Spawns the server on `ws` with its index kept under `state`, and initializes it.
    fn start(program: &Path, home: &Path, ws: &Path, state: &Path) -> anyhow::Result<Self> {
        Self::start_with(program, home, ws, state, "off")
    }

    /// [`Self::start`] with `OPENCLAW_MEMORY_EMBEDDINGS=embeddings`.
    fn start_with(
        program: &Path,
        home: &Path,
        ws: &Path,
        state: &Path,
        embeddings: &str,
    ) -> anyhow::Result<Self> {
        let mut child = Command::new(program)
            .env_clear()
            .env("OPENCLAW_MEMORY_EMBEDDINGS", embeddings)
            .env("HOME", home)
            .env("OPENCLAW_WORKSPACE_DIR", ws)
            .env("OPENCLAW_MEMORY_STATE_DIR", state)
            .env("COPILOT_AUDIT_LOG_DIR", home.join("audit"))
            .current_dir(home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("no stdout")?);
        let mut server = Self {
            child,
            stdin: Some(stdin),
            stdout,
            next_id: 0,
        };
        server.call(
            "initialize",
            r#"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}"#,
        )?;
        Ok(server)
    }

    fn call(&mut self, method: &str, params: &str) -> anyhow::Result<Duration> {
        self.next_id += 1;
        let id = self.next_id;
        let started = Instant::now();
        let stdin = self.stdin.as_mut().context("stdin closed")?;
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        )?;
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line)? == 0 {
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
    }

    fn search(&mut self, query: &str) -> anyhow::Result<Duration> {
        self.call(
            "tools/call",
            &format!(r#"{{"name":"openclaw_memory_search","arguments":{{"query":"{query}"}}}}"#),
        )
    }

    fn peak_rss_kib(&self) -> anyhow::Result<u64> {
        Ok(
            std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .unwrap_or(0),
        )
    }

    fn stop(mut self) -> anyhow::Result<()> {
        drop(self.stdin.take());
        self.child.wait()?;
        Ok(())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ignored = self.child.kill();
        let _reaped = self.child.wait();
    }
}

/// Spawn to first answer of `count` servers started at once on `ws` with an empty state
/// directory: the time until the last one has answered.
fn all_first_answers(
    program: &Path,
    home: &Path,
    ws: &Path,
    state: &Path,
    count: usize,
) -> anyhow::Result<Duration> {
    if state.exists() {
        std::fs::remove_dir_all(state)?;
    }
    let started = Instant::now();
    let threads: Vec<_> = (0..count)
        .map(|_| {
            let (program, home, ws, state) = (
                program.to_path_buf(),
                home.to_path_buf(),
                ws.to_path_buf(),
                state.to_path_buf(),
            );
            std::thread::spawn(move || -> anyhow::Result<Instant> {
                let mut server = Server::start(&program, &home, &ws, &state)?;
                server.search(QUERIES[0])?;
                let answered = Instant::now();
                server.stop()?;
                Ok(answered)
            })
        })
        .collect();
    let mut last = started;
    for thread in threads {
        let answered = thread
            .join()
            .map_err(|_| anyhow::anyhow!("a server thread panicked"))??;
        last = last.max(answered);
    }
    Ok(last - started)
}

/// The command line.
struct Options {
    notes: usize,
    queries: usize,
    processes: usize,
    vocabulary: usize,
    embeddings: Option<String>,
    program: PathBuf,
}

fn options() -> anyhow::Result<Options> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut o = Options {
        notes: 5_000,
        queries: 500,
        processes: 0,
        vocabulary: 0,
        embeddings: None,
        program: PathBuf::new(),
    };
    while args.first().is_some_and(|a| a.starts_with("--")) {
        let flag = args.remove(0);
        let value = args.first().context("flag needs a value")?.clone();
        args.remove(0);
        match flag.as_str() {
            "--notes" => o.notes = value.parse()?,
            "--queries" => o.queries = value.parse()?,
            "--processes" => o.processes = value.parse()?,
            "--vocabulary" => o.vocabulary = value.parse()?,
            "--embeddings" => o.embeddings = Some(value),
            _ => bail!("unknown flag {flag}"),
        }
    }
    o.program = std::fs::canonicalize(args.first().context("usage: memory-bench BINARY")?)?;
    Ok(o)
}

fn main() -> anyhow::Result<()> {
    let Options {
        notes,
        queries,
        processes,
        vocabulary,
        embeddings,
        program,
    } = options()?;
    let home = tempfile::TempDir::new()?;
    let ws = home.path().join("workspace");
    generate(&ws, notes, vocabulary)?;
    let state: PathBuf = home.path().join("state");

    // Cold: no index on disk; the first search builds and saves it.
    let mut server = Server::start(&program, home.path(), &ws, &state)?;
    let first = server.search(QUERIES[0])?;
    let mut samples = Vec::with_capacity(queries);
    for i in 0..queries {
        samples.push(server.search(QUERIES[i % QUERIES.len()])?);
    }
    let rss_kib = server.peak_rss_kib()?;
    server.stop()?;

    // Warm: a fresh process, the index on disk.
    let mut server = Server::start(&program, home.path(), &ws, &state)?;
    let warm = server.search(QUERIES[0])?;
    let warm_rss_kib = server.peak_rss_kib()?;
    server.stop()?;
    let index_bytes: u64 = std::fs::read_dir(&state)?
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "index"))
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum();

    samples.sort_unstable();
    let pick = |q: usize| samples[(samples.len() - 1) * q / 100];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    #[expect(clippy::cast_precision_loss, reason = "memory sizes in KiB and bytes")]
    let mib = |kib: u64| kib as f64 / 1024.0;
    let mut out = String::new();
    writeln!(
        out,
        "| notes | first search (index build) ms | p50 ms | p99 ms | peak RSS MiB |"
    )?;
    writeln!(out, "|---|---|---|---|---|")?;
    writeln!(
        out,
        "| {notes} | {:.1} | {:.2} | {:.2} | {:.1} |",
        ms(first),
        ms(pick(50)),
        ms(pick(99)),
        mib(rss_kib),
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "| notes | cold first search ms | warm first search ms | cold / warm | index file MiB | warm peak RSS MiB |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    writeln!(
        out,
        "| {notes} | {:.1} | {:.1} | {:.1}x | {:.1} | {:.1} |",
        ms(first),
        ms(warm),
        ms(first) / ms(warm),
        mib(index_bytes / 1024),
        mib(warm_rss_kib),
    )?;
    if processes > 0 {
        // Both measured the same way: spawn to first answer, no index on disk.
        let fresh = home.path().join("state-processes");
        let one = all_first_answers(&program, home.path(), &ws, &fresh, 1)?;
        let many = all_first_answers(&program, home.path(), &ws, &fresh, processes)?;
        writeln!(out)?;
        writeln!(
            out,
            "| notes | 1 cold process, spawn to first answer ms | {processes} processes at once, all answered ms | ratio |"
        )?;
        writeln!(out, "|---|---|---|---|")?;
        writeln!(
            out,
            "| {notes} | {:.1} | {:.1} | {:.2}x |",
            ms(one),
            ms(many),
            ms(many) / ms(one),
        )?;
    }
    if let Some(model) = embeddings {
        writeln!(out)?;
        with_model(
            &mut out,
            &program,
            home.path(),
            &ws,
            &state,
            &model,
            queries,
        )?;
    }
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}

/// One row of the model table: what it reads from a run.
type Measure<'a> = &'a dyn Fn(&Run) -> f64;

/// What one configuration measured with the index on disk.
struct Run {
    warm: Duration,
    matches: Vec<Duration>,
    guesses: Vec<Duration>,
    rss_kib: u64,
}

fn measure(
    program: &Path,
    home: &Path,
    ws: &Path,
    state: &Path,
    embeddings: &str,
    queries: usize,
) -> anyhow::Result<Run> {
    let mut server = Server::start_with(program, home, ws, state, embeddings)?;
    let warm = server.search(QUERIES[0])?;
    let (mut matches, mut guesses) = (Vec::new(), Vec::new());
    for i in 0..queries {
        matches.push(server.search(QUERIES[i % QUERIES.len()])?);
        guesses.push(server.search(GUESSES[i % GUESSES.len()])?);
    }
    let rss_kib = server.peak_rss_kib()?;
    server.stop()?;
    matches.sort_unstable();
    guesses.sort_unstable();
    Ok(Run {
        warm,
        matches,
        guesses,
        rss_kib,
    })
}

/// Words only against the embedding model in `model`, alternating three rounds each.
fn with_model(
    out: &mut String,
    program: &Path,
    home: &Path,
    ws: &Path,
    state: &Path,
    model: &str,
    queries: usize,
) -> anyhow::Result<()> {
    let model = std::fs::canonicalize(model)?.to_string_lossy().into_owned();
    let queries = queries.min(200);
    let mut runs: [Vec<Run>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..3 {
        runs[0].push(measure(program, home, ws, state, "off", queries)?);
        runs[1].push(measure(program, home, ws, state, &model, queries)?);
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = |values: &mut Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let pick = |samples: &[Duration], q: usize| ms(samples[(samples.len() - 1) * q / 100]);
    let row = |config: usize, measure: &dyn Fn(&Run) -> f64| -> f64 {
        median(&mut runs[config].iter().map(measure).collect())
    };
    #[expect(clippy::cast_precision_loss, reason = "memory sizes in KiB")]
    let rss = |r: &Run| r.rss_kib as f64 / 1024.0;
    let rows: [(&str, Measure<'_>); 6] = [
        ("warm first search ms", &|r| ms(r.warm)),
        ("p50 search, words in the notes ms", &|r| {
            pick(&r.matches, 50)
        }),
        ("p99 search, words in the notes ms", &|r| {
            pick(&r.matches, 99)
        }),
        ("p50 guess (no word in the notes) ms", &|r| {
            pick(&r.guesses, 50)
        }),
        ("p99 guess ms", &|r| pick(&r.guesses, 99)),
        ("peak RSS MiB", &rss),
    ];
    writeln!(
        out,
        "| measure (index on disk, median of 3 alternating runs) | words only | with the model | ratio |"
    )?;
    writeln!(out, "|---|---|---|---|")?;
    for (name, measure) in &rows {
        let (a, b) = (row(0, measure), row(1, measure));
        writeln!(out, "| {name} | {a:.2} | {b:.2} | {:.2}x |", b / a)?;
    }
    Ok(())
}

/// The `n`th made-up word: syllables spelled from its digits in base 20, so every `n` gives a
/// distinct word of letters only.
fn made_up_word(mut n: usize) -> String {
    const SYLLABLES: [&str; 20] = [
        "ka", "lo", "mi", "nu", "pe", "ra", "so", "ti", "vu", "we", "zo", "ba", "de", "fi", "gu",
        "ho", "ja", "ke", "ly", "mo",
    ];
    let mut word = String::from("q");
    loop {
        word.push_str(SYLLABLES[n % SYLLABLES.len()]);
        n /= SYLLABLES.len();
        if n == 0 {
            return word;
        }
    }
}

/// Writes `count` daily notes of about 2 KB plus MEMORY.md and USER.md, deterministically;
/// with a `vocabulary`, one word in four is one of that many made-up words.
fn generate(ws: &std::path::Path, count: usize, vocabulary: usize) -> anyhow::Result<()> {
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
            for i in 0..12 {
                let draw = next();
                #[expect(clippy::cast_possible_truncation, reason = "indexes into word lists")]
                if vocabulary > 0 && i % 4 == 3 {
                    text.push_str(&made_up_word((draw % vocabulary as u64) as usize));
                } else {
                    text.push_str(WORDS[(draw % WORDS.len() as u64) as usize]);
                }
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
