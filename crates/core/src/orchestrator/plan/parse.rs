//! The lenient plan parser: digs the plan out of a model's reply (raw JSON, fenced JSON, JSON
//! inside prose) and repairs what it can, recording every repair as a [`PlanWarning`].
//!
//! Repairs, in the order they happen:
//! - an entry that is a bare string becomes a task with that description; an entry that is
//!   neither a string nor an object is ignored;
//! - a missing or unusable id becomes `t<position>` (1-based position in the task list), with a
//!   `-2`, `-3`… suffix if that name is taken;
//! - a duplicate id is renamed `<id>-2`, `<id>-3`… when its description differs, and dropped
//!   (its dependencies merged into the first) when it repeats the first task word for word;
//!   dependencies that name a duplicated id mean its first occurrence;
//! - a missing description becomes the task's id; a missing complexity becomes `M`;
//! - dependencies may be given in the plan's map, inline on a task (`dependsOn`, `deps`, …), or
//!   both; self dependencies and references to unknown tasks are dropped.
//!
//! Cycles are not checked here: that is [`Dag::new`](crate::orchestrator::Dag::new)'s job.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::model::{Complexity, MAX_TASKS, ParsedPlan, Plan, PlanWarning, TaskSpec};
use crate::orchestrator::types::TaskId;

/// Longest reply the parser reads: 256 KiB is far beyond any plan of [`MAX_TASKS`] tasks, and the
/// cap bounds the work of searching prose for JSON.
pub const MAX_REPLY_BYTES: usize = 256 * 1024;
/// Most `{` positions tried when the JSON is buried in prose: each try parses the rest of the
/// reply, so this bounds the cost of a reply full of braces.
const MAX_JSON_CANDIDATES: usize = 64;

/// Keys that may hold the task list, in order of preference.
const TASK_LIST_KEYS: &[&str] = &["tasks", "subtasks", "subTasks", "sub_tasks", "steps"];
/// Keys that may hold a task's id.
const ID_KEYS: &[&str] = &["id", "taskId", "task_id"];
/// Keys that may hold a task's description, in order of preference.
const DESCRIPTION_KEYS: &[&str] = &[
    "description",
    "desc",
    "prompt",
    "instructions",
    "task",
    "title",
    "name",
];
/// Keys that may hold a task's complexity estimate.
const COMPLEXITY_KEYS: &[&str] = &[
    "estimatedComplexity",
    "complexity",
    "estimated_complexity",
    "size",
    "effort",
];
/// Keys that may hold a task's own dependency list.
const INLINE_DEPENDENCY_KEYS: &[&str] = &[
    "dependsOn",
    "depends_on",
    "dependencies",
    "deps",
    "requires",
    "after",
    "blockedBy",
];
/// Keys that may hold the plan's dependency map.
const PLAN_DEPENDENCY_KEYS: &[&str] = &["dependencies", "deps", "dependsOn", "depends_on"];

/// Why a reply could not be read as a plan. The caller falls back to a single-task plan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The reply is longer than [`MAX_REPLY_BYTES`].
    #[error("the plan reply is {bytes} bytes, over the {max}-byte limit; ask for a shorter plan")]
    TooLong {
        /// Length of the reply.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// No JSON at all was found.
    #[error(
        "the reply contains no JSON; expected an object like \
         {{\"tasks\":[{{\"id\":\"t1\",\"description\":\"…\"}}],\"dependencies\":{{}}}}"
    )]
    NoJson,
    /// JSON was found, but nothing in it holds a task list.
    #[error(
        "the reply's JSON has no \"tasks\" array; expected {{\"tasks\":[…],\"dependencies\":{{…}}}}"
    )]
    NoTaskList,
    /// The task list is empty (or held nothing usable).
    #[error("the plan has no tasks; a plan needs at least one task")]
    NoTasks,
    /// The task list is longer than [`MAX_TASKS`].
    #[error("the plan has {count} tasks, over the limit of {max}; ask for fewer, larger tasks")]
    TooManyTasks {
        /// Entries in the task list.
        count: usize,
        /// The limit.
        max: usize,
    },
}

