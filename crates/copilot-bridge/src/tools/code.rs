//! The delegate-a-task tools: `copilot_code_task`, `copilot_code` and `copilot_code_verbose`.
//! They parse arguments, hand the task to the [`Runner`](crate::runner::Runner) and render its
//! report as structured content plus markdown.

use std::fmt::Write as _;
use std::time::Duration;

use bridge_core::redact::truncate;
use bridge_mcp::{Answer, ToolError};
use rmcp::ErrorData;
use rmcp::handler::server::tool::{InputResponses, IntoCallToolResult, RequestState};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResponse;
use rmcp::service::RequestContext;
use rmcp::{RoleServer, tool};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::acp::{StopReason, ToolCall, Usage};
use crate::approval::ClientAsker;
use crate::runner::{
    DirAccess, ProgressSink, RunError, Step, TaskRequest, TurnReport, progress_message,
};
use crate::server::BridgeServer;
use crate::tools::rounds::Retry;

/// Longest task accepted, in characters: the original design's content limit.
pub const MAX_PROMPT_CHARS: usize = 500_000;
/// Bytes kept free below the output limit when cutting the answer, so the envelope's own cut
/// never reaches the `Success | Elapsed | Session` line.
const MARKDOWN_SLACK_BYTES: usize = 64;

/// Arguments of `copilot_code_task`.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeTaskArgs {
    /// What Copilot should do, e.g. "add a --verbose flag to src/main.rs and test it".
    pub prompt: String,
    /// Directory to work in, relative to the workspace root or absolute (default: the
    /// workspace root, or the session's directory when continuing one).
    #[serde(default, rename = "workingDir")]
    #[schemars(with = "String")]
    pub working_dir: Option<String>,
    /// Milliseconds before the task is cancelled and its partial result returned (default
    /// 120000).
    #[serde(default)]
    #[schemars(with = "u64")]
    pub timeout: Option<u64>,
    /// Continue this earlier session (its `sessionId` from a previous result).
    #[serde(default, rename = "sessionId")]
    #[schemars(with = "String")]
    pub session_id: Option<String>,
    /// The model to use for this session.
    #[serde(default)]
    #[schemars(with = "String")]
    pub model: Option<String>,
}

/// Arguments of `copilot_code` and `copilot_code_verbose`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeArgs {
    /// What Copilot should do, e.g. "add a --verbose flag to src/main.rs and test it".
    pub task: String,
    /// Directory to work in, relative to the workspace root or absolute (default: the
    /// workspace root, or the session's directory when continuing one).
    #[serde(default, rename = "workingDir")]
    #[schemars(with = "String")]
    pub working_dir: Option<String>,
    /// The model to use for this session.
    #[serde(default)]
    #[schemars(with = "String")]
    pub model: Option<String>,
    /// Milliseconds before the task is cancelled and its partial result returned (default
    /// 120000).
    #[serde(default)]
    #[schemars(with = "u64")]
    pub timeout: Option<u64>,
    /// Continue this earlier session (its `sessionId` from a previous result).
    #[serde(default, rename = "sessionId")]
    #[schemars(with = "String")]
    pub session_id: Option<String>,
}

impl From<CodeArgs> for CodeTaskArgs {
    fn from(args: CodeArgs) -> Self {
        Self {
            prompt: args.task,
            working_dir: args.working_dir,
            timeout: args.timeout,
            session_id: args.session_id,
            model: args.model,
        }
    }
}

/// One tool call of the turn, as reported in a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallSummary {
    /// The agent's id for the call.
    pub id: String,
    /// What it did.
    pub title: String,
    /// Its kind (`edit`, `execute`, `read`, …).
    pub kind: String,
    /// Its final status (`completed`, `failed`, …).
    pub status: String,
    /// Files it touched.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
}

/// A permission the bridge refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Denial {
    /// What the agent asked to do.
    pub title: String,
    /// Its kind.
    pub kind: String,
    /// The command, for shell calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Why it was refused.
    pub reason: String,
}

/// The result of a delegated task.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskResult {
    /// Pass it back as `sessionId` to continue the conversation.
    pub session_id: String,
    /// Why the turn ended: `end_turn`, `cancelled`, `max_tokens`, `refusal`, ….
    pub stop_reason: String,
    /// Copilot's answer (partial when cancelled or timed out).
    pub text: String,
    /// The tool calls of the turn.
    pub tool_calls: Vec<ToolCallSummary>,
    /// The permission requests the bridge refused.
    pub denials: Vec<Denial>,
    /// Token use, when reported.
    pub usage: Option<Usage>,
    /// How long the call took.
    pub elapsed_ms: u64,
    /// Whether the task ran out of time.
    pub timed_out: bool,
    /// The model's failure, when Copilot could not get an answer from it (after retries).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The working directory.
    pub working_dir: String,
    /// What happened to the session before this task (restart, replacement), if anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// The step-by-step log (`copilot_code_verbose` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<Step>>,
    /// Something to know although the task ran, e.g. that Copilot had no access to OpenClaw's
    /// memory because the memory server is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

