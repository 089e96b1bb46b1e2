//! `copilot_orchestrate`: a big task planned by Copilot as a dependency graph and run as
//! sub-tasks, each in its own Copilot session, in parallel where the graph allows. The planning
//! and scheduling live in [`bridge_core::orchestrator`]; this file supplies the runner (a
//! Copilot session per sub-task), relays the scheduler's events as progress, and renders the
//! report.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bridge_core::orchestrator::{
    Concurrency, Event, Planned, Report, RunOptions, Strategy, TaskContext, TaskId, TaskOutcome,
    TaskRunner, TaskStatus, parse_plan_value, planning_prompt, subtask_prompt,
};
use bridge_core::redact::truncate;
use bridge_mcp::{Answer, ToolError};
use rmcp::handler::server::tool::{InputResponses, IntoCallToolResult, RequestState};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResponse;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, tool};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::approval::ClientAsker;
use crate::runner::{DirAccess, HEARTBEAT, ProgressSink, TaskRequest, forward};
use crate::server::BridgeServer;
use crate::tools::code::{TaskResult, check_task_text};
use crate::tools::rounds::Retry;

/// Characters of a sub-task's answer kept as its summary (what dependents get to read, and
/// what the report shows).
const SUMMARY_CHARS: usize = 1_500;

/// Arguments of `copilot_orchestrate`.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrchestrateArgs {
    /// The whole task, e.g. "add a REST endpoint for users with tests and docs". Copilot
    /// plans it as sub-tasks unless `plan` is given.
    pub task: String,
    /// Directory every sub-task works in, relative to the workspace root or absolute
    /// (default: the workspace root).
    #[serde(default, rename = "workingDir")]
    #[schemars(with = "String")]
    pub working_dir: Option<String>,
    /// Most sub-tasks running at once, each in its own Copilot session: 1 to 10 (default 3).
    #[serde(default, rename = "maxConcurrency")]
    #[schemars(with = "u32")]
    pub max_concurrency: Option<u64>,
    /// Milliseconds for the whole orchestration (planning included); when it passes, every
    /// running sub-task is cancelled and the report says so. Default: no overall limit, each
    /// session bounded by the bridge's task timeout (COPILOT_TIMEOUT).
    #[serde(default)]
    #[schemars(with = "u64")]
    pub timeout: Option<u64>,
    /// A plan to run instead of asking Copilot for one, shaped like
    /// `{"tasks":[{"id":"t1","description":"…","estimatedComplexity":"S"}],
    /// "dependencies":{"t2":["t1"]}}`.
    #[serde(default)]
    #[schemars(with = "serde_json::Map<String, Value>")]
    pub plan: Option<Value>,
    /// "eager" (default): a sub-task starts as soon as its dependencies are done and a session
    /// is free. "waves": wave by wave, each wave waiting for its slowest sub-task.
    #[serde(default)]
    #[schemars(with = "String")]
    pub strategy: Option<String>,
    /// The model for every session.
    #[serde(default)]
    #[schemars(with = "String")]
    pub model: Option<String>,
}

/// The result of an orchestration: the scheduler's report plus where and how it planned.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OrchestrateResult {
    /// The plan, waves, per-task outcomes, summary line, makespan and lower bound.
    #[serde(flatten)]
    pub report: Report,
    /// The directory every sub-task worked in.
    pub working_dir: String,
    /// The session that planned, when Copilot planned.
    pub planning_session_id: Option<String>,
    /// Wall time of the whole call, planning included.
    pub elapsed_ms: u64,
}

/// Runs each sub-task in a new Copilot session in the orchestration's directory.
#[derive(Debug)]
struct CopilotSubtasks {
    server: BridgeServer,
    goal: String,
    working_dir: String,
    model: Option<String>,
    timeout: Duration,
    /// The client that called, asked when the policy wants a person to confirm a step.
    asker: Option<ClientAsker>,
}

impl TaskRunner for CopilotSubtasks {
    async fn run(&self, task: TaskContext) -> TaskOutcome {
        let request = TaskRequest {
            prompt: subtask_prompt(&self.goal, &task),
            working_dir: Some(self.working_dir.clone()),
            timeout: self.timeout,
            session_id: None,
            model: self.model.clone(),
            access: DirAccess::Held,
            updates: None,
            asker: self.asker.clone(),
        };
        match self.server.runner().run(request, None, task.cancel).await {
            Ok(report) => {
                let result = TaskResult::from_report(&report, false);
                let summary = summarize(&result);
                let outcome = if result.success() {
                    TaskOutcome::success(summary)
                } else {
                    TaskOutcome::failure(summary)
                };
                outcome.with_session_id(result.session_id)
            }
            Err(err) => TaskOutcome::failure(err.to_string()),
        }
    }
}

