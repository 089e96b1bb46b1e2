//! The envelope every tool call passes through, the same for both servers: unknown tools are
//! named, the call depth is checked (loops through other programs are refused) and the `_depth`
//! argument stripped, the call itself is judged by the permission policy, the call is audited
//! before and after, argument errors are explained, and everything returned is redacted and cut
//! to the output limit. It also owns the calls in flight, so a shutdown can stop taking new ones
//! and wait for the running ones to answer.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bridge_core::audit::{AuditEntry, AuditError, AuditLog, Hook};
use bridge_core::config::Config;
use bridge_core::depth::{CallDepth, DEPTH_ARGUMENT, DepthError};
use bridge_core::policy::{Decision, Policy, PolicyError, PolicyRequest};
use bridge_core::redact::{Redactor, truncate};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, JsonObject};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::ask_route::{self, Approver, Question, Route};
use crate::confirm;
use crate::sealed::{self, OwnQuestions};
use crate::tool_table::{CallShape, ToolTable};

/// How long a client has to answer a question about a call (MCP 2026-07-28 rounds).
const QUESTION_TTL: Duration = Duration::from_mins(2);

/// The settings of an [`Envelope`].
#[derive(Debug, Clone)]
pub struct EnvelopeSettings {
    /// The server's name, as written in audit records.
    pub server: &'static str,
    /// The depth this process was started at (from its environment), or why it is unusable.
    pub inherited_depth: Result<CallDepth, DepthError>,
    /// Calls at this depth or deeper are refused.
    pub max_depth: u32,
    /// The permission policy.
    pub policy: Arc<Policy>,
    /// The workspace root the policy checks paths against, if any.
    pub workspace: Option<PathBuf>,
    /// Cap on each text returned, in bytes.
    pub output_limit_bytes: usize,
}

/// The envelope. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Envelope {
    settings: EnvelopeSettings,
    audit: AuditLog,
    /// The calls in flight.
    calls: TaskTracker,
    /// Fired when the server stops taking calls.
    closing: CancellationToken,
    /// Who is asked outside the MCP client when the policy says `ask`.
    approver: Option<Arc<dyn Approver>>,
    /// Questions about calls put to MCP 2026-07-28 clients as `input_required` results.
    questions: OwnQuestions,
}

/// Why a server's envelope could not be set up at start.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The policy file is missing or invalid.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The audit directory cannot be used.
    #[error(
        "cannot open the audit log in {dir}; set COPILOT_AUDIT_LOG_DIR to a writable directory"
    )]
    Audit {
        /// The audit directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: AuditError,
    },
}

/// The state and answers of a retry that answers the envelope's own question (MCP
/// 2026-07-28), taken out of the call; a state of the tool's own paused work stays for the tool.
fn own_retry<S>(
    call: &mut ToolCallContext<'_, S>,
) -> Option<(String, Option<rmcp::model::InputResponses>)> {
    match call.request_state.take() {
        Some(state) if OwnQuestions::claims(&state) => Some((state, call.input_responses.take())),
        other => {
            call.request_state = other;
            None
        }
    }
}

/// What asking a person about a call came to.
enum Confirmed {
    /// An explicit yes: run the call at this depth.
    Yes(u32),
    /// Anything else: refuse it.
    No(Refusal, u32),
    /// The question goes back to the client as an `input_required` result.
    Asking(rmcp::model::InputRequiredResult),
}

/// A refusal before the tool ran, and the audit hook it is recorded under.
struct Refusal {
    hook: Hook,
    decision: &'static str,
    message: String,
    /// Set when the policy wants a person to confirm the call: why.
    ask: Option<String>,
}

impl Envelope {
    /// An envelope writing audit records to `audit`.
    pub fn new(settings: EnvelopeSettings, audit: AuditLog) -> Self {
        Self {
            settings,
            audit,
            calls: TaskTracker::new(),
            closing: CancellationToken::new(),
            approver: None,
            questions: OwnQuestions::new(QUESTION_TTL),
        }
    }

