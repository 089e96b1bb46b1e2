//! One event of a long-lived session as `copilot_session_live` returns it: a callback in the
//! shape the session API names (`{"callback": "onMessage", "messageId": …, "delta": …}`), or
//! `{"sessionError": …}` for a failure inside the session.

use serde::Serialize;

/// The longest delta a merge may produce, in bytes: under the smallest output limit a client
/// can set (`COPILOT_BRIDGE_OUTPUT_LIMIT` ≥ 1024), so the envelope never cuts a merged delta.
pub const MAX_MERGED_DELTA_BYTES: usize = 1000;

/// One queued event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum LiveEvent {
    /// A callback of the session.
    Callback(Callback),
    /// Something failed inside the session (the turn went on or ended; the session did not).
    SessionError {
        /// What failed, redacted.
        #[serde(rename = "sessionError")]
        session_error: String,
    },
}

/// The result of a finished tool execution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// The readable result.
    pub content: String,
    /// The agent's raw output, when it sent one beside the readable content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detailed_content: Option<String>,
}

/// Why a tool execution failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolFailure {
    /// What went wrong.
    pub message: String,
    /// The agent's status for it (`failed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// The session callbacks, each with its arguments by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "callback", rename_all_fields = "camelCase")]
pub enum Callback {
    /// Reasoning began.
    #[serde(rename = "onStartReasoning")]
    StartReasoning {
        /// Assigned by the bridge (ACP has no reasoning ids).
        reasoning_id: String,
    },
    /// A piece of reasoning.
    #[serde(rename = "onReasoning")]
    Reasoning {
        /// The reasoning it belongs to.
        reasoning_id: String,
        /// The new text.
        delta: String,
    },
    /// Reasoning ended.
    #[serde(rename = "onEndReasoning")]
    EndReasoning {
        /// The reasoning that ended.
        reasoning_id: String,
        /// All of it.
        complete_content: String,
    },
    /// A message began.
    #[serde(rename = "onStartMessage")]
    StartMessage {
        /// Assigned by the bridge (ACP has no message ids).
        message_id: String,
    },
    /// A piece of a message.
    #[serde(rename = "onMessage")]
    Message {
        /// The message it belongs to.
        message_id: String,
        /// The new text.
        delta: String,
    },
    /// A message ended.
    #[serde(rename = "onEndMessage")]
    EndMessage {
        /// The message that ended.
        message_id: String,
        /// All of it.
        complete_content: String,
    },
    /// A tool call began.
    #[serde(rename = "onStartToolExecution")]
    StartToolExecution {
        /// The agent's id for the call.
        tool_call_id: String,
        /// The call that started this one (ACP does not report one).
        parent_tool_call_id: Option<String>,
        /// The call's title, or its kind when it has none.
        tool_name: String,
        /// Its raw input as JSON text.
        tool_arguments: String,
    },
    /// Output or news of a running tool call.
    #[serde(rename = "onToolExecution")]
    ToolExecution {
        /// The call.
        tool_call_id: String,
        /// What happened.
        delta: String,
    },
    /// A tool call ended.
    #[serde(rename = "onEndToolExecution")]
    EndToolExecution {
        /// The call.
        tool_call_id: String,
        /// Its result, when it completed.
        result: Option<ToolResult>,
        /// Why it failed, when it did.
        error: Option<ToolFailure>,
    },
    /// A turn began.
    #[serde(rename = "onAgentStart")]
    AgentStart {
        /// The turn, numbered per session.
        turn_id: String,
    },
    /// A turn ended.
    #[serde(rename = "onAgentEnd")]
    AgentEnd {
        /// The turn.
        turn_id: String,
    },
    /// The session has nothing left to do.
    #[serde(rename = "onIdle")]
    Idle,
    /// A prompt the bridge itself sent into the session (the summary that seeds a replacement
    /// after the Copilot CLI lost the session).
    #[serde(rename = "onGeneratedUserPrompt")]
    GeneratedUserPrompt {
        /// The prompt, redacted.
        prompt: String,
    },
}

impl LiveEvent {
    /// Appends `next` to this event when both are deltas of the same message or reasoning and
    /// the result stays within [`MAX_MERGED_DELTA_BYTES`]; returns whether it did (a full queue merges deltas rather than dropping anything).
    pub fn absorb(&mut self, next: &LiveEvent) -> bool {
        match (self, next) {
            (
                LiveEvent::Callback(Callback::Message { message_id, delta }),
                LiveEvent::Callback(Callback::Message {
                    message_id: next_id,
                    delta: more,
                }),
            ) if message_id == next_id && delta.len() + more.len() <= MAX_MERGED_DELTA_BYTES => {
                delta.push_str(more);
                true
            }
            (
                LiveEvent::Callback(Callback::Reasoning {
                    reasoning_id,
                    delta,
                }),
                LiveEvent::Callback(Callback::Reasoning {
                    reasoning_id: next_id,
                    delta: more,
                }),
            ) if reasoning_id == next_id && delta.len() + more.len() <= MAX_MERGED_DELTA_BYTES => {
                delta.push_str(more);
                true
            }
            _ => false,
        }
    }
}

impl From<Callback> for LiveEvent {
    fn from(callback: Callback) -> Self {
        Self::Callback(callback)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_have_the_callback_shape() -> anyhow::Result<()> {
        let message = LiveEvent::from(Callback::Message {
            message_id: "t1-m1".into(),
            delta: "hi".into(),
        });
        assert_eq!(
            serde_json::to_value(&message)?,
            json!({"callback": "onMessage", "messageId": "t1-m1", "delta": "hi"})
        );
        assert_eq!(
            serde_json::to_value(LiveEvent::from(Callback::Idle))?,
            json!({"callback": "onIdle"})
        );
        let start = LiveEvent::from(Callback::StartToolExecution {
            tool_call_id: "call_1".into(),
            parent_tool_call_id: None,
            tool_name: "Creating hello.txt".into(),
            tool_arguments: "{}".into(),
        });
        assert_eq!(
            serde_json::to_value(&start)?,
            json!({"callback": "onStartToolExecution", "toolCallId": "call_1",
                   "parentToolCallId": null, "toolName": "Creating hello.txt",
                   "toolArguments": "{}"})
        );
        assert_eq!(
            serde_json::to_value(LiveEvent::SessionError {
                session_error: "boom".into()
            })?,
            json!({"sessionError": "boom"})
        );
        Ok(())
    }

    #[test]
    fn only_deltas_of_the_same_message_merge() {
        let delta = |id: &str, text: &str| {
            LiveEvent::from(Callback::Message {
                message_id: id.into(),
                delta: text.into(),
            })
        };
        let mut first = delta("m1", "a");
        assert!(first.absorb(&delta("m1", "b")));
        assert_eq!(first, delta("m1", "ab"));
        assert!(!first.absorb(&delta("m2", "c")));
        assert!(!first.absorb(&LiveEvent::from(Callback::Idle)));
        let mut long = delta("m1", &"x".repeat(MAX_MERGED_DELTA_BYTES - 1));
        assert!(
            !long.absorb(&delta("m1", "yz")),
            "a merge never outgrows the bound"
        );
    }
}