/// What a sub-task's result says about it: its answer (cut), or why it did not finish.
fn summarize(result: &TaskResult) -> String {
    let answer = result.text.trim();
    let answer = truncate(answer, SUMMARY_CHARS);
    if let Some(error) = &result.error {
        format!("the model failed: {error}")
    } else if result.timed_out {
        format!("timed out; partial answer: {answer}")
    } else if !result.success() {
        format!("stopped ({}); partial answer: {answer}", result.stop_reason)
    } else if answer.is_empty() {
        "done (no summary given)".to_owned()
    } else {
        answer.into_owned()
    }
}

/// The progress message for a scheduler event.
fn event_message(event: &Event) -> String {
    match event {
        Event::TaskStart {
            task,
            description,
            wave,
            running,
        } => format!(
            "task_start {task} (wave {wave}, {running} running): {}",
            truncate(description, 80)
        ),
        Event::TaskComplete {
            task,
            status,
            elapsed_ms,
            ..
        } => format!(
            "task_complete {task}: {status} in {:.1}s",
            Duration::from_millis(*elapsed_ms).as_secs_f64()
        ),
        Event::TaskSkipped { task, reason } => format!("task_skipped {task}: {reason}"),
        Event::PlanComplete {
            summary,
            makespan_ms,
            ..
        } => format!(
            "plan_complete: {summary} in {:.1}s",
            Duration::from_millis(*makespan_ms).as_secs_f64()
        ),
    }
}

/// Relays messages as progress, saying "still working" whenever nothing was said for
/// [`HEARTBEAT`]. Ends when every sender is gone.
async fn pump(mut messages: mpsc::UnboundedReceiver<String>, sink: ProgressSink) {
    let (out, to_forward) = mpsc::unbounded_channel();
    let forwarder = tokio::spawn(forward(to_forward, sink));
    let started = tokio::time::Instant::now();
    loop {
        match tokio::time::timeout(HEARTBEAT, messages.recv()).await {
            Ok(Some(message)) => {
                let _ = out.send(message);
            }
            Ok(None) => break,
            Err(_) => {
                let _ = out.send(format!("still working ({}s)", started.elapsed().as_secs()));
            }
        }
    }
    drop(out);
    let _ = forwarder.await;
}

/// The markdown copy of the result.
fn render(result: &OrchestrateResult, limit: usize) -> String {
    let report = &result.report;
    let mut text = format!("## Orchestration: {}\n\n", report.summary);
    let _ = writeln!(
        text,
        "Strategy {}, at most {} sessions at once · makespan {:.1}s · lower bound {:.1}s · {} waves",
        report.strategy,
        report.concurrency,
        Duration::from_millis(report.makespan_ms).as_secs_f64(),
        Duration::from_millis(report.lower_bound_ms).as_secs_f64(),
        report.waves.len()
    );
    if let Some(fallback) = &report.fallback {
        let _ = writeln!(text, "\n**Ran as a single task:** {}", fallback.reason);
    }
    if let Some(stopped) = &report.stopped {
        let _ = writeln!(text, "\n**Stopped:** {stopped}");
    }
    text.push_str(
        "\n| task | wave | after | status | time | session |\n|---|---|---|---|---|---|\n",
    );
    for task in &report.tasks {
        let after: Vec<&str> = task.dependencies.iter().map(TaskId::as_str).collect();
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} | {} | {} |",
            task.id,
            task.wave,
            if after.is_empty() {
                "–".to_owned()
            } else {
                after.join(", ")
            },
            status_mark(task.status),
            task.elapsed_ms.map_or_else(
                || "–".to_owned(),
                |ms| format!("{:.1}s", Duration::from_millis(ms).as_secs_f64())
            ),
            task.session_id.as_deref().unwrap_or("–"),
        );
    }
    text.push('\n');
    for task in &report.tasks {
        let _ = write!(
            text,
            "### {} — {}\n{}\n\n",
            task.id,
            truncate(&task.description, 200),
            task.summary.trim()
        );
    }
    truncate(&text, limit).into_owned()
}

fn status_mark(status: TaskStatus) -> String {
    match status {
        TaskStatus::Succeeded => "✓ succeeded".to_owned(),
        TaskStatus::Failed => "✗ failed".to_owned(),
        TaskStatus::Skipped => "↷ skipped".to_owned(),
        TaskStatus::Cancelled => "■ cancelled".to_owned(),
    }
}