impl TaskResult {
    pub(crate) fn from_report(report: &TurnReport, verbose: bool) -> Self {
        let outcome = &report.outcome;
        Self {
            session_id: outcome.session_id.clone(),
            stop_reason: outcome.stop_reason.as_str().to_owned(),
            text: outcome.text.clone(),
            tool_calls: outcome.tool_calls.iter().map(summarize_call).collect(),
            denials: outcome
                .denials()
                .map(|d| Denial {
                    title: d.title.clone(),
                    kind: d.kind.as_str().to_owned(),
                    command: d.command.clone(),
                    reason: d.reason.clone(),
                })
                .collect(),
            usage: report.usage().cloned(),
            elapsed_ms: report.elapsed_ms,
            timed_out: outcome.timed_out,
            error: report.model_error.clone(),
            working_dir: report.working_dir.display().to_string(),
            notice: outcome.notice.as_ref().map(ToString::to_string),
            steps: verbose.then(|| report.steps.clone()),
            warning: report.warning.clone(),
        }
    }

    /// Whether the task ended normally.
    pub fn success(&self) -> bool {
        !self.timed_out && self.error.is_none() && self.stop_reason == StopReason::EndTurn.as_str()
    }
}

fn summarize_call(call: &ToolCall) -> ToolCallSummary {
    ToolCallSummary {
        id: call.tool_call_id.clone(),
        title: call
            .title
            .clone()
            .unwrap_or_else(|| call.tool_call_id.clone()),
        kind: call
            .kind
            .as_ref()
            .map_or("other", |k| k.as_str())
            .to_owned(),
        status: call
            .status
            .as_ref()
            .map_or("unknown", |s| s.as_str())
            .to_owned(),
        paths: call
            .locations
            .iter()
            .map(|l| l.path.display().to_string())
            .collect(),
    }
}

fn status_mark(status: &str) -> &'static str {
    match status {
        "completed" => "✓",
        "failed" => "✗",
        _ => "…",
    }
}

/// The markdown copy: the answer, tool calls, denials, what went wrong, and the summary line.
/// The answer is cut so the whole copy fits `limit` bytes with the summary line intact.
pub fn render_markdown(result: &TaskResult, limit: usize) -> String {
    let mut frame = String::new();
    if let Some(notice) = &result.notice {
        let _ = writeln!(frame, "> {notice}\n");
    }
    let mut tail = String::new();
    if !result.tool_calls.is_empty() {
        tail.push_str("\n\n**Tool calls**\n");
        for call in &result.tool_calls {
            let _ = write!(
                tail,
                "\n- {} {} ({}, {})",
                status_mark(&call.status),
                call.title,
                call.kind,
                call.status
            );
        }
    }
    if !result.denials.is_empty() {
        tail.push_str("\n\n**Denied**\n");
        for denial in &result.denials {
            let _ = write!(tail, "\n- {}: {}", denial.title, denial.reason);
        }
    }
    if let Some(error) = &result.error {
        let _ = write!(
            tail,
            "\n\n**Failed**: {error} (retried up to COPILOT_MAX_RETRIES times)"
        );
    }
    if result.timed_out {
        tail.push_str(
            "\n\n**Timed out**: the task was cancelled when its time ran out; the output above \
             is partial. Continue it with the same sessionId or raise timeout.",
        );
    } else if result.stop_reason == StopReason::Cancelled.as_str() {
        tail.push_str("\n\n**Cancelled**: the output above is partial.");
    } else if !result.success() {
        let _ = write!(tail, "\n\n**Stopped**: {}", result.stop_reason);
    }
    if let Some(warning) = &result.warning {
        let _ = write!(tail, "\n\n**Warning**: {warning}");
    }
    let _ = write!(
        tail,
        "\n\n---\nSuccess: {} | Elapsed: {}.{}s | Session: {}",
        if result.success() { "yes" } else { "no" },
        result.elapsed_ms / 1000,
        result.elapsed_ms % 1000 / 100,
        result.session_id
    );
    let text = if result.text.trim().is_empty() {
        "(no answer)"
    } else {
        result.text.trim()
    };
    let budget = limit.saturating_sub(frame.len() + tail.len() + MARKDOWN_SLACK_BYTES);
    frame.push_str(&truncate(text, budget));
    frame.push_str(&tail);
    frame
}

