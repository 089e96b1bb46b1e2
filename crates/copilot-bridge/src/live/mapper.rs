//! Turns the ACP updates of one turn into session events, in order: message and thought chunks
//! become start/delta/end triples (with ids the bridge assigns, since ACP has none), tool calls
//! and their updates become the tool-execution callbacks, and a prompt the bridge sent itself
//! becomes `onGeneratedUserPrompt`. Every text is redacted on the way.

use std::collections::HashSet;

use bridge_core::redact::Redactor;
use serde_json::Value;

use crate::acp::{ToolCall, ToolCallStatus, Update};
use crate::live::event::{Callback, LiveEvent, ToolFailure, ToolResult};

/// A message or reasoning that has started and not ended.
#[derive(Debug)]
struct Open {
    id: String,
    content: String,
}

/// The mapping state of one turn.
#[derive(Debug)]
pub struct EventMapper {
    turn_id: String,
    next_id: u32,
    message: Option<Open>,
    reasoning: Option<Open>,
    started: HashSet<String>,
    ended: HashSet<String>,
}

fn redact(text: &str) -> String {
    Redactor::shared().redact(text).into_owned()
}

impl EventMapper {
    /// A mapper for the turn `turn_id` (ids it assigns start with it).
    pub fn new(turn_id: &str) -> Self {
        Self {
            turn_id: turn_id.to_owned(),
            next_id: 0,
            message: None,
            reasoning: None,
            started: HashSet::new(),
            ended: HashSet::new(),
        }
    }

    fn assign(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("{}-{prefix}{}", self.turn_id, self.next_id)
    }

    /// The events `update` stands for, appended to `out`.
    pub fn map(&mut self, update: &Update, out: &mut Vec<LiveEvent>) {
        match update {
            Update::AgentMessage(block) => {
                if let Some(text) = block.as_text() {
                    self.end_reasoning(out);
                    self.message_delta(text, out);
                }
            }
            Update::AgentThought(block) => {
                if let Some(text) = block.as_text() {
                    self.end_message(out);
                    self.reasoning_delta(text, out);
                }
            }
            Update::ToolCall(call) | Update::ToolCallUpdate(call) => {
                self.finish(out);
                self.tool(call, out);
            }
            Update::Permission(record) => {
                self.finish(out);
                let verdict = if record.allowed { "allowed" } else { "denied" };
                out.push(
                    Callback::ToolExecution {
                        tool_call_id: record.tool_call_id.clone(),
                        delta: redact(&format!("permission {verdict}: {}", record.reason)),
                    }
                    .into(),
                );
            }
            Update::Asking {
                tool_call_id,
                reason,
            } => {
                self.finish(out);
                out.push(
                    Callback::ToolExecution {
                        tool_call_id: tool_call_id.clone(),
                        delta: redact(&format!("waiting for a person's approval: {reason}")),
                    }
                    .into(),
                );
            }
            Update::Interrupted(reason) => {
                self.finish(out);
                out.push(LiveEvent::SessionError {
                    session_error: redact(&format!(
                        "the turn was interrupted ({reason}); the bridge retries it within \
                         COPILOT_MAX_RETRIES"
                    )),
                });
            }
            Update::GeneratedPrompt(prompt) => {
                self.finish(out);
                out.push(
                    Callback::GeneratedUserPrompt {
                        prompt: redact(prompt),
                    }
                    .into(),
                );
            }
            _ => {}
        }
    }

    /// A piece of the agent's answer: starts a message when none is open.
    fn message_delta(&mut self, text: &str, out: &mut Vec<LiveEvent>) {
        let mut open = if let Some(open) = self.message.take() {
            open
        } else {
            let id = self.assign("m");
            out.push(
                Callback::StartMessage {
                    message_id: id.clone(),
                }
                .into(),
            );
            Open {
                id,
                content: String::new(),
            }
        };
        out.push(
            Callback::Message {
                message_id: open.id.clone(),
                delta: redact(text),
            }
            .into(),
        );
        open.content.push_str(text);
        self.message = Some(open);
    }

