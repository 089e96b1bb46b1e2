//! The plan's types: the tasks a model proposed, their sizes and dependencies, and the
//! repairs the parser made to get there ([`PlanWarning`]). Nothing here reads JSON text.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::orchestrator::types::TaskId;

/// Most sub-tasks a plan may have: with at most 10 sessions in parallel, a plan of more than 64
/// sub-tasks is a model that lost track, not a decomposition.
pub const MAX_TASKS: usize = 64;

/// How big a task looks to the planner. The scheduler uses it as a duration estimate when it
/// picks which ready task to start first.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum Complexity {
    /// Small: minutes of work.
    S,
    /// Medium: the default when the planner gave no estimate.
    #[default]
    M,
    /// Large: the biggest pieces of the task.
    L,
}

impl Complexity {
    /// Relative duration estimate: each size is taken to be about twice the one below it, the
    /// usual reading of T-shirt sizes.
    pub fn weight(self) -> u32 {
        match self {
            Self::S => 1,
            Self::M => 2,
            Self::L => 4,
        }
    }

    /// Reads an estimate leniently: `S`/`small`/`low`, `M`/`medium`, `L`/`large`/`high`, any case.
    pub(super) fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "s" | "xs" | "small" | "low" | "easy" | "trivial" => Some(Self::S),
            "m" | "medium" | "med" | "moderate" | "normal" => Some(Self::M),
            "l" | "xl" | "large" | "high" | "hard" | "big" => Some(Self::L),
            _ => None,
        }
    }
}

impl fmt::Display for Complexity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::S => "S",
            Self::M => "M",
            Self::L => "L",
        })
    }
}

/// One sub-task of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskSpec {
    /// Unique id within the plan, e.g. `t1`.
    pub id: TaskId,
    /// A complete instruction for the session that carries the task out.
    pub description: String,
    /// Size estimate: `S`, `M` or `L`.
    #[serde(rename = "estimatedComplexity", alias = "complexity", default)]
    pub complexity: Complexity,
}

impl TaskSpec {
    /// A task of medium complexity.
    pub fn new(id: impl Into<TaskId>, description: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            description: description.into(),
            complexity: Complexity::M,
        }
    }

    /// The same task with another complexity.
    #[must_use]
    pub fn with_complexity(mut self, complexity: Complexity) -> Self {
        self.complexity = complexity;
        self
    }
}

/// A plan: the tasks and, for each task, the tasks that must finish before it starts.
///
/// On the wire: `{"tasks":[{"id":"t1","description":"…","estimatedComplexity":"S"}],
/// "dependencies":{"t2":["t1"]}}`. Deserializing it directly is strict; [`parse_plan`] and
/// [`parse_plan_value`] are the lenient way in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// The sub-tasks, in the planner's order (which breaks ties when scheduling).
    pub tasks: Vec<TaskSpec>,
    /// Task id → ids of the tasks it depends on. Tasks without dependencies may be absent.
    #[serde(default)]
    pub dependencies: BTreeMap<TaskId, Vec<TaskId>>,
}

impl Plan {
    /// The fallback plan: the whole task as one sub-task `t1`.
    pub fn single_task(description: impl Into<String>) -> Self {
        Self {
            tasks: vec![TaskSpec::new("t1", description).with_complexity(Complexity::L)],
            dependencies: BTreeMap::new(),
        }
    }
}

/// A plan parsed from a model's reply, with every repair the parser made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedPlan {
    /// The repaired plan. Not yet checked for cycles.
    pub plan: Plan,
    /// What the parser changed or dropped, in the order it did so.
    pub warnings: Vec<PlanWarning>,
}

/// One repair the lenient parser made to a model's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum PlanWarning {
    /// An entry of the task list was neither an object nor a string.
    IgnoredEntry {
        /// 1-based position in the task list.
        position: usize,
        /// The JSON type found instead (`number`, `null`, …).
        found: String,
    },
    /// A task had no usable id, so one was generated.
    GeneratedId {
        /// 1-based position in the task list.
        position: usize,
        /// The id given to it.
        id: TaskId,
    },
    /// A task reused another task's id with a different description, so it was renamed.
    DuplicateId {
        /// 1-based position in the task list.
        position: usize,
        /// The reused id, which keeps naming the first task.
        id: TaskId,
        /// The task's new id.
        renamed_to: TaskId,
    },
    /// A task repeated an earlier one (same id, same description), so it was dropped and its
    /// dependencies merged into the earlier one.
    DuplicateTask {
        /// 1-based position in the task list.
        position: usize,
        /// The repeated id.
        id: TaskId,
    },
    /// A task had no description; its id stands in for one.
    MissingDescription {
        /// The task.
        task: TaskId,
    },
    /// A task's complexity was not recognised; `M` was assumed.
    UnknownComplexity {
        /// The task.
        task: TaskId,
        /// The value given.
        value: String,
    },
    /// A task depended on itself; that dependency was dropped.
    SelfDependency {
        /// The task.
        task: TaskId,
    },
    /// A task depended on a task that is not in the plan; that dependency was dropped.
    UnknownDependency {
        /// The task.
        task: TaskId,
        /// The missing task it named.
        dependency: TaskId,
    },
    /// The dependency map had an entry for a task that is not in the plan; it was dropped.
    UnknownDependent {
        /// The id the entry was keyed by.
        task: TaskId,
    },
    /// A dependency list (or the plan's dependency map) had the wrong shape and was ignored.
    InvalidDependencies {
        /// The task whose list it was; `None` for the plan's map.
        task: Option<TaskId>,
        /// The JSON type found instead.
        found: String,
    },
}

impl fmt::Display for PlanWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::IgnoredEntry { position, found } => {
                write!(
                    f,
                    "task entry {position} is a {found}, not a task; ignored it"
                )
            }
            Self::GeneratedId { position, id } => {
                write!(f, "task {position} had no usable id; called it {id}")
            }
            Self::DuplicateId {
                position,
                id,
                renamed_to,
            } => write!(
                f,
                "task {position} reuses the id {id} with another description; renamed it {renamed_to}"
            ),
            Self::DuplicateTask { position, id } => {
                write!(f, "task {position} repeats task {id}; dropped the repeat")
            }
            Self::MissingDescription { task } => {
                write!(
                    f,
                    "task {task} has no description; its id stands in for one"
                )
            }
            Self::UnknownComplexity { task, value } => write!(
                f,
                "task {task} has complexity {value:?}, which is not S, M or L; assumed M"
            ),
            Self::SelfDependency { task } => {
                write!(f, "task {task} depends on itself; dropped that dependency")
            }
            Self::UnknownDependency { task, dependency } => write!(
                f,
                "task {task} depends on {dependency}, which is not in the plan; dropped that dependency"
            ),
            Self::UnknownDependent { task } => write!(
                f,
                "the dependencies name task {task}, which is not in the plan; dropped its entry"
            ),
            Self::InvalidDependencies {
                task: Some(task),
                found,
            } => write!(
                f,
                "task {task}'s dependencies are a {found}, not a list of task ids; ignored them"
            ),
            Self::InvalidDependencies { task: None, found } => write!(
                f,
                "the plan's dependencies are a {found}, not a map from task id to ids; ignored them"
            ),
        }
    }
}
