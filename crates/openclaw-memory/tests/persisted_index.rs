//! The persisted index through the real binary over stdio MCP: freshness across restarts and
//! while a server runs, damaged index files, permissions and a planted symlink, and eight
//! processes started at once building the index once.
//!
//! How the tests know which process built and which loaded: with
//! `RUST_LOG=openclaw_memory=debug`, the server logs "memory index built from scratch" or
//! "memory index loaded" (with the refresh's counts) on stderr when it opens the index at its
//! first search; every process here writes its stderr to its own file, which the tests read.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use anyhow::Context as _;
use serde_json::{Value, json};
use tempfile::TempDir;

const BUILT: &str = "memory index built from scratch";
const LOADED: &str = "memory index loaded";
/// A process that built the index switches to the file it saved (and then holds what a
/// process that loaded it would).
const SWITCHED: &str = "memory index switched to its saved file";
const QUERIES: &[&str] = &[
    "router",
    "lisbon travel",
    "passport expiry",
    "pasport",
    "dentist appointment",
    "bicycle repair",
    "quokka",
];
/// Bound on every answer: a debug build indexing a few notes answers in milliseconds.
const ANSWER_WAIT: Duration = Duration::from_mins(1);

/// One `openclaw-memory` process over stdio, killed when dropped.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    log: PathBuf,
    next_id: u64,
}

impl Server {
    /// Starts the server on workspace `ws` with its index kept in `state` (or, `None`, with no
    /// state directory at all: a fresh in-memory build, the reference answers).
    fn start(home: &Path, ws: &Path, state: Option<&Path>, log: &Path) -> anyhow::Result<Self> {
        Self::spawn(
            Command::new(env!("CARGO_BIN_EXE_openclaw-memory")),
            home,
            ws,
            state,
            log,
        )
    }

    /// [`Self::start`] with every file the server writes limited to `blocks` blocks of the
    /// shell's `ulimit -f` (a write past it fails with `EFBIG`, as on a full disk).
    fn start_with_file_limit(
        home: &Path,
        ws: &Path,
        state: &Path,
        log: &Path,
        blocks: u32,
    ) -> anyhow::Result<Self> {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(format!("trap '' XFSZ; ulimit -f {blocks}; exec \"$0\""))
            .arg(env!("CARGO_BIN_EXE_openclaw-memory"));
        Self::spawn(cmd, home, ws, Some(state), log)
    }