/// The numbered step-by-step log, then the markdown result.
pub fn render_verbose(result: &TaskResult, limit: usize) -> String {
    let mut log = String::from("## Execution log\n");
    let steps = result.steps.as_deref().unwrap_or_default();
    if steps.is_empty() {
        log.push_str("\n(no tool calls, permission requests or plan updates)\n");
    }
    for (n, step) in steps.iter().enumerate() {
        let _ = write!(log, "\n{}. ", n + 1);
        match step {
            Step::ToolFinished {
                title,
                status,
                outcome,
                ..
            } => {
                let _ = write!(log, "{} {title} — {status}", status_mark(status));
                if let Some(outcome) = outcome {
                    let _ = write!(log, ": {outcome}");
                }
            }
            Step::Permission {
                title,
                allowed,
                reason,
            } => {
                let verdict = if *allowed { "allowed" } else { "denied" };
                let _ = write!(log, "Permission {verdict}: {title} ({reason})");
            }
            Step::Plan { entries } => {
                log.push_str("Plan:");
                for entry in entries {
                    let _ = write!(log, "\n   - [{}] {}", entry.status, entry.content);
                }
            }
            started @ Step::ToolStarted { .. } => {
                let _ = write!(log, "{}", progress_message(started));
            }
        }
    }
    log.push_str("\n\n## Result\n\n");
    let log = truncate(&log, limit / 2).into_owned();
    let result_text = render_markdown(result, limit.saturating_sub(log.len()));
    format!("{log}{result_text}")
}

/// Checks the text of a task (`noun` is how the tool calls it): not empty, not over the limit.
pub(crate) fn check_task_text(text: &str, noun: &str) -> Result<(), ToolError> {
    if text.trim().is_empty() {
        return Err(ToolError::Model(format!(
            "the {noun} is empty: say what Copilot should do"
        )));
    }
    let chars = text.chars().count();
    if chars > MAX_PROMPT_CHARS {
        return Err(ToolError::Model(format!(
            "the {noun} is {chars} characters; the limit is {MAX_PROMPT_CHARS}: put the details \
             in a file and refer to it"
        )));
    }
    Ok(())
}

/// Turns a runner error into a tool error the model can act on.
fn tool_error(err: &RunError) -> ToolError {
    ToolError::model(err)
}

impl BridgeServer {
    /// Delegate a coding task to GitHub Copilot (the Copilot CLI) and wait for it to finish.
    /// Copilot can read and edit files and run commands in workingDir, each step checked by
    /// the permission policy. Returns Copilot's answer, the tool calls it made, refused
    /// permissions and a sessionId to continue the conversation. Sends progress notifications
    /// when the request carries a progress token; cancel the request to stop the task.
    #[tool(annotations(destructive_hint = true, open_world_hint = true))]
    pub(crate) async fn copilot_code_task(
        &self,
        Parameters(args): Parameters<CodeTaskArgs>,
        context: RequestContext<RoleServer>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        let round = Retry { state, responses };
        self.delegate_rounds("copilot_code_task", args, context, false, round)
            .await
    }

    /// Delegate a coding task to GitHub Copilot and get the result as markdown: the answer,
    /// the tool calls, refused permissions and a summary line with the sessionId.
    #[tool(annotations(destructive_hint = true, open_world_hint = true))]
    pub(crate) async fn copilot_code(
        &self,
        Parameters(args): Parameters<CodeArgs>,
        context: RequestContext<RoleServer>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        let round = Retry { state, responses };
        self.delegate_rounds("copilot_code", args.into(), context, false, round)
            .await
    }

    /// Like copilot_code, with a numbered step-by-step execution log first: each tool call
    /// with its status and outcome, each permission decision and each plan update.
    #[tool(annotations(destructive_hint = true, open_world_hint = true))]
    pub(crate) async fn copilot_code_verbose(
        &self,
        Parameters(args): Parameters<CodeArgs>,
        context: RequestContext<RoleServer>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        let round = Retry { state, responses };
        self.delegate_rounds("copilot_code_verbose", args.into(), context, true, round)
            .await
    }
}

impl BridgeServer {
    /// One round of a delegate tool (see [`BridgeServer::in_rounds`]).
    async fn delegate_rounds(
        &self,
        tool: &'static str,
        args: CodeTaskArgs,
        context: RequestContext<RoleServer>,
        verbose: bool,
        retry: Retry,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = serde_json::to_value(&args).map_err(|e| {
            ErrorData::internal_error(format!("cannot encode the arguments: {e}"), None)
        })?;
        let server = self.clone();
        self.in_rounds(
            tool,
            &arguments,
            &context,
            retry,
            move |asking| async move {
                server
                    .delegate_with(
                        args,
                        asking.progress,
                        Some(asking.asker),
                        asking.cancel,
                        verbose,
                    )
                    .await
                    .into_call_tool_result()
            },
        )
        .await
    }