    /// Asks `approver` (OpenClaw's approval flow) when the policy says `ask` and the calling
    /// client cannot be asked (or `ask_via` names it).
    #[must_use]
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// The approver outside the MCP client, when one is configured.
    pub fn approver(&self) -> Option<&Arc<dyn Approver>> {
        self.approver.as_ref()
    }

    /// The envelope a server runs with under `config`: the policy file it names (or the built-in
    /// policy), an audit log in its audit directory, its depth limit and output cap. Opens the
    /// audit log, so it must run inside a tokio runtime.
    pub fn from_config(
        config: &Config,
        server: &'static str,
        workspace: Option<PathBuf>,
    ) -> Result<Self, SetupError> {
        let policy = match &config.policy_file {
            Some(path) => Policy::load(path)?,
            None => Policy::default(),
        };
        let audit =
            AuditLog::open(&config.audit_dir, server).map_err(|source| SetupError::Audit {
                dir: config.audit_dir.clone(),
                source,
            })?;
        let settings = EnvelopeSettings {
            server,
            inherited_depth: CallDepth::inherited(config.inherited_depth.as_deref()),
            max_depth: config.max_depth,
            policy: Arc::new(policy),
            workspace,
            output_limit_bytes: config.output_limit_bytes,
        };
        Ok(Self::new(settings, audit))
    }

    /// The permission policy, shared with whatever else must judge by the same rules (the
    /// bridge's ACP permission gate).
    pub fn policy(&self) -> Arc<Policy> {
        Arc::clone(&self.settings.policy)
    }

    /// The audit log, so the server can drain it at shutdown.
    pub fn audit(&self) -> &AuditLog {
        &self.audit
    }

    /// Stops taking calls: every call from now on is refused with an explanation. Calls
    /// already running go on; [`Envelope::wait_for_calls`] waits for them.
    pub fn stop_taking_calls(&self) {
        self.closing.cancel();
        self.calls.close();
    }

    /// Waits up to `grace` for the calls in flight to answer; returns whether they all did.
    pub async fn wait_for_calls(&self, grace: Duration) -> bool {
        self.calls.close();
        tokio::time::timeout(grace, self.calls.wait()).await.is_ok()
    }

    /// How many calls are running now.
    pub fn calls_in_flight(&self) -> usize {
        self.calls.len()
    }

