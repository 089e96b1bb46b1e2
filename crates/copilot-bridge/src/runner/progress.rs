//! What a client sees of a running turn: each update becomes a short progress message (with a
//! heartbeat whenever nothing was said for a while) and, for the verbose tool, a numbered step
//! log; messages go out as redacted MCP progress notifications.

use std::collections::HashMap;
use std::time::Duration;

use bridge_core::redact::Redactor;
use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use serde::Serialize;
use tokio::sync::mpsc;

use crate::acp::{PlanEntry, ToolCall, ToolCallStatus, Update};

/// Longest gap between progress notifications while a turn runs. Clients commonly time a
/// request out after 60 s without progress; 10 s keeps well inside that (the issue asks for
/// at most 15 s) even when a notification is delayed.
pub const HEARTBEAT: Duration = Duration::from_secs(10);
/// Minimum gap between "text so far" progress messages, so a fast stream of chunks does not
/// turn into a flood of notifications.
const TEXT_PROGRESS_GAP: Duration = Duration::from_secs(1);
/// Characters of the answer quoted in a "text so far" progress message.
const PROGRESS_TEXT_CHARS: usize = 120;
/// Characters of a tool's output quoted in the verbose log.
const OUTCOME_CHARS: usize = 200;

/// Where progress notifications go: the client's peer and the token it sent.
#[derive(Debug, Clone)]
pub struct ProgressSink {
    /// The client.
    pub peer: Peer<RoleServer>,
    /// Its progress token for this request.
    pub token: ProgressToken,
}

impl ProgressSink {
    /// The client of a tool call, when it sent a progress token.
    pub fn for_request(context: &rmcp::service::RequestContext<RoleServer>) -> Option<Self> {
        context.meta.get_progress_token().map(|token| Self {
            peer: context.peer.clone(),
            token,
        })
    }
}

/// One entry of the step-by-step log (`copilot_code_verbose`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Step {
    /// The agent started a tool call.
    #[serde(rename_all = "camelCase")]
    ToolStarted {
        /// The call's id.
        tool_call_id: String,
        /// What it does.
        title: String,
        /// Its kind (`edit`, `execute`, …).
        kind: String,
    },
    /// A tool call ended.
    #[serde(rename_all = "camelCase")]
    ToolFinished {
        /// The call's id.
        tool_call_id: String,
        /// What it did.
        title: String,
        /// `completed` or `failed`.
        status: String,
        /// A short quote of its output, if any.
        outcome: Option<String>,
    },
    /// The bridge answered a permission request.
    Permission {
        /// What was asked.
        title: String,
        /// Allowed or not.
        allowed: bool,
        /// Why.
        reason: String,
    },
    /// The agent's plan changed.
    Plan {
        /// The plan's steps with their status.
        entries: Vec<PlanEntry>,
    },
}

/// Turns updates into short progress messages on `messages` (when the client asked for
/// progress), with a heartbeat whenever nothing was said for [`HEARTBEAT`], and collects the
/// step log. Ends when every update sender is gone.
pub(crate) async fn relay(
    mut rx: mpsc::UnboundedReceiver<Update>,
    messages: Option<mpsc::UnboundedSender<String>>,
    observer: Option<mpsc::UnboundedSender<Update>>,
) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut titles: HashMap<String, String> = HashMap::new();
    let started = tokio::time::Instant::now();
    let mut last_said = started;
    let mut text = String::new();
    let mut last_text: Option<tokio::time::Instant> = None;
    loop {
        let update = match tokio::time::timeout_at(last_said + HEARTBEAT, rx.recv()).await {
            Ok(Some(update)) => {
                if let Some(observer) = &observer {
                    // An observer that stopped listening does not stop the turn.
                    let _ = observer.send(update.clone());
                }
                update
            }
            Ok(None) => break,
            Err(_) => {
                if let Some(out) = &messages {
                    let _ = out.send(format!("still working ({}s)", started.elapsed().as_secs()));
                }
                last_said = tokio::time::Instant::now();
                continue;
            }
        };
        let message = match &update {
            Update::AgentMessage(block) => {
                if let Some(chunk) = block.as_text() {
                    text.push_str(chunk);
                }
                if last_text.is_some_and(|t| t.elapsed() < TEXT_PROGRESS_GAP) {
                    None
                } else {
                    last_text = Some(tokio::time::Instant::now());
                    Some(format!("text so far: {}", tail(&text, PROGRESS_TEXT_CHARS)))
                }
            }
            _ => step_of(&update, &mut titles).map(|step| {
                let message = progress_message(&step);
                steps.push(step);
                message
            }),
        };
        if let (Some(out), Some(message)) = (&messages, message) {
            let _ = out.send(message);
            last_said = tokio::time::Instant::now();
        }
    }
    steps
}