/// Reads a plan out of a model's reply.
///
/// Tries, in order: the whole reply as JSON; each fenced code block; then each `{` in the reply,
/// taking the first (so the outermost) object that parses and holds a task list. Trailing commas
/// are forgiven. A bare JSON array is taken as the task list only when it is the whole reply or a
/// whole fenced block. The plan is then repaired as the module docs describe.
pub fn parse_plan(text: &str) -> Result<ParsedPlan, PlanError> {
    if text.len() > MAX_REPLY_BYTES {
        return Err(PlanError::TooLong {
            bytes: text.len(),
            max: MAX_REPLY_BYTES,
        });
    }
    parse_plan_value(&find_plan_json(text)?)
}

/// Reads a plan from JSON already decoded, e.g. a `plan` argument passed by an MCP client.
/// Accepts an object with a task list (or a `{"plan": {…}}` wrapper around one) or a bare array
/// of tasks, and repairs it as the module docs describe.
pub fn parse_plan_value(value: &Value) -> Result<ParsedPlan, PlanError> {
    let (entries, plan_dependencies) = match value {
        Value::Array(entries) => (entries, None),
        Value::Object(object) => {
            let object = unwrap_plan(object);
            let entries = task_list(object).ok_or(PlanError::NoTaskList)?;
            (entries, first_key(object, PLAN_DEPENDENCY_KEYS))
        }
        _ => return Err(PlanError::NoTaskList),
    };
    if entries.len() > MAX_TASKS {
        return Err(PlanError::TooManyTasks {
            count: entries.len(),
            max: MAX_TASKS,
        });
    }
    let mut builder = Builder::new(entries);
    for (index, entry) in entries.iter().enumerate() {
        builder.add_entry(index + 1, entry);
    }
    if builder.tasks.is_empty() {
        return Err(PlanError::NoTasks);
    }
    if let Some(map) = plan_dependencies {
        builder.add_plan_dependencies(map);
    }
    Ok(builder.finish())
}

/// A task as read from the model, before its dependencies are checked.
struct Draft {
    spec: TaskSpec,
    dependencies: Vec<TaskId>,
}

/// Accumulates the repaired tasks and the warnings.
struct Builder {
    /// Every id the model gave explicitly, so generated ids never take one.
    explicit: BTreeSet<TaskId>,
    /// Ids already assigned.
    taken: BTreeSet<TaskId>,
    tasks: Vec<Draft>,
    warnings: Vec<PlanWarning>,
}