    fn spawn(
        mut cmd: Command,
        home: &Path,
        ws: &Path,
        state: Option<&Path>,
        log: &Path,
    ) -> anyhow::Result<Self> {
        cmd.env_clear()
            .env("HOME", home)
            .env("OPENCLAW_WORKSPACE_DIR", ws)
            .env("COPILOT_AUDIT_LOG_DIR", home.join("audit"))
            .env("RUST_LOG", "openclaw_memory=debug")
            .current_dir(home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log)?);
        if let Some(state) = state {
            cmd.env("OPENCLAW_MEMORY_STATE_DIR", state);
        }
        let mut child = cmd.spawn()?;
        let stdout = child.stdout.take().context("no stdout")?;
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Self {
            stdin: child.stdin.take(),
            child,
            lines,
            log: log.to_path_buf(),
            next_id: 0,
        };
        server.request(
            "initialize",
            &json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        )?;
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(server)
    }

    fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        let stdin = self.stdin.as_mut().context("stdin closed")?;
        writeln!(stdin, "{message}")?;
        stdin.flush()?;
        Ok(())
    }

    fn request(&mut self, method: &str, params: &Value) -> anyhow::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let line = match self.lines.recv_timeout(ANSWER_WAIT) {
                Ok(line) => line,
                Err(e) => anyhow::bail!("no answer to {method}: {e}; log: {}", self.log()),
            };
            let value: Value = serde_json::from_str(&line)?;
            if value["id"] == json!(id) {
                return Ok(value);
            }
        }
    }

    /// The hits of a search, whole (paths, lines, scores, snippets).
    fn search(&mut self, query: &str) -> anyhow::Result<Value> {
        let answer = self.request(
            "tools/call",
            &json!({"name": "openclaw_memory_search", "arguments": {"query": query}}),
        )?;
        let hits = answer["result"]["structuredContent"]["hits"].clone();
        anyhow::ensure!(hits.is_array(), "{answer}");
        Ok(hits)
    }

    fn answers(&mut self) -> anyhow::Result<Vec<Value>> {
        QUERIES.iter().map(|q| self.search(q)).collect()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Closes stdin, waits for the exit and returns the log.
    fn stop(mut self) -> anyhow::Result<String> {
        drop(self.stdin.take());
        for _ in 0..500 {
            if self.child.try_wait()?.is_some() {
                return Ok(self.log());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        anyhow::bail!("the server did not exit on EOF; log: {}", self.log());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ignored = self.child.kill();
        let _reaped = self.child.wait();
    }
}

/// A home with a workspace of a few notes, and paths for state and logs.
struct Fixture {
    home: TempDir,
    runs: usize,
}

impl Fixture {
    fn new() -> anyhow::Result<Self> {
        let home = TempDir::new()?;
        let fixture = Self { home, runs: 0 };
        let ws = fixture.ws();
        fixture.write("MEMORY.md", "# Memory\n\n- The router is a MikroTik hAP.\n")?;
        fixture.write(
            "memory/2026-02-20.md",
            "- Passport renewed; it expires 2036-02-11.\n",
        )?;
        fixture.write(
            "memory/2026-03-01.md",
            "- Travel to Lisbon next week for the conference.\n",
        )?;
        fixture.write(
            "memory/2026-03-02.md",
            "- Dentist appointment moved to Friday.\n",
        )?;
        assert!(ws.is_dir());
        Ok(fixture)
    }

    fn ws(&self) -> PathBuf {
        self.home.path().join("workspace")
    }

    fn state(&self) -> PathBuf {
        self.home.path().join("state")
    }

    fn write(&self, rel: &str, text: &str) -> anyhow::Result<()> {
        let path = self.ws().join(rel);
        std::fs::create_dir_all(path.parent().context("no parent")?)?;
        std::fs::write(path, text)?;
        Ok(())
    }

    fn log(&mut self) -> PathBuf {
        self.runs += 1;
        self.home.path().join(format!("server-{}.log", self.runs))
    }

    /// A server using the persisted index.
    fn server(&mut self) -> anyhow::Result<Server> {
        let log = self.log();
        Server::start(self.home.path(), &self.ws(), Some(&self.state()), &log)
    }

    /// The answers of a fresh build with no persisted index anywhere.
    fn fresh_answers(&mut self) -> anyhow::Result<Vec<Value>> {
        let log = self.log();
        let no_state = self.home.path().join("unused-state");
        let _absent = std::fs::remove_dir_all(&no_state);
        let mut server = Server::start(self.home.path(), &self.ws(), Some(&no_state), &log)?;
        let answers = server.answers()?;
        let log = server.stop()?;
        assert!(log.contains(BUILT), "{log}");
        std::fs::remove_dir_all(&no_state)?;
        Ok(answers)
    }

    /// The one index file in the state directory.
    fn index_file(&self) -> anyhow::Result<PathBuf> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(self.state())? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "index") {
                files.push(path);
            }
        }
        assert_eq!(files.len(), 1, "{files:?}");
        Ok(files.remove(0))
    }
}

fn count(log: &str, what: &str) -> usize {
    log.matches(what).count()
}

#[test]
fn a_restart_loads_the_index_and_sees_every_change_made_while_no_server_ran() -> anyhow::Result<()>
{
    let mut fx = Fixture::new()?;
    let mut first = fx.server()?;
    let before = first.answers()?;
    let log = first.stop()?;
    assert_eq!((count(&log, BUILT), count(&log, LOADED)), (1, 0), "{log}");
    // Its later searches read the saved file, and answer as the next process does (below).
    assert_eq!(count(&log, SWITCHED), 1, "{log}");
    assert!(fx.index_file()?.is_file());

    // Unchanged: loaded, nothing re-read, the same answers.
    let mut second = fx.server()?;
    assert_eq!(second.answers()?, before);
    let log = second.stop()?;
    assert_eq!((count(&log, BUILT), count(&log, LOADED)), (0, 1), "{log}");
    assert!(
        log.contains("indexed: 0, removed: 0, unchanged: 4"),
        "{log}"
    );

    // Edit two notes, add one, delete one, rename one into a new folder.
    std::thread::sleep(Duration::from_millis(20));
    fx.write(
        "MEMORY.md",
        "# Memory\n\n- The router is a Ubiquiti EdgeRouter X now.\n",
    )?;
    fx.write(
        "memory/2026-03-01.md",
        "- Travel to Lisbon postponed to autumn.        \n",
    )?;
    fx.write(
        "memory/2026-04-01.md",
        "- Bicycle repair: new chain and brake pads.\n",
    )?;
    std::fs::remove_file(fx.ws().join("memory/2026-03-02.md"))?;
    std::fs::create_dir_all(fx.ws().join("memory/sub"))?;
    std::fs::rename(
        fx.ws().join("memory/2026-02-20.md"),
        fx.ws().join("memory/sub/2026-02-20.md"),
    )?;

    let mut third = fx.server()?;
    let after = third.answers()?;
    let log = third.stop()?;
    assert_eq!((count(&log, BUILT), count(&log, LOADED)), (0, 1), "{log}");
    assert!(
        log.contains("indexed: 4, removed: 2, unchanged: 0"),
        "{log}"
    );
    assert_eq!(after, fx.fresh_answers()?);
    let text = serde_json::to_string(&after)?;
    assert!(
        text.contains("EdgeRouter") && !text.contains("MikroTik"),
        "{text}"
    );
    assert!(
        text.contains("memory/sub/2026-02-20.md") && text.contains("Bicycle"),
        "{text}"
    );
    assert!(
        !text.contains("Dentist") && !text.contains("next week"),
        "{text}"
    );

    // What the third process saved is what the fourth loads: nothing left to re-read.
    let mut fourth = fx.server()?;
    assert_eq!(fourth.answers()?, after);
    let log = fourth.stop()?;
    assert!(
        log.contains("indexed: 0, removed: 0, unchanged: 4"),
        "{log}"
    );
    Ok(())
}