    /// A piece of the agent's reasoning: starts a reasoning when none is open.
    fn reasoning_delta(&mut self, text: &str, out: &mut Vec<LiveEvent>) {
        let mut open = if let Some(open) = self.reasoning.take() {
            open
        } else {
            let id = self.assign("r");
            out.push(
                Callback::StartReasoning {
                    reasoning_id: id.clone(),
                }
                .into(),
            );
            Open {
                id,
                content: String::new(),
            }
        };
        out.push(
            Callback::Reasoning {
                reasoning_id: open.id.clone(),
                delta: redact(text),
            }
            .into(),
        );
        open.content.push_str(text);
        self.reasoning = Some(open);
    }

    fn tool(&mut self, call: &ToolCall, out: &mut Vec<LiveEvent>) {
        let id = &call.tool_call_id;
        if self.ended.contains(id) {
            return;
        }
        if self.started.insert(id.clone()) {
            let tool_name = call
                .title
                .clone()
                .or_else(|| call.kind.as_ref().map(|k| k.as_str().to_owned()))
                .unwrap_or_else(|| "tool".to_owned());
            let tool_arguments = call
                .raw_input
                .as_ref()
                .map_or_else(|| "{}".to_owned(), Value::to_string);
            out.push(
                Callback::StartToolExecution {
                    tool_call_id: id.clone(),
                    parent_tool_call_id: None,
                    tool_name: redact(&tool_name),
                    tool_arguments: redact(&tool_arguments),
                }
                .into(),
            );
        }
        let output = output_text(call);
        match call.status {
            Some(ToolCallStatus::Completed) => {
                self.ended.insert(id.clone());
                let detailed = call
                    .raw_output
                    .as_ref()
                    .filter(|_| !call.content.is_empty())
                    .map(|raw| redact(&value_text(raw)));
                out.push(
                    Callback::EndToolExecution {
                        tool_call_id: id.clone(),
                        result: Some(ToolResult {
                            content: redact(&output.unwrap_or_default()),
                            detailed_content: detailed,
                        }),
                        error: None,
                    }
                    .into(),
                );
            }
            Some(ToolCallStatus::Failed) => {
                self.ended.insert(id.clone());
                out.push(
                    Callback::EndToolExecution {
                        tool_call_id: id.clone(),
                        result: None,
                        error: Some(ToolFailure {
                            message: redact(&output.unwrap_or_else(|| "the tool failed".into())),
                            code: Some("failed".to_owned()),
                        }),
                    }
                    .into(),
                );
            }
            _ => {
                if let Some(delta) = output.filter(|text| !text.is_empty()) {
                    out.push(
                        Callback::ToolExecution {
                            tool_call_id: id.clone(),
                            delta: redact(&delta),
                        }
                        .into(),
                    );
                }
            }
        }
    }

    fn end_message(&mut self, out: &mut Vec<LiveEvent>) {
        if let Some(open) = self.message.take() {
            out.push(
                Callback::EndMessage {
                    message_id: open.id,
                    complete_content: redact(&open.content),
                }
                .into(),
            );
        }
    }

    fn end_reasoning(&mut self, out: &mut Vec<LiveEvent>) {
        if let Some(open) = self.reasoning.take() {
            out.push(
                Callback::EndReasoning {
                    reasoning_id: open.id,
                    complete_content: redact(&open.content),
                }
                .into(),
            );
        }
    }

    /// Ends the open message and reasoning (at the end of the turn, or before a tool call).
    pub fn finish(&mut self, out: &mut Vec<LiveEvent>) {
        self.end_reasoning(out);
        self.end_message(out);
    }
}

