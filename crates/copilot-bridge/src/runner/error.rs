//! Why a delegated task failed, and how the retry loop judges a failed attempt: an agent that
//! exited or timed out is retried, a rate-limited model waits and is retried, anything else
//! ends the task.

use std::path::PathBuf;

use bridge_core::retry::{self, Classify, ErrorClass, RetryError};

use crate::acp::{AcpError, PromptOutcome, StopReason};

/// Why a task could not run (a turn that ran, even cancelled or timed out, is not an error).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// `workingDir` does not exist, is not a directory, or is outside the workspace.
    #[error(
        "workingDir {} {problem}; pass an existing directory inside the workspace root {} \
         (relative paths start there; set COPILOT_BRIDGE_WORKSPACE or --workspace to delegate \
         elsewhere)", path.display(), root.display()
    )]
    WorkingDir {
        /// The directory as resolved.
        path: PathBuf,
        /// The workspace root relative paths start from.
        root: PathBuf,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The `sessionId` is neither open nor recorded.
    #[error(
        "unknown sessionId {session_id}: the bridge has no record of it (sessions are forgotten \
         after 24 hours unused); omit sessionId to start a new session"
    )]
    UnknownSession {
        /// The id the caller gave.
        session_id: String,
    },
    /// The `sessionId` belongs to another directory than the `workingDir` given.
    #[error(
        "session {session_id} works in {}, not in {}; omit workingDir to continue it, or omit \
         sessionId to start a new session there", session_dir.display(), requested.display()
    )]
    SessionDirMismatch {
        /// The session.
        session_id: String,
        /// Its directory.
        session_dir: PathBuf,
        /// The directory the caller asked for.
        requested: PathBuf,
    },
    /// The Copilot CLI could not be launched or configured.
    #[error("cannot launch the Copilot CLI: {0}")]
    Launch(#[source] AcpError),
    /// The agent failed and retrying did not help.
    #[error("{0}")]
    Agent(#[source] RetryError<Attempt>),
    /// The call was cancelled before the turn started.
    #[error("the task was cancelled before it started")]
    Cancelled,
}

/// A failed attempt seen by the retry loop, which classifies it: worth another try or not.
#[derive(Debug, thiserror::Error)]
pub enum Attempt {
    /// The agent (or talking to it) failed.
    #[error(transparent)]
    Agent(AcpError),
    /// The turn ended normally, but its answer is the CLI's report that the model failed (the
    /// CLI retries the model itself, then answers `end_turn` with `Error: …` as the text).
    #[error("the model failed: {message}")]
    Model {
        /// The CLI's error text.
        message: String,
        /// The turn, kept for the result when no retry helps.
        outcome: Box<PromptOutcome>,
    },
}

impl Classify for Attempt {
    fn classify(&self) -> ErrorClass {
        let class = match self {
            // The supervisor restarts the agent and reloads the session on the next attempt.
            Self::Agent(AcpError::AgentExited { .. } | AcpError::Timeout { .. }) => {
                ErrorClass::Transient
            }
            Self::Agent(AcpError::Rpc { error, .. }) => retry::classify(&error.message),
            Self::Model { message, .. } => retry::classify(message),
            Self::Agent(_) => ErrorClass::Fatal,
        };
        // "Session not found" and the like are not missing files a task could skip.
        if class == ErrorClass::NotFound {
            ErrorClass::Fatal
        } else {
            class
        }
    }
}

/// The CLI's own error report when a turn's answer is one: a turn without tool calls whose
/// whole answer starts with `Error:` (as the CLI words a model failure it gave up on).
pub(crate) fn model_failure(outcome: &PromptOutcome) -> Option<String> {
    let text = outcome.text.trim();
    let ended_normally = outcome.stop_reason == StopReason::EndTurn && !outcome.timed_out;
    (ended_normally && outcome.tool_calls.is_empty() && text.starts_with("Error:"))
        .then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::acp::{RpcError, ToolCall};

    #[test]
    fn agent_exits_and_rate_limits_are_retried_but_unknown_sessions_are_not() {
        let exited = Attempt::Agent(AcpError::AgentExited {
            method: "session/prompt".into(),
            detail: "signal 9".into(),
        });
        assert_eq!(exited.classify(), ErrorClass::Transient);
        let limited = Attempt::Agent(AcpError::Rpc {
            method: "session/prompt".into(),
            error: RpcError::new(-32603, "429 Too Many Requests"),
        });
        assert!(matches!(limited.classify(), ErrorClass::RateLimited { .. }));
        let unknown = Attempt::Agent(AcpError::Rpc {
            method: "session/prompt".into(),
            error: RpcError::new(-32602, "Session abc not found"),
        });
        assert_eq!(unknown.classify(), ErrorClass::Fatal);
        let auth = Attempt::Agent(AcpError::AuthRequired {
            message: "Authentication required".into(),
        });
        assert_eq!(auth.classify(), ErrorClass::Fatal);
    }

    fn outcome(text: &str, tool_calls: Vec<ToolCall>) -> PromptOutcome {
        PromptOutcome {
            session_id: "s".into(),
            stop_reason: StopReason::EndTurn,
            timed_out: false,
            text: text.into(),
            tool_calls,
            permissions: vec![],
            usage: None,
            unknown_updates: 0,
            elapsed_ms: 0,
            notice: None,
        }
    }

    #[test]
    fn only_a_bare_error_answer_counts_as_a_model_failure() {
        let failed = "Error: Failed to get response from the AI model; retried 5 times \
                      Last error: 429 rate limit exceeded";
        assert_eq!(
            model_failure(&outcome(failed, vec![])).as_deref(),
            Some(failed)
        );
        let attempt = Attempt::Model {
            message: failed.into(),
            outcome: Box::new(outcome(failed, vec![])),
        };
        assert!(matches!(attempt.classify(), ErrorClass::RateLimited { .. }));
        assert_eq!(
            model_failure(&outcome("Fixed the Error: type.", vec![])),
            None
        );
        let worked = outcome(
            failed,
            vec![ToolCall {
                tool_call_id: "c1".into(),
                ..ToolCall::default()
            }],
        );
        assert_eq!(model_failure(&worked), None);
    }
}
