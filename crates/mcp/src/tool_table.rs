//! Tools as data. Each server declares its tools once, in one table of [`ToolSpec`]s: the route
//! (the `#[tool]` method, which carries the name, the argument type, the description and the
//! annotations) and how the permission policy sees a call ([`PolicyShape`]). Routing, the policy
//! call shape, the `_depth` argument and the listed schemas all come from that table, so a tool
//! cannot exist without a policy shape, and renaming one cannot silently change how it is judged.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use bridge_core::depth::DEPTH_ARGUMENT;
use bridge_core::policy::ActionKind;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::model::{JsonObject, Tool};
use serde_json::Value;

/// What a tool call does, as the permission policy needs to see it.
#[derive(Debug, Clone)]
pub struct CallShape {
    /// The kind of action.
    pub kind: ActionKind,
    /// Paths the call touches (relative ones are taken from the workspace root).
    pub paths: Vec<PathBuf>,
}

/// How the policy sees every call of one tool: its kind, and which argument (if any) names the
/// path it touches.
#[derive(Debug, Clone, Copy)]
pub struct PolicyShape {
    kind: ActionKind,
    path_argument: Option<&'static str>,
    default_path: Option<&'static str>,
}

impl PolicyShape {
    /// Reads the path named by `argument`, or `default` when the argument is absent.
    pub const fn read(argument: &'static str, default: Option<&'static str>) -> Self {
        Self {
            kind: ActionKind::Read,
            path_argument: Some(argument),
            default_path: default,
        }
    }

    /// Reads without naming a path (the tool confines its own reads).
    pub const fn read_only() -> Self {
        Self {
            kind: ActionKind::Read,
            path_argument: None,
            default_path: None,
        }
    }

    /// Creates or changes the file named by `argument`.
    pub const fn edit(argument: &'static str) -> Self {
        Self {
            kind: ActionKind::Edit,
            path_argument: Some(argument),
            default_path: None,
        }
    }

    /// Hands a task to an agent working in the directory named by `argument` (default: the
    /// workspace root). The call itself is `Other`, so the built-in destructive-command rules and
    /// blocked patterns see the whole task text; each step the agent takes is judged again when
    /// it asks for permission.
    pub const fn delegate(argument: &'static str) -> Self {
        Self {
            kind: ActionKind::Other,
            path_argument: Some(argument),
            default_path: Some("."),
        }
    }

    /// Hands more work to an agent session that already has its directory (a query to a
    /// long-lived session): `Other`, so the task text meets the command rules and blocked
    /// patterns, with no path of its own.
    pub const fn converse() -> Self {
        Self {
            kind: ActionKind::Other,
            path_argument: None,
            default_path: None,
        }
    }

    /// The shape of one call with `arguments`.
    pub fn describe(&self, arguments: &JsonObject) -> CallShape {
        let paths = self
            .path_argument
            .and_then(|name| arguments.get(name).and_then(Value::as_str))
            .or(self.default_path)
            .map(PathBuf::from)
            .into_iter()
            .collect();
        CallShape {
            kind: self.kind,
            paths,
        }
    }
}

/// One row of a server's tool table.
#[derive(Debug)]
pub struct ToolSpec<S> {
    route: ToolRoute<S>,
    shape: PolicyShape,
    long_running: bool,
}

impl<S: Send + Sync + 'static> ToolSpec<S> {
    /// A tool: its route (`ToolRoute::new(Self::x_tool_attr(), Self::x)` for a `#[tool]` method
    /// `x`) and its policy shape.
    pub fn new(route: ToolRoute<S>, shape: PolicyShape) -> Self {
        Self {
            route,
            shape,
            long_running: false,
        }
    }

    /// The tool may run for minutes: a client that declares the MCP tasks extension gets a
    /// task for each call of it instead of a response held open.
    #[must_use]
    pub fn long_running(mut self) -> Self {
        self.long_running = true;
        self
    }
}

/// A server's tools, built from its table.
#[derive(Debug)]
pub struct ToolTable<S> {
    router: ToolRouter<S>,
    shapes: HashMap<String, PolicyShape>,
    long_running: Vec<String>,
}

impl<S> Clone for ToolTable<S> {
    fn clone(&self) -> Self {
        Self {
            router: self.router.clone(),
            shapes: self.shapes.clone(),
            long_running: self.long_running.clone(),
        }
    }
}

