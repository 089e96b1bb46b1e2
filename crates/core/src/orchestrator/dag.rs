//! The validated dependency graph of a plan: Kahn's algorithm (which also yields the waves), the
//! cycle error naming the tasks on one cycle, the critical path and the makespan lower bound.

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use super::plan::{Plan, TaskSpec};
use super::types::TaskId;

/// Why a plan is not a valid dependency graph.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DagError {
    /// The plan has no tasks.
    #[error("the plan has no tasks; a plan needs at least one task")]
    Empty,
    /// Two tasks share an id.
    #[error("two tasks share the id {id}; give every task its own id")]
    DuplicateTask {
        /// The shared id.
        id: TaskId,
    },
    /// The dependency map has an entry for a task that is not in the plan.
    #[error(
        "the dependencies name task {task}, which is not in the plan; add it or remove the entry"
    )]
    UnknownTask {
        /// The missing task.
        task: TaskId,
    },
    /// A task depends on a task that is not in the plan.
    #[error(
        "task {task} depends on {dependency}, which is not in the plan; add it or remove the dependency"
    )]
    UnknownDependency {
        /// The task.
        task: TaskId,
        /// The missing task it names.
        dependency: TaskId,
    },
    /// A task depends on itself.
    #[error("task {task} depends on itself; remove that dependency")]
    SelfDependency {
        /// The task.
        task: TaskId,
    },
    /// The dependencies form a cycle.
    #[error("the plan's dependencies form a cycle: {}; remove one of these dependencies", CycleText(.tasks))]
    Cycle {
        /// The tasks on one cycle, each depending on the next and the last on the first,
        /// starting from the one earliest in the plan. Tasks that merely wait on the cycle are
        /// not listed.
        tasks: Vec<TaskId>,
    },
}

/// Renders a cycle as `a needs b needs c needs a`.
struct CycleText<'a>(&'a [TaskId]);

impl fmt::Display for CycleText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for task in self.0 {
            write!(f, "{task} needs ")?;
        }
        match self.0.first() {
            Some(first) => write!(f, "{first}"),
            None => Ok(()),
        }
    }
}

/// The longest chain of dependent tasks under some duration estimate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CriticalPath {
    /// The chain, first task first.
    pub tasks: Vec<TaskId>,
    /// The sum of the chain's durations: no schedule finishes sooner.
    pub length: Duration,
}

/// A plan validated as a directed acyclic graph, with its waves precomputed.
///
/// Tasks are addressed by their position in the plan inside this module; the public API speaks
/// [`TaskId`]s.
#[derive(Debug, Clone)]
pub struct Dag {
    plan: Plan,
    /// For each task, the tasks it depends on (no repeats).
    prerequisites: Vec<Vec<usize>>,
    /// For each task, the tasks that depend on it, in plan order.
    dependents: Vec<Vec<usize>>,
    /// Kahn's algorithm layer by layer: each wave holds the tasks whose dependencies all lie in
    /// earlier waves, in plan order.
    waves: Vec<Vec<usize>>,
    /// For each task, the index of its wave.
    wave_of: Vec<usize>,
}

impl Dag {
    /// Validates `plan` with Kahn's algorithm: every dependency must name another task of the
    /// plan, and the dependencies must not form a cycle.
    pub fn new(plan: &Plan) -> Result<Self, DagError> {
        if plan.tasks.is_empty() {
            return Err(DagError::Empty);
        }
        let mut index = HashMap::with_capacity(plan.tasks.len());
        for (position, task) in plan.tasks.iter().enumerate() {
            if index.insert(&task.id, position).is_some() {
                return Err(DagError::DuplicateTask {
                    id: task.id.clone(),
                });
            }
        }
        let count = plan.tasks.len();
        let mut prerequisites = vec![Vec::new(); count];
        let mut dependents = vec![Vec::new(); count];
        for (task, on) in &plan.dependencies {
            let &position = index
                .get(task)
                .ok_or_else(|| DagError::UnknownTask { task: task.clone() })?;
            for dependency in on {
                if dependency == task {
                    return Err(DagError::SelfDependency { task: task.clone() });
                }
                let &prerequisite =
                    index
                        .get(dependency)
                        .ok_or_else(|| DagError::UnknownDependency {
                            task: task.clone(),
                            dependency: dependency.clone(),
                        })?;
                if !prerequisites[position].contains(&prerequisite) {
                    prerequisites[position].push(prerequisite);
                    dependents[prerequisite].push(position);
                }
            }
        }
        for list in &mut dependents {
            list.sort_unstable();
        }

        // Kahn's algorithm, one layer at a time so the layers are the waves.
        let mut waiting_on: Vec<usize> = prerequisites.iter().map(Vec::len).collect();
        let mut wave: Vec<usize> = (0..count).filter(|&task| waiting_on[task] == 0).collect();
        let mut waves = Vec::new();
        let mut wave_of = vec![0; count];
        let mut placed = 0;
        while !wave.is_empty() {
            let mut next = Vec::new();
            for &task in &wave {
                wave_of[task] = waves.len();
                for &dependent in &dependents[task] {
                    waiting_on[dependent] -= 1;
                    if waiting_on[dependent] == 0 {
                        next.push(dependent);
                    }
                }
            }
            placed += wave.len();
            next.sort_unstable();
            waves.push(std::mem::replace(&mut wave, next));
        }
        if placed < count {
            let cycle = find_cycle(&waiting_on, &prerequisites);
            return Err(DagError::Cycle {
                tasks: cycle
                    .into_iter()
                    .map(|task| plan.tasks[task].id.clone())
                    .collect(),
            });
        }
        Ok(Self {
            plan: plan.clone(),
            prerequisites,
            dependents,
            waves,
            wave_of,
        })
    }

