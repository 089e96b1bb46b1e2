//! Both servers speak MCP on stdio from the start: they identify themselves, survive malformed
//! input and unknown methods, and exit cleanly on stdin EOF.

use bridge_test_support::{McpProcess, binary_path};
use serde_json::json;
use tempfile::TempDir;

const SERVERS: [&str; 2] = ["copilot-bridge", "openclaw-memory"];

#[tokio::test]
async fn servers_identify_themselves_with_their_own_names() -> anyhow::Result<()> {
    for name in SERVERS {
        let home = TempDir::new()?;
        let mut mcp = McpProcess::spawn(&binary_path(name), &[], home.path(), &[])?;
        let result = mcp.initialize().await?;
        assert_eq!(result["serverInfo"]["name"], json!(name));
        assert!(result["capabilities"]["tools"].is_object(), "{result}");
        assert_eq!(mcp.shutdown().await?, Some(0), "{name} exit code");
    }
    Ok(())
}

#[tokio::test]
async fn servers_answer_malformed_lines_and_unknown_methods_and_keep_running() -> anyhow::Result<()>
{
    for name in SERVERS {
        let home = TempDir::new()?;
        let mut mcp = McpProcess::spawn(&binary_path(name), &[], home.path(), &[])?;
        mcp.initialize().await?;
        mcp.send_line("{not json").await?;
        let unknown = mcp.request("no/such/method", json!({})).await?;
        assert_eq!(unknown["error"]["code"], json!(-32601), "{name}: {unknown}");
        let listed = mcp.request("tools/list", json!({})).await?;
        assert!(listed["result"]["tools"].is_array(), "{name}: {listed}");
        assert_eq!(mcp.shutdown().await?, Some(0), "{name} exit code");
    }
    Ok(())
}