    async fn delegate_with(
        &self,
        args: CodeTaskArgs,
        progress: Option<ProgressSink>,
        asker: Option<ClientAsker>,
        cancel: CancellationToken,
        verbose: bool,
    ) -> Result<Answer<TaskResult>, ToolError> {
        check_task_text(&args.prompt, "task")?;
        let timeout_ms = args.timeout.unwrap_or(self.config().timeout_ms);
        if timeout_ms == 0 {
            return Err(ToolError::Model(
                "timeout must be at least 1 millisecond (default 120000)".into(),
            ));
        }
        let request = TaskRequest {
            prompt: args.prompt,
            working_dir: args.working_dir,
            timeout: Duration::from_millis(timeout_ms),
            session_id: args.session_id.filter(|id| !id.trim().is_empty()),
            model: args.model.filter(|m| !m.trim().is_empty()),
            access: DirAccess::Exclusive,
            updates: None,
            asker,
        };
        let report = self
            .runner()
            .run(request, progress, cancel)
            .await
            .map_err(|e| tool_error(&e))?;
        let result = TaskResult::from_report(&report, verbose);
        let limit = self.config().output_limit_bytes;
        let text = if verbose {
            render_verbose(&result, limit)
        } else {
            render_markdown(&result, limit)
        };
        Ok(Answer::new(text, result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warning_is_in_the_markdown_and_the_structured_result() {
        let mut warned = result("done", "end_turn", false);
        warned.warning = Some("Copilot ran without OpenClaw's memory: not found".into());
        let text = render_markdown(&warned, 10_000);
        assert!(
            text.contains("**Warning**: Copilot ran without OpenClaw's memory"),
            "{text}"
        );
        assert!(
            text.ends_with("Success: yes | Elapsed: 1.2s | Session: s-1"),
            "{text}"
        );
        let value = serde_json::to_value(&warned).unwrap_or_default();
        assert!(value["warning"].is_string(), "{value}");
        let quiet = serde_json::to_value(result("done", "end_turn", false)).unwrap_or_default();
        assert!(quiet.get("warning").is_none(), "{quiet}");
    }

    fn result(text: &str, stop: &str, timed_out: bool) -> TaskResult {
        TaskResult {
            session_id: "s-1".into(),
            stop_reason: stop.into(),
            text: text.into(),
            tool_calls: vec![ToolCallSummary {
                id: "c1".into(),
                title: "Create a.txt".into(),
                kind: "edit".into(),
                status: "completed".into(),
                paths: vec![],
            }],
            denials: vec![Denial {
                title: "rm -rf /".into(),
                kind: "execute".into(),
                command: Some("rm -rf /".into()),
                reason: "blocked pattern".into(),
            }],
            usage: None,
            elapsed_ms: 1234,
            timed_out,
            error: None,
            working_dir: "/w".into(),
            notice: None,
            steps: Some(vec![Step::Permission {
                title: "Create a.txt".into(),
                allowed: true,
                reason: "inside the workspace".into(),
            }]),
            warning: None,
        }
    }

    #[test]
    fn markdown_lists_calls_and_denials_and_ends_with_the_summary_line() {
        let text = render_markdown(&result("Done.", "end_turn", false), 10_240);
        assert!(text.starts_with("Done."), "{text}");
        assert!(text.contains("✓ Create a.txt (edit, completed)"), "{text}");
        assert!(text.contains("rm -rf /: blocked pattern"), "{text}");
        assert!(
            text.ends_with("Success: yes | Elapsed: 1.2s | Session: s-1"),
            "{text}"
        );
    }

    #[test]
    fn a_timed_out_task_says_so_and_is_not_a_success() {
        let text = render_markdown(&result("partial", "cancelled", true), 10_240);
        assert!(text.contains("**Timed out**"), "{text}");
        assert!(text.contains("Success: no"), "{text}");
    }

    #[test]
    fn a_long_answer_is_cut_so_the_summary_line_fits_the_limit() {
        let long = "word ".repeat(10_000);
        let text = render_markdown(&result(&long, "end_turn", false), 4096);
        assert!(text.len() <= 4096, "{}", text.len());
        assert!(text.ends_with("Session: s-1"), "{text}");
    }

    #[test]
    fn the_verbose_log_numbers_each_step_before_the_result() {
        let text = render_verbose(&result("Done.", "end_turn", false), 10_240);
        let log = text
            .find("1. Permission allowed: Create a.txt")
            .unwrap_or(usize::MAX);
        let answer = text.find("## Result").unwrap_or(0);
        assert!(log < answer, "{text}");
        assert!(text.ends_with("Session: s-1"), "{text}");
    }
}
