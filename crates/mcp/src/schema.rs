//! Tool input schemas that every MCP client accepts. schemars writes `"default": null` for
//! optional fields; a `null` default on an `integer` property is a contradiction that strict
//! schema checkers refuse, and OpenClaw drops a whole server when one tool's schema fails.

use rmcp::handler::server::router::tool::ToolRouter;
use serde_json::Value;

/// Removes `"default": null` from every top-level input property of every tool in `router`.
pub fn plain_input_schemas<S>(router: &mut ToolRouter<S>) {
    for route in router.map.values_mut() {
        let mut schema = route.attr.input_schema.as_ref().clone();
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            for property in properties.values_mut() {
                if let Value::Object(fields) = property
                    && fields.get("default") == Some(&Value::Null)
                {
                    fields.remove("default");
                }
            }
        }
        route.attr.input_schema = std::sync::Arc::new(schema);
    }
}