    /// The graph of the fallback plan ([`Plan::single_task`]), which cannot fail validation.
    pub fn single_task(description: impl Into<String>) -> Self {
        Self {
            plan: Plan::single_task(description),
            prerequisites: vec![Vec::new()],
            dependents: vec![Vec::new()],
            waves: vec![vec![0]],
            wave_of: vec![0],
        }
    }

    /// The validated plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The tasks, in plan order.
    pub fn tasks(&self) -> &[TaskSpec] {
        &self.plan.tasks
    }

    /// Number of tasks (never zero).
    pub fn len(&self) -> usize {
        self.plan.tasks.len()
    }

    /// Always `false`: an empty plan does not validate.
    pub fn is_empty(&self) -> bool {
        self.plan.tasks.is_empty()
    }

    /// The waves: wave `k` holds the tasks whose dependencies all lie in waves before `k`, in
    /// plan order. Running the waves one after another respects every dependency.
    pub fn waves(&self) -> Vec<Vec<TaskId>> {
        self.waves
            .iter()
            .map(|wave| wave.iter().map(|&task| self.id(task).clone()).collect())
            .collect()
    }

    /// A topological order: the waves, one after another.
    pub fn topological_order(&self) -> Vec<TaskId> {
        self.waves
            .iter()
            .flatten()
            .map(|&task| self.id(task).clone())
            .collect()
    }

    /// The longest chain of dependent tasks when each task takes `duration(task)`. Ties go to
    /// the chain ending earliest in the plan.
    pub fn critical_path(&self, duration: impl Fn(&TaskSpec) -> Duration) -> CriticalPath {
        let durations: Vec<Duration> = self.plan.tasks.iter().map(duration).collect();
        let (tasks, length) = self.critical_path_of(&durations);
        CriticalPath {
            tasks: tasks
                .into_iter()
                .map(|task| self.id(task).clone())
                .collect(),
            length,
        }
    }

    /// No schedule of this graph on `concurrency` parallel slots finishes sooner than
    /// `max(critical path, total work / concurrency)`. A `concurrency` of 0 counts as 1.
    pub fn lower_bound(
        &self,
        duration: impl Fn(&TaskSpec) -> Duration,
        concurrency: usize,
    ) -> Duration {
        let durations: Vec<Duration> = self.plan.tasks.iter().map(duration).collect();
        self.lower_bound_of(&durations, concurrency)
    }

    /// [`Dag::lower_bound`] with durations by position.
    pub(super) fn lower_bound_of(&self, durations: &[Duration], concurrency: usize) -> Duration {
        let (_, critical) = self.critical_path_of(durations);
        let total: Duration = durations.iter().sum();
        let slots = u32::try_from(concurrency.max(1)).unwrap_or(u32::MAX);
        critical.max(total / slots)
    }