    /// Runs one tool call of `table` inside the envelope.
    pub async fn call<S: Send + Sync + 'static>(
        &self,
        table: &ToolTable<S>,
        call: ToolCallContext<'_, S>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.calls
            .track_future(self.call_tracked(table, call))
            .await
    }

    async fn call_tracked<S: Send + Sync + 'static>(
        &self,
        table: &ToolTable<S>,
        mut call: ToolCallContext<'_, S>,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = Instant::now();
        let tool = call.name.to_string();
        let arguments = call.arguments.clone().unwrap_or_default();
        let router = table.router();

        if self.closing.is_cancelled() {
            let message = format!(
                "{} is shutting down and takes no new calls; retry once the client has restarted it",
                self.settings.server
            );
            self.record(&tool, Hook::Error, 0, |e| {
                e.decision = Some("error".into());
                e.reason = Some(message.clone());
                e.input = Some(Value::Object(arguments.clone()));
            })
            .await;
            return Ok(CallToolResult::error(vec![ContentBlock::text(message)]).into());
        }

        let Some(shape) = table.shape(&tool).filter(|_| router.has_route(&tool)) else {
            let names: Vec<String> = router
                .list_all()
                .into_iter()
                .map(|t| t.name.into())
                .collect();
            let message = format!(
                "unknown tool `{tool}`; this server offers {}",
                names.join(", ")
            );
            self.record(&tool, Hook::Error, 0, |e| {
                e.decision = Some("error".into());
                e.reason = Some(message.clone());
            })
            .await;
            return Err(ErrorData::invalid_params(message, None));
        };

        let admitted = match self.admit(&tool, &shape.describe(&arguments), &arguments) {
            Err((refusal, depth)) if refusal.ask.is_some() => {
                let retry = own_retry(&mut call);
                let context = &call.request_context;
                match self
                    .confirm(&tool, &arguments, refusal, depth, context, retry)
                    .await
                {
                    Confirmed::Yes(depth) => Ok(depth),
                    Confirmed::No(refusal, depth) => Err((refusal, depth)),
                    Confirmed::Asking(question) => {
                        return Ok(CallToolResponse::InputRequired(question));
                    }
                }
            }
            other => other,
        };
        let depth = match admitted {
            Ok(depth) => depth,
            Err((refusal, depth)) => {
                self.record(&tool, refusal.hook, depth, |e| {
                    e.decision = Some(refusal.decision.into());
                    e.reason = Some(refusal.message.clone());
                    e.input = Some(Value::Object(arguments.clone()));
                    e.elapsed_ms = Some(elapsed_ms(started));
                })
                .await;
                return Ok(CallToolResult::error(vec![ContentBlock::text(refusal.message)]).into());
            }
        };
        self.record(&tool, Hook::Pre, depth, |e| {
            e.decision = Some("allow".into());
            e.input = Some(Value::Object(arguments.clone()));
        })
        .await;

        // The depth is the envelope's business; the tools' argument types do not declare it.
        if let Some(arguments) = call.arguments.as_mut() {
            arguments.remove(DEPTH_ARGUMENT);
        }
        let mut response = router.call(call).await;
        if let Ok(CallToolResponse::Complete(result)) = &mut response {
            if result.is_error == Some(true) {
                explain_argument_error(&tool, router, result);
            }
            self.clean(result);
        }
        let (hook, decision, output) = match &response {
            Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => {
                (Hook::Error, "error", text_of(result))
            }
            Ok(CallToolResponse::Complete(result)) => (Hook::Post, "allow", text_of(result)),
            Ok(_) => (Hook::Post, "allow", String::new()),
            Err(error) => (Hook::Error, "error", error.message.to_string()),
        };
        self.record(&tool, hook, depth, |e| {
            e.decision = Some(decision.into());
            e.output = Some(Value::String(output));
            e.elapsed_ms = Some(elapsed_ms(started));
        })
        .await;
        response
    }

    /// Depth and policy checks; on refusal, the refusal and the depth to record.
    fn admit(
        &self,
        tool: &str,
        shape: &CallShape,
        arguments: &JsonObject,
    ) -> Result<u32, (Refusal, u32)> {
        let settings = &self.settings;
        let inherited = match &settings.inherited_depth {
            Ok(depth) => *depth,
            Err(err) => {
                return Err((
                    Refusal {
                        hook: Hook::Denied,
                        decision: "deny",
                        message: err.to_string(),
                        ask: None,
                    },
                    u32::MAX,
                ));
            }
        };
        let argument =
            CallDepth::argument_from_json(arguments.get(DEPTH_ARGUMENT)).map_err(|e| {
                let refusal = Refusal {
                    hook: Hook::Denied,
                    decision: "deny",
                    message: e.to_string(),
                    ask: None,
                };
                (refusal, inherited.get())
            })?;
        let depth = CallDepth::effective(argument, inherited);
        depth.check(settings.max_depth).map_err(|e| {
            let refusal = Refusal {
                hook: Hook::Denied,
                decision: "deny",
                message: e.to_string(),
                ask: None,
            };
            (refusal, depth.get())
        })?;

        let paths: Vec<PathBuf> = shape
            .paths
            .iter()
            .map(|p| absolute(settings.workspace.as_deref(), p))
            .collect();
        let text = Value::Object(arguments.clone()).to_string();
        let decision = settings.policy.evaluate(&PolicyRequest {
            tool,
            kind: shape.kind,
            text: &text,
            paths: &paths,
            workspace: settings.workspace.as_deref(),
        });
        match decision {
            Decision::Allow => Ok(depth.get()),
            Decision::Deny { reason } => Err((
                Refusal {
                    hook: Hook::Denied,
                    decision: "deny",
                    message: format!("the permission policy refused {tool}: {reason}"),
                    ask: None,
                },
                depth.get(),
            )),
            // A person is asked through the client when it can be (see `confirm`); until then
            // this is a refusal, which is what stays when nobody can be asked.
            Decision::Ask { reason } => Err((
                Refusal {
                    hook: Hook::Denied,
                    decision: "ask",
                    message: format!(
                        "the permission policy wants a person to confirm {tool} ({reason})"
                    ),
                    ask: Some(reason),
                },
                depth.get(),
            )),
        }
    }

    /// A call the policy wants a person to confirm: asks the calling client (MCP 2025-xx form
    /// elicitation, or an `input_required` answer on 2026-07-28 whose retry carries the answer
    /// in `retry`) or the approver outside it, as the policy's `ask_via` chooses. Only an
    /// explicit yes admits the call; the refusal says what happened otherwise. The question is
    /// audited with its route and answer when it is answered.
    async fn confirm(
        &self,
        tool: &str,
        arguments: &JsonObject,
        refusal: Refusal,
        depth: u32,
        context: &RequestContext<RoleServer>,
        retry: Option<(String, Option<rmcp::model::InputResponses>)>,
    ) -> Confirmed {
        let started = Instant::now();
        let reason = refusal.ask.clone().unwrap_or_default();
        let question = self.question(tool, arguments, &reason);
        let bound = Value::Object(arguments.clone());
        let rounds = sealed::asks_by_input_required(context);
        let (route_name, answer) = if let Some((state, responses)) = retry {
            let answer = self
                .questions
                .answer(tool, &bound, &state, responses.as_ref())
                .unwrap_or_else(|err| confirm::Confirmation::no(err.to_string()));
            ("client", answer)
        } else {
            let client = if rounds {
                Ok(())
            } else {
                confirm::why_not(&context.peer).map_or(Ok(()), Err)
            };
            let route = ask_route::choose(
                self.settings.policy.ask_via(),
                client,
                self.approver.as_deref(),
            )
            .await;
            let route_name = route.name();
            let answer = match route {
                Route::Client if rounds => {
                    match self.questions.ask(tool, &bound, &question.message) {
                        Ok(asking) => return Confirmed::Asking(asking),
                        Err(err) => confirm::Confirmation::no(err),
                    }
                }
                Route::Client => confirm::ask(&context.peer, &question.message).await,
                Route::Outside(approver) => approver.ask(question).await,
                Route::Nobody(why) => confirm::Confirmation::no(why),
            };
            (route_name, answer)
        };
        self.record(tool, Hook::Permission, depth, |e| {
            e.decision = Some(if answer.allowed { "allow" } else { "deny" }.into());
            e.reason = Some(format!("asked ({route_name}): {reason}; {}", answer.detail));
            e.input = Some(Value::Object(ask_route::audit_facts(
                route_name,
                &answer.facts,
            )));
            e.elapsed_ms = Some(elapsed_ms(started));
        })
        .await;
        if answer.allowed {
            Confirmed::Yes(depth)
        } else {
            Confirmed::No(
                Refusal {
                    message: format!("{}; {}", refusal.message, answer.detail),
                    ask: None,
                    ..refusal
                },
                depth,
            )
        }
    }

    /// The question about a call of this server's own `tool`, redacted.
    fn question(&self, tool: &str, arguments: &JsonObject, reason: &str) -> Question {
        let redactor = Redactor::shared();
        let server = self.settings.server;
        let shown = Value::Object(arguments.clone()).to_string();
        Question {
            title: format!("{server} wants to run its tool {tool}"),
            description: redactor.redact(&format!("{tool} {shown}")).into_owned(),
            detail: redactor
                .redact(&format!(
                    "server: {server}\ntool: {tool}\narguments: {shown}\nasked because: {reason}"
                ))
                .into_owned(),
            message: redactor
                .redact(&format!(
                    "{server} wants to run its tool {tool} with {shown}.\nAsked because: \
                     {reason}.\nAllow this once?"
                ))
                .into_owned(),
            warning: false,
            tool: tool.to_owned(),
            call_id: String::new(),
        }
    }

    /// Redacts and truncates every text block and every string in the structured content.
    fn clean(&self, result: &mut CallToolResult) {
        let redactor = Redactor::shared();
        let limit = self.settings.output_limit_bytes;
        for block in &mut result.content {
            if let ContentBlock::Text(text) = block {
                let clean = redactor.redact(&text.text);
                let cut = truncate(&clean, limit).into_owned();
                text.text = cut;
            }
        }
        if let Some(value) = result.structured_content.as_mut() {
            redactor.redact_json(value);
            truncate_strings(value, limit);
        }
    }

    async fn record(&self, tool: &str, hook: Hook, depth: u32, fill: impl FnOnce(&mut AuditEntry)) {
        if !self.audit.is_enabled() {
            return;
        }
        let mut entry = AuditEntry::new(hook, tool);
        entry.depth = depth;
        fill(&mut entry);
        if let Err(err) = self.audit.record(entry).await {
            tracing::error!(server = self.settings.server, %err, "cannot write the audit record");
        }
    }
}

