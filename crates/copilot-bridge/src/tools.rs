//! The bridge's MCP tools, one file per group, and the table that declares them: each tool's
//! route (its `#[tool]` method: name, arguments, description, annotations) and how the
//! permission policy sees a call of it.

use bridge_mcp::{PolicyShape, ToolSpec, ToolTable};
use rmcp::handler::server::router::tool::ToolRoute;

use crate::server::BridgeServer;

/// `copilot_code_task`, `copilot_code`, `copilot_code_verbose`.
pub(crate) mod code;
/// `copilot_read_file`, `copilot_create_file`, `copilot_list_files`.
pub(crate) mod files;
/// `copilot_orchestrate`.
pub(crate) mod orchestrate;

type Server = BridgeServer;

/// Every tool of the bridge. A delegated task is judged as a whole by the policy (its text
/// against the blocked patterns and commands, its directory against the workspace); each step
/// the agent then takes is judged again when it asks for permission. Delegated tasks run for
/// minutes, so a client that declares the MCP tasks extension gets them as tasks.
pub(crate) fn table() -> ToolTable<Server> {
    ToolTable::new([
        ToolSpec::new(
            ToolRoute::new(
                Server::copilot_read_file_tool_attr(),
                Server::copilot_read_file,
            ),
            PolicyShape::read("path", None),
        ),
        ToolSpec::new(
            ToolRoute::new(
                Server::copilot_list_files_tool_attr(),
                Server::copilot_list_files,
            ),
            PolicyShape::read("directory", Some(".")),
        ),
        ToolSpec::new(
            ToolRoute::new(
                Server::copilot_create_file_tool_attr(),
                Server::copilot_create_file,
            ),
            PolicyShape::edit("path"),
        ),
        ToolSpec::new(
            ToolRoute::new(
                Server::copilot_code_task_tool_attr(),
                Server::copilot_code_task,
            ),
            PolicyShape::delegate("workingDir"),
        )
        .long_running(),
        ToolSpec::new(
            ToolRoute::new(Server::copilot_code_tool_attr(), Server::copilot_code),
            PolicyShape::delegate("workingDir"),
        )
        .long_running(),
        ToolSpec::new(
            ToolRoute::new(
                Server::copilot_code_verbose_tool_attr(),
                Server::copilot_code_verbose,
            ),
            PolicyShape::delegate("workingDir"),
        )
        .long_running(),
        ToolSpec::new(
            ToolRoute::new(
                Server::copilot_orchestrate_tool_attr(),
                Server::copilot_orchestrate,
            ),
            PolicyShape::delegate("workingDir"),
        )
        .long_running(),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_one_row_and_the_readme_documents_it() {
        let table = table();
        let names = table.names();
        assert_eq!(names.len(), 7, "{names:?}");
        assert_eq!(table.tools().len(), names.len());
        let readme = include_str!("../../../README.md");
        for name in &names {
            assert!(
                readme.contains(&format!("`{name}`")),
                "README.md does not document {name}"
            );
            let schema = &table.router().get(name).map(|t| t.input_schema.clone());
            let depth = schema
                .as_ref()
                .and_then(|s| s.get("properties"))
                .and_then(|p| p.get("_depth"));
            assert!(depth.is_some(), "{name} does not declare _depth");
        }
    }
}