/// The `_depth` argument every tool accepts, as it appears in each input schema.
#[derive(schemars::JsonSchema)]
#[expect(dead_code, reason = "only its JSON schema is used")]
struct DepthArgument {
    /// Call depth for loop detection; pass your own depth + 1 when calling from a tool.
    #[serde(default, rename = "_depth")]
    #[schemars(with = "u32")]
    depth: Option<u32>,
}

impl<S: Send + Sync + 'static> ToolTable<S> {
    /// The table of `specs`. Every input schema gets the `_depth` argument, which the envelope
    /// reads and strips before a tool sees its arguments, and loses schemars' `"default": null`
    /// (see [`plain_input_schemas`](crate::plain_input_schemas)).
    ///
    /// # Panics
    /// Two rows with the same tool name: a programming error the servers' unit tests catch.
    pub fn new(specs: impl IntoIterator<Item = ToolSpec<S>>) -> Self {
        let depth = depth_property();
        let mut router = ToolRouter::new();
        let mut shapes = HashMap::new();
        let mut long_running = Vec::new();
        for ToolSpec {
            mut route,
            shape,
            long_running: long,
        } in specs
        {
            let name = route.name().to_owned();
            if long {
                long_running.push(name.clone());
            }
            let mut schema = route.attr.input_schema.as_ref().clone();
            // A tool without arguments may have no `properties` yet.
            if let Value::Object(properties) = schema
                .entry("properties")
                .or_insert_with(|| Value::Object(serde_json::Map::new()))
            {
                properties.insert(DEPTH_ARGUMENT.to_owned(), depth.clone());
            }
            route.attr.input_schema = Arc::new(schema);
            assert!(
                shapes.insert(name.clone(), shape).is_none(),
                "tool {name} is declared twice"
            );
            router.add_route(route);
        }
        crate::plain_input_schemas(&mut router);
        Self {
            router,
            shapes,
            long_running,
        }
    }

    /// The router over every tool.
    pub fn router(&self) -> &ToolRouter<S> {
        &self.router
    }

    /// How the policy sees `tool`, if this table has it.
    pub fn shape(&self, tool: &str) -> Option<&PolicyShape> {
        self.shapes.get(tool)
    }

    /// Whether `tool` may run as an MCP task.
    pub fn is_long_running(&self, tool: &str) -> bool {
        self.long_running.iter().any(|t| t == tool)
    }

    /// Whether any tool may run as an MCP task (the server then offers the tasks extension).
    pub fn has_long_running(&self) -> bool {
        !self.long_running.is_empty()
    }

    /// The tools, as listed to clients.
    pub fn tools(&self) -> Vec<Tool> {
        self.router.list_all()
    }

    /// The tool names, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.shapes.keys().cloned().collect();
        names.sort();
        names
    }
}

/// The schema of the `_depth` property, exactly as schemars writes it for an optional `u32`.
fn depth_property() -> Value {
    let schema = schemars::schema_for!(DepthArgument);
    schema
        .as_value()
        .get("properties")
        .and_then(|p| p.get(DEPTH_ARGUMENT))
        .cloned()
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_depth_property_is_an_optional_integer_with_its_description() {
        let property = depth_property();
        assert_eq!(property["type"], "integer", "{property}");
        assert_eq!(property["format"], "uint32", "{property}");
        assert!(
            property["description"]
                .as_str()
                .is_some_and(|d| d.contains("depth + 1")),
            "{property}"
        );
    }

    #[test]
    fn shapes_take_the_named_argument_or_their_default() {
        let arguments = json!({"path": "src/a.rs", "workingDir": "sub"});
        let arguments = arguments.as_object().cloned().unwrap_or_default();
        let read = PolicyShape::read("path", None).describe(&arguments);
        assert_eq!(read.kind, ActionKind::Read);
        assert_eq!(read.paths, vec![PathBuf::from("src/a.rs")]);
        let list = PolicyShape::read("directory", Some(".")).describe(&arguments);
        assert_eq!(list.paths, vec![PathBuf::from(".")]);
        let task = PolicyShape::delegate("workingDir").describe(&arguments);
        assert_eq!(task.kind, ActionKind::Other);
        assert_eq!(task.paths, vec![PathBuf::from("sub")]);
        let edit = PolicyShape::edit("path").describe(&JsonObject::new());
        assert!(edit.paths.is_empty());
        assert!(
            PolicyShape::read_only()
                .describe(&arguments)
                .paths
                .is_empty()
        );
    }
}