/// Sends progress messages as numbered `notifications/progress`, redacted, until the relay
/// ends; the first failure stops it (the client is gone).
pub(crate) async fn forward(mut messages: mpsc::UnboundedReceiver<String>, sink: ProgressSink) {
    let mut count = 0_u32;
    while let Some(message) = messages.recv().await {
        count += 1;
        let message = Redactor::shared().redact(&message).into_owned();
        let param = ProgressNotificationParam::new(sink.token.clone(), f64::from(count))
            .with_message(message);
        if let Err(err) = sink.peer.notify_progress(param).await {
            tracing::debug!(%err, "progress notification failed; not sending more");
            return;
        }
    }
}

/// The log entry for an update, if it is one worth logging.
fn step_of(update: &Update, titles: &mut HashMap<String, String>) -> Option<Step> {
    match update {
        Update::ToolCall(call) => {
            let title = call
                .title
                .clone()
                .unwrap_or_else(|| call.tool_call_id.clone());
            titles.insert(call.tool_call_id.clone(), title.clone());
            match finished(call) {
                Some(step) => Some(step_with_title(step, title)),
                None => Some(Step::ToolStarted {
                    tool_call_id: call.tool_call_id.clone(),
                    title,
                    kind: call
                        .kind
                        .as_ref()
                        .map_or("other", |k| k.as_str())
                        .to_owned(),
                }),
            }
        }
        Update::ToolCallUpdate(call) => {
            if let Some(title) = &call.title {
                titles.insert(call.tool_call_id.clone(), title.clone());
            }
            let title = titles
                .get(&call.tool_call_id)
                .cloned()
                .unwrap_or_else(|| call.tool_call_id.clone());
            finished(call).map(|step| step_with_title(step, title))
        }
        Update::Permission(record) => Some(Step::Permission {
            title: record.title.clone(),
            allowed: record.allowed,
            reason: record.reason.clone(),
        }),
        Update::Plan(entries) => Some(Step::Plan {
            entries: entries.clone(),
        }),
        _ => None,
    }
}

fn step_with_title(step: Step, new_title: String) -> Step {
    match step {
        Step::ToolFinished {
            tool_call_id,
            status,
            outcome,
            ..
        } => Step::ToolFinished {
            tool_call_id,
            title: new_title,
            status,
            outcome,
        },
        other => other,
    }
}

/// A finished-call step when `call` reports a final status.
fn finished(call: &ToolCall) -> Option<Step> {
    let status = match call.status.as_ref()? {
        ToolCallStatus::Completed => "completed",
        ToolCallStatus::Failed => "failed",
        _ => return None,
    };
    Some(Step::ToolFinished {
        tool_call_id: call.tool_call_id.clone(),
        title: String::new(),
        status: status.to_owned(),
        outcome: tool_outcome(call),
    })
}

/// A short quote of what a tool call returned.
fn tool_outcome(call: &ToolCall) -> Option<String> {
    let from_output = call.raw_output.as_ref().map(|output| match output {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(map) => map
            .get("content")
            .or_else(|| map.get("message"))
            .and_then(serde_json::Value::as_str)
            .map_or_else(|| output.to_string(), str::to_owned),
        other => other.to_string(),
    });
    let from_content = || {
        call.content.iter().find_map(|c| {
            c.pointer("/content/text")
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
        })
    };
    from_output
        .or_else(from_content)
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty())
        .map(|s| head(&s, OUTCOME_CHARS))
}