#[test]
fn a_running_server_sees_changes_and_saves_them_for_the_next_process() -> anyhow::Result<()> {
    let mut fx = Fixture::new()?;
    let mut server = fx.server()?;
    server.answers()?;
    fx.write("memory/2026-04-01.md", "- Bicycle repair: new chain.\n")?;
    std::fs::remove_file(fx.ws().join("memory/2026-03-02.md"))?;
    let seen = server.answers()?;
    assert_eq!(seen, fx.fresh_answers()?);
    // Saved at the first search past the debounce.
    std::thread::sleep(Duration::from_millis(2_100));
    server.search("router")?;
    let log = server.stop()?;
    assert_eq!(count(&log, "memory index saved"), 2, "{log}");

    let mut next = fx.server()?;
    assert_eq!(next.answers()?, seen);
    let log = next.stop()?;
    assert!(
        log.contains("indexed: 0, removed: 0, unchanged: 4"),
        "{log}"
    );
    Ok(())
}

#[test]
fn a_build_that_cannot_write_its_files_answers_from_memory() -> anyhow::Result<()> {
    let mut fx = Fixture::new()?;
    for i in 0..300 {
        fx.write(
            &format!("memory/2025-02-01-{i}.md"),
            &format!(
                "# Log {i}\n\n- entry {i}: the greenhouse heater, invoice {i} and the kayak trip\n- \
                 follow-up {i}: call the plumber about the boiler and the garden hose\n"
            ),
        )?;
    }
    let expected = fx.fresh_answers()?;
    // 64 blocks (32 or 64 KiB): the build's temporary file, and then the index file itself,
    // outgrow it, as they would a full disk.
    let log = fx.log();
    let mut server =
        Server::start_with_file_limit(fx.home.path(), &fx.ws(), &fx.state(), &log, 64)?;
    assert_eq!(server.answers()?, expected);
    assert_eq!(server.answers()?, expected, "and it keeps answering");
    let log = server.stop()?;
    assert!(
        log.contains("could not write the notes out during the build"),
        "{log}"
    );
    assert!(log.contains("could not save the memory index"), "{log}");
    assert_eq!(count(&log, BUILT), 1, "{log}");
    Ok(())
}

/// Writes enough notes that a build takes a while (so processes started with it really wait),
/// and returns eight log files plus the home, workspace and state directory to start with.
fn eight_starts(fx: &mut Fixture) -> anyhow::Result<(Vec<PathBuf>, PathBuf, PathBuf, PathBuf)> {
    for i in 0..2_000 {
        fx.write(
            &format!("memory/2025-01-01-{i}.md"),
            &format!("- entry {i} about gardening, invoices and the weather\n"),
        )?;
    }
    let logs: Vec<PathBuf> = (0..8).map(|_| fx.log()).collect();
    Ok((logs, fx.home.path().to_path_buf(), fx.ws(), fx.state()))
}

#[test]
fn eight_processes_started_at_once_build_the_index_once() -> anyhow::Result<()> {
    let mut fx = Fixture::new()?;
    let (logs, home, ws, state) = eight_starts(&mut fx)?;
    let threads: Vec<_> = logs
        .into_iter()
        .map(|log| {
            let (home, ws, state) = (home.clone(), ws.clone(), state.clone());
            std::thread::spawn(move || -> anyhow::Result<(Vec<Value>, String)> {
                let mut server = Server::start(&home, &ws, Some(&state), &log)?;
                let answers = server.answers()?;
                Ok((answers, server.stop()?))
            })
        })
        .collect();
    let mut results: Vec<(Vec<Value>, String)> = Vec::new();
    for thread in threads {
        let joined = thread
            .join()
            .map_err(|_| anyhow::anyhow!("a server thread panicked"))?;
        results.push(joined?);
    }
    let all_logs: String = results.iter().map(|(_, log)| log.as_str()).collect();
    assert_eq!(count(&all_logs, BUILT), 1, "{all_logs}");
    assert_eq!(count(&all_logs, LOADED), 7, "{all_logs}");
    assert!(!all_logs.contains("building it in memory"), "{all_logs}");
    let reference = fx.fresh_answers()?;
    for (answers, log) in &results {
        assert_eq!(answers, &reference, "{log}");
    }
    Ok(())
}

