//! `copilot-bridge exec`: one delegated task from a terminal. The task goes through the same
//! tool call an MCP client makes (in process), its progress is drawn on stderr as a spinner
//! with the steps above it, and the result is printed on stdout. Ctrl-C cancels the task and
//! still prints what it did; a second Ctrl-C stops waiting.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use bridge_core::config::Config;
use rmcp::model::{CallToolResult, JsonObject};
use serde_json::{Value, json};

use crate::commands::terminal::{self, TerminalCall, working_dir};
/// Arguments of `copilot-bridge exec`.
#[derive(Debug, clap::Args)]
pub struct ExecCommand {
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
pub fn run(config: Config, args: &ExecCommand) -> anyhow::Result<ExitCode> {
    let prompt = if args.prompt == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the prompt from stdin")?;
        text
    } else {
        args.prompt.clone()
    };
    let dir = working_dir(args.cwd.as_deref())?;
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
    terminal::run(
        config,
        &dir,
        TerminalCall {
            tool,
            arguments,
            json: args.json,
            succeeded,
        },
    )
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