fn absolute(workspace: Option<&Path>, path: &Path) -> PathBuf {
    match workspace {
        Some(root) if path.is_relative() => root.join(path),
        _ => path.to_path_buf(),
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn truncate_strings(value: &mut Value, limit: usize) {
    match value {
        Value::String(s) if s.len() > limit => *s = truncate(s, limit).into_owned(),
        Value::Array(items) => items.iter_mut().for_each(|v| truncate_strings(v, limit)),
        Value::Object(map) => map.values_mut().for_each(|v| truncate_strings(v, limit)),
        _ => {}
    }
}

/// rmcp reports arguments that do not deserialize as "failed to deserialize parameters: …";
/// name the tool and the arguments it accepts (from its input schema) so the model can fix the
/// call.
fn explain_argument_error<S: Send + Sync + 'static>(
    tool: &str,
    router: &ToolRouter<S>,
    result: &mut CallToolResult,
) {
    const PREFIX: &str = "failed to deserialize parameters: ";
    let accepted = router
        .list_all()
        .into_iter()
        .find(|t| t.name == tool)
        .map(|t| describe_schema(&t.input_schema))
        .unwrap_or_default();
    for block in &mut result.content {
        if let ContentBlock::Text(text) = block
            && let Some(detail) = text.text.strip_prefix(PREFIX)
        {
            text.text = format!("invalid arguments for {tool}: {detail}. It accepts: {accepted}");
        }
    }
}

/// `name (type, required), other (type)` from a JSON schema's properties.
fn describe_schema(schema: &JsonObject) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, prop)| {
                    let ty = prop.get("type").and_then(Value::as_str).unwrap_or("value");
                    if required.contains(&name.as_str()) {
                        format!("{name} ({ty}, required)")
                    } else {
                        format!("{name} ({ty})")
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn schemas_are_described_for_the_model() {
        let schema = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "overwrite": {"type": "boolean"}},
            "required": ["path"]
        });
        let described = describe_schema(schema.as_object().unwrap_or(&JsonObject::new()));
        assert_eq!(described, "overwrite (boolean), path (string, required)");
    }

    #[test]
    fn long_strings_in_structured_content_are_cut() {
        let mut value = json!({"a": ["x".repeat(5000)], "b": "short"});
        truncate_strings(&mut value, 1024);
        assert!(value["a"][0].as_str().is_some_and(|s| s.len() <= 1024 + 64));
        assert_eq!(value["b"], "short");
    }
}