impl Builder {
    fn new(entries: &[Value]) -> Self {
        let explicit = entries
            .iter()
            .filter_map(|entry| entry.as_object().and_then(task_id_in))
            .collect();
        Self {
            explicit,
            taken: BTreeSet::new(),
            tasks: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn add_entry(&mut self, position: usize, entry: &Value) {
        let (id, description, complexity, dependencies) = match entry {
            Value::String(text) => (None, non_empty(text), None, Vec::new()),
            Value::Object(task) => {
                let description = first_key(task, DESCRIPTION_KEYS)
                    .and_then(Value::as_str)
                    .and_then(non_empty);
                let complexity = first_key(task, COMPLEXITY_KEYS);
                let dependencies = match first_key(task, INLINE_DEPENDENCY_KEYS) {
                    Some(list) => self.dependency_list(list, task_id_in(task)),
                    None => Vec::new(),
                };
                (task_id_in(task), description, complexity, dependencies)
            }
            other => {
                self.warnings.push(PlanWarning::IgnoredEntry {
                    position,
                    found: json_type(other).to_owned(),
                });
                return;
            }
        };
        let id = match id {
            Some(id) if !self.taken.contains(&id) => id,
            Some(id) => {
                if let Some(first) = self.tasks.iter_mut().find(|draft| draft.spec.id == id)
                    && description.as_deref() == Some(first.spec.description.as_str())
                {
                    first.dependencies.extend(dependencies);
                    self.warnings
                        .push(PlanWarning::DuplicateTask { position, id });
                    return;
                }
                let renamed_to = self.unused(id.as_str());
                self.warnings.push(PlanWarning::DuplicateId {
                    position,
                    id,
                    renamed_to: renamed_to.clone(),
                });
                renamed_to
            }
            None => {
                let id = self.unused(&format!("t{position}"));
                self.warnings.push(PlanWarning::GeneratedId {
                    position,
                    id: id.clone(),
                });
                id
            }
        };
        self.taken.insert(id.clone());
        let description = description.unwrap_or_else(|| {
            self.warnings
                .push(PlanWarning::MissingDescription { task: id.clone() });
            id.to_string()
        });
        let complexity = match complexity {
            None | Some(Value::Null) => Complexity::default(),
            Some(value) => {
                let text = match value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                Complexity::parse(&text).unwrap_or_else(|| {
                    self.warnings.push(PlanWarning::UnknownComplexity {
                        task: id.clone(),
                        value: text,
                    });
                    Complexity::default()
                })
            }
        };
        self.tasks.push(Draft {
            spec: TaskSpec {
                id,
                description,
                complexity,
            },
            dependencies,
        });
    }

    /// An id based on `base` that neither the model nor an earlier repair has used.
    fn unused(&self, base: &str) -> TaskId {
        let free = |id: &TaskId| !self.taken.contains(id) && !self.explicit.contains(id);
        let plain = TaskId::from(base);
        if free(&plain) {
            return plain;
        }
        // Pigeonhole: among this many suffixes at least one is free.
        let enough = self.taken.len() + self.explicit.len() + 2;
        (2..=enough)
            .map(|suffix| TaskId::new(format!("{base}-{suffix}")))
            .find(free)
            .unwrap_or(plain)
    }

    /// Reads one dependency list; `task` names its owner in a warning (`None`: the plan's map).
    fn dependency_list(&mut self, list: &Value, task: Option<TaskId>) -> Vec<TaskId> {
        let mut ids = Vec::new();
        let mut bad = None;
        match list {
            Value::Null => {}
            Value::Array(items) => {
                for item in items {
                    match id_from(item) {
                        Some(id) => ids.push(id),
                        None => bad = Some(json_type(item)),
                    }
                }
            }
            Value::String(text) => {
                ids.extend(text.split(',').filter_map(non_empty).map(TaskId::from));
            }
            other => match id_from(other) {
                Some(id) => ids.push(id),
                None => bad = Some(json_type(other)),
            },
        }
        if let Some(found) = bad {
            self.warnings.push(PlanWarning::InvalidDependencies {
                task,
                found: found.to_owned(),
            });
        }
        ids
    }

    fn add_plan_dependencies(&mut self, map: &Value) {
        let Value::Object(map) = map else {
            self.warnings.push(PlanWarning::InvalidDependencies {
                task: None,
                found: json_type(map).to_owned(),
            });
            return;
        };
        for (key, list) in map {
            let task = TaskId::from(key.trim());
            let ids = self.dependency_list(list, Some(task.clone()));
            match self.tasks.iter_mut().find(|draft| draft.spec.id == task) {
                Some(draft) => draft.dependencies.extend(ids),
                None => self.warnings.push(PlanWarning::UnknownDependent { task }),
            }
        }
    }

    fn finish(mut self) -> ParsedPlan {
        let mut dependencies = BTreeMap::new();
        for draft in &self.tasks {
            let task = &draft.spec.id;
            let mut kept: Vec<TaskId> = Vec::new();
            for dependency in &draft.dependencies {
                if dependency == task {
                    self.warnings
                        .push(PlanWarning::SelfDependency { task: task.clone() });
                } else if !self.taken.contains(dependency) {
                    self.warnings.push(PlanWarning::UnknownDependency {
                        task: task.clone(),
                        dependency: dependency.clone(),
                    });
                } else if !kept.contains(dependency) {
                    kept.push(dependency.clone());
                }
            }
            if !kept.is_empty() {
                dependencies.insert(task.clone(), kept);
            }
        }
        ParsedPlan {
            plan: Plan {
                tasks: self.tasks.into_iter().map(|draft| draft.spec).collect(),
                dependencies,
            },
            warnings: self.warnings,
        }
    }
}

/// Finds the JSON value holding the plan, as [`parse_plan`] describes.
fn find_plan_json(text: &str) -> Result<Value, PlanError> {
    let mut saw_json = false;
    let whole_candidates = std::iter::once(text.trim()).chain(fenced_blocks(text));
    for candidate in whole_candidates {
        if let Some(value) = parse_forgiving(candidate) {
            if holds_plan(&value, true) {
                return Ok(value);
            }
            saw_json = true;
        }
    }
    for (start, _) in text.match_indices('{').take(MAX_JSON_CANDIDATES) {
        if let Some(value) = parse_prefix(&text[start..]) {
            if holds_plan(&value, false) {
                return Ok(value);
            }
            saw_json = true;
        }
    }
    Err(if saw_json {
        PlanError::NoTaskList
    } else {
        PlanError::NoJson
    })
}

/// Whether `value` looks like a plan: an object with a task list, or (when `allow_array`) an
/// array of task-like entries.
fn holds_plan(value: &Value, allow_array: bool) -> bool {
    match value {
        Value::Object(object) => task_list(unwrap_plan(object)).is_some(),
        Value::Array(entries) => {
            allow_array
                && !entries.is_empty()
                && entries
                    .iter()
                    .all(|entry| entry.is_object() || entry.is_string())
        }
        _ => false,
    }
}

/// The contents of each ``` fenced block, without the info string (`json`, …).
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after_fence = &rest[open + 3..];
        let Some(line_end) = after_fence.find('\n') else {
            break;
        };
        let body = &after_fence[line_end + 1..];
        let Some(close) = body.find("```") else {
            break;
        };
        blocks.push(&body[..close]);
        rest = &body[close + 3..];
    }
    blocks
}

