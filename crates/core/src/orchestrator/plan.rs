//! The plan a model proposes for a big task: its types ([`Plan`], [`TaskSpec`], the repairs
//! recorded as [`PlanWarning`]s) in `model`, and the lenient parser that digs a plan out of a
//! model's reply in `parse` ([`parse_plan`]).

mod model;
mod parse;

pub use self::model::{Complexity, MAX_TASKS, ParsedPlan, Plan, PlanWarning, TaskSpec};
pub use self::parse::{MAX_REPLY_BYTES, PlanError, parse_plan, parse_plan_value};
