//! A small scripted ACP agent for the faults the real Copilot CLI cannot be made to show:
//! garbage lines, requests it never answers, crashes at a chosen point, slow answers, and a
//! grandchild process left in its group.
//!
//! Usage: `scripted-acp-agent [OPTION]…`
//!
//! - `--crash-on METHOD`: exit with code 3 as soon as METHOD arrives (e.g. `initialize`).
//! - `--ignore METHOD`: never answer METHOD.
//! - `--garbage`: write a non-JSON line, a JSON line that is no JSON-RPC message, and an
//!   update of an unknown kind before every answer.
//! - `--delay-ms N`: wait N ms before every answer.
//! - `--grandchild`: start `sleep 300` in the agent's process group at startup.
//! - `--state FILE`: remember sessions in FILE, so a restarted agent can list and load them.
//! - `--no-load`: do not advertise `loadSession`.
//! - `--pid-file FILE`: write the agent's process id (also its process group id) to FILE.
//! - `--ignore-eof`: keep running after stdin closes (only a signal ends it then).
//! - `--stamp FILE`: after writing each `session/prompt` answer, append the wall-clock time
//!   (microseconds since the Unix epoch) to FILE, for measuring what happens after the turn.
//! - Unknown options starting with `--` that the bridge passes to the real CLI (`--acp`,
//!   `--stdio`, `--no-auto-update`, `--log-level X`, `--additional-mcp-config X`) are ignored,
//!   so the agent can stand in for the CLI behind `COPILOT_CLI_PATH`.
//!
//! Prompts choose the turn's behaviour by their text: `HANG` streams one chunk and waits for a
//! cancel; `CRASH` streams one chunk and exits with code 3; `KILLME` streams one chunk and kills
//! its own process group with SIGKILL; `PERMIT <path>` asks permission to edit `<path>` and says
//! what it got; `ASKFS` calls `fs/read_text_file` and reports the error code; `NOVEL` sends an
//! update of a kind no client knows; `THINK` streams two thought chunks, then a message;
//! `STREAM <n>` streams `n` message chunks, each `<i>@<micros since the epoch>;`, as fast as it
//! can, and `TRICKLE <n> <ms>` the same with a pause of `<ms>` after each (for measuring what
//! the bridge adds per event, in throughput and in latency). Only the last text block counts for these words. Every
//! other prompt is echoed back as `echo: <all text blocks>`.

#![expect(
    clippy::expect_used,
    reason = "a test agent: a poisoned lock or a broken state file should crash it loudly"
)]

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use serde_json::{Value, json};

#[derive(Debug, Default, Clone)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent command-line switches"
)]
struct Options {
    crash_on: Vec<String>,
    ignore: Vec<String>,
    garbage: bool,
    delay: Duration,
    grandchild: bool,
    state: Option<PathBuf>,
    no_load: bool,
    pid_file: Option<PathBuf>,
    ignore_eof: bool,
    stamp: Option<PathBuf>,
}

fn parse_options() -> anyhow::Result<Options> {
    let mut options = Options::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--crash-on" => options
                .crash_on
                .push(args.next().context("--crash-on METHOD")?),
            "--ignore" => options.ignore.push(args.next().context("--ignore METHOD")?),
            "--garbage" => options.garbage = true,
            "--delay-ms" => {
                options.delay =
                    Duration::from_millis(args.next().context("--delay-ms N")?.parse()?);
            }
            "--grandchild" => options.grandchild = true,
            "--state" => options.state = Some(args.next().context("--state FILE")?.into()),
            "--no-load" => options.no_load = true,
            "--pid-file" => options.pid_file = Some(args.next().context("--pid-file FILE")?.into()),
            "--ignore-eof" => options.ignore_eof = true,
            "--stamp" => options.stamp = Some(args.next().context("--stamp FILE")?.into()),
            "--acp" | "--stdio" | "--no-auto-update" => {}
            "--log-level" | "--additional-mcp-config" | "--model" | "--log-dir" => {
                let _ = args.next();
            }
            other => anyhow::bail!("unknown option {other}"),
        }
    }
    Ok(options)
}

/// Writes whole lines to stdout from any thread.
#[derive(Clone)]
struct Out(Arc<Mutex<std::io::Stdout>>);

impl Out {
    fn line(&self, line: &str) {
        let mut out = self.0.lock().expect("stdout lock");
        // A closed stdout means the client is gone; the read loop ends on EOF anyway.
        let _ = out.write_all(line.as_bytes());
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }

    fn send(&self, message: &Value) {
        self.line(&message.to_string());
    }
}

struct Agent {
    options: Options,
    out: Out,
    next_session: AtomicI64,
    next_request: AtomicI64,
    /// Sessions with a running turn: their cancel flags.
    running: Mutex<HashMap<String, Arc<AtomicBool>>>,
    /// Our requests to the client waiting for an answer.
    waiting: Mutex<HashMap<i64, Sender<Value>>>,
}

/// Appends the current wall-clock time in microseconds to `path`.
fn stamp(path: &std::path::Path) {
    let micros = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros());
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("stamp file");
    writeln!(file, "{micros}").expect("stamp write");
}

