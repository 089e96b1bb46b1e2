//! `openclaw-memory` shares the bridge's call envelope: every call lands in the audit JSONL, and
//! an inherited depth that is at the limit or forged refuses every call.

use bridge_test_support::{McpProcess, binary_path};
use serde_json::{Value, json};
use tempfile::TempDir;

async fn spawn(home: &TempDir, depth: Option<&str>) -> anyhow::Result<McpProcess> {
    let ws = home.path().join("workspace");
    std::fs::create_dir_all(ws.join("memory"))?;
    std::fs::write(
        ws.join("MEMORY.md"),
        "# Memory\n\n- The build server is called bluefin.\n",
    )?;
    let ws = ws.to_string_lossy().into_owned();
    let audit = home.path().join("audit").to_string_lossy().into_owned();
    let mut envs = vec![
        ("OPENCLAW_WORKSPACE_DIR", ws.as_str()),
        ("COPILOT_AUDIT_LOG_DIR", audit.as_str()),
    ];
    if let Some(depth) = depth {
        envs.push(("COPILOT_BRIDGE_DEPTH", depth));
    }
    let mut mcp = McpProcess::spawn(&binary_path("openclaw-memory"), &[], home.path(), &envs)?;
    mcp.initialize().await?;
    Ok(mcp)
}

#[tokio::test]
async fn every_memory_call_is_audited() -> anyhow::Result<()> {
    let home = TempDir::new()?;
    let mut mcp = spawn(&home, None).await?;
    let hit = mcp
        .call_tool("openclaw_memory_search", json!({"query": "build server"}))
        .await?;
    assert!(hit.to_string().contains("bluefin"), "{hit}");
    let read = mcp
        .call_tool("openclaw_memory_read", json!({"file": "../secret"}))
        .await?;
    assert_eq!(read["result"]["isError"], json!(true), "{read}");
    assert_eq!(mcp.shutdown().await?, Some(0));

    let mut records = Vec::new();
    for entry in std::fs::read_dir(home.path().join("audit"))? {
        for line in std::fs::read_to_string(entry?.path())?.lines() {
            let record: Value = serde_json::from_str(line)?;
            records.push(format!(
                "{} {} {}",
                record["tool"].as_str().unwrap_or_default(),
                record["hook"].as_str().unwrap_or_default(),
                record["server"].as_str().unwrap_or_default()
            ));
        }
    }
    assert_eq!(
        records,
        vec![
            "openclaw_memory_search pre openclaw-memory",
            "openclaw_memory_search post openclaw-memory",
            "openclaw_memory_read pre openclaw-memory",
            "openclaw_memory_read error openclaw-memory",
        ]
    );
    Ok(())
}

#[tokio::test]
async fn inherited_depth_at_the_limit_or_forged_refuses_calls() -> anyhow::Result<()> {
    for depth in ["3", "not-a-number"] {
        let home = TempDir::new()?;
        let mut mcp = spawn(&home, Some(depth)).await?;
        let hit = mcp
            .call_tool("openclaw_memory_search", json!({"query": "build server"}))
            .await?;
        assert_eq!(
            hit["result"]["isError"],
            json!(true),
            "depth {depth}: {hit}"
        );
        assert!(!hit.to_string().contains("bluefin"), "{hit}");
        assert_eq!(mcp.shutdown().await?, Some(0));
    }
    Ok(())
}