    /// [`Dag::critical_path`] with durations by position.
    pub(super) fn critical_path_of(&self, durations: &[Duration]) -> (Vec<usize>, Duration) {
        let mut finish = vec![Duration::ZERO; self.len()];
        let mut via: Vec<Option<usize>> = vec![None; self.len()];
        for &task in self.waves.iter().flatten() {
            let before = self.prerequisites[task]
                .iter()
                .copied()
                .max_by_key(|&prerequisite| {
                    (finish[prerequisite], std::cmp::Reverse(prerequisite))
                });
            via[task] = before;
            finish[task] = before.map_or(Duration::ZERO, |prerequisite| finish[prerequisite])
                + durations[task];
        }
        let Some(mut last) =
            (0..self.len()).max_by_key(|&task| (finish[task], std::cmp::Reverse(task)))
        else {
            return (Vec::new(), Duration::ZERO);
        };
        let length = finish[last];
        let mut chain = vec![last];
        while let Some(previous) = via[last] {
            chain.push(previous);
            last = previous;
        }
        chain.reverse();
        (chain, length)
    }

    /// For each task, the heaviest chain from it to the end of the graph (itself included)
    /// under `weight`: the usual list-scheduling priority, since a task on a long remaining
    /// chain delays everything after it.
    pub(super) fn remaining_path_weights(&self, weight: impl Fn(&TaskSpec) -> u64) -> Vec<u64> {
        let mut remaining = vec![0; self.len()];
        for &task in self.waves.iter().flatten().rev() {
            let after = self.dependents[task]
                .iter()
                .map(|&dependent| remaining[dependent])
                .max()
                .unwrap_or(0);
            remaining[task] = after + weight(&self.plan.tasks[task]);
        }
        remaining
    }

    pub(super) fn id(&self, task: usize) -> &TaskId {
        &self.plan.tasks[task].id
    }

    pub(super) fn prerequisites_of(&self, task: usize) -> &[usize] {
        &self.prerequisites[task]
    }

    pub(super) fn dependents_of(&self, task: usize) -> &[usize] {
        &self.dependents[task]
    }

    pub(super) fn wave_indices(&self) -> &[Vec<usize>] {
        &self.waves
    }

    pub(super) fn wave_of(&self, task: usize) -> usize {
        self.wave_of[task]
    }
}

