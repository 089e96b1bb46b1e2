//! `copilot-bridge exec`: one delegated task from a terminal. The task goes through the same
//! tool call an MCP client makes (in process), its progress is drawn on stderr as a spinner
//! with the steps above it, and the result is printed on stdout. Ctrl-C cancels the task and
//! still prints what it did; a second Ctrl-C stops waiting.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use bridge_core::config::Config;
use indicatif::{ProgressBar, ProgressStyle};
use rmcp::model::{CallToolResult, JsonObject};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::in_process::{InProcess, InProcessError};
use crate::server::BridgeServer;

/// How often the spinner turns.
const SPIN: Duration = Duration::from_millis(100);
/// Exit code after Ctrl-C, as shells report a process ended by SIGINT (128 + 2).
const EXIT_INTERRUPTED: u8 = 130;

/// Arguments of `copilot-bridge exec`.
#[derive(Debug, clap::Args)]
pub struct ExecArgs {
    /// Directory the task works in (default: the current directory). It must be inside the
    /// workspace root, which defaults to this directory.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Milliseconds the task may run before it is cancelled [default: COPILOT_TIMEOUT].
    #[arg(long, value_name = "MS")]
    pub timeout_ms: Option<u64>,
    /// Continue a recorded session instead of starting a new one.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Print the numbered step-by-step log before the result.
    #[arg(long)]
    pub verbose: bool,
    /// Print the structured result as JSON instead of markdown.
    #[arg(long)]
    pub json: bool,
    /// What Copilot should do; `-` reads it from stdin.
    #[arg(value_name = "PROMPT")]
    pub prompt: String,
}

/// Runs `exec`: returns success only when the task ended normally.
pub fn run(config: Config, args: &ExecArgs) -> anyhow::Result<ExitCode> {
    let prompt = if args.prompt == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the prompt from stdin")?;
        text
    } else {
        args.prompt.clone()
    };
    let here = std::env::current_dir().context("cannot read the current directory")?;
    let dir = args
        .cwd
        .as_ref()
        .map_or_else(|| here.clone(), |d| here.join(d));
    let dir = dir
        .canonicalize()
        .with_context(|| format!("--cwd {} is not an existing directory", dir.display()))?;
    anyhow::ensure!(dir.is_dir(), "--cwd {} is not a directory", dir.display());

    crate::cli::runtime()?.block_on(async {
        let (server, audit) = BridgeServer::from_config(config, dir.clone())?;
        let (progress, messages) = mpsc::unbounded_channel();
        let bridge = InProcess::connect(server, progress).await?;
        let display = tokio::spawn(draw(messages));

        let soft = CancellationToken::new();
        let hard = CancellationToken::new();
        let interrupts = tokio::spawn(watch_interrupts(soft.clone(), hard.clone()));

        let mut arguments = JsonObject::new();
        arguments.insert("task".into(), json!(prompt));
        arguments.insert("workingDir".into(), json!(dir.display().to_string()));
        if let Some(ms) = args.timeout_ms {
            arguments.insert("timeout".into(), json!(ms));
        }
        if let Some(id) = &args.session {
            arguments.insert("sessionId".into(), json!(id));
        }
        let tool = if args.verbose {
            "copilot_code_verbose"
        } else {
            "copilot_code"
        };
        let outcome = tokio::select! {
            outcome = bridge.call(tool, arguments, &soft) => Some(outcome),
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
                say("copilot-bridge: stopped without waiting for the cancelled task");
                return Ok(ExitCode::from(EXIT_INTERRUPTED));
            }
            Some(Err(InProcessError::CancelledEarly)) => {
                say("copilot-bridge: cancelled before Copilot started on the task");
                return Ok(ExitCode::from(EXIT_INTERRUPTED));
            }
            Some(outcome) => outcome?,
        };
        print_result(&result, args.json)?;
        Ok(if soft.is_cancelled() {
            ExitCode::from(EXIT_INTERRUPTED)
        } else if succeeded(&result) {
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
    say("cancelling the task (Ctrl-C again to stop waiting)…");
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

/// Whether the task ended normally (not an error, not timed out, not cancelled).
fn succeeded(result: &CallToolResult) -> bool {
    let data = result.structured_content.as_ref();
    let field = |name: &str| data.and_then(|d| d.get(name));
    result.is_error != Some(true)
        && field("stopReason").and_then(Value::as_str) == Some("end_turn")
        && field("timedOut").and_then(Value::as_bool) != Some(true)
        && field("error").is_none_or(Value::is_null)
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
fn say(line: &str) {
    #[expect(clippy::print_stderr, reason = "exec talks to a person on stderr")]
    {
        eprintln!("{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(data: Value, is_error: bool) -> CallToolResult {
        let mut result = CallToolResult::structured(data);
        result.is_error = Some(is_error);
        result
    }

    #[test]
    fn only_a_normally_ended_turn_is_a_success() {
        let ok = json!({"stopReason": "end_turn", "timedOut": false, "error": null});
        assert!(succeeded(&result(ok.clone(), false)));
        assert!(!succeeded(&result(ok, true)));
        let timed_out = json!({"stopReason": "cancelled", "timedOut": true});
        assert!(!succeeded(&result(timed_out, false)));
        let failed = json!({"stopReason": "end_turn", "error": "the model failed"});
        assert!(!succeeded(&result(failed, false)));
    }
}
