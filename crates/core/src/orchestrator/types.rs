//! The orchestrator's shared vocabulary, the leaf every other orchestrator module may import and
//! which imports none of them: task ids, how a task ended, why a run stopped or a task never
//! started, the scheduling strategy and why a plan fell back to a single task.

use std::borrow::Borrow;
use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The id of one task in a plan, e.g. `t1`. Numeric ids in a model's JSON become their decimal
/// text, so `1` and `"1"` name the same task.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct TaskId(String);

impl TaskId {
    /// Wraps an id.
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Borrow<str> for TaskId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for TaskId {
    fn from(id: &str) -> Self {
        Self(id.to_owned())
    }
}

impl From<String> for TaskId {
    fn from(id: String) -> Self {
        Self(id)
    }
}

/// How a task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TaskStatus {
    /// The runner reported success.
    Succeeded,
    /// The runner reported failure or panicked; the task's dependents were skipped.
    Failed,
    /// Never started because a task it depends on failed.
    Skipped,
    /// Stopped by cancellation or the overall timeout, whether running or not yet started.
    Cancelled,
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
            Self::Cancelled => "cancelled",
        })
    }
}

/// Why a run stopped before every task had its chance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
// The schema keeps its published name: the rename is for Rust readers (ACP has a `StopReason`).
#[schemars(rename = "StopReason")]
pub enum RunStop {
    /// The caller's cancellation token fired.
    Cancelled,
    /// The overall timeout passed.
    TimedOut {
        /// The timeout.
        timeout_ms: u64,
    },
}

impl fmt::Display for RunStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cancelled => f.write_str("the orchestration was cancelled"),
            Self::TimedOut { timeout_ms } => {
                write!(f, "the orchestration timed out after {timeout_ms} ms")
            }
        }
    }
}

/// Why a task never started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum SkipReason {
    /// A task it depends on, directly or through other tasks, failed.
    DependencyFailed {
        /// The task that failed.
        failed: TaskId,
    },
    /// The run was cancelled or timed out before the task could start.
    Stopped {
        /// How the run was stopped.
        stop: RunStop,
    },
}

impl SkipReason {
    /// The status a task skipped for this reason ends with.
    pub fn status(&self) -> TaskStatus {
        match self {
            Self::DependencyFailed { .. } => TaskStatus::Skipped,
            Self::Stopped { .. } => TaskStatus::Cancelled,
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DependencyFailed { failed } => {
                write!(f, "skipped because task {failed} failed")
            }
            Self::Stopped { stop } => write!(f, "not started: {stop}"),
        }
    }
}

/// When a task whose dependencies are done may start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Strategy {
    /// As soon as all its dependencies succeeded and a slot is free. Among ready tasks, the one
    /// heading the longest remaining chain (by complexity) starts first.
    #[default]
    Eager,
    /// Wave by wave: a wave starts when every task of the previous wave has finished, so each
    /// wave waits for its slowest task (the original design's behaviour).
    Waves,
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Eager => "eager",
            Self::Waves => "waves",
        })
    }
}

/// A strategy name that is neither `eager` nor `waves`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown strategy {0:?}; use \"eager\" or \"waves\"")]
pub struct StrategyError(String);

impl FromStr for Strategy {
    type Err = StrategyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "eager" => Ok(Self::Eager),
            "waves" => Ok(Self::Waves),
            _ => Err(StrategyError(text.to_owned())),
        }
    }
}

/// Why the single-task fallback runs instead of a planned graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanFallback {
    /// What went wrong with planning, e.g. `the model's plan is invalid: …`.
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn strategy_reads_its_names() {
        assert_eq!("Eager".parse(), Ok(Strategy::Eager));
        assert_eq!("waves".parse(), Ok(Strategy::Waves));
        assert_eq!(
            "fast".parse::<Strategy>(),
            Err(StrategyError("fast".to_owned()))
        );
    }
}