impl BridgeServer {
    /// Plan a big coding task as a dependency graph of sub-tasks and run them with GitHub
    /// Copilot, each in its own session, in parallel where dependencies allow (maxConcurrency
    /// sessions at most). Each sub-task's prompt includes the results of the sub-tasks it
    /// depends on; a failed sub-task skips its dependents. Pass `plan` to skip planning.
    /// Returns the plan, its waves, each sub-task's status, time, session and summary, and a
    /// summary line. Sends progress notifications (task_start, task_complete, task_skipped,
    /// plan_complete); cancel the request to stop every running sub-task.
    #[tool(annotations(destructive_hint = true, open_world_hint = true))]
    pub(crate) async fn copilot_orchestrate(
        &self,
        Parameters(args): Parameters<OrchestrateArgs>,
        context: RequestContext<RoleServer>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = serde_json::to_value(&args).map_err(|e| {
            ErrorData::internal_error(format!("cannot encode the arguments: {e}"), None)
        })?;
        let server = self.clone();
        let retry = Retry { state, responses };
        self.in_rounds(
            "copilot_orchestrate",
            &arguments,
            &context,
            retry,
            move |asking| async move {
                let limit = server.config().output_limit_bytes;
                server
                    .orchestrate(args, asking.progress, Some(asking.asker), asking.cancel)
                    .await
                    .map(|result| Answer::new(render(&result, limit), result))
                    .into_call_tool_result()
            },
        )
        .await
    }
}

impl BridgeServer {
    /// Plans (unless a plan is given) and runs an orchestration; `cancel` stops it, and so does
    /// [`BridgeServer::interrupt`], which still returns the report.
    pub(crate) async fn orchestrate(
        &self,
        args: OrchestrateArgs,
        progress: Option<ProgressSink>,
        asker: Option<ClientAsker>,
        cancel: CancellationToken,
    ) -> Result<OrchestrateResult, ToolError> {
        let started = std::time::Instant::now();
        let options = run_options(&args)?;
        let goal = args.task.trim().to_owned();
        let given = args
            .plan
            .as_ref()
            .map(|plan| {
                let parsed = parse_plan_value(plan).map_err(|e| {
                    ToolError::Model(format!("the plan cannot be read: {e}; fix it or omit plan"))
                })?;
                Planned::from_parsed(parsed).map_err(|e| {
                    ToolError::Model(format!("the plan is invalid: {e}; fix it or omit plan"))
                })
            })
            .transpose()?;
        let runner = self.runner();
        let working_dir = runner
            .resolve_dir(args.working_dir.as_deref().unwrap_or("."))
            .map_err(|e| ToolError::model(&e))?;

        // Stoppable from the terminal (Ctrl-C) as well as by the client's cancellation.
        let interruptible = self.register_interruptible(cancel.child_token());
        let cancel = interruptible.token().clone();
        // The orchestration has the directory to itself; its sub-tasks share it.
        let _directory = runner
            .hold_directory(&working_dir, &cancel)
            .await
            .map_err(|e| ToolError::model(&e))?;
        // The overall timeout counts from here, planning included.
        let clock = tokio::time::Instant::now();

        let (messages, received) = mpsc::unbounded_channel();
        let pumping = progress.map(|sink| tokio::spawn(pump(received, sink)));
        let task_timeout = options
            .timeout
            .unwrap_or(Duration::from_millis(self.config().timeout_ms));

        let (planned, planning_session_id) = if let Some(planned) = given {
            (planned, None)
        } else {
            let _ = messages.send("planning: asking Copilot for a plan".to_owned());
            self.plan(
                &goal,
                &working_dir,
                args.model.clone(),
                task_timeout,
                &cancel,
            )
            .await
        };
        let _ = messages.send(format!(
            "plan ready: {} tasks in {} waves{}",
            planned.dag.len(),
            planned.dag.waves().len(),
            if planned.fallback.is_some() {
                " (single-task fallback)"
            } else {
                ""
            }
        ));

        // Planning spent part of the overall timeout: the run stops that much sooner (at once,
        // starting nothing, when planning used it all up), and the report still names the
        // caller's timeout.
        let options = RunOptions {
            timeout_spent: clock.elapsed(),
            ..options
        };
        let subtasks = Arc::new(CopilotSubtasks {
            server: self.clone(),
            goal: goal.clone(),
            working_dir: working_dir.display().to_string(),
            model: args.model.clone(),
            timeout: task_timeout,
            asker,
        });
        let events = messages.clone();
        let report = planned
            .run(subtasks, &options, &cancel, move |event| {
                let _ = events.send(event_message(&event));
            })
            .await;
        drop(messages);
        if let Some(pumping) = pumping {
            let _ = pumping.await;
        }
        Ok(OrchestrateResult {
            report,
            working_dir: working_dir.display().to_string(),
            planning_session_id,
            elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        })
    }