/// Parses all of `text` as JSON, forgiving trailing commas.
fn parse_forgiving(text: &str) -> Option<Value> {
    serde_json::from_str(text)
        .ok()
        .or_else(|| serde_json::from_str(&strip_trailing_commas(text)).ok())
}

/// Parses the JSON value at the start of `text`, ignoring whatever follows it.
fn parse_prefix(text: &str) -> Option<Value> {
    let first = |text: &str| {
        serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .next()
            .and_then(Result::ok)
    };
    first(text).or_else(|| first(&strip_trailing_commas(text)))
}

/// Removes commas that directly precede `}` or `]` outside strings: the most common way a model's
/// JSON is invalid.
fn strip_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for (index, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if c == ',' {
            let next = text[index + 1..].trim_start().chars().next();
            if matches!(next, Some('}' | ']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// Steps into a `{"plan": {…}}` wrapper when the object itself has no task list.
fn unwrap_plan(object: &Map<String, Value>) -> &Map<String, Value> {
    if task_list(object).is_none()
        && let Some(Value::Object(inner)) = object.get("plan")
    {
        return inner;
    }
    object
}

fn task_list(object: &Map<String, Value>) -> Option<&Vec<Value>> {
    TASK_LIST_KEYS
        .iter()
        .find_map(|key| object.get(*key).and_then(Value::as_array))
}

fn first_key<'a>(object: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().find_map(|key| object.get(*key))
}

fn task_id_in(task: &Map<String, Value>) -> Option<TaskId> {
    first_key(task, ID_KEYS).and_then(id_from)
}

/// A task id from a string or an integer (`1.0` counts as `1`).
fn id_from(value: &Value) -> Option<TaskId> {
    match value {
        Value::String(text) => non_empty(text).map(TaskId::from),
        Value::Number(number) => {
            if number.is_i64() || number.is_u64() {
                Some(TaskId::new(number.to_string()))
            } else {
                number
                    .as_f64()
                    .filter(|float| float.fract() == 0.0 && float.abs() < 1e15)
                    .map(|float| TaskId::new(format!("{float:.0}")))
            }
        }
        _ => None,
    }
}

fn non_empty(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn id(text: &str) -> TaskId {
        TaskId::from(text)
    }

    fn task(task_id: &str, description: &str, complexity: Complexity) -> TaskSpec {
        TaskSpec::new(task_id, description).with_complexity(complexity)
    }

    fn deps(pairs: &[(&str, &[&str])]) -> BTreeMap<TaskId, Vec<TaskId>> {
        pairs
            .iter()
            .map(|(task, on)| (id(task), on.iter().copied().map(id).collect()))
            .collect()
    }

    #[expect(clippy::unnecessary_wraps, reason = "the case table holds Results")]
    fn parsed(
        tasks: Vec<TaskSpec>,
        dependencies: BTreeMap<TaskId, Vec<TaskId>>,
        warnings: Vec<PlanWarning>,
    ) -> Result<ParsedPlan, PlanError> {
        Ok(ParsedPlan {
            plan: Plan {
                tasks,
                dependencies,
            },
            warnings,
        })
    }

    /// The canonical two-task plan most cases below should come back as.
    fn two_tasks() -> Result<ParsedPlan, PlanError> {
        parsed(
            vec![
                task("t1", "write the parser", Complexity::S),
                task("t2", "test the parser", Complexity::L),
            ],
            deps(&[("t2", &["t1"])]),
            vec![],
        )
    }

    const CANONICAL: &str = r#"{"tasks":[{"id":"t1","description":"write the parser","estimatedComplexity":"S"},{"id":"t2","description":"test the parser","estimatedComplexity":"L"}],"dependencies":{"t2":["t1"]}}"#;

    #[test]
    #[expect(clippy::too_many_lines, reason = "one table of cases")]
    fn parses_malformed_and_edge_case_plans() {
        let long_reply = format!("{}{CANONICAL}", " ".repeat(MAX_REPLY_BYTES));
        let too_many = format!(
            r#"{{"tasks":[{}]}}"#,
            vec![r#""do it""#; MAX_TASKS + 1].join(",")
        );
        let fenced = format!("Here is the plan:\n```json\n{CANONICAL}\n```\nLet me know.");
        let bare_fence = format!("```\n{CANONICAL}\n```");
        let in_prose = format!("Use {{curly}} braces carefully. Plan: {CANONICAL} Done {{ok}}.");
        let cases: Vec<(&str, &str, Result<ParsedPlan, PlanError>)> = vec![
            ("canonical raw JSON", CANONICAL, two_tasks()),
            ("fenced JSON with prose around it", &fenced, two_tasks()),
            ("unlabelled fence", &bare_fence, two_tasks()),
            (
                "JSON in prose without a fence, after braces that are not JSON",
                &in_prose,
                two_tasks(),
            ),
            (
                "trailing commas",
                r#"{"tasks":[{"id":"t1","description":"write the parser","estimatedComplexity":"S",},{"id":"t2","description":"test the parser","estimatedComplexity":"L"},],"dependencies":{"t2":["t1",],},}"#,
                two_tasks(),
            ),
            (
                "plan wrapped in a plan key, lowercase and spelled-out complexities",
                r#"{"plan":{"tasks":[{"id":"t1","description":"write the parser","complexity":"small"},{"id":"t2","description":"test the parser","complexity":"l"}],"dependencies":{"t2":"t1"}}}"#,
                two_tasks(),
            ),
            (
                "dependencies inline on the tasks",
                r#"{"tasks":[{"id":"t1","description":"write the parser","estimatedComplexity":"S"},{"id":"t2","description":"test the parser","estimatedComplexity":"L","dependsOn":["t1"]}]}"#,
                two_tasks(),
            ),
            (
                "missing ids, description under another key, no complexity",
                r#"{"tasks":[{"title":"a"},{"id":"t1","task":"b"},"c"]}"#,
                parsed(
                    vec![
                        task("t1-2", "a", Complexity::M),
                        task("t1", "b", Complexity::M),
                        task("t3", "c", Complexity::M),
                    ],
                    BTreeMap::new(),
                    vec![
                        PlanWarning::GeneratedId {
                            position: 1,
                            id: id("t1-2"),
                        },
                        PlanWarning::GeneratedId {
                            position: 3,
                            id: id("t3"),
                        },
                    ],
                ),
            ),
            (
                "numeric ids and numeric dependency references",
                r#"{"tasks":[{"id":1,"description":"a"},{"id":2,"description":"b","deps":[1]}],"dependencies":{"2":["1"]}}"#,
                parsed(
                    vec![task("1", "a", Complexity::M), task("2", "b", Complexity::M)],
                    deps(&[("2", &["1"])]),
                    vec![],
                ),
            ),
            (
                "unknown, self and repeated dependencies dropped with warnings",
                r#"{"tasks":[{"id":"a","description":"x"},{"id":"b","description":"y"}],"dependencies":{"b":["a","a","b","zz"],"ghost":["a"]}}"#,
                parsed(
                    vec![task("a", "x", Complexity::M), task("b", "y", Complexity::M)],
                    deps(&[("b", &["a"])]),
                    vec![
                        PlanWarning::UnknownDependent { task: id("ghost") },
                        PlanWarning::SelfDependency { task: id("b") },
                        PlanWarning::UnknownDependency {
                            task: id("b"),
                            dependency: id("zz"),
                        },
                    ],
                ),
            ),
            (
                "duplicate id with another description is renamed",
                r#"{"tasks":[{"id":"t1","description":"a"},{"id":"t1","description":"b"},{"id":"t2","description":"c","dependsOn":"t1"}]}"#,
                parsed(
                    vec![
                        task("t1", "a", Complexity::M),
                        task("t1-2", "b", Complexity::M),
                        task("t2", "c", Complexity::M),
                    ],
                    deps(&[("t2", &["t1"])]),
                    vec![PlanWarning::DuplicateId {
                        position: 2,
                        id: id("t1"),
                        renamed_to: id("t1-2"),
                    }],
                ),
            ),
            (
                "verbatim repeat of a task is dropped, its dependencies merged",
                r#"{"tasks":[{"id":"t0","description":"z"},{"id":"t1","description":"a"},{"id":"t1","description":"a","deps":["t0"]}]}"#,
                parsed(
                    vec![
                        task("t0", "z", Complexity::M),
                        task("t1", "a", Complexity::M),
                    ],
                    deps(&[("t1", &["t0"])]),
                    vec![PlanWarning::DuplicateTask {
                        position: 3,
                        id: id("t1"),
                    }],
                ),
            ),
            (
                "missing description, unknown complexity, junk entries and bad dependency shapes",
                r#"{"tasks":[{"id":"t1","estimatedComplexity":"XXL"},null,42,{"id":"t4","description":"  ","dependsOn":{"x":1}}],"dependencies":["t4","t1"]}"#,
                parsed(
                    vec![
                        task("t1", "t1", Complexity::M),
                        task("t4", "t4", Complexity::M),
                    ],
                    BTreeMap::new(),
                    vec![
                        PlanWarning::MissingDescription { task: id("t1") },
                        PlanWarning::UnknownComplexity {
                            task: id("t1"),
                            value: "XXL".to_owned(),
                        },
                        PlanWarning::IgnoredEntry {
                            position: 2,
                            found: "null".to_owned(),
                        },
                        PlanWarning::IgnoredEntry {
                            position: 3,
                            found: "number".to_owned(),
                        },
                        PlanWarning::InvalidDependencies {
                            task: Some(id("t4")),
                            found: "object".to_owned(),
                        },
                        PlanWarning::MissingDescription { task: id("t4") },
                        PlanWarning::InvalidDependencies {
                            task: None,
                            found: "array".to_owned(),
                        },
                    ],
                ),
            ),
            (
                "a bare array of tasks with a comma-separated dependency string",
                r#"[{"id":"a","description":"x"},{"id":"b","description":"y"},{"id":"c","description":"z","after":"a, b"}]"#,
                parsed(
                    vec![
                        task("a", "x", Complexity::M),
                        task("b", "y", Complexity::M),
                        task("c", "z", Complexity::M),
                    ],
                    deps(&[("c", &["a", "b"])]),
                    vec![],
                ),
            ),
            (
                "subtasks key and an ignored inner example object before it",
                r#"I considered {"id":"x"} first. {"subtasks":[{"id":"t1","description":"write the parser","size":"S"},{"id":"t2","description":"test the parser","size":"L","requires":["t1"]}]}"#,
                two_tasks(),
            ),
            ("empty reply", "", Err(PlanError::NoJson)),
            (
                "prose only",
                "I cannot split this task.",
                Err(PlanError::NoJson),
            ),
            (
                "JSON without a task list",
                r#"{"answer":"just do it"}"#,
                Err(PlanError::NoTaskList),
            ),
            (
                "empty task list",
                r#"{"tasks":[]}"#,
                Err(PlanError::NoTasks),
            ),
            (
                "task list of junk only",
                r#"{"tasks":[null, true]}"#,
                Err(PlanError::NoTasks),
            ),
            (
                "tasks is not an array",
                r#"{"tasks":{"t1":"a"}}"#,
                Err(PlanError::NoTaskList),
            ),
            (
                "truncated JSON",
                r#"{"tasks":[{"id":"t1","description":"write"#,
                Err(PlanError::NoJson),
            ),
            (
                "too many tasks",
                &too_many,
                Err(PlanError::TooManyTasks {
                    count: MAX_TASKS + 1,
                    max: MAX_TASKS,
                }),
            ),
            (
                "reply over the size limit",
                &long_reply,
                Err(PlanError::TooLong {
                    bytes: long_reply.len(),
                    max: MAX_REPLY_BYTES,
                }),
            ),
        ];
        assert!(cases.len() >= 15);
        for (name, input, expected) in cases {
            assert_eq!(parse_plan(input), expected, "case: {name}");
        }
    }

    #[test]
    fn serialized_plan_parses_back_unchanged() -> anyhow::Result<()> {
        let ParsedPlan { plan, .. } = parse_plan(CANONICAL)?;
        let text = serde_json::to_string(&plan)?;
        assert_eq!(text, CANONICAL);
        assert_eq!(parse_plan(&text)?.plan, plan);
        let strict: Plan = serde_json::from_str(&text)?;
        assert_eq!(strict, plan);
        Ok(())
    }

    #[test]
    fn warnings_serialize_camel_case_and_read_as_sentences() -> anyhow::Result<()> {
        let warning = PlanWarning::UnknownDependency {
            task: id("t2"),
            dependency: id("t9"),
        };
        assert_eq!(
            serde_json::to_value(&warning)?,
            serde_json::json!({"kind": "unknownDependency", "task": "t2", "dependency": "t9"})
        );
        assert_eq!(
            warning.to_string(),
            "task t2 depends on t9, which is not in the plan; dropped that dependency"
        );
        Ok(())
    }

    #[test]
    fn single_task_plan_holds_the_whole_task() {
        assert_eq!(
            Plan::single_task("do everything"),
            Plan {
                tasks: vec![task("t1", "do everything", Complexity::L)],
                dependencies: BTreeMap::new(),
            }
        );
    }
}
