//! `copilot-bridge orchestrate`: a big task from a terminal, planned and run as sub-tasks by the
//! same `copilot_orchestrate` call an MCP client makes (in process). Task events are printed on
//! stderr as they happen, the report on stdout. Ctrl-C stops every running sub-task and still
//! prints the report.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use bridge_core::config::Config;
use rmcp::model::{CallToolResult, JsonObject};
use serde_json::{Value, json};

use crate::commands::terminal::{self, TerminalCall, working_dir};

/// Arguments of `copilot-bridge orchestrate`.
#[derive(Debug, clap::Args)]
pub struct OrchestrateCommand {
    /// Directory every sub-task works in (default: the current directory). It must be inside
    /// the workspace root, which defaults to this directory.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Most sub-tasks running at once, 1 to 10.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub max_concurrency: u64,
    /// `eager` (start a sub-task as soon as its dependencies are done) or `waves`.
    #[arg(long, value_name = "STRATEGY", default_value = "eager")]
    pub strategy: String,
    /// A JSON plan to run instead of asking Copilot for one
    /// (`{"tasks":[{"id","description"}],"dependencies":{"t2":["t1"]}}`).
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Milliseconds for the whole orchestration; then every running sub-task is cancelled.
    #[arg(long, value_name = "MS")]
    pub timeout_ms: Option<u64>,
    /// Print the structured report as JSON instead of markdown.
    #[arg(long)]
    pub json: bool,
    /// The whole task; `-` reads it from stdin.
    #[arg(value_name = "TASK")]
    pub task: String,
}

/// Runs `orchestrate`: returns success only when every sub-task succeeded.
pub fn run(config: Config, args: &OrchestrateCommand) -> anyhow::Result<ExitCode> {
    let task = if args.task == "-" {
        std::io::read_to_string(std::io::stdin()).context("cannot read the task from stdin")?
    } else {
        args.task.clone()
    };
    let dir = working_dir(args.cwd.as_deref())?;
    let mut arguments = JsonObject::new();
    arguments.insert("task".into(), json!(task));
    arguments.insert("workingDir".into(), json!(dir.display().to_string()));
    arguments.insert("maxConcurrency".into(), json!(args.max_concurrency));
    arguments.insert("strategy".into(), json!(args.strategy));
    if let Some(ms) = args.timeout_ms {
        arguments.insert("timeout".into(), json!(ms));
    }
    if let Some(path) = &args.plan {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the plan {}", path.display()))?;
        let plan: Value = serde_json::from_str(&text)
            .with_context(|| format!("the plan {} is not JSON", path.display()))?;
        arguments.insert("plan".into(), plan);
    }
    terminal::run(
        config,
        &dir,
        TerminalCall {
            tool: "copilot_orchestrate",
            arguments,
            json: args.json,
            succeeded,
        },
    )
}

/// Whether every sub-task succeeded.
fn succeeded(result: &CallToolResult) -> bool {
    let data = result.structured_content.as_ref();
    let count = |name: &str| data.and_then(|d| d.get(name)).and_then(Value::as_u64);
    let tasks = data
        .and_then(|d| d.get("tasks"))
        .and_then(Value::as_array)
        .map(Vec::len);
    matches!((count("succeeded"), tasks), (Some(ok), Some(all)) if usize::try_from(ok).ok() == Some(all) && all > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_run_where_every_task_succeeded_is_a_success() {
        let result = |data: Value| CallToolResult::structured(data);
        assert!(succeeded(&result(
            json!({"succeeded": 2, "tasks": [{}, {}]})
        )));
        assert!(!succeeded(&result(
            json!({"succeeded": 1, "tasks": [{}, {}]})
        )));
        assert!(!succeeded(&result(json!({"succeeded": 0, "tasks": []}))));
    }
}