    /// Asks Copilot, in one session, for a plan of `goal`; falls back to a single-task plan
    /// (saying why) when the session fails or its answer is no usable plan.
    async fn plan(
        &self,
        goal: &str,
        working_dir: &Path,
        model: Option<String>,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> (Planned, Option<String>) {
        let request = TaskRequest {
            prompt: planning_prompt(goal),
            working_dir: Some(working_dir.display().to_string()),
            timeout,
            session_id: None,
            model,
            access: DirAccess::Held,
            updates: None,
            asker: None,
        };
        match self.runner().run(request, None, cancel.child_token()).await {
            Ok(report) => {
                let result = TaskResult::from_report(&report, false);
                let planned = if result.success() {
                    Planned::from_reply(goal, &result.text)
                } else {
                    Planned::fallback(
                        goal,
                        format!("planning did not finish: {}", summarize(&result)),
                    )
                };
                (planned, Some(result.session_id))
            }
            Err(err) => (
                Planned::fallback(goal, format!("planning failed: {err}")),
                None,
            ),
        }
    }
}

/// Checks the arguments that do not need the agent.
fn run_options(args: &OrchestrateArgs) -> Result<RunOptions, ToolError> {
    check_task_text(&args.task, "task")?;
    let concurrency = match args.max_concurrency {
        None => Concurrency::default(),
        Some(n) => usize::try_from(n)
            .ok()
            .and_then(|n| Concurrency::new(n).ok())
            .ok_or_else(|| {
                ToolError::Model(format!("maxConcurrency must be between 1 and 10, got {n}"))
            })?,
    };
    let strategy = match args.strategy.as_deref() {
        None => Strategy::default(),
        Some(name) => name
            .parse::<Strategy>()
            .map_err(|e| ToolError::Model(e.to_string()))?,
    };
    if args.timeout == Some(0) {
        return Err(ToolError::Model(
            "timeout must be at least 1 millisecond (or omitted for no overall limit)".into(),
        ));
    }
    Ok(RunOptions {
        strategy,
        concurrency,
        timeout: args.timeout.map(Duration::from_millis),
        ..RunOptions::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bridge_core::orchestrator::Planned;

    fn report() -> Report {
        let planned = Planned::from_reply(
            "goal",
            r#"{"tasks":[{"id":"t1","description":"one"},{"id":"t2","description":"two"}],
                "dependencies":{"t2":["t1"]}}"#,
        );
        let mut report = Report {
            summary: "1/2 tasks succeeded, 1 skipped, 0 failed".into(),
            plan: planned.plan().clone(),
            fallback: None,
            warnings: Vec::new(),
            waves: planned.dag.waves(),
            strategy: Strategy::Eager,
            concurrency: 3,
            tasks: Vec::new(),
            succeeded: 1,
            failed: 0,
            skipped: 1,
            cancelled: 0,
            makespan_ms: 1500,
            lower_bound_ms: 1400,
            critical_path: vec![TaskId::from("t1")],
            stopped: None,
        };
        report.tasks = vec![];
        report
    }

    #[test]
    fn events_read_as_short_progress_lines() {
        let start = Event::TaskStart {
            task: TaskId::from("t1"),
            description: "write the parser".into(),
            wave: 1,
            running: 2,
        };
        assert_eq!(
            event_message(&start),
            "task_start t1 (wave 1, 2 running): write the parser"
        );
        let done = Event::PlanComplete {
            summary: "2/2 tasks succeeded, 0 skipped, 0 failed".into(),
            makespan_ms: 2500,
            stopped: None,
        };
        assert_eq!(
            event_message(&done),
            "plan_complete: 2/2 tasks succeeded, 0 skipped, 0 failed in 2.5s"
        );
    }

    #[test]
    fn markdown_leads_with_the_summary_line_and_stays_within_the_limit() {
        let result = OrchestrateResult {
            report: report(),
            working_dir: "/w".into(),
            planning_session_id: None,
            elapsed_ms: 1600,
        };
        let text = render(&result, 10_240);
        assert!(
            text.starts_with("## Orchestration: 1/2 tasks succeeded, 1 skipped, 0 failed"),
            "{text}"
        );
        assert!(text.contains("lower bound 1.4s"), "{text}");
        assert!(render(&result, 40).len() <= 40);
    }
}