fn crash() -> ! {
    std::process::exit(3)
}

impl Agent {
    fn update(&self, session: &str, update: &Value) {
        self.out
            .send(&json!({"jsonrpc": "2.0", "method": "session/update",
                              "params": {"sessionId": session, "update": update}}));
    }

    fn chunk(&self, session: &str, text: &str) {
        self.update(
            session,
            &json!({"sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": text}}),
        );
    }

    fn answer(&self, id: &Value, result: Result<Value, (i64, String)>) {
        std::thread::sleep(self.options.delay);
        if self.options.garbage {
            self.out.line("this line is not JSON {");
            self.out
                .line(r#"{"jsonrpc":"2.0","note":"neither request nor response"}"#);
            self.out.line(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-0","update":{"sessionUpdate":"hologram","depth":3}}}"#);
        }
        let message = match result {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
        };
        self.out.send(&message);
    }

    /// Sends a request to the client and waits (bounded) for its answer.
    fn ask_client(&self, method: &str, params: &Value) -> Option<Value> {
        let id = self.next_request.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = channel();
        self.waiting.lock().expect("lock").insert(id, tx);
        self.out
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        rx.recv_timeout(Duration::from_secs(30)).ok()
    }

    fn sessions(&self) -> Vec<Value> {
        let Some(path) = &self.options.state else {
            return Vec::new();
        };
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    fn remember(&self, session: &str, cwd: &Value) {
        if let Some(path) = &self.options.state {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .expect("state file");
            let _ = writeln!(file, "{}", json!({"sessionId": session, "cwd": cwd}));
        }
    }

    fn prompt(self: &Arc<Self>, id: Value, params: &Value) {
        let session = params["sessionId"].as_str().unwrap_or_default().to_owned();
        let text: String = params["prompt"]
            .as_array()
            .map(|blocks| {
                blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        // Keywords count only in the last block: a bridge may put context blocks before it.
        let command = params["prompt"]
            .as_array()
            .and_then(|blocks| blocks.last())
            .and_then(|b| b["text"].as_str())
            .unwrap_or_default()
            .to_owned();
        let cancelled = Arc::new(AtomicBool::new(false));
        self.running
            .lock()
            .expect("lock")
            .insert(session.clone(), Arc::clone(&cancelled));
        let agent = Arc::clone(self);
        std::thread::spawn(move || {
            let stop = agent.turn(&session, &command, &text, &cancelled);
            agent.running.lock().expect("lock").remove(&session);
            agent.answer(
                &id,
                Ok(json!({"stopReason": stop,
                          "usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}})),
            );
            if let Some(path) = &agent.options.stamp {
                stamp(path);
            }
        });
    }

    fn turn(
        &self,
        session: &str,
        command: &str,
        text: &str,
        cancelled: &AtomicBool,
    ) -> &'static str {
        if command.contains("HANG") {
            self.chunk(session, "working on it ");
            while !cancelled.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10));
            }
            return "cancelled";
        }
        if command.contains("CRASH") {
            self.chunk(session, "about to fail ");
            crash();
        }
        if command.contains("KILLME") {
            self.chunk(session, "about to be killed ");
            let _ = std::process::Command::new("kill")
                .args(["-9", "--", &format!("-{}", std::process::id())])
                .status();
            crash();
        }
        if let Some(rest) = command.split("PERMIT ").nth(1) {
            let path = rest.split_whitespace().next().unwrap_or_default();
            self.update(
                session,
                &json!({"sessionUpdate": "tool_call", "toolCallId": "call_1",
                        "title": format!("Creating {path}"), "kind": "edit", "status": "pending",
                        "locations": [{"path": path}]}),
            );
            let answer = self.ask_client(
                "session/request_permission",
                &json!({"sessionId": session,
                       "toolCall": {"toolCallId": "call_1", "title": "Create file", "kind": "edit",
                                    "status": "pending", "rawInput": {"fileName": path},
                                    "locations": [{"path": path}]},
                       "options": [
                           {"optionId": "allow_once", "kind": "allow_once", "name": "Allow once"},
                           {"optionId": "allow_always", "kind": "allow_always", "name": "Always allow"},
                           {"optionId": "reject_once", "kind": "reject_once", "name": "Deny"}]}),
            );
            let got = answer.map_or_else(
                || "no answer".to_owned(),
                |a| a["result"]["outcome"].to_string(),
            );
            self.chunk(session, &format!("permission: {got}"));
            return "end_turn";
        }
        if command.contains("ASKFS") {
            let answer = self.ask_client(
                "fs/read_text_file",
                &json!({"sessionId": session, "path": "/etc/hostname"}),
            );
            let code = answer.map_or(Value::Null, |a| a["error"]["code"].clone());
            self.chunk(session, &format!("fs error code: {code}"));
            return "end_turn";
        }
        if command.contains("THINK") {
            for thought in ["weighing ", "the options"] {
                self.update(
                    session,
                    &json!({"sessionUpdate": "agent_thought_chunk",
                            "content": {"type": "text", "text": thought}}),
                );
            }
            self.chunk(session, "decided");
            return "end_turn";
        }
        let streamed = command
            .split("STREAM ")
            .nth(1)
            .map(|rest| (rest, 0))
            .or_else(|| {
                let rest = command.split("TRICKLE ").nth(1)?;
                let gap = rest.split_whitespace().nth(1)?.parse().ok()?;
                Some((rest, gap))
            });
        if let Some((rest, gap_ms)) = streamed {
            let count: u64 = rest
                .split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            for i in 0..count {
                if gap_ms > 0 && i > 0 {
                    std::thread::sleep(Duration::from_millis(gap_ms));
                }
                let micros = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_micros());
                self.chunk(session, &format!("{i}@{micros};"));
            }
            return "end_turn";
        }
        if command.contains("NOVEL") {
            self.update(
                session,
                &json!({"sessionUpdate": "weather_report", "sky": "blue"}),
            );
        }
        self.chunk(session, "echo: ");
        self.chunk(session, text);
        "end_turn"
    }

    fn handle(self: &Arc<Self>, message: Value) {
        let method = message["method"].as_str().unwrap_or_default().to_owned();
        let id = message.get("id").cloned().filter(|id| !id.is_null());
        if method.is_empty() {
            // An answer to one of our requests.
            if let Some(waiter) = id
                .as_ref()
                .and_then(Value::as_i64)
                .and_then(|n| self.waiting.lock().expect("lock").remove(&n))
            {
                let _ = waiter.send(message);
            }
            return;
        }
        if self.options.crash_on.contains(&method) {
            crash();
        }
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let Some(id) = id else {
            if method == "session/cancel"
                && let Some(flag) = params["sessionId"]
                    .as_str()
                    .and_then(|s| self.running.lock().expect("lock").get(s).cloned())
            {
                flag.store(true, Ordering::SeqCst);
            }
            return;
        };
        if self.options.ignore.contains(&method) {
            return;
        }
        let result = match method.as_str() {
            "initialize" => Ok(json!({
                "protocolVersion": 1,
                "agentCapabilities": {
                    "loadSession": !self.options.no_load,
                    "sessionCapabilities": {"list": {}, "close": {}},
                    "promptCapabilities": {"image": false, "embeddedContext": true}
                },
                "agentInfo": {"name": "scripted-acp-agent", "version": "0"},
                "authMethods": []
            })),
            "session/new" => {
                let session = format!(
                    "s-{}-{}",
                    std::process::id(),
                    self.next_session.fetch_add(1, Ordering::SeqCst)
                );
                self.remember(&session, &params["cwd"]);
                Ok(json!({"sessionId": session,
                          "modes": {"currentModeId": "https://example.test/modes#agent",
                                    "availableModes": [
                                        {"id": "https://example.test/modes#agent", "name": "Agent"},
                                        {"id": "https://example.test/modes#plan", "name": "Plan"}]}}))
            }
            "session/list" => Ok(json!({"sessions": self.sessions()})),
            "session/load" => {
                let wanted = &params["sessionId"];
                if self.sessions().iter().any(|s| &s["sessionId"] == wanted) {
                    let session = wanted.as_str().unwrap_or_default();
                    self.update(
                        session,
                        &json!({"sessionUpdate": "user_message_chunk",
                                "content": {"type": "text", "text": "(replayed)"}}),
                    );
                    Ok(json!({}))
                } else {
                    Err((
                        -32002,
                        format!("Resource not found: Session {wanted} not found"),
                    ))
                }
            }
            "session/prompt" => {
                self.prompt(id, &params);
                return;
            }
            "session/set_mode" => {
                // Like the CLI: mode ids are URLs, bare names are rejected.
                if params["modeId"].as_str().is_some_and(|m| m.contains("://")) {
                    Ok(json!({}))
                } else {
                    Err((-32602, format!("Invalid mode {}", params["modeId"])))
                }
            }
            "session/close" | "session/set_model" => Ok(json!({})),
            _ => Err((-32601, format!("\"Method not found\": {method}"))),
        };
        self.answer(&id, result);
    }
}

fn main() -> anyhow::Result<()> {
    let options = parse_options()?;
    if let Some(path) = &options.pid_file {
        std::fs::write(path, std::process::id().to_string())?;
    }
    if options.grandchild {
        // Stays in our process group; only a group kill ends it before its time.
        std::process::Command::new("sleep").arg("300").spawn()?;
    }
    let agent = Arc::new(Agent {
        options,
        out: Out(Arc::new(Mutex::new(std::io::stdout()))),
        next_session: AtomicI64::new(1),
        next_request: AtomicI64::new(0),
        running: Mutex::new(HashMap::new()),
        waiting: Mutex::new(HashMap::new()),
    });
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            // Like the real CLI: a malformed line gets no reply at all.
            eprintln!("scripted-acp-agent: ignoring a malformed line");
            continue;
        };
        agent.handle(message);
    }
    if agent.options.ignore_eof {
        loop {
            std::thread::sleep(Duration::from_hours(1));
        }
    }
    Ok(())
}