/// One cycle among the tasks Kahn's algorithm could not place (`waiting_on > 0`).
///
/// Every unplaced task waits on at least one unplaced task, so walking from any of them to an
/// unplaced prerequisite must revisit a task; the walk from that task onward is a cycle. Tasks
/// that only wait on a cycle lie before the revisit and are left out.
fn find_cycle(waiting_on: &[usize], prerequisites: &[Vec<usize>]) -> Vec<usize> {
    let unplaced = |task: usize| waiting_on[task] > 0;
    let Some(start) = (0..waiting_on.len()).find(|&task| unplaced(task)) else {
        return Vec::new();
    };
    let mut seen_at = HashMap::new();
    let mut walk = Vec::new();
    let mut current = start;
    while !seen_at.contains_key(&current) {
        seen_at.insert(current, walk.len());
        walk.push(current);
        let Some(next) = prerequisites[current]
            .iter()
            .copied()
            .filter(|&task| unplaced(task))
            .min()
        else {
            // Unreachable for an unplaced task; return the walk rather than loop.
            return walk;
        };
        current = next;
    }
    let mut cycle = walk.split_off(seen_at[&current]);
    if let Some(first) = cycle
        .iter()
        .enumerate()
        .min_by_key(|&(_, &task)| task)
        .map(|(at, _)| at)
    {
        cycle.rotate_left(first);
    }
    cycle
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use pretty_assertions::assert_eq;

    use super::*;
    use crate::orchestrator::plan::Complexity;

    fn ids(list: &[&str]) -> Vec<TaskId> {
        list.iter().copied().map(TaskId::from).collect()
    }

    fn plan(tasks: &[&str], dependencies: &[(&str, &[&str])]) -> Plan {
        Plan {
            tasks: tasks
                .iter()
                .map(|&id| TaskSpec::new(id, format!("do {id}")))
                .collect(),
            dependencies: dependencies
                .iter()
                .map(|(task, on)| (TaskId::from(*task), ids(on)))
                .collect(),
        }
    }

    #[test]
    fn waves_group_tasks_by_dependency_depth() -> anyhow::Result<()> {
        let dag = Dag::new(&plan(
            &["t1", "t2", "t3", "t4"],
            &[("t3", &["t1"]), ("t4", &["t2", "t3"])],
        ))?;
        assert_eq!(
            dag.waves(),
            vec![ids(&["t1", "t2"]), ids(&["t3"]), ids(&["t4"])]
        );
        assert_eq!(dag.topological_order(), ids(&["t1", "t2", "t3", "t4"]));
        Ok(())
    }

    #[test]
    fn independent_tasks_form_one_wave_in_plan_order() -> anyhow::Result<()> {
        let dag = Dag::new(&plan(&["c", "a", "b"], &[]))?;
        assert_eq!(dag.waves(), vec![ids(&["c", "a", "b"])]);
        Ok(())
    }

    #[test]
    fn cycle_error_names_only_the_tasks_on_the_cycle() {
        // a → b → c → a is the cycle; d waits on it and e is independent.
        let result = Dag::new(&plan(
            &["e", "d", "c", "b", "a"],
            &[("a", &["b"]), ("b", &["c"]), ("c", &["a"]), ("d", &["c"])],
        ));
        let err = result.err();
        assert_eq!(
            err,
            Some(DagError::Cycle {
                tasks: ids(&["c", "a", "b"])
            })
        );
        assert_eq!(
            err.map(|err| err.to_string()).unwrap_or_default(),
            "the plan's dependencies form a cycle: c needs a needs b needs c; \
             remove one of these dependencies"
        );
    }

    #[test]
    fn two_task_cycle_behind_a_long_waiting_chain_is_found() {
        let result = Dag::new(&plan(
            &["w1", "w2", "w3", "x", "y"],
            &[
                ("w1", &["w2"]),
                ("w2", &["w3"]),
                ("w3", &["x"]),
                ("x", &["y"]),
                ("y", &["x"]),
            ],
        ));
        assert_eq!(
            result.err(),
            Some(DagError::Cycle {
                tasks: ids(&["x", "y"])
            })
        );
    }

    #[test]
    fn rejects_self_dependencies_unknown_references_duplicates_and_empty_plans() {
        let cases = [
            (
                plan(&["a"], &[("a", &["a"])]),
                DagError::SelfDependency {
                    task: TaskId::from("a"),
                },
            ),
            (
                plan(&["a"], &[("a", &["zz"])]),
                DagError::UnknownDependency {
                    task: TaskId::from("a"),
                    dependency: TaskId::from("zz"),
                },
            ),
            (
                plan(&["a"], &[("ghost", &["a"])]),
                DagError::UnknownTask {
                    task: TaskId::from("ghost"),
                },
            ),
            (
                plan(&["a", "a"], &[]),
                DagError::DuplicateTask {
                    id: TaskId::from("a"),
                },
            ),
            (plan(&[], &[]), DagError::Empty),
        ];
        for (input, expected) in cases {
            assert_eq!(Dag::new(&input).err(), Some(expected));
        }
    }

    #[test]
    fn repeated_dependencies_count_once() -> anyhow::Result<()> {
        let dag = Dag::new(&plan(&["a", "b"], &[("b", &["a", "a"])]))?;
        assert_eq!(dag.prerequisites_of(1), &[0]);
        assert_eq!(dag.dependents_of(0), &[1]);
        Ok(())
    }

    #[test]
    fn critical_path_and_lower_bound_follow_the_durations() -> anyhow::Result<()> {
        // a(1) → c(5); b(4) → c. Critical path b, c = 9; total work 10.
        let mut input = plan(&["a", "b", "c"], &[("c", &["a", "b"])]);
        let seconds: BTreeMap<&str, u64> = [("a", 1), ("b", 4), ("c", 5)].into();
        input.tasks[1].complexity = Complexity::L;
        let dag = Dag::new(&input)?;
        let duration = |task: &TaskSpec| Duration::from_secs(seconds[task.id.as_str()]);
        assert_eq!(
            dag.critical_path(duration),
            CriticalPath {
                tasks: ids(&["b", "c"]),
                length: Duration::from_secs(9),
            }
        );
        assert_eq!(dag.lower_bound(duration, 3), Duration::from_secs(9));
        // One slot: all the work in sequence.
        assert_eq!(dag.lower_bound(duration, 1), Duration::from_secs(10));
        assert_eq!(dag.lower_bound(duration, 0), Duration::from_secs(10));
        // Remaining-path priorities by complexity: a = 2 + 2, b = 4 + 2, c = 2.
        assert_eq!(
            dag.remaining_path_weights(|task| u64::from(task.complexity.weight())),
            vec![4, 6, 2]
        );
        Ok(())
    }

    #[test]
    fn single_task_graph_matches_a_validated_single_task_plan() -> anyhow::Result<()> {
        let built = Dag::single_task("everything");
        let validated = Dag::new(&Plan::single_task("everything"))?;
        assert_eq!(built.plan(), validated.plan());
        assert_eq!(built.waves(), validated.waves());
        assert_eq!(built.prerequisites, validated.prerequisites);
        assert_eq!(built.dependents, validated.dependents);
        assert_eq!(built.wave_of, validated.wave_of);
        Ok(())
    }
}