#[test]
fn a_note_changed_while_eight_processes_start_is_seen_by_every_one() -> anyhow::Result<()> {
    // Processes that waited for another's build may skip listing the notes (when that build
    // was found unchanged after they began watching); a change made meanwhile, before, during
    // or after the build, must still reach every one of them by their next search.
    let mut fx = Fixture::new()?;
    let (logs, home, ws, state) = eight_starts(&mut fx)?;
    let changed = std::sync::Arc::new(std::sync::Barrier::new(9));
    let threads: Vec<_> = logs
        .into_iter()
        .map(|log| {
            let (home, ws, state) = (home.clone(), ws.clone(), state.clone());
            let changed = std::sync::Arc::clone(&changed);
            std::thread::spawn(move || -> anyhow::Result<(Value, String)> {
                let first = Server::start(&home, &ws, Some(&state), &log)
                    .and_then(|mut server| server.search("router").map(|_| server));
                // Every thread reaches the barrier, so a failed start cannot hang the others.
                changed.wait();
                let mut server = first?;
                let hits = server.search("zyxwvutsr")?;
                Ok((hits, server.stop()?))
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    fx.write(
        "memory/2026-03-01.md",
        "- Travel to Lisbon next week; the code word is zyxwvutsr.\n",
    )?;
    changed.wait();
    for thread in threads {
        let (hits, log) = thread
            .join()
            .map_err(|_| anyhow::anyhow!("a server thread panicked"))??;
        let text = serde_json::to_string(&hits)?;
        assert!(text.contains("memory/2026-03-01.md"), "{text}\n{log}");
    }
    Ok(())
}

#[test]
fn a_damaged_index_file_is_rebuilt_and_every_search_answers_as_a_fresh_build() -> anyhow::Result<()>
{
    let mut fx = Fixture::new()?;
    let reference = fx.fresh_answers()?;
    let mut server = fx.server()?;
    assert_eq!(server.answers()?, reference);
    server.stop()?;
    let good = std::fs::read(fx.index_file()?)?;
    let mut rng = fastrand::Rng::with_seed(0x15);
    for case in 0..100 {
        let mut damaged = good.clone();
        match case % 3 {
            0 => damaged.truncate(rng.usize(..good.len())),
            1 => {
                let at = rng.usize(..good.len());
                damaged[at] ^= 1 << rng.u8(..8);
            }
            _ => {
                for _ in 0..rng.usize(1..16) {
                    let at = rng.usize(..good.len());
                    damaged[at] = rng.u8(..);
                }
                if damaged == good {
                    damaged.pop();
                }
            }
        }
        std::fs::write(fx.index_file()?, &damaged)?;
        let mut server = fx.server()?;
        assert_eq!(server.answers()?, reference, "case {case}");
        let log = server.stop()?;
        assert_eq!(count(&log, BUILT), 1, "case {case}: {log}");
        assert!(
            std::fs::read(fx.index_file()?)? == good,
            "case {case}: the rebuilt index is saved again, byte for byte"
        );
    }
    Ok(())
}

#[test]
fn the_index_is_private_and_a_planted_symlink_is_refused() -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut fx = Fixture::new()?;
    let reference = fx.fresh_answers()?;
    let mut server = fx.server()?;
    server.answers()?;
    server.stop()?;
    let mode = |p: &Path| -> anyhow::Result<u32> {
        Ok(std::fs::metadata(p)?.permissions().mode() & 0o777)
    };
    let index = fx.index_file()?;
    assert_eq!(mode(&fx.state())?, 0o700);
    assert_eq!(mode(&index)?, 0o600);

    // Someone links the index file to a file of their choosing; here a valid index, which
    // would load if the link were followed (then the log would say "loaded").
    let bait = fx.home.path().join("bait.index");
    std::fs::copy(&index, &bait)?;
    std::fs::remove_file(&index)?;
    std::os::unix::fs::symlink(&bait, &index)?;
    let before = std::fs::read(&bait)?;

    let mut server = fx.server()?;
    assert_eq!(server.answers()?, reference);
    let log = server.stop()?;
    assert!(log.contains("not a regular file"), "{log}");
    assert_eq!(count(&log, BUILT), 1, "{log}");
    assert!(std::fs::symlink_metadata(&index)?.file_type().is_symlink());
    assert_eq!(
        std::fs::read(&bait)?,
        before,
        "the link's target is untouched"
    );
    Ok(())
}
