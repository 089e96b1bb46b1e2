//! What the terminal subcommands (`exec`, `orchestrate`) share: one tool call through the
//! in-process bridge, progress drawn on stderr as a spinner with the steps above it, the result
//! on stdout, and Ctrl-C handling (the first stops the work and keeps its result, the second
//! stops waiting).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use bridge_core::config::Config;
use indicatif::{ProgressBar, ProgressStyle};
use rmcp::model::{CallToolResult, JsonObject};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::in_process::{InProcess, InProcessError};
use crate::server::BridgeServer;

/// How often the spinner turns.
const SPIN: Duration = Duration::from_millis(100);
/// Exit code after Ctrl-C, as shells report a process ended by SIGINT (128 + 2).
const EXIT_INTERRUPTED: u8 = 130;

/// One tool call from the terminal.
#[derive(Debug)]
pub(crate) struct TerminalCall<'a> {
    /// The tool.
    pub tool: &'a str,
    /// Its arguments.
    pub arguments: JsonObject,
    /// Print the structured result as JSON instead of the markdown.
    pub json: bool,
    /// Whether the result counts as success (exit code 0).
    pub succeeded: fn(&CallToolResult) -> bool,
}

/// `--cwd` (relative to the current directory) as an existing, canonical directory.
pub(crate) fn working_dir(cwd: Option<&Path>) -> anyhow::Result<PathBuf> {
    let here = std::env::current_dir().context("cannot read the current directory")?;
    let dir = cwd.map_or_else(|| here.clone(), |d| here.join(d));
    let dir = dir
        .canonicalize()
        .with_context(|| format!("--cwd {} is not an existing directory", dir.display()))?;
    anyhow::ensure!(dir.is_dir(), "--cwd {} is not a directory", dir.display());
    Ok(dir)
}

/// Makes `call` on a bridge whose workspace root is `config`'s, else `dir`; prints the result
/// and maps it to an exit code: 0 success, 1 failure, 130 interrupted.
pub(crate) fn run(config: Config, dir: &Path, call: TerminalCall<'_>) -> anyhow::Result<ExitCode> {
    bridge_mcp::runtime()
        .context("cannot start the async runtime")?
        .block_on(async {
            let (server, audit) = BridgeServer::from_config(config, dir.to_path_buf())?;
            let (progress, messages) = mpsc::unbounded_channel();
            let bridge = InProcess::connect(server, progress).await?;
            let display = tokio::spawn(draw(messages));

            let soft = CancellationToken::new();
            let hard = CancellationToken::new();
            let interrupts = tokio::spawn(watch_interrupts(soft.clone(), hard.clone()));
            let outcome = tokio::select! {
                outcome = bridge.call(call.tool, call.arguments, &soft) => Some(outcome),
                () = hard.cancelled() => None,
            };
            interrupts.abort();
            bridge.close().await;
            let _ = display.await;
            audit
                .shutdown()
                .await
                .context("cannot finish writing the audit log")?;

            let result = match outcome {
                None => {
                    say("copilot-bridge: stopped without waiting for the cancelled work");
                    return Ok(ExitCode::from(EXIT_INTERRUPTED));
                }
                Some(Err(InProcessError::CancelledEarly)) => {
                    say("copilot-bridge: cancelled before Copilot started on the work");
                    return Ok(ExitCode::from(EXIT_INTERRUPTED));
                }
                Some(outcome) => outcome?,
            };
            print_result(&result, call.json)?;
            Ok(if soft.is_cancelled() {
                ExitCode::from(EXIT_INTERRUPTED)
            } else if result.is_error != Some(true) && (call.succeeded)(&result) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        })
}

/// First Ctrl-C: cancel the task (its partial result still comes back). Second: stop waiting.
async fn watch_interrupts(soft: CancellationToken, hard: CancellationToken) {
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    say("cancelling (Ctrl-C again to stop waiting)…");
    soft.cancel();
    if tokio::signal::ctrl_c().await.is_ok() {
        hard.cancel();
    }
}

/// Draws progress on stderr: a spinner with the latest message when stderr is a terminal, and
/// every step above it; plain lines otherwise (logs, CI).
async fn draw(mut messages: mpsc::UnboundedReceiver<String>) {
    let terminal = std::io::stderr().is_terminal();
    let spinner = terminal.then(|| {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {elapsed} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message("starting Copilot…");
        bar.enable_steady_tick(SPIN);
        bar
    });
    while let Some(message) = messages.recv().await {
        // "text so far" and heartbeats replace each other; tool and plan steps stay on screen.
        let transient = message.starts_with("text so far") || message.starts_with("still working");
        match &spinner {
            Some(bar) if transient => bar.set_message(message),
            Some(bar) => bar.println(format!("  {message}")),
            None => say(&format!("  {message}")),
        }
    }
    if let Some(bar) = spinner {
        bar.finish_and_clear();
    }
}

/// The result on stdout: the markdown the tool rendered, or its structured content as JSON.
fn print_result(result: &CallToolResult, json: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        let value = match &result.structured_content {
            Some(data) => data.clone(),
            None => json!({ "error": text_of(result) }),
        };
        serde_json::to_writer_pretty(&mut out, &value).context("cannot write stdout")?;
        writeln!(out).context("cannot write stdout")?;
    } else {
        writeln!(out, "{}", text_of(result)).context("cannot write stdout")?;
    }
    out.flush().context("cannot write stdout")
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One line for the person at the terminal.
pub(crate) fn say(line: &str) {
    #[expect(clippy::print_stderr, reason = "exec talks to a person on stderr")]
    {
        eprintln!("{line}");
    }
}