/// The readable output of a tool call: its content's text (diffs named by path), else its raw
/// output.
fn output_text(call: &ToolCall) -> Option<String> {
    let mut parts = Vec::new();
    for item in &call.content {
        match item.get("type").and_then(Value::as_str) {
            Some("content") => {
                if let Some(text) = item.pointer("/content/text").and_then(Value::as_str) {
                    parts.push(text.to_owned());
                }
            }
            Some("diff") => {
                let path = item.get("path").and_then(Value::as_str).unwrap_or("a file");
                parts.push(format!("diff of {path}"));
            }
            Some("terminal") => {
                let terminal = item
                    .get("terminalId")
                    .and_then(Value::as_str)
                    .unwrap_or("?");
                parts.push(format!("terminal {terminal}"));
            }
            _ => {}
        }
    }
    if !parts.is_empty() {
        return Some(parts.join("\n"));
    }
    call.raw_output.as_ref().map(value_text)
}

fn value_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acp::{ContentBlock, ToolKind};
    use serde_json::json;

    fn callbacks(events: &[LiveEvent]) -> Vec<String> {
        events
            .iter()
            .map(|e| match serde_json::to_value(e) {
                Ok(v) => v
                    .get("callback")
                    .and_then(Value::as_str)
                    .unwrap_or("sessionError")
                    .to_owned(),
                Err(err) => err.to_string(),
            })
            .collect()
    }

    #[test]
    fn a_turn_maps_to_ordered_triples_and_tool_callbacks() {
        let mut mapper = EventMapper::new("t1");
        let mut out = Vec::new();
        let updates = [
            Update::AgentThought(ContentBlock::text("let me ")),
            Update::AgentThought(ContentBlock::text("think")),
            Update::AgentMessage(ContentBlock::text("I'll create ")),
            Update::AgentMessage(ContentBlock::text("it.")),
            Update::ToolCall(ToolCall {
                tool_call_id: "call_1".into(),
                title: Some("Creating hello.txt".into()),
                kind: Some(ToolKind::Edit),
                status: Some(ToolCallStatus::Pending),
                raw_input: Some(json!({"path": "hello.txt"})),
                ..ToolCall::default()
            }),
            Update::ToolCallUpdate(ToolCall {
                tool_call_id: "call_1".into(),
                status: Some(ToolCallStatus::Completed),
                content: vec![
                    json!({"type": "content", "content": {"type": "text", "text": "done"}}),
                ],
                ..ToolCall::default()
            }),
            Update::AgentMessage(ContentBlock::text("Done.")),
        ];
        for update in &updates {
            mapper.map(update, &mut out);
        }
        mapper.finish(&mut out);
        assert_eq!(
            callbacks(&out),
            [
                "onStartReasoning",
                "onReasoning",
                "onReasoning",
                "onEndReasoning",
                "onStartMessage",
                "onMessage",
                "onMessage",
                "onEndMessage",
                "onStartToolExecution",
                "onEndToolExecution",
                "onStartMessage",
                "onMessage",
                "onEndMessage",
            ]
        );
        assert_eq!(
            out[7],
            LiveEvent::from(Callback::EndMessage {
                message_id: "t1-m2".into(),
                complete_content: "I'll create it.".into()
            })
        );
        assert_eq!(
            out[9],
            LiveEvent::from(Callback::EndToolExecution {
                tool_call_id: "call_1".into(),
                result: Some(ToolResult {
                    content: "done".into(),
                    detailed_content: None
                }),
                error: None
            })
        );
    }

    #[test]
    fn secrets_are_redacted_in_every_event() -> anyhow::Result<()> {
        let secret = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";
        let mut mapper = EventMapper::new("t1");
        let mut out = Vec::new();
        mapper.map(
            &Update::AgentMessage(ContentBlock::text(format!("token {secret}"))),
            &mut out,
        );
        mapper.map(
            &Update::ToolCall(ToolCall {
                tool_call_id: "c".into(),
                title: Some(format!("echo {secret}")),
                raw_input: Some(json!({"command": format!("echo {secret}")})),
                status: Some(ToolCallStatus::Failed),
                raw_output: Some(json!(secret)),
                ..ToolCall::default()
            }),
            &mut out,
        );
        mapper.map(&Update::GeneratedPrompt(format!("was {secret}")), &mut out);
        mapper.finish(&mut out);
        let text = serde_json::to_string(&out)?;
        assert!(!text.contains(secret), "{text}");
        Ok(())
    }
}