/// The short progress message for a step.
pub fn progress_message(step: &Step) -> String {
    match step {
        Step::ToolStarted { title, kind, .. } => format!("tool started: {title} ({kind})"),
        Step::ToolFinished { title, status, .. } => format!("tool {status}: {title}"),
        Step::Permission { title, allowed, .. } => format!(
            "permission {}: {title}",
            if *allowed { "allowed" } else { "denied" }
        ),
        Step::Plan { entries } => {
            let current = entries
                .iter()
                .find(|e| e.status == "in_progress")
                .or_else(|| entries.iter().find(|e| e.status != "completed"));
            match current {
                Some(entry) => format!("plan step: {}", entry.content),
                None => format!("plan: {} steps done", entries.len()),
            }
        }
    }
}

/// The first `chars` characters, with an ellipsis when cut.
pub(crate) fn head(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The last `chars` characters on one line, with an ellipsis when cut.
fn tail(text: &str, chars: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let count = one_line.chars().count();
    if count <= chars {
        return one_line;
    }
    let cut: String = one_line.chars().skip(count - chars).collect();
    format!("…{cut}")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::acp::{PermissionRecord, ToolKind};

    fn call(id: &str, title: Option<&str>, status: Option<ToolCallStatus>) -> ToolCall {
        ToolCall {
            tool_call_id: id.into(),
            title: title.map(str::to_owned),
            kind: Some(ToolKind::Edit),
            status,
            ..ToolCall::default()
        }
    }

    #[tokio::test]
    async fn the_step_log_follows_tool_calls_permissions_and_plans_in_order() {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut done = call("c1", None, Some(ToolCallStatus::Completed));
        done.raw_output = Some(json!({"content": "Created file /w/a.txt"}));
        for update in [
            Update::Plan(vec![PlanEntry {
                content: "write a.txt".into(),
                priority: "high".into(),
                status: "in_progress".into(),
            }]),
            Update::ToolCall(call(
                "c1",
                Some("Create a.txt"),
                Some(ToolCallStatus::Pending),
            )),
            Update::Permission(PermissionRecord {
                tool_call_id: "c1".into(),
                title: "Create a.txt".into(),
                kind: ToolKind::Edit,
                command: None,
                paths: vec![],
                allowed: true,
                reason: "inside the workspace".into(),
            }),
            Update::ToolCallUpdate(done),
        ] {
            tx.send(update).ok();
        }
        drop(tx);
        let steps = relay(rx, None, None).await;
        let messages: Vec<String> = steps.iter().map(progress_message).collect();
        assert_eq!(
            messages,
            vec![
                "plan step: write a.txt",
                "tool started: Create a.txt (edit)",
                "permission allowed: Create a.txt",
                "tool completed: Create a.txt",
            ]
        );
        assert!(matches!(
            &steps[3],
            Step::ToolFinished { outcome: Some(o), .. } if o == "Created file /w/a.txt"
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn heartbeats_fill_every_silence_and_other_progress_resets_them() {
        let (tx, rx) = mpsc::unbounded_channel();
        let (out, mut messages) = mpsc::unbounded_channel();
        let relay = tokio::spawn(relay(rx, Some(out), None));
        tokio::time::sleep(HEARTBEAT * 2 + Duration::from_secs(1)).await;
        tx.send(Update::ToolCall(call("c1", Some("Run tests"), None)))
            .ok();
        // Updates that say nothing (usage) must not hold the heartbeat back.
        for _ in 0..12 {
            tokio::time::sleep(Duration::from_secs(1)).await;
            tx.send(Update::Usage { used: 1, size: 2 }).ok();
        }
        drop(tx);
        relay.await.ok();
        let mut said = Vec::new();
        while let Ok(message) = messages.try_recv() {
            said.push(message);
        }
        assert_eq!(
            said,
            vec![
                "still working (10s)",
                "still working (20s)",
                "tool started: Run tests (edit)",
                "still working (31s)",
            ]
        );
    }

    #[test]
    fn long_text_is_quoted_by_its_tail() {
        assert_eq!(tail("a  b\nc", 10), "a b c");
        assert_eq!(tail("abcdef", 3), "…def");
        assert_eq!(head("abcdef", 3), "abc…");
    }
}
